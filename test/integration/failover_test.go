package integration

import (
	"context"
	"encoding/json"
	"fmt"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/util/retry"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/manager"

	clusterv1alpha1 "github.com/karmada-go/karmada/api/cluster/v1alpha1"
	policyv1alpha1 "github.com/karmada-go/karmada/api/policy/v1alpha1"
	workv1alpha1 "github.com/karmada-go/karmada/api/work/v1alpha1"
	workv1alpha2 "github.com/karmada-go/karmada/api/work/v1alpha2"
	"github.com/karmada-go/karmada/internal/failover/applicationfailover"
	"github.com/karmada-go/karmada/internal/failover/gracefuleviction"
	"github.com/karmada-go/karmada/internal/failover/taintmanager"
	"github.com/karmada-go/karmada/internal/scheduler"
	"github.com/karmada-go/karmada/internal/scheduler/framework"
	"github.com/karmada-go/karmada/internal/scheduler/plugins"
	"github.com/karmada-go/karmada/internal/testenv"
)

// setTaints replaces a Cluster's taints.
func setTaints(ctx context.Context, t *testing.T, c client.Client, name string, taints ...corev1.Taint) {
	t.Helper()
	if err := retry.RetryOnConflict(retry.DefaultRetry, func() error {
		cl := &clusterv1alpha1.Cluster{}
		if err := c.Get(ctx, client.ObjectKey{Name: name}, cl); err != nil {
			return err
		}
		cl.Spec.Taints = taints
		return c.Update(ctx, cl)
	}); err != nil {
		t.Fatal(err)
	}
}

// runWithScheduler runs the scheduler (every in-tree plugin) and what setup
// adds in one manager until the test ends.
func runWithScheduler(t *testing.T, env *testenv.Env, setup func(manager.Manager) error) {
	t.Helper()
	env.RunManager(t, func(_ context.Context, mgr manager.Manager) error {
		fw, err := framework.New(plugins.NewInTreeRegistry(), []string{"*"})
		if err != nil {
			return err
		}
		if err := (&scheduler.Scheduler{Client: mgr.GetClient(), Framework: fw}).SetupWithManager(mgr); err != nil {
			return err
		}
		return setup(mgr)
	})
}

// updateBinding changes a binding (again on a conflict).
func updateBinding(ctx context.Context, t *testing.T, c client.Client, name string, change func(*workv1alpha2.ResourceBinding)) {
	t.Helper()
	if err := retry.RetryOnConflict(retry.DefaultRetry, func() error {
		rb := &workv1alpha2.ResourceBinding{}
		if err := c.Get(ctx, client.ObjectKey{Namespace: "default", Name: name}, rb); err != nil {
			return err
		}
		change(rb)
		return c.Update(ctx, rb)
	}); err != nil {
		t.Fatal(err)
	}
}

// reportHealth writes the binding's aggregated status, as the binding
// status controller would: each cluster's copy with its health and
// available replicas.
func reportHealth(ctx context.Context, t *testing.T, c client.Client, name string, health map[string]int32) {
	t.Helper()
	if err := retry.RetryOnConflict(retry.DefaultRetry, func() error {
		rb := &workv1alpha2.ResourceBinding{}
		if err := c.Get(ctx, client.ObjectKey{Namespace: "default", Name: name}, rb); err != nil {
			return err
		}
		rb.Status.AggregatedStatus = nil
		for cluster, available := range health {
			h := workv1alpha1.ResourceHealthy
			if available == 0 {
				h = workv1alpha1.ResourceUnhealthy
			}
			raw, _ := json.Marshal(map[string]int32{"availableReplicas": available})
			rb.Status.AggregatedStatus = append(rb.Status.AggregatedStatus, workv1alpha2.AggregatedStatusItem{ClusterName: cluster, Applied: true, Health: h, Status: &runtime.RawExtension{Raw: raw}})
		}
		return c.Status().Update(ctx, rb)
	}); err != nil {
		t.Fatal(err)
	}
}

