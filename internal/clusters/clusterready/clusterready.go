// Package clusterready answers, for controllers that act on member clusters,
// whether a Cluster is Ready and which Cluster events can change that.
package clusterready

import (
	"context"
	"fmt"
	"slices"

	"k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	toolscache "k8s.io/client-go/tools/cache"
	"k8s.io/klog/v2"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/event"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	"sigs.k8s.io/controller-runtime/pkg/manager"
	"sigs.k8s.io/controller-runtime/pkg/predicate"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	clusterv1alpha1 "github.com/karmada-go/karmada/api/cluster/v1alpha1"
	remedyv1alpha1 "github.com/karmada-go/karmada/api/remedy/v1alpha1"
	workv1alpha1 "github.com/karmada-go/karmada/api/work/v1alpha1"
)

// IsReady reports whether the Cluster exists and its Ready condition is True.
func IsReady(c *clusterv1alpha1.Cluster) bool {
	return c != nil && meta.IsStatusConditionTrue(c.Status.Conditions, clusterv1alpha1.ClusterConditionReady)
}

// TrafficBlocked reports whether the cluster's remedy actions (the remedy
// controller's) keep multi-cluster traffic away from it (TrafficControl).
func TrafficBlocked(c *clusterv1alpha1.Cluster) bool {
	return c != nil && slices.Contains(c.Status.RemedyActions, string(remedyv1alpha1.TrafficControl))
}

// TrafficChanged passes the Cluster updates that block or unblock its
// traffic (TrafficBlocked).
var TrafficChanged = predicate.Funcs{
	UpdateFunc: func(e event.UpdateEvent) bool {
		o, ok1 := e.ObjectOld.(*clusterv1alpha1.Cluster)
		n, ok2 := e.ObjectNew.(*clusterv1alpha1.Cluster)
		return !ok1 || !ok2 || TrafficBlocked(o) != TrafficBlocked(n)
	},
	CreateFunc:  func(event.CreateEvent) bool { return false },
	DeleteFunc:  func(event.DeleteEvent) bool { return false },
	GenericFunc: func(event.GenericEvent) bool { return false },
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

// Clusters reads Clusters from the manager's informer without copying them.
// The controllers that read a Cluster on every reconcile of a Work or a
// binding (execution, work status, binding, taint manager) would otherwise
// deep-copy it each time, API enablements and all: more than the rest of
// such a reconcile allocates. What Get returns is the informer's own object, shared
// by every reader: it must not be modified.
type Clusters struct {
	informer toolscache.SharedIndexInformer
	// reader serves Get until the informer has synced (the client waits for
	// it), so that no reconcile takes a Cluster not listed yet for one that
	// does not exist.
	reader client.Reader
	// live confirms a Cluster the informer lacks: one created a moment ago
	// may not be listed yet, and taking it for gone would let its Works go.
	live client.Reader
}

// NewClusters reads through the manager's cache, whose Cluster informer it
// asks for (it starts with the manager).
func NewClusters(ctx context.Context, mgr manager.Manager) (*Clusters, error) {
	inf, err := mgr.GetCache().GetInformer(ctx, &clusterv1alpha1.Cluster{})
	if err != nil {
		return nil, fmt.Errorf("cluster informer: %w", err)
	}
	shared, ok := inf.(toolscache.SharedIndexInformer)
	if !ok {
		return nil, fmt.Errorf("cluster informer: %T has no indexer", inf)
	}
	return &Clusters{informer: shared, reader: mgr.GetClient(), live: mgr.GetAPIReader()}, nil
}

// Get returns the named Cluster, or a NotFound error. The object is shared:
// read it, never modify it. A Cluster the informer lacks is looked for in
// the API server (one GET, only then) before NotFound is answered.
func (c *Clusters) Get(ctx context.Context, name string) (*clusterv1alpha1.Cluster, error) {
	if !c.informer.HasSynced() {
		cl := &clusterv1alpha1.Cluster{}
		if err := c.reader.Get(ctx, client.ObjectKey{Name: name}, cl); err != nil {
			return nil, err
		}
		return cl, nil
	}
	obj, exists, err := c.informer.GetIndexer().GetByKey(name)
	if err != nil {
		return nil, err
	}
	if !exists {
		if c.live == nil {
			return nil, apierrors.NewNotFound(schema.GroupResource{Group: clusterv1alpha1.GroupName, Resource: "clusters"}, name)
		}
		cl := &clusterv1alpha1.Cluster{}
		if err := c.live.Get(ctx, client.ObjectKey{Name: name}, cl); err != nil {
			return nil, err
		}
		return cl, nil
	}
	cl, ok := obj.(*clusterv1alpha1.Cluster)
	if !ok {
		return nil, fmt.Errorf("cluster %s: the informer holds a %T", name, obj)
	}
	return cl, nil
}

// PlacementChanged reports whether a Cluster update may change where
// bindings can go: what the scheduler and the eviction controllers answer.
func PlacementChanged(o, n *clusterv1alpha1.Cluster) bool {
	ready := func(c *clusterv1alpha1.Cluster) metav1.ConditionStatus {
		if cond := meta.FindStatusCondition(c.Status.Conditions, clusterv1alpha1.ClusterConditionReady); cond != nil {
			return cond.Status
		}
		return metav1.ConditionUnknown
	}
	return !equality.Semantic.DeepEqual(o.Spec, n.Spec) ||
		!equality.Semantic.DeepEqual(o.Labels, n.Labels) ||
		!o.DeletionTimestamp.Equal(n.DeletionTimestamp) ||
		ready(o) != ready(n) ||
		!equality.Semantic.DeepEqual(o.Status.APIEnablements, n.Status.APIEnablements) ||
		(o.Status.ResourceSummary == nil) != (n.Status.ResourceSummary == nil)
}
