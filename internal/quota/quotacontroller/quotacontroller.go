// Package quotacontroller keeps FederatedResourceQuotas: their static
// assignments as member ResourceQuotas (Sync) and their status (Status).
package quotacontroller

import (
	"context"
	"encoding/json"
	"fmt"
	"sort"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller"
	"sigs.k8s.io/controller-runtime/pkg/controller/controllerutil"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	policyv1alpha1 "github.com/karmada-go/karmada/api/policy/v1alpha1"
	workv1alpha1 "github.com/karmada-go/karmada/api/work/v1alpha1"
	workv1alpha2 "github.com/karmada-go/karmada/api/work/v1alpha2"
	"github.com/karmada-go/karmada/internal/names"
	"github.com/karmada-go/karmada/internal/quota"
)

// Controller names in --controllers, Karmada's.
const (
	SyncControllerName   = "federatedResourceQuotaSync"
	StatusControllerName = "federatedResourceQuotaStatus"
)

// workKind is the kind in the Works' names.
const workKind = "ResourceQuota"

// Sync keeps, for each FederatedResourceQuota, one Work per static
// assignment that carries a ResourceQuota of the quota's name and the
// assignment's hard limits to that cluster's namespace; a Work whose
// assignment is gone, or whose quota is deleted, is deleted (and so the
// member's ResourceQuota, which Karmada created).
type Sync struct {
	Client  client.Client
	Workers int
}

// SetupWithManager registers the controller.
func (s *Sync) SetupWithManager(mgr ctrl.Manager) error {
	return ctrl.NewControllerManagedBy(mgr).Named(SyncControllerName).
		For(&policyv1alpha1.FederatedResourceQuota{}).
		Watches(&workv1alpha1.Work{}, handler.EnqueueRequestsFromMapFunc(quotaOfWork)).
		WithOptions(controller.Options{MaxConcurrentReconciles: max(s.Workers, 1)}).
		Complete(s)
}

func quotaOfWork(_ context.Context, obj client.Object) []reconcile.Request {
	l := obj.GetLabels()
	ns, name := l[quota.WorkNamespaceLabel], l[quota.WorkNameLabel]
	if ns == "" || name == "" {
		return nil
	}
	return []reconcile.Request{{NamespacedName: types.NamespacedName{Namespace: ns, Name: name}}}
}

// Reconcile makes a quota's Works match its static assignments.
func (s *Sync) Reconcile(ctx context.Context, req ctrl.Request) (ctrl.Result, error) {
	q := &policyv1alpha1.FederatedResourceQuota{}
	err := s.Client.Get(ctx, req.NamespacedName, q)
	if err != nil && !apierrors.IsNotFound(err) {
		return ctrl.Result{}, err
	}
	existing := &workv1alpha1.WorkList{}
	if err := s.Client.List(ctx, existing, client.MatchingLabels{quota.WorkNamespaceLabel: req.Namespace, quota.WorkNameLabel: req.Name}); err != nil {
		return ctrl.Result{}, err
	}
	want := map[string]corev1.ResourceList{}
	if err == nil && q.DeletionTimestamp.IsZero() {
		for _, a := range q.Spec.StaticAssignments {
			want[workv1alpha1.ExecutionNamespace(a.ClusterName)] = a.Hard
		}
	}
	for i := range existing.Items {
		w := &existing.Items[i]
		if _, ok := want[w.Namespace]; ok || !w.DeletionTimestamp.IsZero() {
			continue
		}
		if err := s.Client.Delete(ctx, w); err != nil && !apierrors.IsNotFound(err) {
			return ctrl.Result{}, fmt.Errorf("deleting work %s/%s: %w", w.Namespace, w.Name, err)
		}
	}
	for execNS, hard := range want {
		manifest, err := json.Marshal(&corev1.ResourceQuota{
			TypeMeta:   metav1.TypeMeta{APIVersion: "v1", Kind: "ResourceQuota"},
			ObjectMeta: metav1.ObjectMeta{Namespace: q.Namespace, Name: q.Name},
			Spec:       corev1.ResourceQuotaSpec{Hard: hard},
		})
		if err != nil {
			return ctrl.Result{}, err
		}
		work := &workv1alpha1.Work{ObjectMeta: metav1.ObjectMeta{Namespace: execNS, Name: names.WorkName(workKind, q.Name, q.Namespace)}}
		if _, err := controllerutil.CreateOrPatch(ctx, s.Client, work, func() error {
			if work.Labels == nil {
				work.Labels = map[string]string{}
			}
			work.Labels[quota.WorkNamespaceLabel], work.Labels[quota.WorkNameLabel] = q.Namespace, q.Name
			work.Spec.Workload.Manifests = []workv1alpha1.Manifest{{RawExtension: runtime.RawExtension{Raw: manifest}}}
			return nil
		}); err != nil {
			if apierrors.IsNotFound(err) {
				// No such cluster (yet): its execution namespace comes with
				// it, and the Work watch is not triggered; look again.
				ctrl.LoggerFrom(ctx).Info("Static assignment for a cluster without an execution namespace", "quota", req.NamespacedName, "namespace", execNS)
				continue
			}
			return ctrl.Result{}, fmt.Errorf("writing work %s/%s: %w", work.Namespace, work.Name, err)
		}
	}
	return ctrl.Result{}, nil
}

