//go:build e2e

package e2e

import (
	"context"
	"fmt"
	"sync"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/kubernetes"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	clusterv1alpha1 "github.com/karmada-go/karmada/api/cluster/v1alpha1"
	policyv1alpha1 "github.com/karmada-go/karmada/api/policy/v1alpha1"
	workv1alpha1 "github.com/karmada-go/karmada/api/work/v1alpha1"
	workv1alpha2 "github.com/karmada-go/karmada/api/work/v1alpha2"
	"github.com/karmada-go/karmada/internal/names"
	"github.com/karmada-go/karmada/internal/testenv"
)

func notReadyToleration(seconds int64) corev1.Toleration {
	return corev1.Toleration{Key: "cluster.karmada.io/not-ready", Operator: corev1.TolerationOpExists, Effect: corev1.TaintEffectNoExecute, TolerationSeconds: &seconds}
}

// stopMember stops a member's processes (karmada-local member stop) and
// returns what starts it again; the test's clean-up starts it if the test
// did not.
func stopMember(t *testing.T, name string) (start func()) {
	t.Helper()
	if out, err := karmadaLocal("member", "stop", name); err != nil {
		t.Fatalf("member stop %s: %v\n%s", name, err, out)
	}
	started := false
	t.Cleanup(func() {
		if !started {
			if out, err := karmadaLocal("member", "start", name); err != nil {
				t.Errorf("member start %s in clean-up: %v\n%s", name, err, out)
			}
		}
		// The next test gets the member as the fleet started it.
		waitMemberHealthy(t, name)
	})
	return func() {
		t.Helper()
		started = true
		if out, err := karmadaLocal("member", "start", name); err != nil {
			t.Fatalf("member start %s: %v\n%s", name, err, out)
		}
	}
}

// waitMemberHealthy waits until a member that was stopped is whole again:
// every node Ready in the member, its Cluster Ready, untainted, and its
// nodeSummary counting every node ready. After a long outage the member's
// node controller may mark kwok's nodes NotReady for a moment on restart.
func waitMemberHealthy(t *testing.T, name string) {
	t.Helper()
	c := karmadaClient(t)
	kc := kube(t, name)
	testenv.Eventually(t, 3*time.Minute, name+" healthy again", func(ctx context.Context) error {
		nodes, err := kc.CoreV1().Nodes().List(ctx, metav1.ListOptions{})
		if err != nil {
			return err
		}
		for _, n := range nodes.Items {
			ready := false
			for _, cond := range n.Status.Conditions {
				ready = ready || (cond.Type == corev1.NodeReady && cond.Status == corev1.ConditionTrue)
			}
			if !ready {
				return fmt.Errorf("node %s not Ready", n.Name)
			}
		}
		cl := &clusterv1alpha1.Cluster{}
		if err := c.Get(ctx, client.ObjectKey{Name: name}, cl); err != nil {
			return err
		}
		if !meta.IsStatusConditionTrue(cl.Status.Conditions, clusterv1alpha1.ClusterConditionReady) {
			return fmt.Errorf("cluster not Ready: %+v", cl.Status.Conditions)
		}
		if len(cl.Spec.Taints) > 0 {
			return fmt.Errorf("cluster taints %+v", cl.Spec.Taints)
		}
		if ns := cl.Status.NodeSummary; ns == nil || ns.ReadyNum != int32(len(nodes.Items)) || ns.TotalNum != int32(len(nodes.Items)) {
			return fmt.Errorf("nodeSummary %+v, %d nodes", ns, len(nodes.Items))
		}
		return nil
	})
}

func getBinding(ctx context.Context, c client.Client, name string) (*workv1alpha2.ResourceBinding, error) {
	rb := &workv1alpha2.ResourceBinding{}
	return rb, c.Get(ctx, client.ObjectKey{Namespace: "default", Name: name + "-deployment"}, rb)
}

