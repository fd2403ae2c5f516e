// Package clusterready answers, for controllers that act on member clusters,
// whether a Cluster is Ready and which Cluster events can change that.
package clusterready

import (
	"context"

	"k8s.io/apimachinery/pkg/api/equality"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/klog/v2"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/event"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	"sigs.k8s.io/controller-runtime/pkg/predicate"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	clusterv1alpha1 "github.com/karmada-go/karmada/api/cluster/v1alpha1"
	workv1alpha1 "github.com/karmada-go/karmada/api/work/v1alpha1"
)

// IsReady reports whether the Cluster exists and its Ready condition is True.
func IsReady(c *clusterv1alpha1.Cluster) bool {
	return c != nil && meta.IsStatusConditionTrue(c.Status.Conditions, clusterv1alpha1.ClusterConditionReady)
}

// WorksOf maps a Cluster event to the Works in the Cluster's execution
// namespace, for controllers whose Works a readiness change may unblock.
func WorksOf(c client.Reader) handler.MapFunc {
	return func(ctx context.Context, obj client.Object) []reconcile.Request {
		works := &workv1alpha1.WorkList{}
		if err := c.List(ctx, works, client.InNamespace(workv1alpha1.ExecutionNamespace(obj.GetName()))); err != nil {
			klog.FromContext(ctx).Error(err, "Listing works of cluster", "cluster", obj.GetName())
			return nil
		}
		out := make([]reconcile.Request, 0, len(works.Items))
		for i := range works.Items {
			out = append(out, reconcile.Request{NamespacedName: client.ObjectKeyFromObject(&works.Items[i])})
		}
		return out
	}
}

// Changed passes the Cluster events that matter to controllers acting on
// readiness: creation and deletion, and updates of the spec or finalizers
// (generation, deletion) or of the Ready condition. The status refreshes of
// resources and nodes, every few seconds per cluster, do not pass.
var Changed = predicate.Or(predicate.GenerationChangedPredicate{}, predicate.Funcs{
	UpdateFunc: func(e event.UpdateEvent) bool {
		oldC, ok1 := e.ObjectOld.(*clusterv1alpha1.Cluster)
		newC, ok2 := e.ObjectNew.(*clusterv1alpha1.Cluster)
		if !ok1 || !ok2 {
			return true
		}
		if !equality.Semantic.DeepEqual(oldC.Finalizers, newC.Finalizers) {
			return true
		}
		o := meta.FindStatusCondition(oldC.Status.Conditions, clusterv1alpha1.ClusterConditionReady)
		n := meta.FindStatusCondition(newC.Status.Conditions, clusterv1alpha1.ClusterConditionReady)
		return !equality.Semantic.DeepEqual(o, n)
	},
	CreateFunc:  func(event.CreateEvent) bool { return false },
	DeleteFunc:  func(event.DeleteEvent) bool { return false },
	GenericFunc: func(event.GenericEvent) bool { return false },
})
