package integration

import (
	"context"
	"fmt"
	"testing"
	"time"

	coordinationv1 "k8s.io/api/coordination/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/util/retry"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/manager"

	clusterv1alpha1 "github.com/karmada-go/karmada/api/cluster/v1alpha1"
	workv1alpha1 "github.com/karmada-go/karmada/api/work/v1alpha1"
	"github.com/karmada-go/karmada/internal/clusters/cluster"
	"github.com/karmada-go/karmada/internal/clusters/clusterlease"
	"github.com/karmada-go/karmada/internal/propagation/execution"
	"github.com/karmada-go/karmada/internal/testenv"
)

// A pull-mode cluster whose agent does not renew its lease in time turns
// Ready=Unknown and gets the unreachable taint; renewed (and the agent
// reporting Ready), it loses the taint; silent again, it is marked again.
// A push-mode cluster is left to clusterStatus.
func TestPullClusterLeaseMonitor(t *testing.T) {
	t.Parallel()
	env := testenv.Start(t)
	ctx := context.Background()
	c := env.Client
	env.RunManager(t, func(ctx context.Context, mgr manager.Manager) error {
		if err := (&cluster.Reconciler{Client: mgr.GetClient()}).SetupWithManager(mgr); err != nil {
			return err
		}
		return (&clusterlease.Monitor{Client: mgr.GetClient(), GracePeriod: 2 * time.Second, StartupGrace: 3 * time.Second, Period: 500 * time.Millisecond}).SetupWithManager(mgr)
	})
	createNamespace(ctx, t, c, "karmada-cluster")
	for _, cl := range []*clusterv1alpha1.Cluster{
		{ObjectMeta: metav1.ObjectMeta{Name: "edge"}, Spec: clusterv1alpha1.ClusterSpec{SyncMode: clusterv1alpha1.Pull}},
		{ObjectMeta: metav1.ObjectMeta{Name: "pushed"}, Spec: clusterv1alpha1.ClusterSpec{SyncMode: clusterv1alpha1.Push}},
	} {
		if err := c.Create(ctx, cl); err != nil {
			t.Fatal(err)
		}
		reportReady(ctx, t, c, cl.Name)
	}
	state := func(name string) (metav1.ConditionStatus, string, bool) {
		cl := &clusterv1alpha1.Cluster{}
		if err := c.Get(ctx, client.ObjectKey{Name: name}, cl); err != nil {
			t.Fatal(err)
		}
		tainted := false
		for _, taint := range cl.Spec.Taints {
			tainted = tainted || taint.Key == clusterv1alpha1.TaintClusterUnreachable
		}
		ready := meta.FindStatusCondition(cl.Status.Conditions, clusterv1alpha1.ClusterConditionReady)
		return ready.Status, ready.Reason, tainted
	}
	silent := func(what string) {
		t.Helper()
		testenv.Eventually(t, 20*time.Second, what, func(context.Context) error {
			if s, r, tainted := state("edge"); s != metav1.ConditionUnknown || r != clusterlease.ReasonStatusUnknown || !tainted {
				return fmt.Errorf("Ready %s (%s), unreachable taint %t", s, r, tainted)
			}
			return nil
		})
	}
	silent("marked silent after the startup grace")

	// The agent is back: it renews its lease and reports Ready.
	renew := func() {
		t.Helper()
		l := &coordinationv1.Lease{ObjectMeta: metav1.ObjectMeta{Namespace: "karmada-cluster", Name: "edge"}}
		if err := c.Get(ctx, client.ObjectKeyFromObject(l), l); err != nil {
			l.Spec = coordinationv1.LeaseSpec{HolderIdentity: ptr.To("edge"), LeaseDurationSeconds: ptr.To[int32](2)}
			l.Spec.RenewTime = &metav1.MicroTime{Time: time.Now()}
			if err := c.Create(ctx, l); err != nil {
				t.Fatal(err)
			}
			return
		}
		l.Spec.RenewTime = &metav1.MicroTime{Time: time.Now()}
		if err := c.Update(ctx, l); err != nil {
			t.Fatal(err)
		}
	}
	renew()
	reportReady(ctx, t, c, "edge")
	testenv.Eventually(t, 20*time.Second, "the taint gone once Ready", func(context.Context) error {
		if s, _, tainted := state("edge"); s != metav1.ConditionTrue || tainted {
			return fmt.Errorf("Ready %s, unreachable taint %t", s, tainted)
		}
		return nil
	})
	// Renewed every half second for longer than the grace period, it
	// stays Ready.
	renewals := time.NewTicker(500 * time.Millisecond) // the agent's renewal interval
	for end := time.Now().Add(3 * time.Second); time.Now().Before(end); <-renewals.C {
		renew()
		if s, _, _ := state("edge"); s != metav1.ConditionTrue {
			t.Fatalf("a cluster renewing its lease was marked %s", s)
		}
	}
	renewals.Stop()
	silent("marked silent again when the lease lapses")
	if s, _, tainted := state("pushed"); s != metav1.ConditionTrue || tainted {
		t.Errorf("the push-mode cluster was touched: Ready %s, unreachable taint %t", s, tainted)
	}
}

