// Package multiclusterservice is the MultiClusterService controller (with
// the MultiClusterService feature gate, as Karmada's). For each
// MultiClusterService of type CrossCluster it claims the Service of the
// same namespace and name (resourcetemplate.karmada.io/claimed-by:
// MultiClusterService, so that no policy propagates it), propagates it to
// the provider and consumer clusters through a ResourceBinding of its own,
// and dispatches the providers' EndpointSlices (collected by the
// serviceExport controller) to every consumer that is not itself the
// provider, as <provider>-<slice> under the Service's own name: a client in
// a consumer reaches every provider's endpoints through the Service it
// knows. Changing the providers or consumers moves the endpoints; deleting
// the MultiClusterService removes what it made and releases the Service.
package multiclusterservice

import (
	"context"
	"fmt"
	"slices"
	"sort"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/uuid"
	"k8s.io/client-go/tools/record"
	"k8s.io/utils/ptr"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/builder"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller/controllerutil"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	"sigs.k8s.io/controller-runtime/pkg/predicate"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	clusterv1alpha1 "github.com/karmada-go/karmada/api/cluster/v1alpha1"
	networkingv1alpha1 "github.com/karmada-go/karmada/api/networking/v1alpha1"
	policyv1alpha1 "github.com/karmada-go/karmada/api/policy/v1alpha1"
	workv1alpha1 "github.com/karmada-go/karmada/api/work/v1alpha1"
	workv1alpha2 "github.com/karmada-go/karmada/api/work/v1alpha2"
	"github.com/karmada-go/karmada/internal/clusters/clusterready"
	"github.com/karmada-go/karmada/internal/names"
	"github.com/karmada-go/karmada/internal/queues"
	"github.com/karmada-go/karmada/internal/services/mcs"
)

// ControllerName is the controller's name in --controllers (Karmada's).
const ControllerName = "multiclusterservice"

// DispatchControllerName is Karmada's name for dispatching the providers'
// EndpointSlices to the consumers, which this controller does too:
// --controllers=-endpointsliceDispatch turns that half off (NoDispatch).
const DispatchControllerName = "endpointsliceDispatch"

// Reasons of its conditions.
const (
	reasonApplied         = "ServiceAppliedSuccess"
	reasonServiceNotFound = "ServiceNotFound"
	reasonNotCrossCluster = "CrossClusterNotRequested"
	reasonDispatched      = "EndpointSliceDispatchedSuccess"
)

// Reconciler keeps what each MultiClusterService makes.
type Reconciler struct {
	Client   client.Client
	Recorder record.EventRecorder
	Workers  int
	// NoDispatch leaves the consumers without the providers' slices
	// (endpointsliceDispatch disabled); what was dispatched is still
	// removed with the MultiClusterService.
	NoDispatch bool
}

// SetupWithManager watches the MultiClusterServices and what their result
// depends on: their Services, the providers' collected Works, the Works
// it dispatched (put back when changed), and the clusters' readiness.
func (r *Reconciler) SetupWithManager(mgr ctrl.Manager) error {
	byLabels := func(_ context.Context, o client.Object) []reconcile.Request {
		l := o.GetLabels()
		ns, name := l[networkingv1alpha1.MultiClusterServiceNamespaceLabel], l[networkingv1alpha1.MultiClusterServiceNameLabel]
		if ns == "" || name == "" {
			return nil
		}
		return []reconcile.Request{{NamespacedName: client.ObjectKey{Namespace: ns, Name: name}}}
	}
	return ctrl.NewControllerManagedBy(mgr).Named(ControllerName).
		For(&networkingv1alpha1.MultiClusterService{}).
		Watches(&corev1.Service{}, handler.EnqueueRequestsFromMapFunc(func(_ context.Context, o client.Object) []reconcile.Request {
			return []reconcile.Request{{NamespacedName: client.ObjectKeyFromObject(o)}}
		})).
		Watches(&workv1alpha1.Work{}, handler.EnqueueRequestsFromMapFunc(byLabels)).
		Watches(&clusterv1alpha1.Cluster{}, handler.EnqueueRequestsFromMapFunc(r.all), builder.WithPredicates(predicate.Or(clusterready.Changed, clusterready.TrafficChanged))).
		WithOptions(queues.Options(max(r.Workers, 1))).
		Complete(r)
}

