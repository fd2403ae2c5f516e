package queues

import (
	"testing"
	"time"

	"k8s.io/client-go/util/workqueue"
)

// Fresh work is taken before the backlog queued at Low, whatever the order
// it came in; a plain queue keeps arrival order.
func TestFreshBeforeTheBacklog(t *testing.T) {
	q := NewPriority[string]("test", nil)
	defer q.ShutDown()
	for _, b := range []string{"old-1", "old-2", "old-3"} {
		Add[string](q, Low, b)
	}
	Add[string](q, 0, "fresh")
	var got []string
	for range 4 {
		item, shutdown := q.Get()
		if shutdown {
			t.Fatal("shut down")
		}
		got = append(got, item)
		q.Done(item)
	}
	if got[0] != "fresh" {
		t.Errorf("taken %v, want the fresh item first", got)
	}

	plain := workqueue.NewTyped[string]()
	defer plain.ShutDown()
	Add[string](plain, Low, "old")
	Add[string](plain, 0, "fresh")
	if item, _ := plain.Get(); item != "old" {
		t.Errorf("the plain queue gave %q first, want arrival order", item)
	}
}

// A worker waiting in Get is let go at shutdown (controller-runtime's own
// priority queue keeps it waiting, and its manager with it).
func TestWaitingWorkerLetGoAtShutdown(t *testing.T) {
	q := NewPriority[string]("test", nil)
	done := make(chan bool)
	go func() {
		_, shutdown := q.Get()
		done <- shutdown
	}()
	q.ShutDown()
	select {
	case shutdown := <-done:
		if !shutdown {
			t.Error("Get returned an item from an empty queue")
		}
	case <-time.After(10 * time.Second):
		t.Fatal("the worker still waits in Get after ShutDown")
	}
	if _, shutdown := q.Get(); !shutdown {
		t.Error("Get after ShutDown did not say so")
	}
	q.ShutDown() // twice is harmless
}

// BenchmarkFreshBehindBacklog: how long a fresh item waits behind a
// backlog of 1,000 (each taking 20 µs of a single worker's time), on the
// priority queue and, for comparison, on controller-runtime's plain queue.
func BenchmarkFreshBehindBacklog(b *testing.B) {
	for _, tc := range []struct {
		name string
		new  func() workqueue.TypedInterface[int]
	}{
		{"priority", func() workqueue.TypedInterface[int] { return NewPriority[int]("bench", nil) }},
		{"plain", func() workqueue.TypedInterface[int] { return workqueue.NewTyped[int]() }},
	} {
		b.Run(tc.name, func(b *testing.B) {
			var waited time.Duration
			for range b.N {
				q := tc.new()
				for i := range 1000 {
					Add(q, Low, i)
				}
				start := time.Now()
				Add(q, 0, -1)
				for {
					item, _ := q.Get()
					q.Done(item)
					if item == -1 {
						break
					}
					busy := time.Now()
					for time.Since(busy) < 20*time.Microsecond {
					}
				}
				waited += time.Since(start)
				q.ShutDown()
			}
			b.ReportMetric(float64(waited.Microseconds())/float64(b.N), "µs-waited/op")
		})
	}
}
