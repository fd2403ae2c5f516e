package integration

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/util/retry"
	"k8s.io/utils/ptr"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/config"
	metricsserver "sigs.k8s.io/controller-runtime/pkg/metrics/server"

	clusterv1alpha1 "github.com/karmada-go/karmada/api/cluster/v1alpha1"
	policyv1alpha1 "github.com/karmada-go/karmada/api/policy/v1alpha1"
	workv1alpha2 "github.com/karmada-go/karmada/api/work/v1alpha2"
	"github.com/karmada-go/karmada/internal/scheduler"
	"github.com/karmada-go/karmada/internal/scheduler/framework"
	"github.com/karmada-go/karmada/internal/scheduler/plugins"
	"github.com/karmada-go/karmada/internal/scheme"
	"github.com/karmada-go/karmada/internal/testenv"
)

func readyCluster(ctx context.Context, t *testing.T, c client.Client, name string, taints ...corev1.Taint) {
	t.Helper()
	cl := &clusterv1alpha1.Cluster{ObjectMeta: metav1.ObjectMeta{Name: name}, Spec: clusterv1alpha1.ClusterSpec{SyncMode: clusterv1alpha1.Push, Taints: taints}}
	if err := c.Create(ctx, cl); err != nil {
		t.Fatal(err)
	}
	setReady(ctx, t, c, name, metav1.ConditionTrue)
}

func newBinding(name string, replicas int32, p *policyv1alpha1.Placement) *workv1alpha2.ResourceBinding {
	return &workv1alpha2.ResourceBinding{
		ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: name},
		Spec: workv1alpha2.ResourceBindingSpec{
			Resource:  workv1alpha2.ObjectReference{APIVersion: "apps/v1", Kind: "Deployment", Namespace: "default", Name: name},
			Replicas:  replicas,
			Placement: p,
		},
	}
}

// waitScheduled polls until the binding's Scheduled condition has the status
// and returns the binding.
func waitScheduled(ctx context.Context, t *testing.T, c client.Client, name string, want metav1.ConditionStatus) *workv1alpha2.ResourceBinding {
	t.Helper()
	rb := &workv1alpha2.ResourceBinding{}
	err := wait.PollUntilContextTimeout(ctx, 100*time.Millisecond, 20*time.Second, true, func(ctx context.Context) (bool, error) {
		if err := c.Get(ctx, client.ObjectKey{Namespace: "default", Name: name}, rb); err != nil {
			return false, nil
		}
		cond := meta.FindStatusCondition(rb.Status.Conditions, workv1alpha2.Scheduled)
		return cond != nil && cond.Status == want && rb.Status.SchedulerObservedGeneration == rb.Generation, nil
	})
	if err != nil {
		t.Fatalf("binding %s never reached Scheduled=%s: %+v", name, want, rb.Status)
	}
	return rb
}

func placementOf(rb *workv1alpha2.ResourceBinding) string {
	var parts []string
	for _, tc := range rb.Spec.Clusters {
		parts = append(parts, fmt.Sprintf("%s=%d", tc.Name, tc.Replicas))
	}
	return strings.Join(parts, ",")
}

// startScheduler runs the scheduler with every in-tree plugin against a real
// API server until the test ends.
func startScheduler(t *testing.T) (*testenv.Env, context.Context) {
	t.Helper()
	return startSchedulerWith(t, func(*scheduler.Scheduler) {})
}

// startSchedulerWith is startScheduler with the scheduler's settings
// changed by set.
func startSchedulerWith(t *testing.T, set func(*scheduler.Scheduler)) (*testenv.Env, context.Context) {
	t.Helper()
	env := testenv.Start(t)
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)
	// Each test runs its own manager; controller names repeat across them.
	mgr, err := ctrl.NewManager(env.Config, ctrl.Options{Scheme: scheme.Scheme, Metrics: metricsserver.Options{BindAddress: "0"}, Controller: config.Controller{SkipNameValidation: ptr.To(true)}})
	if err != nil {
		t.Fatal(err)
	}
	fw, err := framework.New(plugins.NewInTreeRegistry(), []string{"*"})
	if err != nil {
		t.Fatal(err)
	}
	sched := &scheduler.Scheduler{Client: mgr.GetClient(), Framework: fw}
	set(sched)
	if err := sched.SetupWithManager(mgr); err != nil {
		t.Fatal(err)
	}
	go func() {
		if err := mgr.Start(ctx); err != nil {
			t.Errorf("manager: %v", err)
		}
	}()
	return env, ctx
}