// The taint manager, the graceful eviction controller and the scheduler
// against a real API server.
func TestTaintEvictionIsGraceful(t *testing.T) {
	t.Parallel()
	env := testenv.Start(t)
	ctx := context.Background()
	c := env.Client
	runWithScheduler(t, env, func(mgr manager.Manager) error {
		if err := (&taintmanager.Manager{Client: mgr.GetClient(), Rate: 50, Graceful: true}).SetupWithManager(mgr); err != nil {
			return err
		}
		return (&gracefuleviction.Reconciler{Client: mgr.GetClient(), Timeout: time.Hour}).SetupWithManager(mgr)
	})
	for _, n := range []string{"member1", "member2", "member3"} {
		readyCluster(ctx, t, c, n)
	}
	get := func(ctx context.Context, name string) (*workv1alpha2.ResourceBinding, error) {
		rb := &workv1alpha2.ResourceBinding{}
		return rb, c.Get(ctx, client.ObjectKey{Namespace: "default", Name: name}, rb)
	}

	t.Run("moved after tolerationSeconds, the old copy kept until the new one is healthy", func(t *testing.T) {
		p := &policyv1alpha1.Placement{
			ClusterAffinity:    &policyv1alpha1.ClusterAffinity{ClusterNames: []string{"member2", "member3"}},
			SpreadConstraints:  []policyv1alpha1.SpreadConstraint{{SpreadByField: policyv1alpha1.SpreadByFieldCluster, MaxGroups: 1, MinGroups: 1}},
			ClusterTolerations: []corev1.Toleration{{Key: "fail", Operator: corev1.TolerationOpExists, Effect: corev1.TaintEffectNoExecute, TolerationSeconds: ptr.To[int64](3)}},
		}
		if err := c.Create(ctx, newBinding("move", 2, p)); err != nil {
			t.Fatal(err)
		}
		rb := waitScheduled(ctx, t, c, "move", metav1.ConditionTrue)
		from := rb.Spec.Clusters[0].Name
		to := map[string]string{"member2": "member3", "member3": "member2"}[from]
		reportHealth(ctx, t, c, "move", map[string]int32{from: 2})
		tainted := time.Now()
		setTaints(ctx, t, c, from, corev1.Taint{Key: "fail", Effect: corev1.TaintEffectNoExecute, TimeAdded: &metav1.Time{Time: tainted}})
		var evicted time.Time
		testenv.Eventually(t, 20*time.Second, "evicted from "+from+" and placed on "+to, func(ctx context.Context) error {
			rb, err := get(ctx, "move")
			if err != nil {
				return err
			}
			if len(rb.Spec.GracefulEvictionTasks) == 1 && evicted.IsZero() {
				evicted = time.Now()
			}
			if placementOf(rb) != to+"=2" || len(rb.Spec.GracefulEvictionTasks) != 1 {
				return fmt.Errorf("placement %s, tasks %+v", placementOf(rb), rb.Spec.GracefulEvictionTasks)
			}
			task := rb.Spec.GracefulEvictionTasks[0]
			if task.FromCluster != from || task.Producer != "TaintManager" || task.Reason != "TaintUntolerated" || task.PurgeMode != policyv1alpha1.PurgeModeGracefully ||
				task.Replicas == nil || *task.Replicas != 2 || task.CreationTimestamp == nil {
				return fmt.Errorf("task %+v", task)
			}
			return nil
		})
		// TimeAdded has whole seconds: the eviction comes 2-3 s after.
		if d := evicted.Sub(tainted); d < 2*time.Second {
			t.Errorf("evicted %s after the taint, before its tolerationSeconds (3s)", d)
		}
		// The replacement is not healthy: the task stays.
		reportHealth(ctx, t, c, "move", map[string]int32{from: 2, to: 0})
		testenv.Consistently(t, 2*time.Second, "the task kept while "+to+" is not healthy", func(ctx context.Context) error {
			rb, err := get(ctx, "move")
			if err != nil {
				return err
			}
			if len(rb.Spec.GracefulEvictionTasks) != 1 {
				return fmt.Errorf("tasks %+v", rb.Spec.GracefulEvictionTasks)
			}
			return nil
		})
		reportHealth(ctx, t, c, "move", map[string]int32{from: 2, to: 2})
		testenv.Eventually(t, 20*time.Second, "the task ended once "+to+" is healthy", func(ctx context.Context) error {
			rb, err := get(ctx, "move")
			if err != nil {
				return err
			}
			if len(rb.Spec.GracefulEvictionTasks) != 0 || placementOf(rb) != to+"=2" {
				return fmt.Errorf("placement %s, tasks %+v", placementOf(rb), rb.Spec.GracefulEvictionTasks)
			}
			return nil
		})
		setTaints(ctx, t, c, from)
	})

	t.Run("nowhere to go: the copy is kept, the condition says why, the cluster placed back once it recovers", func(t *testing.T) {
		p := &policyv1alpha1.Placement{ClusterAffinity: &policyv1alpha1.ClusterAffinity{ClusterNames: []string{"member1"}}}
		if err := c.Create(ctx, newBinding("only", 2, p)); err != nil {
			t.Fatal(err)
		}
		waitScheduled(ctx, t, c, "only", metav1.ConditionTrue)
		reportHealth(ctx, t, c, "only", map[string]int32{"member1": 2})
		setTaints(ctx, t, c, "member1", corev1.Taint{Key: "gone", Effect: corev1.TaintEffectNoExecute, TimeAdded: &metav1.Time{Time: time.Now()}})
		testenv.Eventually(t, 20*time.Second, "EvictionBlocked with the copy kept", func(ctx context.Context) error {
			rb, err := get(ctx, "only")
			if err != nil {
				return err
			}
			cond := meta.FindStatusCondition(rb.Status.Conditions, workv1alpha2.EvictionBlocked)
			if cond == nil || cond.Status != metav1.ConditionTrue || cond.Reason != workv1alpha2.ReasonNoReplacement || len(rb.Spec.GracefulEvictionTasks) != 1 || len(rb.Spec.Clusters) != 0 {
				return fmt.Errorf("condition %+v, tasks %+v, clusters %v", cond, rb.Spec.GracefulEvictionTasks, rb.Spec.Clusters)
			}
			return nil
		})
		setTaints(ctx, t, c, "member1")
		testenv.Eventually(t, 20*time.Second, "member1 placed back, no task, no condition", func(ctx context.Context) error {
			rb, err := get(ctx, "only")
			if err != nil {
				return err
			}
			cond := meta.FindStatusCondition(rb.Status.Conditions, workv1alpha2.EvictionBlocked)
			sched := meta.FindStatusCondition(rb.Status.Conditions, workv1alpha2.Scheduled)
			if cond != nil || len(rb.Spec.GracefulEvictionTasks) != 0 || placementOf(rb) != "member1=2" || sched == nil || sched.Status != metav1.ConditionTrue || rb.Status.SchedulerObservedGeneration != rb.Generation {
				return fmt.Errorf("condition %+v, tasks %+v, placement %s, scheduled %+v", cond, rb.Spec.GracefulEvictionTasks, placementOf(rb), sched)
			}
			return nil
		})
	})

	t.Run("a narrowed placement keeps the dropped copy until the new one is healthy", func(t *testing.T) {
		p := &policyv1alpha1.Placement{ClusterAffinity: &policyv1alpha1.ClusterAffinity{ClusterNames: []string{"member2", "member3"}}}
		if err := c.Create(ctx, newBinding("narrow", 1, p)); err != nil {
			t.Fatal(err)
		}
		rb := waitScheduled(ctx, t, c, "narrow", metav1.ConditionTrue)
		if got := placementOf(rb); got != "member2=1,member3=1" {
			t.Fatalf("placement %s", got)
		}
		reportHealth(ctx, t, c, "narrow", map[string]int32{"member2": 1, "member3": 1})
		updateBinding(ctx, t, c, "narrow", func(rb *workv1alpha2.ResourceBinding) {
			rb.Spec.Placement.ClusterAffinity.ClusterNames = []string{"member1"}
		})
		testenv.Eventually(t, 20*time.Second, "placed on member1, member2 and member3 kept as tasks", func(ctx context.Context) error {
			rb, err := get(ctx, "narrow")
			if err != nil {
				return err
			}
			if placementOf(rb) != "member1=1" || len(rb.Spec.GracefulEvictionTasks) != 2 {
				return fmt.Errorf("placement %s, tasks %+v", placementOf(rb), rb.Spec.GracefulEvictionTasks)
			}
			for _, task := range rb.Spec.GracefulEvictionTasks {
				if task.Producer != "karmada-scheduler" || task.Reason != "PlacementNarrowed" {
					return fmt.Errorf("task %+v", task)
				}
			}
			return nil
		})
		reportHealth(ctx, t, c, "narrow", map[string]int32{"member1": 1, "member2": 1, "member3": 1})
		testenv.Eventually(t, 20*time.Second, "the tasks ended once member1 is healthy", func(ctx context.Context) error {
			rb, err := get(ctx, "narrow")
			if err != nil {
				return err
			}
			if len(rb.Spec.GracefulEvictionTasks) != 0 {
				return fmt.Errorf("tasks %+v", rb.Spec.GracefulEvictionTasks)
			}
			return nil
		})
		// Directly, as Karmada: no task.
		updateBinding(ctx, t, c, "narrow", func(rb *workv1alpha2.ResourceBinding) {
			rb.Annotations = map[string]string{policyv1alpha1.PlacementNarrowingAnnotation: "Directly"}
			rb.Spec.Placement.ClusterAffinity.ClusterNames = []string{"member2"}
		})
		testenv.Eventually(t, 20*time.Second, "placed on member2 without a task", func(ctx context.Context) error {
			rb, err := get(ctx, "narrow")
			if err != nil {
				return err
			}
			if placementOf(rb) != "member2=1" || len(rb.Spec.GracefulEvictionTasks) != 0 || rb.Status.SchedulerObservedGeneration != rb.Generation {
				return fmt.Errorf("placement %s, tasks %+v", placementOf(rb), rb.Spec.GracefulEvictionTasks)
			}
			return nil
		})
	})

	t.Run("a NoSchedule taint or a tolerated-for-good NoExecute taint moves nothing", func(t *testing.T) {
		p := &policyv1alpha1.Placement{
			ClusterAffinity:    &policyv1alpha1.ClusterAffinity{ClusterNames: []string{"member2", "member3"}},
			SpreadConstraints:  []policyv1alpha1.SpreadConstraint{{SpreadByField: policyv1alpha1.SpreadByFieldCluster, MaxGroups: 1, MinGroups: 1}},
			ClusterTolerations: []corev1.Toleration{{Key: "maintenance", Operator: corev1.TolerationOpExists, Effect: corev1.TaintEffectNoExecute}},
		}
		if err := c.Create(ctx, newBinding("stay", 1, p)); err != nil {
			t.Fatal(err)
		}
		rb := waitScheduled(ctx, t, c, "stay", metav1.ConditionTrue)
		on := placementOf(rb)
		setTaints(ctx, t, c, rb.Spec.Clusters[0].Name, corev1.Taint{Key: "cluster.karmada.io/not-ready", Effect: corev1.TaintEffectNoSchedule},
			corev1.Taint{Key: "maintenance", Effect: corev1.TaintEffectNoExecute})
		testenv.Consistently(t, 3*time.Second, "the binding stays on "+on, func(ctx context.Context) error {
			rb, err := get(ctx, "stay")
			if err != nil {
				return err
			}
			if placementOf(rb) != on || len(rb.Spec.GracefulEvictionTasks) != 0 {
				return fmt.Errorf("placement %s, tasks %+v", placementOf(rb), rb.Spec.GracefulEvictionTasks)
			}
			return nil
		})
		setTaints(ctx, t, c, rb.Spec.Clusters[0].Name)
	})
}

