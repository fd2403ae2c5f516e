package export

import (
	"context"
	"errors"
	"fmt"

	discoveryv1 "k8s.io/api/discovery/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	mcsv1alpha1 "github.com/karmada-go/karmada/api/multicluster/v1alpha1"
	networkingv1alpha1 "github.com/karmada-go/karmada/api/networking/v1alpha1"
	workv1alpha1 "github.com/karmada-go/karmada/api/work/v1alpha1"
	"github.com/karmada-go/karmada/internal/services/mcs"
)

// collected reports whether a Work holds an EndpointSlice this controller
// collected, or is an export record it keeps.
func collected(o client.Object) bool {
	return mcs.Collected(o.GetLabels()) || mcs.CollectedFor(o.GetLabels()) || mcs.IsExportRecord(o.GetLabels())
}

// workKey maps a collected Work to the exported Service it is of.
func workKey(_ context.Context, o client.Object) []Key {
	cluster, ok := workv1alpha1.ClusterOfExecutionNamespace(o.GetNamespace())
	if !ok {
		return nil
	}
	l := o.GetLabels()
	var out []Key
	if ns, name := l[mcsv1alpha1.ServiceNamespaceLabel], l[mcsv1alpha1.ServiceNameLabel]; ns != "" && name != "" {
		out = append(out, Key{Cluster: cluster, Namespace: ns, Name: name})
	}
	if ns, name := l[mcs.ExportNamespaceLabel], l[mcs.ExportNameLabel]; ns != "" && name != "" {
		out = append(out, Key{Cluster: cluster, Namespace: ns, Name: name})
	}
	if ns, name := l[networkingv1alpha1.MultiClusterServiceNamespaceLabel], l[networkingv1alpha1.MultiClusterServiceNameLabel]; ns != "" && name != "" {
		out = append(out, Key{Cluster: cluster, Namespace: ns, Name: name})
	}
	return out
}

// sync writes the Works of k's slices (want) and deletes those of slices
// gone: a create or an update only where the Work differs. A Work is
// labelled for the ServiceExport (exported) and for the MultiClusterService
// (provided) that collect it.
func (r *Reconciler) sync(ctx context.Context, k Key, want []*discoveryv1.EndpointSlice, exported, provided bool) error {
	ns := workv1alpha1.ExecutionNamespace(k.Cluster)
	have := &workv1alpha1.WorkList{}
	if err := r.Client.List(ctx, have, client.InNamespace(ns), client.HasLabels{mcsv1alpha1.EndpointSliceWorkManagedByLabel}); err != nil {
		return err
	}
	existing := map[string]*workv1alpha1.Work{}
	for i := range have.Items {
		l := have.Items[i].Labels
		if l[mcsv1alpha1.ServiceNamespaceLabel] == k.Namespace && l[mcsv1alpha1.ServiceNameLabel] == k.Name ||
			l[networkingv1alpha1.MultiClusterServiceNamespaceLabel] == k.Namespace && l[networkingv1alpha1.MultiClusterServiceNameLabel] == k.Name {
			existing[have.Items[i].Name] = &have.Items[i]
		}
	}
	labels := map[string]string{mcsv1alpha1.EndpointSliceWorkManagedByLabel: mcs.ManagedByValue(exported, provided)}
	if exported {
		labels[mcsv1alpha1.ServiceNamespaceLabel], labels[mcsv1alpha1.ServiceNameLabel] = k.Namespace, k.Name
	}
	if provided {
		labels[networkingv1alpha1.MultiClusterServiceNamespaceLabel], labels[networkingv1alpha1.MultiClusterServiceNameLabel] = k.Namespace, k.Name
	}
	var errs []error
	for _, s := range want {
		raw, err := mcs.Manifest(s)
		if err != nil {
			errs = append(errs, err)
			continue
		}
		name := mcs.WorkName(s.Namespace, s.Name)
		cur := existing[name]
		delete(existing, name)
		errs = append(errs, r.write(ctx, ns, name, k, labels, raw, cur, exported))
	}
	for _, w := range existing {
		if err := r.Client.Delete(ctx, w, client.Preconditions{UID: &w.UID}); client.IgnoreNotFound(err) != nil {
			errs = append(errs, err)
		}
	}
	return errors.Join(errs...)
}

// collectionLabels are the label keys a collected Work carries, some of
// them only while exported or provided.
var collectionLabels = []string{mcsv1alpha1.EndpointSliceWorkManagedByLabel, mcsv1alpha1.ServiceNamespaceLabel, mcsv1alpha1.ServiceNameLabel,
	networkingv1alpha1.MultiClusterServiceNamespaceLabel, networkingv1alpha1.MultiClusterServiceNameLabel}

// write creates the Work, or updates it where it differs from what is
// wanted.
// An exported slice's Work is created with the endpointslice controller's
// finalizer (which saves that controller a write).
func (r *Reconciler) write(ctx context.Context, ns, name string, k Key, labels map[string]string, raw []byte, cur *workv1alpha1.Work, exported bool) error {
	if cur == nil {
		w := &workv1alpha1.Work{
			ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name, Labels: labels},
			Spec: workv1alpha1.WorkSpec{SuspendDispatching: ptr.To(true),
				Workload: workv1alpha1.WorkloadTemplate{Manifests: []workv1alpha1.Manifest{{RawExtension: runtime.RawExtension{Raw: raw}}}}},
		}
		if exported {
			w.Finalizers = []string{mcsv1alpha1.EndpointSliceControllerFinalizer}
		}
		err := r.Client.Create(ctx, w)
		if apierrors.IsAlreadyExists(err) {
			// A Work of that name not collected here (or not seen yet):
			// looked at again when the cache has it.
			return fmt.Errorf("work %s/%s exists and was not collected for %s: %w", ns, name, k, err)
		}
		return err
	}
	if !cur.DeletionTimestamp.IsZero() {
		return fmt.Errorf("work %s/%s is being deleted; collected again once it is gone", ns, name)
	}
	same := len(cur.Spec.Workload.Manifests) == 1 && mcs.SameManifest(cur.Spec.Workload.Manifests[0].Raw, raw) &&
		cur.Spec.SuspendDispatching != nil && *cur.Spec.SuspendDispatching
	for _, key := range collectionLabels {
		same = same && cur.Labels[key] == labels[key]
	}
	if same {
		return nil
	}
	w := cur.DeepCopy()
	if w.Labels == nil {
		w.Labels = map[string]string{}
	}
	for _, key := range collectionLabels {
		delete(w.Labels, key)
	}
	for key, v := range labels {
		w.Labels[key] = v
	}
	w.Spec.SuspendDispatching = ptr.To(true)
	w.Spec.Workload.Manifests = []workv1alpha1.Manifest{{RawExtension: runtime.RawExtension{Raw: raw}}}
	return r.Client.Update(ctx, w)
}

var _ reconcile.TypedReconciler[Key] = reconcile.TypedFunc[Key](nil)
