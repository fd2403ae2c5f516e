package integration

import (
	"context"
	"fmt"
	"sync"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/api/meta"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/manager"

	workv1alpha2 "github.com/karmada-go/karmada/api/work/v1alpha2"
	"github.com/karmada-go/karmada/internal/scheduler"
	"github.com/karmada-go/karmada/internal/scheduler/framework"
	"github.com/karmada-go/karmada/internal/scheduler/plugins"
	"github.com/karmada-go/karmada/internal/testenv"
)

// backlog is how many low-priority bindings are created at once.
const backlog = 1000

// Priority-based scheduling: 1,000 bindings of priority 1 are created at
// once, faster than the scheduler's one worker takes them; then one of
// priority 1000 arrives behind what is still queued, and is taken first:
// at most a few of the low ones are scheduled between its arrival and its
// scheduling. (In arrival order it would wait for the whole queue.)
func TestHighPriorityBindingIsScheduledBeforeTheBacklog(t *testing.T) {
	t.Parallel()
	env := testenv.Start(t)
	ctx := context.Background()
	c := env.Client
	readyCluster(ctx, t, c, "member1")
	env.RunManager(t, func(_ context.Context, mgr manager.Manager) error {
		fw, err := framework.New(plugins.NewInTreeRegistry(), []string{"*"})
		if err != nil {
			return err
		}
		return (&scheduler.Scheduler{Client: mgr.GetClient(), Framework: fw, Workers: 1, PriorityOrder: true}).SetupWithManager(mgr)
	})
	scheduledLow := func(ctx context.Context) (int, error) {
		list := &workv1alpha2.ResourceBindingList{}
		if err := c.List(ctx, list, client.InNamespace("default")); err != nil {
			return 0, err
		}
		n := 0
		for _, rb := range list.Items {
			if rb.Spec.SchedulePriority != nil && rb.Spec.SchedulePriority.Priority == 1 && meta.IsStatusConditionTrue(rb.Status.Conditions, workv1alpha2.Scheduled) {
				n++
			}
		}
		return n, nil
	}
	var wg sync.WaitGroup
	errs := make(chan error, backlog)
	for w := 0; w < 8; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := w; i < backlog; i += 8 {
				rb := newBinding(fmt.Sprintf("low-%04d", i), 1, nil)
				rb.Spec.SchedulePriority = &workv1alpha2.SchedulePriority{Priority: 1}
				if err := c.Create(ctx, rb); err != nil {
					errs <- err
					return
				}
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}
	high := newBinding("high", 1, nil)
	high.Spec.SchedulePriority = &workv1alpha2.SchedulePriority{Priority: 1000}
	queued, err := scheduledLow(ctx)
	if err != nil {
		t.Fatal(err)
	}
	arrived := time.Now()
	if err := c.Create(ctx, high); err != nil {
		t.Fatal(err)
	}
	if backlog-queued < backlog/10 {
		t.Fatalf("only %d low-priority bindings still queued when the high-priority one arrived: the scheduler kept up, nothing to jump", backlog-queued)
	}
	var after int
	testenv.Eventually(t, 2*time.Minute, "the high-priority binding scheduled", func(ctx context.Context) error {
		rb := &workv1alpha2.ResourceBinding{}
		if err := c.Get(ctx, client.ObjectKeyFromObject(high), rb); err != nil {
			return err
		}
		if !meta.IsStatusConditionTrue(rb.Status.Conditions, workv1alpha2.Scheduled) {
			return fmt.Errorf("conditions %+v", rb.Status.Conditions)
		}
		var err error
		after, err = scheduledLow(ctx)
		return err
	})
	latency := time.Since(arrived)
	// Counted after the high one is seen scheduled: what was scheduled
	// before it (those already taken, and those taken while its event was
	// on its way to the scheduler's cache), plus what the one worker did
	// during two reads; in arrival order it would be the whole queue.
	if jumped := after - queued; jumped > (backlog-queued)/10 {
		t.Errorf("%d low-priority bindings were scheduled between the high-priority one's arrival and its scheduling (%d were queued)", jumped, backlog-queued)
	}
	t.Logf("high-priority binding behind %d queued low-priority ones: scheduled %s after it was created (%d low ones scheduled meanwhile)",
		backlog-queued, latency.Round(time.Millisecond), after-queued)
	testenv.Eventually(t, 5*time.Minute, "the backlog scheduled", func(ctx context.Context) error {
		n, err := scheduledLow(ctx)
		if err == nil && n != backlog {
			err = fmt.Errorf("%d of %d scheduled", n, backlog)
		}
		return err
	})
	t.Logf("the whole backlog scheduled %s after the high-priority one arrived", time.Since(arrived).Round(time.Millisecond))
}
