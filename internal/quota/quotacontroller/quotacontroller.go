// Package quotacontroller keeps FederatedResourceQuotas: their static
// assignments as member ResourceQuotas (Sync), the members' quotas in
// their status (Status), and, with FederatedQuotaEnforcement, what the
// namespace's placements request (Enforcement). Each records Karmada's
// events on the quota.
package quotacontroller

import (
	"context"
	"encoding/json"
	"fmt"
	"sort"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/tools/record"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/builder"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller/controllerutil"
	"sigs.k8s.io/controller-runtime/pkg/event"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	"sigs.k8s.io/controller-runtime/pkg/predicate"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	policyv1alpha1 "github.com/karmada-go/karmada/api/policy/v1alpha1"
	workv1alpha1 "github.com/karmada-go/karmada/api/work/v1alpha1"
	workv1alpha2 "github.com/karmada-go/karmada/api/work/v1alpha2"
	"github.com/karmada-go/karmada/internal/events"
	"github.com/karmada-go/karmada/internal/names"
	"github.com/karmada-go/karmada/internal/queues"
	"github.com/karmada-go/karmada/internal/quota"
)

// Controller names in --controllers, Karmada's.
const (
	SyncControllerName        = "federatedResourceQuotaSync"
	StatusControllerName      = "federatedResourceQuotaStatus"
	EnforcementControllerName = "federatedResourceQuotaEnforcement"
)

// Event sources, Karmada's controller names.
const (
	SyncSource        = "federated-resource-quota-sync-controller"
	StatusSource      = "federated-resource-quota-status-controller"
	EnforcementSource = "federated-resource-quota-enforcement-controller"
)

// EnforcementResync is how often the enforcement controller recounts a
// quota's overallUsed from the bindings besides its triggers (a quota
// created or its overall changed, a binding deleted): karmada-webhook
// records each admitted placement in it as it admits it, and a placement
// admitted but never written is given back at the latest then.
const EnforcementResync = 5 * time.Minute

// collected is the message of Karmada's status events.
func collected(q client.Object) string {
	return fmt.Sprintf("Collect status of FederatedResourceQuota(%s/%s) succeed.", q.GetNamespace(), q.GetName())
}

// workKind is the kind in the Works' names.
const workKind = "ResourceQuota"

// Sync keeps, for each FederatedResourceQuota, one Work per static
// assignment that carries a ResourceQuota of the quota's name and the
// assignment's hard limits to that cluster's namespace; a Work whose
// assignment is gone, or whose quota is deleted, is deleted (and so the
// member's ResourceQuota, which Karmada created).
type Sync struct {
	Client   client.Client
	Recorder record.EventRecorder
	Workers  int
}

// SetupWithManager registers the controller.
func (s *Sync) SetupWithManager(mgr ctrl.Manager) error {
	return ctrl.NewControllerManagedBy(mgr).Named(SyncControllerName).
		For(&policyv1alpha1.FederatedResourceQuota{}).
		Watches(&workv1alpha1.Work{}, handler.EnqueueRequestsFromMapFunc(quotaOfWork)).
		WithOptions(queues.Options(max(s.Workers, 1))).
		Complete(s)
}

func quotaOfWork(_ context.Context, obj client.Object) []reconcile.Request {
	l := obj.GetLabels()
	ns, name := l[policyv1alpha1.FederatedResourceQuotaNamespaceLabel], l[policyv1alpha1.FederatedResourceQuotaNameLabel]
	if ns == "" || name == "" {
		return nil
	}
	return []reconcile.Request{{NamespacedName: types.NamespacedName{Namespace: ns, Name: name}}}
}