// all lists every MultiClusterService.
func (r *Reconciler) all(ctx context.Context, _ client.Object) []reconcile.Request {
	list := &networkingv1alpha1.MultiClusterServiceList{}
	if err := r.Client.List(ctx, list); err != nil {
		return nil
	}
	out := make([]reconcile.Request, 0, len(list.Items))
	for _, m := range list.Items {
		out = append(out, reconcile.Request{NamespacedName: client.ObjectKeyFromObject(&m)})
	}
	return out
}

// Reconcile brings one MultiClusterService's claim, binding, dispatched
// Works and conditions in line.
func (r *Reconciler) Reconcile(ctx context.Context, req ctrl.Request) (ctrl.Result, error) {
	m := &networkingv1alpha1.MultiClusterService{}
	if err := r.Client.Get(ctx, req.NamespacedName, m); err != nil {
		// Gone without our finalizer (never reconciled): nothing of ours.
		return ctrl.Result{}, client.IgnoreNotFound(err)
	}
	if !m.DeletionTimestamp.IsZero() || !mcs.CrossCluster(m) {
		if err := r.release(ctx, m); err != nil {
			return ctrl.Result{}, err
		}
		if !m.DeletionTimestamp.IsZero() {
			if controllerutil.RemoveFinalizer(m, networkingv1alpha1.MCSControllerFinalizer) {
				return ctrl.Result{}, client.IgnoreNotFound(r.Client.Update(ctx, m))
			}
			return ctrl.Result{}, nil
		}
		return ctrl.Result{}, r.setConditions(ctx, m, metav1.Condition{Type: networkingv1alpha1.MCSServiceAppliedConditionType, Status: metav1.ConditionFalse,
			Reason: reasonNotCrossCluster, Message: "only the CrossCluster exposure is carried out: LoadBalancer needs a provider outside the clusters"})
	}
	if controllerutil.AddFinalizer(m, networkingv1alpha1.MCSControllerFinalizer) {
		if err := r.Client.Update(ctx, m); err != nil {
			return ctrl.Result{}, err
		}
	}
	if m.Labels[networkingv1alpha1.MultiClusterServicePermanentIDLabel] == "" {
		patch := client.MergeFrom(m.DeepCopy())
		metav1.SetMetaDataLabel(&m.ObjectMeta, networkingv1alpha1.MultiClusterServicePermanentIDLabel, string(uuid.NewUUID()))
		if err := r.Client.Patch(ctx, m, patch); err != nil {
			return ctrl.Result{}, err
		}
	}
	svc := &corev1.Service{}
	if err := r.Client.Get(ctx, req.NamespacedName, svc); err != nil {
		if client.IgnoreNotFound(err) != nil {
			return ctrl.Result{}, err
		}
		if err := r.dispatch(ctx, m, nil); err != nil {
			return ctrl.Result{}, err
		}
		return ctrl.Result{}, r.setConditions(ctx, m, metav1.Condition{Type: networkingv1alpha1.MCSServiceAppliedConditionType, Status: metav1.ConditionFalse,
			Reason: reasonServiceNotFound, Message: fmt.Sprintf("Service %s/%s does not exist", m.Namespace, m.Name)})
	}
	if err := r.claim(ctx, m, svc); err != nil {
		return ctrl.Result{}, err
	}
	if err := r.bind(ctx, m, svc); err != nil {
		return ctrl.Result{}, err
	}
	applied := metav1.Condition{Type: networkingv1alpha1.MCSServiceAppliedConditionType, Status: metav1.ConditionTrue, Reason: reasonApplied, Message: "Service is propagated to the provider and consumer clusters"}
	if r.NoDispatch {
		return ctrl.Result{}, r.setConditions(ctx, m, applied)
	}
	consumers, err := r.consumers(ctx, m)
	if err != nil {
		return ctrl.Result{}, err
	}
	if err := r.dispatch(ctx, m, consumers); err != nil {
		return ctrl.Result{}, err
	}
	return ctrl.Result{}, r.setConditions(ctx, m,
		metav1.Condition{Type: networkingv1alpha1.MCSServiceAppliedConditionType, Status: metav1.ConditionTrue, Reason: reasonApplied, Message: "Service is propagated to the provider and consumer clusters"},
		metav1.Condition{Type: networkingv1alpha1.EndpointSliceDispatched, Status: metav1.ConditionTrue, Reason: reasonDispatched, Message: "the providers' EndpointSlices are dispatched to the consumers"})
}

