package execution

import (
	"context"
	"sync"
	"time"

	"k8s.io/apimachinery/pkg/api/equality"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/event"
	"sigs.k8s.io/controller-runtime/pkg/predicate"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	clusterv1alpha1 "github.com/karmada-go/karmada/api/cluster/v1alpha1"
)

// Backoff of a Work whose member lacks its type or namespace: steady
// first (a CRD or namespace propagating alongside arrives within seconds),
// then doubling to minutes.
const (
	firstWait   = time.Second
	steadyWaits = 5
	maxWait     = 5 * time.Minute
)

// waitingWorks are the Works waiting for a type or namespace their member
// does not have yet: how many times each has waited, and by cluster.
type waitingWorks struct {
	mu       sync.Mutex
	attempts map[types.NamespacedName]int
	cluster  map[types.NamespacedName]string
}

// next records one more wait of the Work and returns how long it is:
// firstWait steadyWaits times, then doubling to maxWait.
func (w *waitingWorks) next(work types.NamespacedName, cluster string) time.Duration {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.attempts == nil {
		w.attempts, w.cluster = map[types.NamespacedName]int{}, map[types.NamespacedName]string{}
	}
	n := w.attempts[work]
	w.attempts[work], w.cluster[work] = n+1, cluster
	switch {
	case n < steadyWaits:
		return firstWait
	case n-steadyWaits+1 >= 9: // 1 s << 9 is past maxWait
		return maxWait
	}
	return min(firstWait<<(n-steadyWaits+1), maxWait)
}

// clear forgets the Work's waits.
func (w *waitingWorks) clear(work types.NamespacedName) {
	w.mu.Lock()
	defer w.mu.Unlock()
	delete(w.attempts, work)
	delete(w.cluster, work)
}

// on returns the Works waiting on a cluster.
func (w *waitingWorks) on(cluster string) []reconcile.Request {
	w.mu.Lock()
	defer w.mu.Unlock()
	var out []reconcile.Request
	for work, c := range w.cluster {
		if c == cluster {
			out = append(out, reconcile.Request{NamespacedName: work})
		}
	}
	return out
}

// waitingOn maps a Cluster to the Works waiting on it.
func (r *Reconciler) waitingOn(_ context.Context, obj client.Object) []reconcile.Request {
	return r.waiting.on(obj.GetName())
}

// apiEnablementsChanged passes Cluster updates that change the APIs the
// member serves.
var apiEnablementsChanged = predicate.Funcs{
	CreateFunc:  func(event.CreateEvent) bool { return false },
	DeleteFunc:  func(event.DeleteEvent) bool { return false },
	GenericFunc: func(event.GenericEvent) bool { return false },
	UpdateFunc: func(e event.UpdateEvent) bool {
		o, ok1 := e.ObjectOld.(*clusterv1alpha1.Cluster)
		n, ok2 := e.ObjectNew.(*clusterv1alpha1.Cluster)
		return ok1 && ok2 && !equality.Semantic.DeepEqual(o.Status.APIEnablements, n.Status.APIEnablements)
	},
}