// Cluster failover with karmada-local's default ClusterTaintPolicy and the
// taint manager on: member2 stopped, it is tainted not-ready:NoExecute once
// NotReady; a workload tolerating that for 10 s moves to member3 and
// member2's copy is let go only once member3's is available; a workload
// whose only cluster is member2 keeps its copy (EvictionBlocked) and is
// placed back when member2 returns, its copy never deleted; a workload
// tolerating 300 s does not move; cordoning moves nothing. Member2 started
// again: the taint is removed and the moved workload's old copy deleted.
func TestClusterFailover(t *testing.T) {
	ctx := context.Background()
	c := karmadaClient(t)
	ctp := &policyv1alpha1.ClusterTaintPolicy{}
	if err := c.Get(ctx, client.ObjectKey{Name: "cluster-not-ready"}, ctp); err != nil {
		t.Fatalf("karmada-local's default ClusterTaintPolicy: %v", err)
	}
	// Everything lands on member2 first: member3 cordoned meanwhile.
	if out, err := karmadactl("cordon", "member3"); err != nil {
		t.Fatalf("cordon: %v\n%s", err, out)
	}
	t.Cleanup(func() { _, _ = karmadactl("uncordon", "member3") })
	oneOf := func() []policyv1alpha1.SpreadConstraint {
		return []policyv1alpha1.SpreadConstraint{{SpreadByField: policyv1alpha1.SpreadByFieldCluster, MaxGroups: 1, MinGroups: 1}}
	}
	propagate(ctx, t, deploymentNamed("failover-move", 2), policyv1alpha1.Placement{
		ClusterAffinity:    &policyv1alpha1.ClusterAffinity{ClusterNames: []string{"member2", "member3"}},
		SpreadConstraints:  oneOf(),
		ClusterTolerations: []corev1.Toleration{notReadyToleration(10)},
	})
	propagate(ctx, t, deploymentNamed("failover-stay", 1), policyv1alpha1.Placement{
		ClusterAffinity:   &policyv1alpha1.ClusterAffinity{ClusterNames: []string{"member2", "member3"}},
		SpreadConstraints: oneOf(),
	})
	propagate(ctx, t, deploymentNamed("failover-only", 1), policyv1alpha1.Placement{
		ClusterAffinity:    &policyv1alpha1.ClusterAffinity{ClusterNames: []string{"member2"}},
		ClusterTolerations: []corev1.Toleration{notReadyToleration(5)},
	})
	for name, replicas := range map[string]int32{"failover-move": 2, "failover-stay": 1, "failover-only": 1} {
		if got := placementOf(waitScheduled(ctx, t, name, replicas)); got != fmt.Sprintf("member2=%d", replicas) {
			t.Fatalf("%s placed on %s, want member2", name, got)
		}
		waitMemberDeployment(ctx, t, "member2", name, replicas)
	}
	// The webhook gave the policy without tolerations Karmada's defaults.
	pp := &policyv1alpha1.PropagationPolicy{}
	if err := c.Get(ctx, client.ObjectKey{Namespace: "default", Name: "failover-stay"}, pp); err != nil {
		t.Fatal(err)
	}
	if tol := pp.Spec.Placement.ClusterTolerations; len(tol) != 2 || tol[0].TolerationSeconds == nil || *tol[0].TolerationSeconds != 300 {
		t.Errorf("default tolerations %+v, want not-ready and unreachable NoExecute for 300 s", tol)
	}
	before := map[string]types.UID{}
	for _, name := range []string{"failover-only", "failover-stay"} {
		d, err := kube(t, "member2").AppsV1().Deployments("default").Get(ctx, name, metav1.GetOptions{})
		if err != nil {
			t.Fatal(err)
		}
		before[name] = d.UID
	}

	// No implicit moves: uncordoning member3 and cordoning member2 move nothing.
	if out, err := karmadactl("uncordon", "member3"); err != nil {
		t.Fatalf("uncordon: %v\n%s", err, out)
	}
	if out, err := karmadactl("cordon", "member2"); err != nil {
		t.Fatalf("cordon: %v\n%s", err, out)
	}
	// Whatever fails below, the next test gets member2 uncordoned.
	t.Cleanup(func() { _, _ = karmadactl("uncordon", "member2") })
	testenv.Consistently(t, 4*time.Second, "nothing moved after member2 was cordoned", func(ctx context.Context) error {
		for _, name := range []string{"failover-move", "failover-stay", "failover-only"} {
			rb, err := getBinding(ctx, c, name)
			if err != nil {
				return err
			}
			if placementOf(rb) != fmt.Sprintf("member2=%d", rb.Spec.Replicas) {
				return fmt.Errorf("%s moved: %s", name, placementOf(rb))
			}
		}
		return nil
	})
	if out, err := karmadactl("uncordon", "member2"); err != nil {
		t.Fatalf("uncordon: %v\n%s", err, out)
	}

	// member2 fails.
	stopped := time.Now()
	startMember2 := stopMember(t, "member2")
	// Sample every 200 ms: member2's Work of failover-move must outlive the
	// moment member3 has the workload available.
	var (
		mu                            sync.Mutex
		tainted, available, workLetGo time.Time
		// taintAdded is the taint's own timeAdded (to the second), what
		// the toleration counts from; tainted is when this loop saw it,
		// which lags by up to an iteration of five reads under load.
		taintAdded time.Time
		blocked    *metav1.Condition
		stayMoved  string
	)
	kc3 := kube(t, "member3")
	err := wait.PollUntilContextTimeout(ctx, 200*time.Millisecond, 3*time.Minute, true, func(ctx context.Context) (bool, error) {
		mu.Lock()
		defer mu.Unlock()
		now := time.Now()
		if tainted.IsZero() {
			cl := getCluster(ctx, t, c, "member2")
			for _, tt := range cl.Spec.Taints {
				if tt.Key == "cluster.karmada.io/not-ready" && tt.Effect == corev1.TaintEffectNoExecute {
					tainted = now
					if tt.TimeAdded != nil {
						taintAdded = tt.TimeAdded.Time
					}
				}
			}
		}
		if available.IsZero() {
			if d, err := kc3.AppsV1().Deployments("default").Get(ctx, "failover-move", metav1.GetOptions{}); err == nil && d.Status.AvailableReplicas == 2 {
				available = now
			}
		}
		if workLetGo.IsZero() {
			w := &workv1alpha1.Work{}
			err := c.Get(ctx, client.ObjectKey{Namespace: "karmada-es-member2", Name: names.WorkName("Deployment", "failover-move", "default")}, w)
			if apierrors.IsNotFound(err) || (err == nil && !w.DeletionTimestamp.IsZero()) {
				workLetGo = now
			}
		}
		if rb, err := getBinding(ctx, c, "failover-only"); err == nil {
			if cond := meta.FindStatusCondition(rb.Status.Conditions, workv1alpha2.EvictionBlocked); cond != nil && cond.Status == metav1.ConditionTrue {
				blocked = cond
			}
		}
		if rb, err := getBinding(ctx, c, "failover-stay"); err == nil && placementOf(rb) != "member2=1" {
			stayMoved = placementOf(rb)
		}
		return !workLetGo.IsZero() && blocked != nil, nil
	})
	mu.Lock()
	defer mu.Unlock()
	if err != nil {
		t.Fatalf("after member2 stopped: tainted %v, member3 available %v, member2's Work let go %v, failover-only blocked %v", tainted, available, workLetGo, blocked)
	}
	t.Logf("member2 stopped: NoExecute taint added after %s (seen after %s), failover-move available in member3 after %s, member2's Work let go after %s",
		taintAdded.Sub(stopped).Round(100*time.Millisecond), tainted.Sub(stopped).Round(100*time.Millisecond),
		available.Sub(stopped).Round(100*time.Millisecond), workLetGo.Sub(stopped).Round(100*time.Millisecond))
	if available.IsZero() || workLetGo.Before(available) {
		t.Errorf("member2's copy was let go (%v) before member3's was available (%v)", workLetGo, available)
	}
	// timeAdded is truncated to the second: up to 1 s early.
	if taintAdded.IsZero() || available.Sub(taintAdded) < 10*time.Second-time.Second {
		t.Errorf("moved %s after the taint was added (%s), before the 10 s toleration", available.Sub(taintAdded), taintAdded)
	}
	if blocked.Reason != workv1alpha2.ReasonNoReplacement {
		t.Errorf("failover-only: %+v, want EvictionBlocked NoReplacement", blocked)
	}
	if stayMoved != "" {
		t.Errorf("failover-stay (tolerating 300 s) moved to %s", stayMoved)
	}
	w := &workv1alpha1.Work{}
	if err := c.Get(ctx, client.ObjectKey{Namespace: "karmada-es-member2", Name: names.WorkName("Deployment", "failover-only", "default")}, w); err != nil || !w.DeletionTimestamp.IsZero() {
		t.Errorf("failover-only's Work for member2 is gone or going (%v): its only copy would be deleted", err)
	}

	// member2 returns: untainted, failover-only placed back with its copy
	// untouched, failover-move's old copy deleted.
	startMember2()
	kc2 := kube(t, "member2")
	var last string
	err = wait.PollUntilContextTimeout(ctx, 200*time.Millisecond, 2*time.Minute, true, func(ctx context.Context) (bool, error) {
		cl := getCluster(ctx, t, c, "member2")
		for _, tt := range cl.Spec.Taints {
			if tt.Effect == corev1.TaintEffectNoExecute {
				last = "member2 still tainted NoExecute"
				return false, nil
			}
		}
		rb, err := getBinding(ctx, c, "failover-only")
		if err != nil || placementOf(rb) != "member2=1" || len(rb.Spec.GracefulEvictionTasks) != 0 || meta.FindStatusCondition(rb.Status.Conditions, workv1alpha2.EvictionBlocked) != nil {
			last = fmt.Sprintf("failover-only: %v %+v", err, rb)
			return false, nil
		}
		_, err = kc2.AppsV1().Deployments("default").Get(ctx, "failover-move", metav1.GetOptions{})
		last = fmt.Sprintf("failover-move in member2: %v", err)
		return apierrors.IsNotFound(err), nil
	})
	if err != nil {
		t.Fatalf("after member2 started: %s", last)
	}
	// The copies that were not to move are the very objects they were:
	// never deleted and re-created.
	for name, uid := range before {
		got, err := kc2.AppsV1().Deployments("default").Get(ctx, name, metav1.GetOptions{})
		if err != nil {
			t.Errorf("%s in member2: %v", name, err)
		} else if got.UID != uid {
			t.Errorf("%s in member2 was re-created: uid %s, was %s", name, got.UID, uid)
		}
	}
}