// Reconcile makes a quota's Works match its static assignments. When it
// changed any, it records Karmada's SyncWorkSucceed on the quota (or
// SyncWorkFailed with the error).
func (s *Sync) Reconcile(ctx context.Context, req ctrl.Request) (ctrl.Result, error) {
	q := &policyv1alpha1.FederatedResourceQuota{}
	err := s.Client.Get(ctx, req.NamespacedName, q)
	if err != nil && !apierrors.IsNotFound(err) {
		return ctrl.Result{}, err
	}
	exists := err == nil && q.DeletionTimestamp.IsZero()
	changed, err := s.sync(ctx, req, q, exists)
	switch {
	case err != nil && exists:
		events.Warning(s.Recorder, q, events.SyncWorkFailed, "%v", err)
	case changed && exists && len(q.Spec.StaticAssignments) > 0:
		events.Normal(s.Recorder, q, events.SyncWorkSucceed, "Sync works for FederatedResourceQuota(%s) succeed.", req.NamespacedName.String())
	}
	return ctrl.Result{}, err
}

// sync writes the Works; changed says whether it created, changed or
// deleted any.
func (s *Sync) sync(ctx context.Context, req ctrl.Request, q *policyv1alpha1.FederatedResourceQuota, exists bool) (changed bool, _ error) {
	existing := &workv1alpha1.WorkList{}
	if err := s.Client.List(ctx, existing, client.MatchingLabels{policyv1alpha1.FederatedResourceQuotaNamespaceLabel: req.Namespace, policyv1alpha1.FederatedResourceQuotaNameLabel: req.Name}); err != nil {
		return false, err
	}
	want := map[string]corev1.ResourceList{}
	if exists {
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
			return changed, fmt.Errorf("deleting work %s/%s: %w", w.Namespace, w.Name, err)
		}
		changed = true
	}
	for execNS, hard := range want {
		manifest, err := json.Marshal(&corev1.ResourceQuota{
			TypeMeta:   metav1.TypeMeta{APIVersion: "v1", Kind: "ResourceQuota"},
			ObjectMeta: metav1.ObjectMeta{Namespace: q.Namespace, Name: q.Name},
			Spec:       corev1.ResourceQuotaSpec{Hard: hard},
		})
		if err != nil {
			return changed, err
		}
		work := &workv1alpha1.Work{ObjectMeta: metav1.ObjectMeta{Namespace: execNS, Name: names.WorkName(workKind, q.Name, q.Namespace)}}
		op, err := controllerutil.CreateOrPatch(ctx, s.Client, work, func() error {
			if work.Labels == nil {
				work.Labels = map[string]string{}
			}
			work.Labels[policyv1alpha1.FederatedResourceQuotaNamespaceLabel], work.Labels[policyv1alpha1.FederatedResourceQuotaNameLabel] = q.Namespace, q.Name
			work.Spec.Workload.Manifests = []workv1alpha1.Manifest{{RawExtension: runtime.RawExtension{Raw: manifest}}}
			return nil
		})
		if err != nil {
			if apierrors.IsNotFound(err) {
				// No such cluster (yet): its execution namespace comes with
				// it, and the Work watch is not triggered; look again.
				ctrl.LoggerFrom(ctx).Info("Static assignment for a cluster without an execution namespace", "quota", req.NamespacedName, "namespace", execNS)
				continue
			}
			return changed, fmt.Errorf("writing work %s/%s: %w", work.Namespace, work.Name, err)
		}
		changed = changed || op != controllerutil.OperationResultNone
	}
	return changed, nil
}

// Status keeps, in a quota's status, each static assignment's
// ResourceQuota as its cluster reports it (aggregatedStatus, sorted by
// cluster, from the Works applied and reported). Without
// FederatedQuotaEnforcement it also sets overall to spec.overall and
// overallUsed to the sum of what the members' quotas use, as Karmada does;
// with it, those are the Enforcement controller's.
type Status struct {
	Client      client.Client
	Recorder    record.EventRecorder
	Enforcement bool
	Workers     int
}

// SetupWithManager registers the controller.
func (s *Status) SetupWithManager(mgr ctrl.Manager) error {
	return ctrl.NewControllerManagedBy(mgr).Named(StatusControllerName).
		For(&policyv1alpha1.FederatedResourceQuota{}).
		Watches(&workv1alpha1.Work{}, handler.EnqueueRequestsFromMapFunc(quotaOfWork)).
		WithOptions(queues.Options(max(s.Workers, 1))).
		Complete(s)
}