// reportReady sets Ready True as an agent would, retrying a conflict with
// the controllers writing the Cluster meanwhile.
func reportReady(ctx context.Context, t *testing.T, c client.Client, name string) {
	t.Helper()
	err := retry.RetryOnConflict(retry.DefaultRetry, func() error {
		cl := &clusterv1alpha1.Cluster{}
		if err := c.Get(ctx, client.ObjectKey{Name: name}, cl); err != nil {
			return err
		}
		meta.SetStatusCondition(&cl.Status.Conditions, metav1.Condition{Type: clusterv1alpha1.ClusterConditionReady, Status: metav1.ConditionTrue, Reason: "ClusterReady", Message: "reported by the test"})
		return c.Status().Update(ctx, cl)
	})
	if err != nil {
		t.Fatal(err)
	}
}

// With --pull-work-release-grace, a Work deleted for a pull-mode cluster
// whose agent has been silent (Ready Unknown) longer than that is let go by
// the control plane; a live cluster's Work waits for its agent.
func TestPullWorksReleasedAfterGrace(t *testing.T) {
	t.Parallel()
	env := testenv.Start(t)
	ctx := context.Background()
	c := env.Client
	env.RunManager(t, func(ctx context.Context, mgr manager.Manager) error {
		return (&execution.Reconciler{Client: mgr.GetClient(), PullReleaseGrace: time.Hour}).SetupWithManager(mgr)
	})
	set := func(name string, status metav1.ConditionStatus, since time.Time) {
		t.Helper()
		cl := &clusterv1alpha1.Cluster{ObjectMeta: metav1.ObjectMeta{Name: name}, Spec: clusterv1alpha1.ClusterSpec{SyncMode: clusterv1alpha1.Pull}}
		if err := c.Create(ctx, cl); err != nil {
			t.Fatal(err)
		}
		cl.Status.Conditions = []metav1.Condition{{Type: clusterv1alpha1.ClusterConditionReady, Status: status, Reason: clusterlease.ReasonStatusUnknown, Message: "test", LastTransitionTime: metav1.NewTime(since)}}
		if err := c.Status().Update(ctx, cl); err != nil {
			t.Fatal(err)
		}
		createNamespace(ctx, t, c, workv1alpha1.ExecutionNamespace(name))
	}
	set("gone", metav1.ConditionUnknown, time.Now().Add(-2*time.Hour))
	set("blip", metav1.ConditionUnknown, time.Now().Add(-time.Minute))
	set("alive", metav1.ConditionTrue, time.Now().Add(-2*time.Hour))
	works := map[string]*workv1alpha1.Work{}
	for _, name := range []string{"gone", "blip", "alive"} {
		w := &workv1alpha1.Work{ObjectMeta: metav1.ObjectMeta{Namespace: workv1alpha1.ExecutionNamespace(name), Name: "w", Finalizers: []string{execution.Finalizer}}}
		if err := c.Create(ctx, w); err != nil {
			t.Fatal(err)
		}
		if err := c.Delete(ctx, w); err != nil {
			t.Fatal(err)
		}
		works[name] = w
	}
	testenv.Eventually(t, 20*time.Second, "the Work of the cluster silent past the grace let go", func(ctx context.Context) error {
		if err := c.Get(ctx, client.ObjectKeyFromObject(works["gone"]), &workv1alpha1.Work{}); !apierrors.IsNotFound(err) {
			return fmt.Errorf("still there (err %v)", err)
		}
		return nil
	})
	for _, name := range []string{"blip", "alive"} {
		w := &workv1alpha1.Work{}
		if err := c.Get(ctx, client.ObjectKeyFromObject(works[name]), w); err != nil || len(w.Finalizers) == 0 {
			t.Errorf("the Work of %s was let go (err %v, finalizers %v)", name, err, w.Finalizers)
		}
	}
}