// Application failover against a real API server: a workload unhealthy in
// its cluster for longer than tolerationSeconds is moved, with a graceful
// eviction task carrying the state its statePreservation extracts.
func TestApplicationFailover(t *testing.T) {
	t.Parallel()
	env := testenv.Start(t)
	ctx := context.Background()
	c := env.Client
	runWithScheduler(t, env, func(mgr manager.Manager) error {
		return (&applicationfailover.Reconciler{Client: mgr.GetClient(), Graceful: true}).SetupWithManager(mgr)
	})
	for _, n := range []string{"member1", "member2"} {
		readyCluster(ctx, t, c, n)
	}
	rb := newBinding("app", 1, &policyv1alpha1.Placement{
		ClusterAffinity:   &policyv1alpha1.ClusterAffinity{ClusterNames: []string{"member1", "member2"}},
		SpreadConstraints: []policyv1alpha1.SpreadConstraint{{SpreadByField: policyv1alpha1.SpreadByFieldCluster, MaxGroups: 1, MinGroups: 1}},
	})
	rb.Spec.Failover = &policyv1alpha1.FailoverBehavior{Application: &policyv1alpha1.ApplicationFailoverBehavior{
		DecisionConditions: policyv1alpha1.DecisionConditions{TolerationSeconds: ptr.To[int32](2)},
		PurgeMode:          policyv1alpha1.PurgeModeGracefully, GracePeriodSeconds: ptr.To[int32](600),
		StatePreservation: &policyv1alpha1.StatePreservation{Rules: []policyv1alpha1.StatePreservationRule{{AliasLabelName: "failover.example.io/checkpoint", JSONPath: "{.checkpoint}"}}},
	}}
	if err := c.Create(ctx, rb); err != nil {
		t.Fatal(err)
	}
	rb = waitScheduled(ctx, t, c, "app", metav1.ConditionTrue)
	from := rb.Spec.Clusters[0].Name
	to := map[string]string{"member1": "member2", "member2": "member1"}[from]
	if err := retry.RetryOnConflict(retry.DefaultRetry, func() error {
		if err := c.Get(ctx, client.ObjectKeyFromObject(rb), rb); err != nil {
			return err
		}
		rb.Status.AggregatedStatus = []workv1alpha2.AggregatedStatusItem{{ClusterName: from, Applied: true, Health: workv1alpha1.ResourceUnhealthy,
			Status: &runtime.RawExtension{Raw: []byte(`{"checkpoint":"chk-17","availableReplicas":0}`)}}}
		return c.Status().Update(ctx, rb)
	}); err != nil {
		t.Fatal(err)
	}
	unhealthy := time.Now()
	testenv.Eventually(t, 20*time.Second, "failed over from "+from+" to "+to, func(ctx context.Context) error {
		rb := &workv1alpha2.ResourceBinding{}
		if err := c.Get(ctx, client.ObjectKey{Namespace: "default", Name: "app"}, rb); err != nil {
			return err
		}
		if placementOf(rb) != to+"=1" || len(rb.Spec.GracefulEvictionTasks) != 1 {
			return fmt.Errorf("placement %s, tasks %+v", placementOf(rb), rb.Spec.GracefulEvictionTasks)
		}
		task := rb.Spec.GracefulEvictionTasks[0]
		if task.FromCluster != from || task.Reason != "ApplicationFailure" || task.PurgeMode != policyv1alpha1.PurgeModeGracefully ||
			task.GracePeriodSeconds == nil || *task.GracePeriodSeconds != 600 || task.PreservedLabelState["failover.example.io/checkpoint"] != "chk-17" {
			return fmt.Errorf("task %+v", task)
		}
		return nil
	})
	if d := time.Since(unhealthy); d < 2*time.Second {
		t.Errorf("failed over %s after the workload turned unhealthy, before its 2 s toleration", d)
	}
}
