// Package queues is how every controller of ours gets its work queue:
// controller-runtime's plain queue, or (ControllerPriorityQueue) its
// priority queue, in which the items of a watch's initial list and of
// resyncs wait behind fresh changes, so that a restart's backlog never
// starves a user's new change.
//
// The managers themselves are left without UsePriorityQueue: a controller
// made without these options keeps the plain queue rather than
// controller-runtime's own priority queue, whose workers would keep the
// manager waiting at shutdown.
package queues

import (
	"sync"

	"github.com/karmada-go/karmada/internal/features"
	"k8s.io/client-go/util/workqueue"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/controller"
	"sigs.k8s.io/controller-runtime/pkg/controller/priorityqueue"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"
)

// Low is the priority of work nobody is waiting for: an object of a
// watch's initial list, a resync (controller-runtime's LowPriority). A
// fresh change is queued at 0.
const Low = -100

// Options are a controller's options: its workers (at least one), and,
// with ControllerPriorityQueue (the process's --feature-gates), a priority
// queue that lets its workers go at shutdown.
func Options(workers int) controller.Options {
	return TypedOptions[reconcile.Request](workers)
}

// TypedOptions is Options for a controller of another request type.
func TypedOptions[T comparable](workers int) controller.TypedOptions[T] {
	o := controller.TypedOptions[T]{MaxConcurrentReconciles: max(workers, 1)}
	if Prioritised() {
		o.UsePriorityQueue = ptr.To(true)
		o.NewQueue = func(name string, rl workqueue.TypedRateLimiter[T]) workqueue.TypedRateLimitingInterface[T] {
			return NewPriority(name, rl)
		}
	}
	return o
}

// Prioritised says whether the controllers use the priority queue
// (ControllerPriorityQueue).
func Prioritised() bool {
	return features.Gate.Enabled(features.ControllerPriorityQueue)
}

// NewPriority is controller-runtime's priority queue, made to let its
// workers go at shutdown: its Get waits for an item even once the queue is
// shut down (controller-runtime v0.21), so a stopping manager would wait
// out its whole grace period for workers blocked there.
func NewPriority[T comparable](name string, rl workqueue.TypedRateLimiter[T]) priorityqueue.PriorityQueue[T] {
	return &stoppable[T]{
		PriorityQueue: priorityqueue.New(name, func(o *priorityqueue.Opts[T]) {
			if rl != nil {
				o.RateLimiter = rl
			}
		}),
		done: make(chan struct{}),
	}
}

type stoppable[T comparable] struct {
	priorityqueue.PriorityQueue[T]
	done chan struct{}
	once sync.Once
}

type got[T comparable] struct {
	item     T
	priority int
	shutdown bool
}

// GetWithPriority waits for the next item, or for the shutdown.
func (q *stoppable[T]) GetWithPriority() (T, int, bool) {
	var zero T
	select {
	case <-q.done:
		return zero, 0, true
	default:
	}
	ch := make(chan got[T], 1)
	go func() {
		item, p, s := q.PriorityQueue.GetWithPriority()
		ch <- got[T]{item, p, s}
	}()
	select {
	case g := <-ch:
		return g.item, g.priority, g.shutdown
	case <-q.done:
		// The inner Get stays blocked: the queue is gone with the process
		// (or the manager) anyway.
		return zero, 0, true
	}
}

func (q *stoppable[T]) Get() (T, bool) {
	item, _, s := q.GetWithPriority()
	return item, s
}

func (q *stoppable[T]) ShutDown() {
	q.once.Do(func() {
		close(q.done)
		q.PriorityQueue.ShutDown()
	})
}

func (q *stoppable[T]) ShutDownWithDrain() { q.ShutDown() }

// Add queues item at priority, on a priority queue; on another queue,
// in arrival order.
func Add[T comparable](q workqueue.TypedInterface[T], priority int, item T) {
	if pq, ok := q.(priorityqueue.PriorityQueue[T]); ok {
		pq.AddWithOpts(priorityqueue.AddOpts{Priority: priority}, item)
		return
	}
	q.Add(item)
}