// Application failover: a workload whose copy in member1 cannot run (an
// override pins its pods to a node member1 does not have) is moved to
// member3 after its 5 s toleration; statePreservation carries a value of
// member1's copy's status into a label of member3's copy; with purgeMode
// Never member1's copy stays.
func TestApplicationFailover(t *testing.T) {
	ctx := context.Background()
	c := karmadaClient(t)
	op := &policyv1alpha1.OverridePolicy{
		ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: "appfail-pending-in-member1"},
		Spec: policyv1alpha1.OverrideSpec{
			ResourceSelectors: []policyv1alpha1.ResourceSelector{{APIVersion: "apps/v1", Kind: "Deployment", Name: "appfail"}},
			OverrideRules: []policyv1alpha1.RuleWithCluster{{
				TargetCluster: &policyv1alpha1.ClusterAffinity{ClusterNames: []string{"member1"}},
				Overriders: policyv1alpha1.Overriders{Plaintext: []policyv1alpha1.PlaintextOverrider{{
					Path: "/spec/template/spec/nodeSelector", Operator: policyv1alpha1.OverriderOpAdd,
					Value: apiextensionsv1.JSON{Raw: []byte(`{"e2e.karmada-go.io/no-such-node":"true"}`)}}}},
			}},
		},
	}
	if err := c.Create(ctx, op); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = c.Delete(context.Background(), op) })
	if out, err := karmadactl("cordon", "member3"); err != nil {
		t.Fatalf("cordon: %v\n%s", err, out)
	}
	t.Cleanup(func() { _, _ = karmadactl("uncordon", "member3") })
	p := placementPolicy("appfail", policyv1alpha1.Placement{
		ClusterAffinity:   &policyv1alpha1.ClusterAffinity{ClusterNames: []string{"member1", "member3"}},
		SpreadConstraints: []policyv1alpha1.SpreadConstraint{{SpreadByField: policyv1alpha1.SpreadByFieldCluster, MaxGroups: 1, MinGroups: 1}},
	})
	p.Spec.PropagateDeps = true // as Karmada requires with application failover
	p.Spec.Failover = &policyv1alpha1.FailoverBehavior{Application: &policyv1alpha1.ApplicationFailoverBehavior{
		DecisionConditions: policyv1alpha1.DecisionConditions{TolerationSeconds: ptr.To[int32](5)},
		PurgeMode:          policyv1alpha1.PurgeModeNever,
		StatePreservation: &policyv1alpha1.StatePreservation{Rules: []policyv1alpha1.StatePreservationRule{
			{AliasLabelName: "failover.karmada-go.io/replicas", JSONPath: "{.replicas}"}}},
	}}
	if err := c.Create(ctx, p); err != nil {
		t.Fatal(err)
	}
	d := deploymentNamed("appfail", 2)
	if err := c.Create(ctx, d); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = c.Delete(context.Background(), d)
		_ = c.Delete(context.Background(), p)
	})
	if got := placementOf(waitScheduled(ctx, t, "appfail", 2)); got != "member1=2" {
		t.Fatalf("placed on %s, want member1 (member3 cordoned)", got)
	}
	if out, err := karmadactl("uncordon", "member3"); err != nil {
		t.Fatalf("uncordon: %v\n%s", err, out)
	}
	var last string
	err := wait.PollUntilContextTimeout(ctx, 200*time.Millisecond, 90*time.Second, true, func(ctx context.Context) (bool, error) {
		rb, err := getBinding(ctx, c, "appfail")
		if err != nil {
			last = err.Error()
			return false, nil
		}
		if placementOf(rb) != "member3=2" || len(rb.Spec.GracefulEvictionTasks) != 1 {
			last = fmt.Sprintf("placement %s, tasks %+v, aggregated %+v", placementOf(rb), rb.Spec.GracefulEvictionTasks, rb.Status.AggregatedStatus)
			return false, nil
		}
		task := rb.Spec.GracefulEvictionTasks[0]
		if task.FromCluster != "member1" || task.Reason != "ApplicationFailure" || task.SuppressDeletion == nil || !*task.SuppressDeletion {
			last = fmt.Sprintf("task %+v", task)
			return false, nil
		}
		got, err := kube(t, "member3").AppsV1().Deployments("default").Get(ctx, "appfail", metav1.GetOptions{})
		if err != nil {
			last = "member3: " + err.Error()
			return false, nil
		}
		last = fmt.Sprintf("member3's copy: labels %v, %d available", got.Labels, got.Status.AvailableReplicas)
		return got.Labels["failover.karmada-go.io/replicas"] == "2" && got.Status.AvailableReplicas == 2, nil
	})
	if err != nil {
		t.Fatalf("not failed over to member3 with the preserved state: %s", last)
	}
	// purgeMode Never: member1's copy stays.
	if _, err := kube(t, "member1").AppsV1().Deployments("default").Get(ctx, "appfail", metav1.GetOptions{}); err != nil {
		t.Errorf("member1's copy with purgeMode Never: %v", err)
	}
}