// claim marks the Service as the MultiClusterService's.
func (r *Reconciler) claim(ctx context.Context, m *networkingv1alpha1.MultiClusterService, svc *corev1.Service) error {
	want := map[string]string{
		policyv1alpha1.ResourceTemplateClaimedByLabel:          mcsv1alpha1MultiClusterServiceKind,
		networkingv1alpha1.MultiClusterServicePermanentIDLabel: m.Labels[networkingv1alpha1.MultiClusterServicePermanentIDLabel],
	}
	ann := map[string]string{networkingv1alpha1.MultiClusterServiceNameAnnotation: m.Name, networkingv1alpha1.MultiClusterServiceNamespaceAnnotation: m.Namespace}
	same := true
	for k, v := range want {
		same = same && svc.Labels[k] == v
	}
	for k, v := range ann {
		same = same && svc.Annotations[k] == v
	}
	if same {
		return nil
	}
	patch := client.MergeFrom(svc.DeepCopy())
	for k, v := range want {
		metav1.SetMetaDataLabel(&svc.ObjectMeta, k, v)
	}
	for k, v := range ann {
		metav1.SetMetaDataAnnotation(&svc.ObjectMeta, k, v)
	}
	return r.Client.Patch(ctx, svc, patch)
}

// mcsv1alpha1MultiClusterServiceKind is the claimed-by value (the kind).
const mcsv1alpha1MultiClusterServiceKind = "MultiClusterService"

// bindingName is the Service's binding, named as a policy's would be.
func bindingName(svc string) string { return names.BindingName("Service", svc) }

// bind writes the Service's binding: placed in the providers and consumers
// (every cluster when either names none).
func (r *Reconciler) bind(ctx context.Context, m *networkingv1alpha1.MultiClusterService, svc *corev1.Service) error {
	var affinity *policyv1alpha1.ClusterAffinity
	if p, c := mcs.Providers(m), mcs.Consumers(m); len(p) > 0 && len(c) > 0 {
		clusters := append(slices.Clone(p), c...)
		sort.Strings(clusters)
		affinity = &policyv1alpha1.ClusterAffinity{ClusterNames: slices.Compact(clusters)}
	}
	rb := &workv1alpha2.ResourceBinding{ObjectMeta: metav1.ObjectMeta{Namespace: svc.Namespace, Name: bindingName(svc.Name)}}
	_, err := controllerutil.CreateOrPatch(ctx, r.Client, rb, func() error {
		if rb.CreationTimestamp.IsZero() {
			rb.Finalizers = append(rb.Finalizers, workv1alpha2.BindingControllerFinalizer)
		}
		if rb.Labels[workv1alpha2.ResourceBindingPermanentIDLabel] == "" {
			metav1.SetMetaDataLabel(&rb.ObjectMeta, workv1alpha2.ResourceBindingPermanentIDLabel, string(uuid.NewUUID()))
		}
		metav1.SetMetaDataLabel(&rb.ObjectMeta, networkingv1alpha1.MultiClusterServicePermanentIDLabel, m.Labels[networkingv1alpha1.MultiClusterServicePermanentIDLabel])
		rb.OwnerReferences = []metav1.OwnerReference{{APIVersion: "v1", Kind: "Service", Name: svc.Name, UID: svc.UID, Controller: ptr.To(true), BlockOwnerDeletion: ptr.To(true)}}
		rb.Spec.Resource = workv1alpha2.ObjectReference{APIVersion: "v1", Kind: "Service", Namespace: svc.Namespace, Name: svc.Name, UID: svc.UID, ResourceVersion: svc.ResourceVersion}
		rb.Spec.Placement = &policyv1alpha1.Placement{ClusterAffinity: affinity,
			ReplicaScheduling: &policyv1alpha1.ReplicaSchedulingStrategy{ReplicaSchedulingType: policyv1alpha1.ReplicaSchedulingTypeDuplicated}}
		return nil
	})
	return err
}

