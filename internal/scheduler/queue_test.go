package scheduler

import (
	"fmt"
	"testing"
	"time"

	"k8s.io/client-go/util/workqueue"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	workv1alpha2 "github.com/karmada-go/karmada/api/work/v1alpha2"
)

// The priority queue hands out the highest schedulePriority first, in
// arrival order among equals; the plain queue in arrival order; a shut
// down queue lets a waiting worker go.
func TestQueueOrder(t *testing.T) {
	binding := func(name string, p int32) *workv1alpha2.ResourceBinding {
		rb := &workv1alpha2.ResourceBinding{}
		rb.Namespace, rb.Name = "default", name
		rb.Spec.SchedulePriority = &workv1alpha2.SchedulePriority{Priority: p}
		return rb
	}
	for _, tc := range []struct {
		priority bool
		want     string
	}{
		{true, "[high a b c]"},
		{false, "[a b high c]"},
	} {
		s := &Scheduler{PriorityOrder: tc.priority}
		q := s.newQueue("test", workqueue.DefaultTypedControllerRateLimiter[reconcile.Request]())
		for _, rb := range []*workv1alpha2.ResourceBinding{binding("a", 1), binding("b", 1), binding("high", 1000), binding("c", 1)} {
			addByPriority(q, rb)
		}
		var got []string
		for range 4 {
			r, _ := q.Get()
			got = append(got, r.Name)
			q.Done(r)
		}
		if fmt.Sprint(got) != tc.want {
			t.Errorf("PriorityOrder %v: taken %v, want %s", tc.priority, got, tc.want)
		}
		done := make(chan bool)
		go func() { _, shutdown := q.Get(); done <- shutdown }()
		q.ShutDown()
		select {
		case shutdown := <-done:
			if !shutdown {
				t.Errorf("PriorityOrder %v: Get after ShutDown did not say shutdown", tc.priority)
			}
		case <-time.After(5 * time.Second):
			t.Errorf("PriorityOrder %v: a worker waiting in Get is not let go by ShutDown", tc.priority)
		}
	}
}

// BenchmarkPriorityQueueJump: 1,000 bindings of priority 1 queued, one of
// priority 1000 added behind them and taken next; per iteration, the 1,001
// adds and the takes up to it (the plain queue's figure beside it takes the
// first).
func BenchmarkPriorityQueueJump(b *testing.B) {
	low := make([]*workv1alpha2.ResourceBinding, 1000)
	for i := range low {
		low[i] = &workv1alpha2.ResourceBinding{}
		low[i].Namespace, low[i].Name = "default", fmt.Sprintf("low-%04d", i)
		low[i].Spec.SchedulePriority = &workv1alpha2.SchedulePriority{Priority: 1}
	}
	high := &workv1alpha2.ResourceBinding{}
	high.Namespace, high.Name = "default", "high"
	high.Spec.SchedulePriority = &workv1alpha2.SchedulePriority{Priority: 1000}
	for _, order := range []bool{true, false} {
		b.Run(fmt.Sprintf("PriorityOrder=%v", order), func(b *testing.B) {
			for b.Loop() {
				q := (&Scheduler{PriorityOrder: order}).newQueue("bench", workqueue.DefaultTypedControllerRateLimiter[reconcile.Request]())
				for _, rb := range low {
					addByPriority(q, rb)
				}
				addByPriority(q, high)
				// controller-runtime's queue may hand a waiting worker the
				// item its pass over the queue had reached when the worker
				// came (one at most): high is the first or the second.
				var before []string
				for {
					r, _ := q.Get()
					q.Done(r)
					if !order || r.Name == "high" {
						break
					}
					before = append(before, r.Name)
				}
				if len(before) > 1 {
					b.Fatalf("%v taken before the high-priority binding", before)
				}
				q.ShutDown()
			}
		})
	}
}
