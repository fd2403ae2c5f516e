// Package remedy is the remedy controller (Karmada's "remedy"): each
// Cluster's status.remedyActions is the sorted set of the actions of the
// Remedies that select the cluster and whose decisionMatches its
// conditions meet. It changes when a Remedy, or a cluster's conditions,
// change; what the actions do is up to their readers (TrafficControl:
// internal/services, through clusterready.TrafficBlocked).
package remedy

import (
	"context"
	"slices"

	"k8s.io/apimachinery/pkg/api/equality"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/util/workqueue"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/builder"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/event"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	"sigs.k8s.io/controller-runtime/pkg/predicate"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	clusterv1alpha1 "github.com/karmada-go/karmada/api/cluster/v1alpha1"
	remedyv1alpha1 "github.com/karmada-go/karmada/api/remedy/v1alpha1"
	"github.com/karmada-go/karmada/internal/queues"
)

// ControllerName is the controller's name in --controllers (Karmada's).
const ControllerName = "remedy"

// Reconciler writes the clusters' remedy actions.
type Reconciler struct {
	Client client.Client
}

// SetupWithManager watches the Clusters (created, or with other conditions
// or actions: an action written by anyone else is put right) and the
// Remedies (each change looks again at the clusters the old and the new
// Remedy select).
func (r *Reconciler) SetupWithManager(mgr ctrl.Manager) error {
	return ctrl.NewControllerManagedBy(mgr).Named(ControllerName).
		For(&clusterv1alpha1.Cluster{}, builder.WithPredicates(predicate.Funcs{
			UpdateFunc: func(e event.UpdateEvent) bool {
				o, ok1 := e.ObjectOld.(*clusterv1alpha1.Cluster)
				n, ok2 := e.ObjectNew.(*clusterv1alpha1.Cluster)
				return !ok1 || !ok2 || !equality.Semantic.DeepEqual(o.Status.Conditions, n.Status.Conditions) ||
					!slices.Equal(o.Status.RemedyActions, n.Status.RemedyActions)
			},
			DeleteFunc: func(event.DeleteEvent) bool { return false },
		})).
		Watches(&remedyv1alpha1.Remedy{}, &remedyHandler{c: r.Client}).
		WithOptions(queues.Options(1)).
		Complete(r)
}

// Reconcile writes one cluster's actions.
func (r *Reconciler) Reconcile(ctx context.Context, req ctrl.Request) (ctrl.Result, error) {
	cluster := &clusterv1alpha1.Cluster{}
	if err := r.Client.Get(ctx, req.NamespacedName, cluster); err != nil || !cluster.DeletionTimestamp.IsZero() {
		return ctrl.Result{}, client.IgnoreNotFound(err)
	}
	remedies := &remedyv1alpha1.RemedyList{}
	if err := r.Client.List(ctx, remedies); err != nil {
		return ctrl.Result{}, err
	}
	actions := Actions(remedies.Items, cluster)
	if slices.Equal(actions, cluster.Status.RemedyActions) {
		return ctrl.Result{}, nil
	}
	// Over the version read: conditions newer than the cache's are
	// answered by the watch, not overwritten by a stale decision.
	patch := client.MergeFromWithOptions(cluster.DeepCopy(), client.MergeFromWithOptimisticLock{})
	cluster.Status.RemedyActions = actions
	if err := r.Client.Status().Patch(ctx, cluster, patch); err != nil {
		return ctrl.Result{}, client.IgnoreNotFound(err)
	}
	ctrl.LoggerFrom(ctx).V(2).Info("Updated remedy actions", "cluster", cluster.Name, "actions", actions)
	return ctrl.Result{}, nil
}

// Actions is the sorted set of the actions of the Remedies that select
// the cluster and whose decisionMatches its conditions meet; nil when
// there are none.
func Actions(remedies []remedyv1alpha1.Remedy, cluster *clusterv1alpha1.Cluster) []string {
	var out []string
	for i := range remedies {
		s := &remedies[i].Spec
		if !Selects(s, cluster.Name) || !Matches(s.DecisionMatches, cluster.Status.Conditions) {
			continue
		}
		for _, a := range s.Actions {
			out = append(out, string(a))
		}
	}
	slices.Sort(out)
	return slices.Compact(out)
}

// Selects reports whether the Remedy looks at the cluster: every cluster
// without clusterAffinity, else the clusters it names.
func Selects(s *remedyv1alpha1.RemedySpec, cluster string) bool {
	return s.ClusterAffinity == nil || slices.Contains(s.ClusterAffinity.ClusterNames, cluster)
}

// Matches reports whether the conditions meet any of the decision matches
// (always when there are none). A condition the cluster does not have
// meets neither Equal nor NotEqual.
func Matches(matches []remedyv1alpha1.DecisionMatch, conditions []metav1.Condition) bool {
	if len(matches) == 0 {
		return true
	}
	for _, m := range matches {
		req := m.ClusterConditionMatch
		if req == nil {
			continue
		}
		c := meta.FindStatusCondition(conditions, string(req.ConditionType))
		if c == nil {
			continue
		}
		switch equal := string(c.Status) == req.ConditionStatus; req.Operator {
		case remedyv1alpha1.ClusterConditionEqual:
			if equal {
				return true
			}
		case remedyv1alpha1.ClusterConditionNotEqual:
			if !equal {
				return true
			}
		}
	}
	return false
}

// remedyHandler maps a Remedy event to the clusters it selected before
// and selects now: the names listed, or every cluster when either has no
// clusterAffinity.
type remedyHandler struct{ c client.Reader }

type queue = workqueue.TypedRateLimitingInterface[reconcile.Request]

func (h *remedyHandler) Create(ctx context.Context, e event.CreateEvent, q queue) {
	h.enqueue(ctx, q, e.Object)
}

func (h *remedyHandler) Update(ctx context.Context, e event.UpdateEvent, q queue) {
	h.enqueue(ctx, q, e.ObjectOld, e.ObjectNew)
}

func (h *remedyHandler) Delete(ctx context.Context, e event.DeleteEvent, q queue) {
	h.enqueue(ctx, q, e.Object)
}

func (h *remedyHandler) Generic(ctx context.Context, e event.GenericEvent, q queue) {
	h.enqueue(ctx, q, e.Object)
}

func (h *remedyHandler) enqueue(ctx context.Context, q queue, objs ...client.Object) {
	var names []string
	for _, o := range objs {
		rm, ok := o.(*remedyv1alpha1.Remedy)
		if !ok {
			continue
		}
		if rm.Spec.ClusterAffinity == nil {
			clusters := &clusterv1alpha1.ClusterList{}
			if err := h.c.List(ctx, clusters); err != nil {
				ctrl.LoggerFrom(ctx).Error(err, "Listing clusters for a Remedy", "remedy", rm.Name)
				return
			}
			for i := range clusters.Items {
				q.Add(reconcile.Request{NamespacedName: types.NamespacedName{Name: clusters.Items[i].Name}})
			}
			return
		}
		names = append(names, rm.Spec.ClusterAffinity.ClusterNames...)
	}
	for _, n := range names {
		q.Add(reconcile.Request{NamespacedName: types.NamespacedName{Name: n}})
	}
}

var _ handler.EventHandler = &remedyHandler{}
