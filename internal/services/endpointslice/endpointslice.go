// Package endpointslice is the endpointslice controller: it turns each
// Work the service export controller collected (a member's EndpointSlice of
// an exported Service) into the control plane's EndpointSlice
// imported-<cluster>-<slice>, in the Service's namespace, labelled
// kubernetes.io/service-name=derived-<service> (the Service a ServiceImport
// makes), and removes it with the Work.
//
// A pull-mode cluster's Works are written by its agent, which the control
// plane does not trust with other namespaces' traffic: its slices are taken
// only for a Service the control plane itself exports there (a
// ServiceExport of that namespace and name whose binding places it in the
// cluster). A member therefore cannot publish endpoints for a Service it
// does not export.
package endpointslice

import (
	"context"
	"encoding/json"
	"fmt"

	discoveryv1 "k8s.io/api/discovery/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/tools/record"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/builder"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller/controllerutil"
	"sigs.k8s.io/controller-runtime/pkg/predicate"

	mcsv1alpha1 "github.com/karmada-go/karmada/api/multicluster/v1alpha1"
	workv1alpha1 "github.com/karmada-go/karmada/api/work/v1alpha1"
	"github.com/karmada-go/karmada/internal/events"
	"github.com/karmada-go/karmada/internal/queues"
	"github.com/karmada-go/karmada/internal/services/mcs"
)

// ControllerName is the controller's name in --controllers (Karmada's).
const ControllerName = "endpointSlice"

// Reconciler keeps the control plane's imported EndpointSlices.
type Reconciler struct {
	Client   client.Client
	Recorder record.EventRecorder
}

// SetupWithManager watches the collected Works (and the Works that were,
// to let go of their finalizer).
func (r *Reconciler) SetupWithManager(mgr ctrl.Manager) error {
	return ctrl.NewControllerManagedBy(mgr).Named(ControllerName).
		For(&workv1alpha1.Work{}, builder.WithPredicates(predicate.NewPredicateFuncs(func(o client.Object) bool {
			return mcs.Collected(o.GetLabels()) || controllerutil.ContainsFinalizer(o, mcsv1alpha1.EndpointSliceControllerFinalizer)
		}))).
		WithOptions(queues.Options(1)).
		Complete(r)
}

// Reconcile writes (or removes) the imported EndpointSlice of one
// collected Work.
func (r *Reconciler) Reconcile(ctx context.Context, req ctrl.Request) (ctrl.Result, error) {
	cluster, ok := workv1alpha1.ClusterOfExecutionNamespace(req.Namespace)
	if !ok {
		return ctrl.Result{}, nil
	}
	work := &workv1alpha1.Work{}
	if err := r.Client.Get(ctx, req.NamespacedName, work); err != nil {
		return ctrl.Result{}, client.IgnoreNotFound(err)
	}
	if !mcs.Collected(work.Labels) {
		// No longer (or never) collected for a ServiceExport (a
		// MultiClusterService's only): its imported slice, if any, goes.
		if s, err := manifestOf(work); err == nil {
			if err := r.remove(ctx, s.Namespace, mcsv1alpha1.ImportedEndpointSliceName(cluster, s.Name)); err != nil {
				return ctrl.Result{}, err
			}
		}
		if controllerutil.RemoveFinalizer(work, mcsv1alpha1.EndpointSliceControllerFinalizer) {
			return ctrl.Result{}, client.IgnoreNotFound(r.Client.Update(ctx, work))
		}
		return ctrl.Result{}, nil
	}
	slice, err := decode(work)
	if err != nil {
		events.Warning(r.Recorder, work, events.EndpointSliceImportFailed, "Not importing the Work's EndpointSlice: %v", err)
	}
	keep := err == nil && work.DeletionTimestamp.IsZero()
	if keep {
		allowed, why, err := r.exports(ctx, cluster, work)
		if err != nil {
			return ctrl.Result{}, err
		}
		if !allowed {
			events.Warning(r.Recorder, work, events.EndpointSliceImportFailed, "Not importing the endpoints of %s/%s from cluster %s: %s", work.Labels[mcsv1alpha1.ServiceNamespaceLabel], work.Labels[mcsv1alpha1.ServiceNameLabel], cluster, why)
			keep = false
		}
	}
	if keep {
		if err := r.write(ctx, imported(cluster, work, slice)); err != nil {
			return ctrl.Result{}, err
		}
		if controllerutil.AddFinalizer(work, mcsv1alpha1.EndpointSliceControllerFinalizer) {
			return ctrl.Result{}, r.Client.Update(ctx, work)
		}
		return ctrl.Result{}, nil
	}
	if slice != nil {
		if err := r.remove(ctx, slice.Namespace, mcsv1alpha1.ImportedEndpointSliceName(cluster, slice.Name)); err != nil {
			return ctrl.Result{}, err
		}
	}
	if controllerutil.RemoveFinalizer(work, mcsv1alpha1.EndpointSliceControllerFinalizer) {
		return ctrl.Result{}, client.IgnoreNotFound(r.Client.Update(ctx, work))
	}
	return ctrl.Result{}, nil
}

