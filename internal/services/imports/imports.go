// Package imports is the service import controller: for each ServiceImport
// of the control plane it keeps the Service derived-<name> (ClusterIP, or
// headless, with the import's ports) beside it, lists the exporting
// clusters in its status.clusters, and dispatches the derived Service and
// the imported EndpointSlices (labelled kubernetes.io/service-name=
// derived-<name>) to every cluster the ServiceImport is propagated to, one
// Work per object in the cluster's execution namespace. When the import
// goes, so do the derived Service and the dispatched Works (and with them
// the copies in the members).
//
// Karmada reaches the same objects in the members through the dependencies
// distributor (a ServiceImport's dependencies are its derived Service and
// slices); dispatching them here, as Karmada does for a
// MultiClusterService, costs one Work write per change and consumer
// instead of a binding's round trip (docs/multi-cluster-services.md).
package imports

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"slices"
	"sort"
	"strings"

	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/tools/record"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/builder"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	"sigs.k8s.io/controller-runtime/pkg/predicate"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	clusterv1alpha1 "github.com/karmada-go/karmada/api/cluster/v1alpha1"
	mcsv1alpha1 "github.com/karmada-go/karmada/api/multicluster/v1alpha1"
	policyv1alpha1 "github.com/karmada-go/karmada/api/policy/v1alpha1"
	workv1alpha1 "github.com/karmada-go/karmada/api/work/v1alpha1"
	workv1alpha2 "github.com/karmada-go/karmada/api/work/v1alpha2"
	"github.com/karmada-go/karmada/internal/clusters/clusterready"
	"github.com/karmada-go/karmada/internal/events"
	"github.com/karmada-go/karmada/internal/names"
	"github.com/karmada-go/karmada/internal/queues"
	"github.com/karmada-go/karmada/internal/services/mcs"
)

// ControllerName is the controller's name in --controllers (Karmada's).
const ControllerName = "serviceImport"

// claimedBy is the ResourceTemplateClaimedByLabel value of a derived
// Service: propagated by its import, never by a policy.
const claimedBy = "ServiceImport"

// Reconciler keeps the ServiceImports' derived Services, status and
// dispatched Works.
type Reconciler struct {
	Client   client.Client
	Recorder record.EventRecorder
	Workers  int
}

// SetupWithManager watches the imports and everything an import's result
// depends on: its binding (where it is propagated), the imported slices
// (what the exporters publish), and what it wrote (derived Services,
// dispatched Works), which are put back when changed or deleted.
func (r *Reconciler) SetupWithManager(mgr ctrl.Manager) error {
	return ctrl.NewControllerManagedBy(mgr).Named(ControllerName).
		For(&mcsv1alpha1.ServiceImport{}).
		Watches(&workv1alpha2.ResourceBinding{}, handler.EnqueueRequestsFromMapFunc(func(_ context.Context, o client.Object) []reconcile.Request {
			rb := o.(*workv1alpha2.ResourceBinding)
			if rb.Spec.Resource.Kind != "ServiceImport" || rb.Spec.Resource.APIVersion != mcsv1alpha1.SchemeGroupVersion.String() {
				return nil
			}
			return one(rb.Namespace, rb.Spec.Resource.Name)
		})).
		Watches(&discoveryv1.EndpointSlice{}, handler.EnqueueRequestsFromMapFunc(func(_ context.Context, o client.Object) []reconcile.Request {
			s := o.(*discoveryv1.EndpointSlice)
			name, ok := strings.CutPrefix(s.Labels[discoveryv1.LabelServiceName], mcsv1alpha1.DerivedServicePrefix)
			if !ok || !mcs.Ours(s) {
				return nil
			}
			return one(s.Namespace, name)
		})).
		Watches(&corev1.Service{}, handler.EnqueueRequestsFromMapFunc(func(_ context.Context, o client.Object) []reconcile.Request {
			name, ok := strings.CutPrefix(o.GetName(), mcsv1alpha1.DerivedServicePrefix)
			if !ok || o.GetLabels()[policyv1alpha1.ResourceTemplateClaimedByLabel] != claimedBy {
				return nil
			}
			return one(o.GetNamespace(), name)
		})).
		Watches(&workv1alpha1.Work{}, handler.EnqueueRequestsFromMapFunc(func(_ context.Context, o client.Object) []reconcile.Request {
			l := o.GetLabels()
			if l[mcsv1alpha1.EndpointSliceWorkManagedByLabel] != mcs.ManagedByServiceImport {
				return nil
			}
			return one(l[mcsv1alpha1.ServiceNamespaceLabel], l[mcsv1alpha1.ServiceNameLabel])
		})).
		// An exporter turning Ready or not changes what consumers get.
		Watches(&clusterv1alpha1.Cluster{}, handler.EnqueueRequestsFromMapFunc(r.allImports), builder.WithPredicates(predicate.Or(clusterready.Changed, clusterready.TrafficChanged))).
		WithOptions(queues.Options(cmp.Or(max(r.Workers, 0), 2))).
		Complete(r)
}

