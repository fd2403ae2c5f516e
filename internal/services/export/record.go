package export

import (
	"context"
	"fmt"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	mcsv1alpha1 "github.com/karmada-go/karmada/api/multicluster/v1alpha1"
	workv1alpha1 "github.com/karmada-go/karmada/api/work/v1alpha1"
	"github.com/karmada-go/karmada/internal/services/mcs"
)

// syncExport keeps what the fleet knows of the member's export of k and
// what the member's ServiceExport says of it: a valid export (its Service
// exists and is not ExternalName) has an export record in the cluster's
// execution namespace, which the control plane judges against the other
// clusters' exports of the Service (its Conflict condition); the
// ServiceExport's status carries Valid and, once judged, Conflict.
func (r *Reconciler) syncExport(ctx context.Context, k Key, w *memberWatch, export *unstructured.Unstructured) error {
	key := client.ObjectKey{Namespace: workv1alpha1.ExecutionNamespace(k.Cluster), Name: mcs.ExportWorkName(k.Namespace, k.Name)}
	cur := &workv1alpha1.Work{}
	err := r.Client.Get(ctx, key, cur)
	if client.IgnoreNotFound(err) != nil {
		return err
	}
	if apierrors.IsNotFound(err) || !mcs.IsExportRecord(cur.Labels) {
		cur = nil
	}
	if export == nil {
		if cur == nil {
			return nil
		}
		return client.IgnoreNotFound(r.Client.Delete(ctx, cur, client.Preconditions{UID: &cur.UID}))
	}
	svc, err := r.memberService(w, k)
	if err != nil {
		return err
	}
	valid := mcs.ValidExport(k.Namespace, k.Name, svc)
	var conflict *metav1.Condition
	if valid.Status == metav1.ConditionTrue {
		if err := r.writeRecord(ctx, key, k, export, svc, cur); err != nil {
			return err
		}
		if cur != nil {
			conflict = meta.FindStatusCondition(cur.Status.Conditions, mcsv1alpha1.ServiceExportConflict)
		}
	} else if cur != nil {
		if err := r.Client.Delete(ctx, cur, client.Preconditions{UID: &cur.UID}); client.IgnoreNotFound(err) != nil {
			return err
		}
	}
	return r.writeExportStatus(ctx, w, export, valid, conflict)
}

// memberService is the member's Service of k, nil when it has none.
func (r *Reconciler) memberService(w *memberWatch, k Key) (*corev1.Service, error) {
	r.mu.Lock()
	inf := w.allServices
	r.mu.Unlock()
	if inf == nil {
		return nil, fmt.Errorf("the Services of cluster %s are not watched yet", k.Cluster)
	}
	o, ok, err := inf.GetIndexer().GetByKey(k.Namespace + "/" + k.Name)
	if err != nil || !ok {
		return nil, err
	}
	svc, _ := o.(*corev1.Service)
	return svc, nil
}

// writeRecord creates the export record, or updates it where it says
// something else.
func (r *Reconciler) writeRecord(ctx context.Context, key client.ObjectKey, k Key, export *unstructured.Unstructured, svc *corev1.Service, cur *workv1alpha1.Work) error {
	raws, err := mcs.RecordManifests(metav1.ObjectMeta{Namespace: k.Namespace, Name: k.Name, CreationTimestamp: export.GetCreationTimestamp()}, svc)
	if err != nil {
		return err
	}
	manifests := make([]workv1alpha1.Manifest, 0, len(raws))
	for _, raw := range raws {
		manifests = append(manifests, workv1alpha1.Manifest{RawExtension: runtime.RawExtension{Raw: raw}})
	}
	if cur == nil {
		err := r.Client.Create(ctx, &workv1alpha1.Work{
			ObjectMeta: metav1.ObjectMeta{Namespace: key.Namespace, Name: key.Name,
				Labels: map[string]string{mcs.ExportNamespaceLabel: k.Namespace, mcs.ExportNameLabel: k.Name}},
			Spec: workv1alpha1.WorkSpec{SuspendDispatching: ptr.To(true), Workload: workv1alpha1.WorkloadTemplate{Manifests: manifests}},
		})
		if apierrors.IsAlreadyExists(err) {
			return fmt.Errorf("work %s exists and is not the export record of %s (or is not cached yet): %w", key, k, err)
		}
		return err
	}
	same := len(cur.Spec.Workload.Manifests) == len(raws) && cur.Spec.SuspendDispatching != nil && *cur.Spec.SuspendDispatching
	for i := 0; same && i < len(raws); i++ {
		same = mcs.SameManifest(cur.Spec.Workload.Manifests[i].Raw, raws[i])
	}
	if same {
		return nil
	}
	next := cur.DeepCopy()
	next.Spec.SuspendDispatching = ptr.To(true)
	next.Spec.Workload.Manifests = manifests
	return r.Client.Update(ctx, next)
}

// writeExportStatus sets the member's ServiceExport conditions: Valid, and
// Conflict as the control plane judged it (none while not judged or not
// valid). Written only when they change.
func (r *Reconciler) writeExportStatus(ctx context.Context, w *memberWatch, export *unstructured.Unstructured, valid metav1.Condition, conflict *metav1.Condition) error {
	var status mcsv1alpha1.ServiceExportStatus
	if raw, ok := export.Object["status"].(map[string]any); ok {
		if err := runtime.DefaultUnstructuredConverter.FromUnstructured(raw, &status); err != nil {
			return fmt.Errorf("reading the status of ServiceExport %s/%s: %w", export.GetNamespace(), export.GetName(), err)
		}
	}
	before := append([]metav1.Condition(nil), status.Conditions...)
	valid.ObservedGeneration = export.GetGeneration()
	meta.SetStatusCondition(&status.Conditions, valid)
	if conflict != nil && valid.Status == metav1.ConditionTrue {
		c := *conflict
		c.ObservedGeneration, c.LastTransitionTime = export.GetGeneration(), metav1.Time{}
		meta.SetStatusCondition(&status.Conditions, c)
	} else {
		meta.RemoveStatusCondition(&status.Conditions, mcsv1alpha1.ServiceExportConflict)
	}
	if sameConditions(before, status.Conditions) {
		return nil
	}
	raw, err := runtime.DefaultUnstructuredConverter.ToUnstructured(&status)
	if err != nil {
		return err
	}
	next := export.DeepCopy()
	next.Object["status"] = raw
	_, err = w.member.Dynamic.Resource(serviceExports).Namespace(export.GetNamespace()).UpdateStatus(ctx, next, metav1.UpdateOptions{})
	if apierrors.IsNotFound(err) {
		return nil
	}
	return err
}

// sameConditions compares conditions by what they say (sameCondition).
func sameConditions(a, b []metav1.Condition) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if !sameCondition(meta.FindStatusCondition(b, a[i].Type), &a[i]) {
			return false
		}
	}
	return true
}

// sameCondition: the same status, reason, message and observed
// generation (the transition time aside); nil is never the same.
func sameCondition(a, b *metav1.Condition) bool {
	return a != nil && b != nil && a.Status == b.Status && a.Reason == b.Reason && a.Message == b.Message && a.ObservedGeneration == b.ObservedGeneration
}