// Status keeps a quota's status: the overall limit, what the namespace's
// bindings' placements request (overallUsed), and each static
// assignment's ResourceQuota as its cluster reports it.
type Status struct {
	Client  client.Client
	Workers int
}

// SetupWithManager registers the controller.
func (s *Status) SetupWithManager(mgr ctrl.Manager) error {
	return ctrl.NewControllerManagedBy(mgr).Named(StatusControllerName).
		For(&policyv1alpha1.FederatedResourceQuota{}).
		Watches(&workv1alpha1.Work{}, handler.EnqueueRequestsFromMapFunc(quotaOfWork)).
		Watches(&workv1alpha2.ResourceBinding{}, handler.EnqueueRequestsFromMapFunc(s.quotasOfNamespace)).
		WithOptions(controller.Options{MaxConcurrentReconciles: max(s.Workers, 1)}).
		Complete(s)
}

func (s *Status) quotasOfNamespace(ctx context.Context, obj client.Object) []reconcile.Request {
	list := &policyv1alpha1.FederatedResourceQuotaList{}
	if err := s.Client.List(ctx, list, client.InNamespace(obj.GetNamespace())); err != nil {
		return nil
	}
	out := make([]reconcile.Request, 0, len(list.Items))
	for _, q := range list.Items {
		out = append(out, reconcile.Request{NamespacedName: client.ObjectKeyFromObject(&q)})
	}
	return out
}

// NamespaceUsage is what the placements of a namespace's bindings request,
// but for the binding named except.
func NamespaceUsage(ctx context.Context, c client.Reader, namespace, except string) (corev1.ResourceList, error) {
	rbs := &workv1alpha2.ResourceBindingList{}
	if err := c.List(ctx, rbs, client.InNamespace(namespace)); err != nil {
		return nil, err
	}
	used := corev1.ResourceList{}
	for i := range rbs.Items {
		if rbs.Items[i].Name == except || !rbs.Items[i].DeletionTimestamp.IsZero() {
			continue
		}
		used = quota.Add(used, quota.Usage(&rbs.Items[i].Spec))
	}
	return used, nil
}

// Reconcile writes a quota's status when it changed.
func (s *Status) Reconcile(ctx context.Context, req ctrl.Request) (ctrl.Result, error) {
	q := &policyv1alpha1.FederatedResourceQuota{}
	if err := s.Client.Get(ctx, req.NamespacedName, q); err != nil {
		return ctrl.Result{}, client.IgnoreNotFound(err)
	}
	used, err := NamespaceUsage(ctx, s.Client, q.Namespace, "")
	if err != nil {
		return ctrl.Result{}, err
	}
	works := &workv1alpha1.WorkList{}
	if err := s.Client.List(ctx, works, client.MatchingLabels{quota.WorkNamespaceLabel: q.Namespace, quota.WorkNameLabel: q.Name}); err != nil {
		return ctrl.Result{}, err
	}
	st := policyv1alpha1.FederatedResourceQuotaStatus{Overall: q.Spec.Overall, OverallUsed: limitedTo(used, q.Spec.Overall)}
	for _, w := range works.Items {
		cluster, ok := workv1alpha1.ClusterOfExecutionNamespace(w.Namespace)
		if !ok {
			continue
		}
		item := policyv1alpha1.ClusterQuotaStatus{ClusterName: cluster}
		for _, ms := range w.Status.ManifestStatuses {
			if ms.Status == nil {
				continue
			}
			var rqs corev1.ResourceQuotaStatus
			if json.Unmarshal(ms.Status.Raw, &rqs) == nil {
				item.Hard, item.Used = rqs.Hard, rqs.Used
			}
		}
		st.AggregatedStatus = append(st.AggregatedStatus, item)
	}
	sort.Slice(st.AggregatedStatus, func(i, j int) bool { return st.AggregatedStatus[i].ClusterName < st.AggregatedStatus[j].ClusterName })
	if equality.Semantic.DeepEqual(q.Status, st) {
		return ctrl.Result{}, nil
	}
	before := q.DeepCopy()
	q.Status = st
	return ctrl.Result{}, client.IgnoreNotFound(s.Client.Status().Patch(ctx, q, client.MergeFromWithOptions(before, client.MergeFromWithOptimisticLock{})))
}

// limitedTo keeps the resources the overall limit names, under its names
// (requests.cpu reports cpu requests); zero for those unused.
func limitedTo(used, overall corev1.ResourceList) corev1.ResourceList {
	out := corev1.ResourceList{}
	for n := range overall {
		u := used[quota.Requested(n)].DeepCopy()
		if u.Format == "" {
			u.Format = resource.DecimalSI
		}
		out[n] = u
	}
	return out
}