// Reconcile writes a quota's status when it changed, and records
// AggregateStatusSucceed (or AggregateStatusFailed) on the quota.
func (s *Status) Reconcile(ctx context.Context, req ctrl.Request) (ctrl.Result, error) {
	q := &policyv1alpha1.FederatedResourceQuota{}
	if err := s.Client.Get(ctx, req.NamespacedName, q); err != nil {
		return ctrl.Result{}, client.IgnoreNotFound(err)
	}
	if !q.DeletionTimestamp.IsZero() {
		return ctrl.Result{}, nil
	}
	changed, err := s.collect(ctx, q)
	if err != nil {
		events.Warning(s.Recorder, q, events.AggregateStatusFailed, "%v", err)
		return ctrl.Result{}, err
	}
	if changed {
		events.Normal(s.Recorder, q, events.AggregateStatusSucceed, "%s", collected(q))
	}
	return ctrl.Result{}, nil
}

func (s *Status) collect(ctx context.Context, q *policyv1alpha1.FederatedResourceQuota) (bool, error) {
	works := &workv1alpha1.WorkList{}
	if err := s.Client.List(ctx, works, client.MatchingLabels{policyv1alpha1.FederatedResourceQuotaNamespaceLabel: q.Namespace, policyv1alpha1.FederatedResourceQuotaNameLabel: q.Name}); err != nil {
		return false, err
	}
	st := *q.Status.DeepCopy()
	st.AggregatedStatus = Aggregated(works.Items)
	if !s.Enforcement {
		st.Overall = q.Spec.Overall
		st.OverallUsed = nil
		for _, a := range st.AggregatedStatus {
			for n, u := range a.Used {
				st.OverallUsed = quota.Add(st.OverallUsed, corev1.ResourceList{n: u})
			}
		}
	}
	return patchStatus(ctx, s.Client, q, st)
}

// Aggregated is each cluster's ResourceQuota status from a quota's Works:
// only Works applied (Applied True) whose manifest reported a status, in
// cluster name order.
func Aggregated(works []workv1alpha1.Work) []policyv1alpha1.ClusterQuotaStatus {
	var out []policyv1alpha1.ClusterQuotaStatus
	for _, w := range works {
		cluster, ok := workv1alpha1.ClusterOfExecutionNamespace(w.Namespace)
		if !ok || !meta.IsStatusConditionTrue(w.Status.Conditions, workv1alpha1.WorkApplied) {
			continue
		}
		for _, ms := range w.Status.ManifestStatuses {
			if ms.Status == nil {
				continue
			}
			var rqs corev1.ResourceQuotaStatus
			if json.Unmarshal(ms.Status.Raw, &rqs) == nil {
				out = append(out, policyv1alpha1.ClusterQuotaStatus{ClusterName: cluster, Hard: rqs.Hard, Used: rqs.Used})
			}
			break
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].ClusterName < out[j].ClusterName })
	return out
}

// patchStatus writes st as q's status when it differs; it says whether it
// did.
func patchStatus(ctx context.Context, c client.Client, q *policyv1alpha1.FederatedResourceQuota, st policyv1alpha1.FederatedResourceQuotaStatus) (bool, error) {
	if equality.Semantic.DeepEqual(q.Status, st) {
		return false, nil
	}
	before := q.DeepCopy()
	q.Status = st
	if err := c.Status().Patch(ctx, q, client.MergeFromWithOptions(before, client.MergeFromWithOptimisticLock{})); err != nil {
		return false, client.IgnoreNotFound(err)
	}
	return true, nil
}

// Enforcement keeps a quota's overall (spec.overall) and overallUsed: what
// the placements of the namespace's ResourceBindings request, under the
// names of spec.overall (requests.cpu and cpu both count cpu requests),
// only those requested. Karmada's triggers: the quota created or its
// overall changed, a binding of the namespace deleted, and a resync every
// EnforcementResync; karmada-webhook records each admitted placement
// itself. It records CollectOverallStatusSucceed (or ...Failed) on the
// quota.
type Enforcement struct {
	Client   client.Client
	Recorder record.EventRecorder
	Workers  int
	// Resync is EnforcementResync when zero.
	Resync time.Duration
}

