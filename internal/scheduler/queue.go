package scheduler

import (
	"sync"

	"k8s.io/client-go/util/workqueue"
	"sigs.k8s.io/controller-runtime/pkg/controller/priorityqueue"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"
)

// newPriorityQueue is controller-runtime's priority queue, made to let its
// workers go at shutdown: its Get waits for an item even once the queue is
// shut down (controller-runtime v0.21), so a stopping scheduler would wait
// out the manager's whole grace period for workers blocked there.
func newPriorityQueue(name string, rl workqueue.TypedRateLimiter[reconcile.Request]) priorityqueue.PriorityQueue[reconcile.Request] {
	return &stoppableQueue{
		PriorityQueue: priorityqueue.New(name, func(o *priorityqueue.Opts[reconcile.Request]) { o.RateLimiter = rl }),
		done:          make(chan struct{}),
	}
}

type stoppableQueue struct {
	priorityqueue.PriorityQueue[reconcile.Request]
	done chan struct{}
	once sync.Once
}

type got struct {
	req      reconcile.Request
	priority int
	shutdown bool
}

// GetWithPriority waits for the next item, or for the shutdown.
func (q *stoppableQueue) GetWithPriority() (reconcile.Request, int, bool) {
	select {
	case <-q.done:
		return reconcile.Request{}, 0, true
	default:
	}
	ch := make(chan got, 1)
	go func() {
		r, p, s := q.PriorityQueue.GetWithPriority()
		ch <- got{r, p, s}
	}()
	select {
	case g := <-ch:
		return g.req, g.priority, g.shutdown
	case <-q.done:
		// The inner Get stays blocked: the queue is gone with the process
		// (or the manager) anyway.
		return reconcile.Request{}, 0, true
	}
}

func (q *stoppableQueue) Get() (reconcile.Request, bool) {
	r, _, s := q.GetWithPriority()
	return r, s
}

func (q *stoppableQueue) ShutDown() {
	q.once.Do(func() {
		close(q.done)
		q.PriorityQueue.ShutDown()
	})
}

func (q *stoppableQueue) ShutDownWithDrain() { q.ShutDown() }