// allImports lists every ServiceImport.
func (r *Reconciler) allImports(ctx context.Context, _ client.Object) []reconcile.Request {
	list := &mcsv1alpha1.ServiceImportList{}
	if err := r.Client.List(ctx, list); err != nil {
		return nil
	}
	out := make([]reconcile.Request, 0, len(list.Items))
	for _, i := range list.Items {
		out = append(out, one(i.Namespace, i.Name)...)
	}
	return out
}

func one(namespace, name string) []reconcile.Request {
	if namespace == "" || name == "" {
		return nil
	}
	return []reconcile.Request{{NamespacedName: client.ObjectKey{Namespace: namespace, Name: name}}}
}

// Reconcile brings one import's derived Service, status and dispatched
// Works in line with the import, the exporters' slices and where the import
// is propagated.
func (r *Reconciler) Reconcile(ctx context.Context, req ctrl.Request) (ctrl.Result, error) {
	imp := &mcsv1alpha1.ServiceImport{}
	err := r.Client.Get(ctx, req.NamespacedName, imp)
	if client.IgnoreNotFound(err) != nil {
		return ctrl.Result{}, err
	}
	if err != nil || !imp.DeletionTimestamp.IsZero() {
		// Gone: what it made goes too.
		return ctrl.Result{}, errors.Join(r.dispatch(ctx, req.Namespace, req.Name, nil, nil), r.removeDerived(ctx, req.Namespace, req.Name))
	}
	svc, err := r.derive(ctx, imp)
	if err != nil {
		events.Warning(r.Recorder, imp, events.DeriveServiceFailed, "%v", err)
		return ctrl.Result{}, err
	}
	imported, err := r.importedSlices(ctx, imp)
	if err != nil {
		return ctrl.Result{}, err
	}
	if imported, err = r.collected(ctx, imp, imported); err != nil {
		return ctrl.Result{}, err
	}
	if err := r.writeStatus(ctx, imp, exporters(imported)); err != nil {
		return ctrl.Result{}, err
	}
	consumers, err := r.consumers(ctx, imp)
	if err != nil {
		return ctrl.Result{}, err
	}
	objs := []client.Object{svc}
	for i := range imported {
		// An exporter that is not Ready (down, unreachable) cannot serve,
		// nor one a Remedy keeps traffic away from (TrafficControl): its
		// endpoints are held back from the consumers until it can.
		if c, ok := exporterOf(&imported[i]); ok && mcs.Serves(ctx, r.Client, c) {
			objs = append(objs, &imported[i])
		}
	}
	return ctrl.Result{}, r.dispatch(ctx, imp.Namespace, imp.Name, consumers, objs)
}