// decode returns the Work's EndpointSlice, checked against the Work's
// labels (a collected Work holds one slice of the Service it names).
func decode(work *workv1alpha1.Work) (*discoveryv1.EndpointSlice, error) {
	s, err := manifestOf(work)
	if err != nil {
		return nil, err
	}
	ns, svc := work.Labels[mcsv1alpha1.ServiceNamespaceLabel], work.Labels[mcsv1alpha1.ServiceNameLabel]
	if s.Namespace != ns || s.Labels[discoveryv1.LabelServiceName] != svc {
		return nil, fmt.Errorf("spec.workload.manifests[0]: EndpointSlice %s/%s of Service %q does not belong to the Service %s/%s the Work's labels name",
			s.Namespace, s.Name, s.Labels[discoveryv1.LabelServiceName], ns, svc)
	}
	return s, nil
}

// manifestOf returns the one EndpointSlice a collected Work holds.
func manifestOf(work *workv1alpha1.Work) (*discoveryv1.EndpointSlice, error) {
	if len(work.Spec.Workload.Manifests) != 1 {
		return nil, fmt.Errorf("spec.workload.manifests: %d manifests, a collected Work holds one EndpointSlice", len(work.Spec.Workload.Manifests))
	}
	s := &discoveryv1.EndpointSlice{}
	if err := json.Unmarshal(work.Spec.Workload.Manifests[0].Raw, s); err != nil {
		return nil, fmt.Errorf("spec.workload.manifests[0]: %w", err)
	}
	if s.APIVersion != discoveryv1.SchemeGroupVersion.String() || s.Kind != "EndpointSlice" || s.Name == "" {
		return nil, fmt.Errorf("spec.workload.manifests[0]: %s %s %q is not a discovery.k8s.io/v1 EndpointSlice", s.APIVersion, s.Kind, s.Name)
	}
	return s, nil
}

// exports reports whether the control plane takes cluster's endpoints of
// the Service the Work names (mcs.Takes).
func (r *Reconciler) exports(ctx context.Context, cluster string, work *workv1alpha1.Work) (bool, string, error) {
	return mcs.Takes(ctx, r.Client, cluster, work.Labels[mcsv1alpha1.ServiceNamespaceLabel], work.Labels[mcsv1alpha1.ServiceNameLabel])
}

// imported is the control plane's EndpointSlice for the member's slice s.
func imported(cluster string, work *workv1alpha1.Work, s *discoveryv1.EndpointSlice) *discoveryv1.EndpointSlice {
	return &discoveryv1.EndpointSlice{
		ObjectMeta: metav1.ObjectMeta{
			Namespace: s.Namespace,
			Name:      mcsv1alpha1.ImportedEndpointSliceName(cluster, s.Name),
			Labels: map[string]string{
				discoveryv1.LabelServiceName: mcsv1alpha1.DerivedServiceName(s.Labels[discoveryv1.LabelServiceName]),
				discoveryv1.LabelManagedBy:   mcs.ManagedBy,
			},
			Annotations: map[string]string{
				workv1alpha1.WorkNamespaceAnnotation: work.Namespace,
				workv1alpha1.WorkNameAnnotation:      work.Name,
			},
		},
		AddressType: s.AddressType,
		Endpoints:   s.Endpoints,
		Ports:       s.Ports,
	}
}

// write creates the slice, or updates ours where it differs; a slice of
// that name that is not ours is left alone.
func (r *Reconciler) write(ctx context.Context, want *discoveryv1.EndpointSlice) error {
	cur := &discoveryv1.EndpointSlice{}
	err := r.Client.Get(ctx, client.ObjectKeyFromObject(want), cur)
	if apierrors.IsNotFound(err) {
		return r.Client.Create(ctx, want)
	}
	if err != nil {
		return err
	}
	if !mcs.Ours(cur) {
		return fmt.Errorf("EndpointSlice %s/%s exists and was not written by Karmada: left alone", want.Namespace, want.Name)
	}
	if equality.Semantic.DeepEqual(cur.Labels, want.Labels) && equality.Semantic.DeepEqual(cur.Annotations, want.Annotations) &&
		cur.AddressType == want.AddressType && equality.Semantic.DeepEqual(cur.Endpoints, want.Endpoints) && equality.Semantic.DeepEqual(cur.Ports, want.Ports) {
		return nil
	}
	cur.Labels, cur.Annotations = want.Labels, want.Annotations
	cur.AddressType, cur.Endpoints, cur.Ports = want.AddressType, want.Endpoints, want.Ports
	return r.Client.Update(ctx, cur)
}

// remove deletes our slice of that name, if any.
func (r *Reconciler) remove(ctx context.Context, namespace, name string) error {
	cur := &discoveryv1.EndpointSlice{}
	err := r.Client.Get(ctx, client.ObjectKey{Namespace: namespace, Name: name}, cur)
	if err != nil || !mcs.Ours(cur) {
		return client.IgnoreNotFound(err)
	}
	return client.IgnoreNotFound(r.Client.Delete(ctx, cur, client.Preconditions{UID: &cur.UID}))
}
