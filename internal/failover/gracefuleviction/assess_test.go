package gracefuleviction

import (
	"fmt"
	"strings"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/utils/ptr"

	policyv1alpha1 "github.com/karmada-go/karmada/api/policy/v1alpha1"
	workv1alpha1 "github.com/karmada-go/karmada/api/work/v1alpha1"
	workv1alpha2 "github.com/karmada-go/karmada/api/work/v1alpha2"
	"github.com/karmada-go/karmada/internal/eviction"
)

var t0 = time.Date(2026, 11, 24, 8, 0, 0, 0, time.UTC)

func item(cluster string, health workv1alpha1.ResourceHealth, available int) workv1alpha2.AggregatedStatusItem {
	return workv1alpha2.AggregatedStatusItem{ClusterName: cluster, Applied: true, Health: health,
		Status: &runtime.RawExtension{Raw: []byte(fmt.Sprintf(`{"availableReplicas":%d}`, available))}}
}

func task(from string, age time.Duration, mode policyv1alpha1.PurgeMode) workv1alpha2.GracefulEvictionTask {
	created := metav1.NewTime(t0.Add(-age))
	return workv1alpha2.GracefulEvictionTask{FromCluster: from, PurgeMode: mode, Reason: "TaintUntolerated", Producer: "TaintManager",
		Replicas: ptr.To[int32](2), CreationTimestamp: &created}
}

func scheduledStatus(items ...workv1alpha2.AggregatedStatusItem) *workv1alpha2.ResourceBindingStatus {
	return &workv1alpha2.ResourceBindingStatus{SchedulerObservedGeneration: 2, AggregatedStatus: items,
		Conditions: []metav1.Condition{{Type: workv1alpha2.Scheduled, Status: metav1.ConditionTrue, Reason: "Success"}}}
}