// SetupWithManager registers the controller.
func (e *Enforcement) SetupWithManager(mgr ctrl.Manager) error {
	overallChanged := predicate.Funcs{
		CreateFunc: func(event.CreateEvent) bool { return true },
		UpdateFunc: func(u event.UpdateEvent) bool {
			o, ok1 := u.ObjectOld.(*policyv1alpha1.FederatedResourceQuota)
			n, ok2 := u.ObjectNew.(*policyv1alpha1.FederatedResourceQuota)
			return !ok1 || !ok2 || !equality.Semantic.DeepEqual(o.Spec.Overall, n.Spec.Overall)
		},
		DeleteFunc:  func(event.DeleteEvent) bool { return false },
		GenericFunc: func(event.GenericEvent) bool { return false },
	}
	bindingDeleted := predicate.Funcs{
		CreateFunc:  func(event.CreateEvent) bool { return false },
		UpdateFunc:  func(event.UpdateEvent) bool { return false },
		DeleteFunc:  func(event.DeleteEvent) bool { return true },
		GenericFunc: func(event.GenericEvent) bool { return false },
	}
	return ctrl.NewControllerManagedBy(mgr).Named(EnforcementControllerName).
		For(&policyv1alpha1.FederatedResourceQuota{}, builder.WithPredicates(overallChanged)).
		Watches(&workv1alpha2.ResourceBinding{}, handler.EnqueueRequestsFromMapFunc(e.quotasOfNamespace), builder.WithPredicates(bindingDeleted)).
		WithOptions(queues.Options(max(e.Workers, 1))).
		Complete(e)
}

func (e *Enforcement) quotasOfNamespace(ctx context.Context, obj client.Object) []reconcile.Request {
	list := &policyv1alpha1.FederatedResourceQuotaList{}
	if err := e.Client.List(ctx, list, client.InNamespace(obj.GetNamespace())); err != nil {
		return nil
	}
	out := make([]reconcile.Request, 0, len(list.Items))
	for _, q := range list.Items {
		out = append(out, reconcile.Request{NamespacedName: client.ObjectKeyFromObject(&q)})
	}
	return out
}

// NamespaceUsage is what the placements of a namespace's bindings request.
func NamespaceUsage(ctx context.Context, c client.Reader, namespace string) (corev1.ResourceList, error) {
	rbs := &workv1alpha2.ResourceBindingList{}
	if err := c.List(ctx, rbs, client.InNamespace(namespace)); err != nil {
		return nil, err
	}
	used := corev1.ResourceList{}
	for i := range rbs.Items {
		if !rbs.Items[i].DeletionTimestamp.IsZero() {
			continue
		}
		used = quota.Add(used, quota.Usage(&rbs.Items[i].Spec))
	}
	return used, nil
}

// Reconcile recounts a quota's overallUsed, and comes back after the
// resync period.
func (e *Enforcement) Reconcile(ctx context.Context, req ctrl.Request) (ctrl.Result, error) {
	resync := e.Resync
	if resync <= 0 {
		resync = EnforcementResync
	}
	q := &policyv1alpha1.FederatedResourceQuota{}
	if err := e.Client.Get(ctx, req.NamespacedName, q); err != nil {
		return ctrl.Result{}, client.IgnoreNotFound(err)
	}
	if !q.DeletionTimestamp.IsZero() {
		return ctrl.Result{}, nil
	}
	used, err := NamespaceUsage(ctx, e.Client, q.Namespace)
	if err == nil {
		st := *q.Status.DeepCopy()
		st.Overall, st.OverallUsed = q.Spec.Overall, quota.UsedUnder(used, q.Spec.Overall)
		var changed bool
		if changed, err = patchStatus(ctx, e.Client, q, st); err == nil && changed {
			events.Normal(e.Recorder, q, events.CollectOverallStatusSucceed, "%s", collected(q))
		}
	}
	if err != nil {
		events.Warning(e.Recorder, q, events.CollectOverallStatusFailed, "%v", err)
		return ctrl.Result{}, err
	}
	return ctrl.Result{RequeueAfter: resync}, nil
}