// The fleet-wide availability budget: two workloads of 6 replicas over
// three members, one with policy.karmada-go.io/min-available 4 (graceful
// eviction), one with 100% and failover.cluster.purgeMode Directly (whose
// copy Karmada would delete at once); member2 evicted (a NoExecute taint
// they do not tolerate): sampled every 200 ms, neither ever has fewer
// available replicas across the members than its budget, and member2's
// copies go once the others have taken their replicas.
func TestAvailabilityBudgetHoldsThroughEviction(t *testing.T) {
	ctx := context.Background()
	c := karmadaClient(t)
	budgets := map[string]int32{"budgeted": 4, "budgeted-directly": 6}
	for name, budget := range budgets {
		p := placementPolicy(name, policyv1alpha1.Placement{
			ClusterAffinity: &policyv1alpha1.ClusterAffinity{ClusterNames: []string{"member1", "member2", "member3"}},
			ReplicaScheduling: &policyv1alpha1.ReplicaSchedulingStrategy{ReplicaSchedulingType: policyv1alpha1.ReplicaSchedulingTypeDivided,
				ReplicaDivisionPreference: policyv1alpha1.ReplicaDivisionPreferenceWeighted},
		})
		p.Annotations = map[string]string{policyv1alpha1.MinAvailableAnnotation: fmt.Sprint(budget)}
		if budget == 6 {
			p.Annotations[policyv1alpha1.MinAvailableAnnotation] = "100%"
			p.Spec.Failover = &policyv1alpha1.FailoverBehavior{Cluster: &policyv1alpha1.ClusterFailoverBehavior{PurgeMode: policyv1alpha1.PurgeModeDirectly}}
		}
		if err := c.Create(ctx, p); err != nil {
			t.Fatal(err)
		}
		d := deploymentNamed(name, 6)
		if err := c.Create(ctx, d); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() {
			_ = c.Delete(context.Background(), d)
			_ = c.Delete(context.Background(), p)
		})
	}
	for name := range budgets {
		if got := placementOf(waitScheduled(ctx, t, name, 6)); got != "member1=2,member2=2,member3=2" {
			t.Fatalf("%s placed %s, want 2 in each member", name, got)
		}
		for _, m := range []string{"member1", "member2", "member3"} {
			waitMemberDeployment(ctx, t, m, name, 2)
		}
		if rb, err := getBinding(ctx, c, name); err != nil || rb.Annotations[policyv1alpha1.MinAvailableAnnotation] == "" {
			t.Fatalf("the binding of %s does not carry the policy's budget: %v %v", name, rb.Annotations, err)
		}
	}
	if out, err := karmadactl("taint", "clusters", "member2", "e2e-evict=yes:NoExecute"); err != nil {
		t.Fatalf("taint: %v\n%s", err, out)
	}
	t.Cleanup(func() { _, _ = karmadactl("taint", "clusters", "member2", "e2e-evict:NoExecute-") })
	members := map[string]kubernetes.Interface{"member1": kube(t, "member1"), "member2": kube(t, "member2"), "member3": kube(t, "member3")}
	lowest := map[string]int32{"budgeted": 6, "budgeted-directly": 6}
	samples := 0
	var last string
	err := wait.PollUntilContextTimeout(ctx, 200*time.Millisecond, 90*time.Second, true, func(ctx context.Context) (bool, error) {
		done := true
		last = ""
		for name := range budgets {
			var sum int32
			var parts []string
			gone2 := false
			for _, m := range []string{"member1", "member2", "member3"} {
				got, err := members[m].AppsV1().Deployments("default").Get(ctx, name, metav1.GetOptions{})
				switch {
				case apierrors.IsNotFound(err):
					gone2 = gone2 || m == "member2"
					parts = append(parts, m+"=gone")
				case err != nil:
					return false, err
				default:
					sum += got.Status.AvailableReplicas
					parts = append(parts, fmt.Sprintf("%s=%d", m, got.Status.AvailableReplicas))
				}
			}
			lowest[name] = min(lowest[name], sum)
			last += fmt.Sprintf("%s %v; ", name, parts)
			done = done && gone2 && sum == 6
		}
		samples++
		return done, nil
	})
	if err != nil {
		t.Fatalf("member2's copies not replaced: %s (%v)", last, err)
	}
	t.Logf("%d samples, lowest available %v, at the end %s", samples, lowest, last)
	for name, budget := range budgets {
		if lowest[name] < budget {
			t.Errorf("%s: available replicas fell to %d, under its budget of %d", name, lowest[name], budget)
		}
	}
}