func TestAssess(t *testing.T) {
	gracefully, directly, never := policyv1alpha1.PurgeModeGracefully, policyv1alpha1.PurgeModeDirectly, policyv1alpha1.PurgeModeNever
	on := func(replicas int32, names ...string) []workv1alpha2.TargetCluster {
		var out []workv1alpha2.TargetCluster
		for _, n := range names {
			out = append(out, workv1alpha2.TargetCluster{Name: n, Replicas: replicas})
		}
		return out
	}
	unschedulable := &workv1alpha2.ResourceBindingStatus{SchedulerObservedGeneration: 2, AggregatedStatus: []workv1alpha2.AggregatedStatusItem{item("m2", workv1alpha1.ResourceHealthy, 2)},
		Conditions: []metav1.Condition{{Type: workv1alpha2.Scheduled, Status: metav1.ConditionFalse, Reason: "NoClusterFit", Message: "0/3 clusters are available: m1: cluster had untolerated taint"}}}
	cases := []struct {
		name         string
		clusters     []workv1alpha2.TargetCluster
		task         workv1alpha2.GracefulEvictionTask
		status       *workv1alpha2.ResourceBindingStatus
		notReady     string
		minAvailable int32
		wantEnded    bool
		wantBlocked  string // reason
		wantAfter    time.Duration
	}{
		{name: "replacement healthy", clusters: on(2, "m3"), task: task("m2", time.Second, gracefully),
			status: scheduledStatus(item("m3", workv1alpha1.ResourceHealthy, 2), item("m2", workv1alpha1.ResourceHealthy, 2)), wantEnded: true},
		{name: "replacement not yet healthy", clusters: on(2, "m3"), task: task("m2", time.Minute, gracefully),
			status: scheduledStatus(item("m3", workv1alpha1.ResourceUnhealthy, 0)), wantAfter: 9 * time.Minute},
		{name: "healthy but short of its replicas (a scale-up not reported yet)", clusters: on(4, "m3"), task: task("m2", time.Minute, gracefully),
			status: scheduledStatus(item("m3", workv1alpha1.ResourceHealthy, 2)), wantAfter: 9 * time.Minute},
		{name: "replacement on a cluster that is not Ready", clusters: on(2, "m3"), task: task("m2", time.Minute, gracefully), notReady: "m3",
			status: scheduledStatus(item("m3", workv1alpha1.ResourceHealthy, 2)), wantAfter: 9 * time.Minute},
		// Issue 39: a copy on a cluster that is not Ready is unknown, not
		// gone; a task whose grace period ends while the replacement is
		// unhealthy is held, never completed.
		{name: "grace period over, the evicted cluster not Ready, the replacement unhealthy", clusters: on(2, "m3"), task: task("m2", 11*time.Minute, gracefully), notReady: "m2",
			status: scheduledStatus(item("m3", workv1alpha1.ResourceUnhealthy, 0), item("m2", workv1alpha1.ResourceHealthy, 2)), wantBlocked: workv1alpha2.ReasonReplacementUnhealthy},
		{name: "the task's own grace period over, the replacement unhealthy", clusters: on(2, "m3"), task: func() workv1alpha2.GracefulEvictionTask {
			t := task("m2", 31*time.Second, gracefully)
			t.GracePeriodSeconds = ptr.To[int32](30)
			return t
		}(), notReady: "m2", status: scheduledStatus(item("m3", workv1alpha1.ResourceUnhealthy, 0)), wantBlocked: workv1alpha2.ReasonReplacementUnhealthy},
		{name: "grace period over, the evicted copy unhealthy too: still held", clusters: on(2, "m3"), task: task("m2", 11*time.Minute, gracefully),
			status: scheduledStatus(item("m3", workv1alpha1.ResourceUnhealthy, 0), item("m2", workv1alpha1.ResourceUnhealthy, 0)), wantBlocked: workv1alpha2.ReasonReplacementUnhealthy},
		{name: "grace period over, the replacement healthy: ended", clusters: on(2, "m3"), task: task("m2", 11*time.Minute, gracefully), notReady: "m2",
			status: scheduledStatus(item("m3", workv1alpha1.ResourceHealthy, 2)), wantEnded: true},
		{name: "grace period over but the evicted copy is the last healthy one", clusters: on(2, "m3"), task: task("m2", 11*time.Minute, gracefully),
			status: scheduledStatus(item("m3", workv1alpha1.ResourceUnhealthy, 0), item("m2", workv1alpha1.ResourceHealthy, 2)), wantBlocked: workv1alpha2.ReasonReplacementUnhealthy},
		{name: "no cluster can take the workload (#7455)", clusters: nil, task: task("m2", time.Hour, gracefully), status: unschedulable,
			wantBlocked: workv1alpha2.ReasonNoReplacement},
		{name: "the scheduler has not caught up", clusters: on(2, "m3"), task: task("m2", time.Hour, gracefully),
			status: func() *workv1alpha2.ResourceBindingStatus {
				s := scheduledStatus(item("m3", workv1alpha1.ResourceHealthy, 2))
				s.SchedulerObservedGeneration = 1
				return s
			}()},
		{name: "placed there again", clusters: on(2, "m2", "m3"), task: task("m2", time.Second, gracefully),
			status: scheduledStatus(item("m3", workv1alpha1.ResourceUnhealthy, 0)), wantEnded: true},
		{name: "a kind without health, applied", clusters: on(0, "m3"), task: task("m2", time.Second, gracefully),
			status: scheduledStatus(workv1alpha2.AggregatedStatusItem{ClusterName: "m3", Applied: true, Health: workv1alpha1.ResourceUnknownHealth}), wantEnded: true},
		{name: "Never keeps the copy", clusters: on(2, "m3"), task: task("m2", time.Hour, never), status: scheduledStatus(item("m3", workv1alpha1.ResourceHealthy, 2))},
		{name: "suppressed deletion", clusters: on(2, "m3"), task: func() workv1alpha2.GracefulEvictionTask {
			t := task("m2", time.Hour, gracefully)
			t.SuppressDeletion = ptr.To(true)
			return t
		}(), status: scheduledStatus(item("m3", workv1alpha1.ResourceHealthy, 2))},
		{name: "suppression cleared", clusters: on(2, "m3"), task: func() workv1alpha2.GracefulEvictionTask {
			t := task("m2", time.Second, never)
			t.SuppressDeletion = ptr.To(false)
			return t
		}(), status: scheduledStatus(), wantEnded: true},
		{name: "Directly: no copy to guard", clusters: on(2, "m3"), task: task("m2", 11*time.Minute, directly),
			status: scheduledStatus(item("m3", workv1alpha1.ResourceUnhealthy, 0)), wantEnded: true},
		{name: "under the budget", clusters: on(2, "m1", "m3"), task: task("m2", 11*time.Minute, gracefully), minAvailable: 4,
			status:      scheduledStatus(item("m1", workv1alpha1.ResourceHealthy, 2), item("m3", workv1alpha1.ResourceUnhealthy, 1), item("m2", workv1alpha1.ResourceHealthy, 2)),
			wantBlocked: workv1alpha2.ReasonBelowMinAvailable},
		{name: "within the budget", clusters: on(2, "m1", "m3"), task: task("m2", time.Second, gracefully), minAvailable: 4,
			status: scheduledStatus(item("m1", workv1alpha1.ResourceHealthy, 2), item("m3", workv1alpha1.ResourceHealthy, 2), item("m2", workv1alpha1.ResourceHealthy, 2)), wantEnded: true},
		{name: "Directly under the budget keeps the copy", clusters: on(2, "m1", "m3"), task: task("m2", time.Second, directly), minAvailable: 6,
			status:      scheduledStatus(item("m1", workv1alpha1.ResourceHealthy, 2), item("m3", workv1alpha1.ResourceHealthy, 2), item("m2", workv1alpha1.ResourceHealthy, 2)),
			wantBlocked: workv1alpha2.ReasonBelowMinAvailable},
		{name: "Directly goes once the budget allows, healthy or not", clusters: on(3, "m1", "m3"), task: task("m2", time.Second, directly), minAvailable: 6,
			status:    scheduledStatus(item("m1", workv1alpha1.ResourceHealthy, 3), item("m3", workv1alpha1.ResourceUnhealthy, 3), item("m2", workv1alpha1.ResourceHealthy, 2)),
			wantEnded: true},
		{name: "an unreachable copy counts for nothing in the budget, and the grace period ends held", clusters: on(2, "m1", "m3"), task: task("m2", 11*time.Minute, gracefully), minAvailable: 4, notReady: "m2",
			status: scheduledStatus(item("m1", workv1alpha1.ResourceHealthy, 2), item("m3", workv1alpha1.ResourceUnhealthy, 1), item("m2", workv1alpha1.ResourceHealthy, 2)), wantBlocked: workv1alpha2.ReasonReplacementUnhealthy},
		{name: "an unreachable copy counts for nothing in the budget: ended once the replacement is healthy", clusters: on(2, "m1", "m3"), task: task("m2", time.Minute, gracefully), minAvailable: 4, notReady: "m2",
			status: scheduledStatus(item("m1", workv1alpha1.ResourceHealthy, 2), item("m3", workv1alpha1.ResourceHealthy, 2), item("m2", workv1alpha1.ResourceHealthy, 2)), wantEnded: true},
	}
	for _, c := range cases {
		spec := &workv1alpha2.ResourceBindingSpec{Clusters: c.clusters, GracefulEvictionTasks: []workv1alpha2.GracefulEvictionTask{c.task}}
		out := Assess(Input{Spec: spec, Status: c.status, Generation: 2, Ready: func(n string) bool { return n != c.notReady },
			Now: t0, Timeout: 10 * time.Minute, MinAvailable: c.minAvailable})
		if ended := len(out.Ended) == 1; ended != c.wantEnded || len(out.Ended)+len(out.Tasks) != 1 {
			t.Errorf("%s: ended %v, kept %d, want ended %v", c.name, out.Ended, len(out.Tasks), c.wantEnded)
		}
		gotBlocked := ""
		if out.Blocked != nil {
			gotBlocked = out.Blocked.Reason
			if !strings.Contains(out.Blocked.Message, "m2") {
				t.Errorf("%s: the condition does not name the cluster: %s", c.name, out.Blocked.Message)
			}
		}
		if gotBlocked != c.wantBlocked {
			t.Errorf("%s: blocked %q (%v), want %q", c.name, gotBlocked, out.Blocked, c.wantBlocked)
		}
		if out.After != c.wantAfter {
			t.Errorf("%s: look again after %s, want %s", c.name, out.After, c.wantAfter)
		}
	}
}