// Derived is the Service an import makes, as wanted.
func Derived(imp *mcsv1alpha1.ServiceImport) *corev1.Service {
	svc := &corev1.Service{
		TypeMeta: metav1.TypeMeta{APIVersion: "v1", Kind: "Service"},
		ObjectMeta: metav1.ObjectMeta{Namespace: imp.Namespace, Name: mcsv1alpha1.DerivedServiceName(imp.Name),
			Labels: map[string]string{policyv1alpha1.ResourceTemplateClaimedByLabel: claimedBy}},
		Spec: corev1.ServiceSpec{Type: corev1.ServiceTypeClusterIP, SessionAffinity: imp.Spec.SessionAffinity,
			SessionAffinityConfig: imp.Spec.SessionAffinityConfig},
	}
	if imp.Spec.Type == mcsv1alpha1.Headless {
		svc.Spec.ClusterIP = corev1.ClusterIPNone
	}
	for _, p := range imp.Spec.Ports {
		protocol := p.Protocol
		if protocol == "" {
			protocol = corev1.ProtocolTCP
		}
		svc.Spec.Ports = append(svc.Spec.Ports, corev1.ServicePort{Name: p.Name, Protocol: protocol, Port: p.Port, AppProtocol: p.AppProtocol})
	}
	return svc
}

// derive creates or updates the import's derived Service in the control
// plane; a Service of that name that Karmada did not create is left alone
// (and the import waits). It returns the Service to dispatch.
func (r *Reconciler) derive(ctx context.Context, imp *mcsv1alpha1.ServiceImport) (*corev1.Service, error) {
	want := Derived(imp)
	cur := &corev1.Service{}
	err := r.Client.Get(ctx, client.ObjectKeyFromObject(want), cur)
	if apierrors.IsNotFound(err) {
		if err := r.Client.Create(ctx, want.DeepCopy()); err != nil {
			return nil, fmt.Errorf("creating the derived Service %s: %w", want.Name, err)
		}
		return want, nil
	}
	if err != nil {
		return nil, err
	}
	if cur.Labels[policyv1alpha1.ResourceTemplateClaimedByLabel] != claimedBy {
		return nil, fmt.Errorf("the Service %s/%s exists and was not derived by Karmada from this ServiceImport: it is left alone, and the import waits for it to go", cur.Namespace, cur.Name)
	}
	headless := cur.Spec.ClusterIP == corev1.ClusterIPNone
	if headless != (imp.Spec.Type == mcsv1alpha1.Headless) {
		// A Service's clusterIP cannot change: made again.
		if err := r.Client.Delete(ctx, cur, client.Preconditions{UID: &cur.UID}); client.IgnoreNotFound(err) != nil {
			return nil, err
		}
		return nil, fmt.Errorf("the derived Service %s/%s is made again for the import's type %s", cur.Namespace, cur.Name, imp.Spec.Type)
	}
	if !samePorts(cur.Spec.Ports, want.Spec.Ports) || cur.Spec.SessionAffinity != want.Spec.SessionAffinity && want.Spec.SessionAffinity != "" ||
		!equality.Semantic.DeepEqual(cur.Spec.SessionAffinityConfig, want.Spec.SessionAffinityConfig) && want.Spec.SessionAffinityConfig != nil {
		next := cur.DeepCopy()
		next.Spec.Ports, next.Spec.SessionAffinityConfig = want.Spec.Ports, want.Spec.SessionAffinityConfig
		if want.Spec.SessionAffinity != "" {
			next.Spec.SessionAffinity = want.Spec.SessionAffinity
		}
		if err := r.Client.Update(ctx, next); err != nil {
			return nil, err
		}
	}
	return want, nil
}

// removeDerived deletes the derived Service of a gone import, if Karmada
// made it.
func (r *Reconciler) removeDerived(ctx context.Context, namespace, name string) error {
	cur := &corev1.Service{}
	err := r.Client.Get(ctx, client.ObjectKey{Namespace: namespace, Name: mcsv1alpha1.DerivedServiceName(name)}, cur)
	if err != nil || cur.Labels[policyv1alpha1.ResourceTemplateClaimedByLabel] != claimedBy {
		return client.IgnoreNotFound(err)
	}
	return client.IgnoreNotFound(r.Client.Delete(ctx, cur, client.Preconditions{UID: &cur.UID}))
}