func TestScheduler(t *testing.T) {
	t.Parallel()
	env, ctx := startScheduler(t)
	c := env.Client
	notReady := corev1.Taint{Key: "cluster.karmada.io/not-ready", Effect: corev1.TaintEffectNoSchedule}
	readyCluster(ctx, t, c, "member1")
	readyCluster(ctx, t, c, "member2")
	readyCluster(ctx, t, c, "member3", notReady)

	t.Run("duplicated to every cluster that fits", func(t *testing.T) {
		if err := c.Create(ctx, newBinding("dup", 2, nil)); err != nil {
			t.Fatal(err)
		}
		rb := waitScheduled(ctx, t, c, "dup", metav1.ConditionTrue)
		if got := placementOf(rb); got != "member1=2,member2=2" {
			t.Errorf("placement %s, want member1=2,member2=2 (member3 is tainted)", got)
		}
		if rb.Status.LastScheduledTime == nil {
			t.Error("lastScheduledTime not set")
		}
	})

	t.Run("divided by static weight", func(t *testing.T) {
		p := &policyv1alpha1.Placement{ReplicaScheduling: &policyv1alpha1.ReplicaSchedulingStrategy{
			ReplicaSchedulingType: policyv1alpha1.ReplicaSchedulingTypeDivided, ReplicaDivisionPreference: policyv1alpha1.ReplicaDivisionPreferenceWeighted,
			WeightPreference: &policyv1alpha1.ClusterPreferences{StaticWeightList: []policyv1alpha1.StaticClusterWeight{
				{TargetCluster: policyv1alpha1.ClusterAffinity{ClusterNames: []string{"member1"}}, Weight: 1},
				{TargetCluster: policyv1alpha1.ClusterAffinity{ClusterNames: []string{"member2"}}, Weight: 2},
			}},
		}}
		if err := c.Create(ctx, newBinding("div", 3, p)); err != nil {
			t.Fatal(err)
		}
		rb := waitScheduled(ctx, t, c, "div", metav1.ConditionTrue)
		if got := placementOf(rb); got != "member1=1,member2=2" {
			t.Errorf("placement %s, want member1=1,member2=2", got)
		}
	})

	t.Run("no fit says why, and a cluster change brings it back", func(t *testing.T) {
		p := &policyv1alpha1.Placement{ClusterAffinity: &policyv1alpha1.ClusterAffinity{ClusterNames: []string{"member3"}}}
		if err := c.Create(ctx, newBinding("only3", 1, p)); err != nil {
			t.Fatal(err)
		}
		rb := waitScheduled(ctx, t, c, "only3", metav1.ConditionFalse)
		msg := meta.FindStatusCondition(rb.Status.Conditions, workv1alpha2.Scheduled).Message
		for _, want := range []string{"0/3 clusters are available", "member3: cluster had untolerated taint {cluster.karmada.io/not-ready:NoSchedule} (TaintToleration)", "member1, member2: cluster is not in clusterNames (ClusterAffinity)"} {
			if !strings.Contains(msg, want) {
				t.Errorf("condition message %q lacks %q", msg, want)
			}
		}
		cl := &clusterv1alpha1.Cluster{}
		if err := c.Get(ctx, client.ObjectKey{Name: "member3"}, cl); err != nil {
			t.Fatal(err)
		}
		cl.Spec.Taints = nil
		if err := c.Update(ctx, cl); err != nil {
			t.Fatal(err)
		}
		rb = waitScheduled(ctx, t, c, "only3", metav1.ConditionTrue)
		if got := placementOf(rb); got != "member3=1" {
			t.Errorf("placement %s, want member3=1", got)
		}
	})

	t.Run("a placement change reschedules", func(t *testing.T) {
		rb := &workv1alpha2.ResourceBinding{}
		// Read again on a conflict: the scheduler may still be writing
		// the binding from the subtest before.
		if err := retry.RetryOnConflict(retry.DefaultRetry, func() error {
			if err := c.Get(ctx, client.ObjectKey{Namespace: "default", Name: "dup"}, rb); err != nil {
				return err
			}
			rb.Spec.Placement = &policyv1alpha1.Placement{ClusterAffinity: &policyv1alpha1.ClusterAffinity{ClusterNames: []string{"member2"}}}
			return c.Update(ctx, rb)
		}); err != nil {
			t.Fatal(err)
		}
		err := wait.PollUntilContextTimeout(ctx, 100*time.Millisecond, 20*time.Second, true, func(ctx context.Context) (bool, error) {
			if err := c.Get(ctx, client.ObjectKey{Namespace: "default", Name: "dup"}, rb); err != nil {
				return false, nil
			}
			return placementOf(rb) == "member2=2" && rb.Status.SchedulerObservedGeneration == rb.Generation, nil
		})
		if err != nil {
			t.Errorf("placement %s after narrowing to member2, want member2=2", placementOf(rb))
		}
	})

	t.Run("another scheduler's binding is left alone", func(t *testing.T) {
		rb := newBinding("other", 1, nil)
		rb.Spec.SchedulerName = "someone-else"
		if err := c.Create(ctx, rb); err != nil {
			t.Fatal(err)
		}
		// Once a binding created after it has been scheduled, the scheduler
		// has seen this one too: it must have left it untouched.
		probe := newBinding("probe", 1, nil)
		if err := c.Create(ctx, probe); err != nil {
			t.Fatal(err)
		}
		waitScheduled(ctx, t, c, "probe", metav1.ConditionTrue)
		if err := c.Get(ctx, client.ObjectKeyFromObject(rb), rb); err != nil {
			t.Fatal(err)
		}
		if len(rb.Spec.Clusters) != 0 || len(rb.Status.Conditions) != 0 {
			t.Errorf("the default scheduler touched a binding of another scheduler: %+v %+v", rb.Spec.Clusters, rb.Status)
		}
	})
}