func TestAssessRestoresARecoveredCluster(t *testing.T) {
	tk := task("m2", time.Hour, policyv1alpha1.PurgeModeGracefully)
	spec := &workv1alpha2.ResourceBindingSpec{GracefulEvictionTasks: []workv1alpha2.GracefulEvictionTask{tk}}
	unschedulable := &workv1alpha2.ResourceBindingStatus{SchedulerObservedGeneration: 2,
		Conditions: []metav1.Condition{{Type: workv1alpha2.Scheduled, Status: metav1.ConditionFalse, Reason: "NoClusterFit"}}}
	in := Input{Spec: spec, Status: unschedulable, Generation: 2, Ready: func(string) bool { return true }, Now: t0, Timeout: time.Minute,
		Recovered: func(*workv1alpha2.GracefulEvictionTask) bool { return false }}
	if out := Assess(in); len(out.Restored) != 0 || out.Blocked == nil {
		t.Fatalf("not recovered: restored %v blocked %v, want held", out.Restored, out.Blocked)
	}
	in.Recovered = func(*workv1alpha2.GracefulEvictionTask) bool { return true }
	out := Assess(in)
	if len(out.Restored) != 1 || out.Restored[0].Name != "m2" || out.Restored[0].Replicas != 2 || len(out.Tasks) != 0 || out.Blocked != nil || !out.Ended[0].Restored {
		t.Fatalf("recovered: %+v, want m2 placed back with its 2 replicas and the task over", out)
	}
}