// importedSlices lists the control plane's imported EndpointSlices of the
// import, by name.
func (r *Reconciler) importedSlices(ctx context.Context, imp *mcsv1alpha1.ServiceImport) ([]discoveryv1.EndpointSlice, error) {
	list := &discoveryv1.EndpointSliceList{}
	if err := r.Client.List(ctx, list, client.InNamespace(imp.Namespace), client.MatchingLabels{
		discoveryv1.LabelServiceName: mcsv1alpha1.DerivedServiceName(imp.Name), discoveryv1.LabelManagedBy: mcs.ManagedBy}); err != nil {
		return nil, err
	}
	out := list.Items
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out, nil
}

// collected keeps the imported slices that come from a Work the service
// export controller collected for this import's Service: an EndpointSlice
// someone else wrote in the namespace with Karmada's marks is neither
// dispatched nor counted as an exporter.
func (r *Reconciler) collected(ctx context.Context, imp *mcsv1alpha1.ServiceImport, imported []discoveryv1.EndpointSlice) ([]discoveryv1.EndpointSlice, error) {
	out := imported[:0]
	for _, s := range imported {
		if _, ok := exporterOf(&s); !ok {
			continue
		}
		w := &workv1alpha1.Work{}
		err := r.Client.Get(ctx, client.ObjectKey{Namespace: s.Annotations[workv1alpha1.WorkNamespaceAnnotation], Name: s.Annotations[workv1alpha1.WorkNameAnnotation]}, w)
		if apierrors.IsNotFound(err) {
			continue
		}
		if err != nil {
			return nil, err
		}
		if mcs.Collected(w.Labels) && w.Labels[mcsv1alpha1.ServiceNamespaceLabel] == imp.Namespace && w.Labels[mcsv1alpha1.ServiceNameLabel] == imp.Name {
			out = append(out, s)
		}
	}
	return out, nil
}

// exporterOf is the cluster an imported slice comes from.
func exporterOf(s *discoveryv1.EndpointSlice) (string, bool) {
	return workv1alpha1.ClusterOfExecutionNamespace(s.Annotations[workv1alpha1.WorkNamespaceAnnotation])
}

// exporters are the clusters the imported slices come from, sorted.
func exporters(imported []discoveryv1.EndpointSlice) []string {
	var out []string
	for i := range imported {
		c, ok := exporterOf(&imported[i])
		if ok && !slices.Contains(out, c) {
			out = append(out, c)
		}
	}
	sort.Strings(out)
	return out
}

// writeStatus records the exporting clusters in status.clusters.
func (r *Reconciler) writeStatus(ctx context.Context, imp *mcsv1alpha1.ServiceImport, clusters []string) error {
	want := make([]mcsv1alpha1.ClusterStatus, 0, len(clusters))
	for _, c := range clusters {
		want = append(want, mcsv1alpha1.ClusterStatus{Cluster: c})
	}
	if equality.Semantic.DeepEqual(imp.Status.Clusters, want) || len(imp.Status.Clusters) == 0 && len(want) == 0 {
		return nil
	}
	patch := client.MergeFrom(imp.DeepCopy())
	imp.Status.Clusters = want
	return r.Client.Status().Patch(ctx, imp, patch)
}

// consumers are the clusters the import is propagated to: those its
// binding is scheduled to.
func (r *Reconciler) consumers(ctx context.Context, imp *mcsv1alpha1.ServiceImport) ([]string, error) {
	rb := &workv1alpha2.ResourceBinding{}
	err := r.Client.Get(ctx, client.ObjectKey{Namespace: imp.Namespace, Name: names.BindingName("ServiceImport", imp.Name)}, rb)
	if apierrors.IsNotFound(err) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	if rb.Spec.Resource.UID != "" && rb.Spec.Resource.UID != imp.UID || !rb.DeletionTimestamp.IsZero() {
		return nil, nil
	}
	var out []string
	for _, t := range rb.Spec.Clusters {
		out = append(out, t.Name)
	}
	sort.Strings(out)
	return out, nil
}

// samePorts compares what an import sets of its derived Service's ports
// (the API server fills in targetPort).
func samePorts(a, b []corev1.ServicePort) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i].Name != b[i].Name || a[i].Protocol != b[i].Protocol || a[i].Port != b[i].Port || !equality.Semantic.DeepEqual(a[i].AppProtocol, b[i].AppProtocol) {
			return false
		}
	}
	return true
}