func TestSchedulerAddsClustersThatBecomeFeasible(t *testing.T) {
	t.Parallel()
	env, ctx := startScheduler(t)
	c := env.Client
	readyCluster(ctx, t, c, "member1")
	// member2 does not serve Deployments yet.
	m2 := &clusterv1alpha1.Cluster{ObjectMeta: metav1.ObjectMeta{Name: "member2"}, Spec: clusterv1alpha1.ClusterSpec{SyncMode: clusterv1alpha1.Push}}
	if err := c.Create(ctx, m2); err != nil {
		t.Fatal(err)
	}
	if err := c.Create(ctx, newBinding("dup", 1, nil)); err != nil {
		t.Fatal(err)
	}
	rb := waitScheduled(ctx, t, c, "dup", metav1.ConditionTrue)
	if got := placementOf(rb); got != "member1=1" {
		t.Fatalf("placement %s, want member1=1", got)
	}
	m2.Status.APIEnablements = []clusterv1alpha1.APIEnablement{{GroupVersion: "apps/v1", Resources: []clusterv1alpha1.APIResource{{Name: "deployments", Kind: "Deployment"}}}}
	if err := c.Status().Update(ctx, m2); err != nil {
		t.Fatal(err)
	}
	err := wait.PollUntilContextTimeout(ctx, 100*time.Millisecond, 20*time.Second, true, func(ctx context.Context) (bool, error) {
		if err := c.Get(ctx, client.ObjectKeyFromObject(rb), rb); err != nil {
			return false, nil
		}
		return placementOf(rb) == "member1=1,member2=1", nil
	})
	if err != nil {
		t.Errorf("placement %s after member2 gained the API, want member1=1,member2=1", placementOf(rb))
	}
}