func TestAssessSetsCreationTime(t *testing.T) {
	spec := &workv1alpha2.ResourceBindingSpec{Clusters: []workv1alpha2.TargetCluster{{Name: "m3", Replicas: 2}},
		GracefulEvictionTasks: []workv1alpha2.GracefulEvictionTask{{FromCluster: "m2", Reason: "Manual", Producer: "user"}}}
	out := Assess(Input{Spec: spec, Status: scheduledStatus(), Generation: 2, Ready: func(string) bool { return true }, Now: t0, Timeout: time.Minute})
	if len(out.Tasks) != 1 || out.Tasks[0].CreationTimestamp == nil || !out.Tasks[0].CreationTimestamp.Time.Equal(t0) || out.After != time.Minute {
		t.Fatalf("tasks %+v after %s, want the creation time set to now and a look after the grace period", out.Tasks, out.After)
	}
}

func TestMinAvailable(t *testing.T) {
	for _, c := range []struct {
		v        string
		replicas int32
		want     int32
	}{{"4", 6, 4}, {"60%", 6, 4}, {"50%", 5, 3}, {"100%", 3, 3}, {"0", 3, 0}, {"-1", 3, 0}, {"x", 3, 0}, {"101%", 3, 0}} {
		if got := eviction.MinAvailable(map[string]string{policyv1alpha1.MinAvailableAnnotation: c.v}, c.replicas); got != c.want {
			t.Errorf("%q of %d: %d, want %d", c.v, c.replicas, got, c.want)
		}
	}
}

// A task ended because the workload is healthy where it went is gated (its
// copy deleted only if that still holds then); a pull cluster's task waits
// for the cluster to be Ready (its agent would delete the copy unchecked).
func TestAssessGatesHealthyEnds(t *testing.T) {
	tk := task("m2", time.Second, policyv1alpha1.PurgeModeGracefully)
	spec := &workv1alpha2.ResourceBindingSpec{Clusters: []workv1alpha2.TargetCluster{{Name: "m3", Replicas: 2}}, GracefulEvictionTasks: []workv1alpha2.GracefulEvictionTask{tk}}
	status := scheduledStatus(item("m3", workv1alpha1.ResourceHealthy, 2))
	notReady := func(n string) bool { return n != "m2" }
	in := Input{Spec: spec, Status: status, Generation: 2, Ready: notReady, Now: t0, Timeout: time.Minute}
	if out := Assess(in); len(out.Ended) != 1 || !out.Ended[0].Gated {
		t.Fatalf("push cluster not Ready: %+v, want ended, gated", out)
	}
	in.Pull = func(n string) bool { return n == "m2" }
	if out := Assess(in); len(out.Ended) != 0 || len(out.Tasks) != 1 || out.Blocked != nil {
		t.Fatalf("pull cluster not Ready: %+v, want the task kept, unblocked", out)
	}
	in.Ready = func(string) bool { return true }
	if out := Assess(in); len(out.Ended) != 1 || !out.Ended[0].Gated {
		t.Fatalf("pull cluster Ready: %+v, want ended, gated", out)
	}
	// Ends a user decides are not gated.
	suppressed := tk
	suppressed.SuppressDeletion = ptr.To(false)
	in.Spec = &workv1alpha2.ResourceBindingSpec{Clusters: spec.Clusters, GracefulEvictionTasks: []workv1alpha2.GracefulEvictionTask{suppressed}}
	if out := Assess(in); len(out.Ended) != 1 || out.Ended[0].Gated {
		t.Fatalf("suppressDeletion false: %+v, want ended, not gated", out)
	}
}