// release undoes what the MultiClusterService made: its dispatched Works,
// its binding (and so the Service's copies), and the claim on the Service.
func (r *Reconciler) release(ctx context.Context, m *networkingv1alpha1.MultiClusterService) error {
	if err := r.dispatch(ctx, m, nil); err != nil {
		return err
	}
	id := m.Labels[networkingv1alpha1.MultiClusterServicePermanentIDLabel]
	rb := &workv1alpha2.ResourceBinding{}
	err := r.Client.Get(ctx, client.ObjectKey{Namespace: m.Namespace, Name: bindingName(m.Name)}, rb)
	if client.IgnoreNotFound(err) != nil {
		return err
	}
	if err == nil && id != "" && rb.Labels[networkingv1alpha1.MultiClusterServicePermanentIDLabel] == id {
		if err := r.Client.Delete(ctx, rb, client.Preconditions{UID: &rb.UID}); client.IgnoreNotFound(err) != nil {
			return err
		}
	}
	svc := &corev1.Service{}
	err = r.Client.Get(ctx, client.ObjectKeyFromObject(m), svc)
	if err != nil || svc.Labels[networkingv1alpha1.MultiClusterServicePermanentIDLabel] != id || id == "" {
		return client.IgnoreNotFound(err)
	}
	patch := client.MergeFrom(svc.DeepCopy())
	delete(svc.Labels, policyv1alpha1.ResourceTemplateClaimedByLabel)
	delete(svc.Labels, networkingv1alpha1.MultiClusterServicePermanentIDLabel)
	delete(svc.Annotations, networkingv1alpha1.MultiClusterServiceNameAnnotation)
	delete(svc.Annotations, networkingv1alpha1.MultiClusterServiceNamespaceAnnotation)
	return client.IgnoreNotFound(r.Client.Patch(ctx, svc, patch))
}

// consumers are the consumer clusters that exist (every cluster when the
// MultiClusterService names none).
func (r *Reconciler) consumers(ctx context.Context, m *networkingv1alpha1.MultiClusterService) ([]string, error) {
	list := &clusterv1alpha1.ClusterList{}
	if err := r.Client.List(ctx, list); err != nil {
		return nil, err
	}
	var out []string
	for _, c := range list.Items {
		if c.DeletionTimestamp.IsZero() && mcs.Consumes(m, c.Name) {
			out = append(out, c.Name)
		}
	}
	sort.Strings(out)
	return out, nil
}

// setConditions writes the conditions that changed, in one status patch.
func (r *Reconciler) setConditions(ctx context.Context, m *networkingv1alpha1.MultiClusterService, conds ...metav1.Condition) error {
	next := m.DeepCopy()
	changed := false
	for _, c := range conds {
		c.ObservedGeneration = m.Generation
		changed = meta.SetStatusCondition(&next.Status.Conditions, c) || changed
	}
	if !changed {
		return nil
	}
	return client.IgnoreNotFound(r.Client.Status().Patch(ctx, next, client.MergeFrom(m)))
}
