package integration

import (
	"context"
	"fmt"
	"testing"
	"time"

	"golang.org/x/sync/errgroup"
	"k8s.io/apimachinery/pkg/util/wait"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/manager"

	workv1alpha2 "github.com/karmada-go/karmada/api/work/v1alpha2"
	"github.com/karmada-go/karmada/internal/features"
	"github.com/karmada-go/karmada/internal/names"
	"github.com/karmada-go/karmada/internal/propagation/detector"
	"github.com/karmada-go/karmada/internal/testenv"
)

// With ControllerPriorityQueue (on by default, as in Karmada), a template
// created while the detector works through a start's backlog (the
// templates its informers listed first) gets its binding long before that
// backlog is done: the initial list waits behind fresh changes. Without
// the priority queue the fresh template would wait behind every one of
// them. The backlog is then finished too (nothing starves).
func TestFreshTemplateBeforeTheStartsBacklog(t *testing.T) {
	t.Parallel()
	if !features.Gate.Enabled(features.ControllerPriorityQueue) {
		t.Fatal("ControllerPriorityQueue is off by default; Karmada has it on")
	}
	env := testenv.Start(t)
	c := env.Client
	ctx := context.Background()
	const ns, backlog = "backlog", 400
	createNamespace(ctx, t, c, ns)
	createDeploymentPolicy(ctx, t, c, ns, "all", "", "member1")
	g, gctx := errgroup.WithContext(ctx)
	g.SetLimit(8)
	for i := range backlog {
		g.Go(func() error { return c.Create(gctx, deployment(ns, fmt.Sprintf("old-%d", i), 1)) })
	}
	if err := g.Wait(); err != nil {
		t.Fatal(err)
	}
	env.RunManager(t, func(ctx context.Context, mgr manager.Manager) error {
		return (&detector.Detector{Client: mgr.GetClient(), Config: mgr.GetConfig(), Workers: 1, RediscoverEvery: time.Minute}).SetupWithManager(ctx, mgr)
	})
	bound := func() int {
		list := &workv1alpha2.ResourceBindingList{}
		if err := c.List(ctx, list, client.InNamespace(ns)); err != nil {
			t.Fatal(err)
		}
		return len(list.Items)
	}
	// The backlog is being worked through: the informers have listed it.
	if err := wait.PollUntilContextTimeout(ctx, 20*time.Millisecond, deadline, true, func(context.Context) (bool, error) { return bound() > 0, nil }); err != nil {
		t.Fatalf("no binding of the backlog: %v", err)
	}
	t.Logf("%d bound when the fresh template is created", bound())
	start := time.Now()
	if err := c.Create(ctx, deployment(ns, "fresh", 1)); err != nil {
		t.Fatal(err)
	}
	fresh := client.ObjectKey{Namespace: ns, Name: names.BindingName("Deployment", "fresh")}
	var before int
	if err := wait.PollUntilContextTimeout(ctx, 10*time.Millisecond, deadline, true, func(context.Context) (bool, error) {
		if err := c.Get(ctx, fresh, &workv1alpha2.ResourceBinding{}); err != nil {
			return false, client.IgnoreNotFound(err)
		}
		before = bound() - 1
		return true, nil
	}); err != nil {
		t.Fatalf("the fresh template's binding: %v", err)
	}
	t.Logf("the fresh template was bound in %s, with %d of the backlog's %d bound", time.Since(start), before, backlog)
	if before > backlog*3/4 {
		t.Errorf("the fresh template was bound after %d of the backlog's %d templates, want it before the last quarter: it waited behind the start's backlog", before, backlog)
	}
	if err := wait.PollUntilContextTimeout(ctx, 100*time.Millisecond, deadline, true, func(context.Context) (bool, error) { return bound() == backlog+1, nil }); err != nil {
		t.Fatalf("the backlog was not finished (%d of %d bound): %v", bound()-1, backlog, err)
	}
}
