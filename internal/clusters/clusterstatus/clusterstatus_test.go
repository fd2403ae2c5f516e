package clusterstatus

import (
	"reflect"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/clock"
	clocktesting "k8s.io/utils/clock/testing"

	clusterv1alpha1 "github.com/karmada-go/karmada/api/cluster/v1alpha1"
	"github.com/karmada-go/karmada/internal/clusters/clusterclient"
)

func TestDecideWaitsForThresholds(t *testing.T) {
	now := time.Date(2026, 11, 22, 0, 0, 0, 0, time.UTC)
	fake := clocktesting.NewFakePassiveClock(now)
	r := &Reconciler{FailureThreshold: 30 * time.Second, SuccessThreshold: 20 * time.Second, Clock: fake, pending: map[string]observation{}}
	ready := &metav1.Condition{Status: metav1.ConditionTrue}
	notReady := &metav1.Condition{Status: metav1.ConditionFalse}
	step := func(d time.Duration) { fake.SetTime(fake.Now().Add(d)) }

	if write, _ := r.decide("m", nil, metav1.ConditionFalse); !write {
		t.Fatal("a cluster without a condition must get one at once")
	}
	if write, _ := r.decide("m", ready, metav1.ConditionTrue); !write {
		t.Fatal("an unchanged status must be written (message refresh)")
	}
	// Failing: held for the failure threshold.
	write, requeue := r.decide("m", ready, metav1.ConditionFalse)
	if write || requeue != 30*time.Second {
		t.Fatalf("first failure: write=%v requeue=%s, want false, 30s", write, requeue)
	}
	step(10 * time.Second)
	if write, requeue = r.decide("m", ready, metav1.ConditionFalse); write || requeue != 20*time.Second {
		t.Fatalf("failing 10s: write=%v requeue=%s, want false, 20s", write, requeue)
	}
	// One success resets the failure streak: no flapping on a slow probe.
	step(10 * time.Second)
	if write, _ = r.decide("m", ready, metav1.ConditionTrue); !write {
		t.Fatal("success while Ready must be written")
	}
	step(10 * time.Second)
	if write, _ = r.decide("m", ready, metav1.ConditionFalse); write {
		t.Fatal("a new failure streak must start from zero")
	}
	step(30 * time.Second)
	if write, _ = r.decide("m", ready, metav1.ConditionFalse); !write {
		t.Fatal("failing for the whole threshold must be written")
	}
	// Recovering: held for the success threshold.
	if write, requeue = r.decide("m", notReady, metav1.ConditionTrue); write || requeue != 20*time.Second {
		t.Fatalf("first success: write=%v requeue=%s, want false, 20s", write, requeue)
	}
	step(20 * time.Second)
	if write, _ = r.decide("m", notReady, metav1.ConditionTrue); !write {
		t.Fatal("succeeding for the whole threshold must be written")
	}
	// Unknown (the agent was not heard from) is replaced by the agent's
	// first observation, whatever it is.
	unknown := &metav1.Condition{Status: metav1.ConditionUnknown}
	for _, observed := range []metav1.ConditionStatus{metav1.ConditionTrue, metav1.ConditionFalse} {
		if write, requeue = r.decide("m", unknown, observed); !write || requeue != 0 {
			t.Fatalf("Unknown, then %s observed: write=%v requeue=%s, want it written at once", observed, write, requeue)
		}
	}
}

func TestDecideWithZeroThresholdsIsImmediate(t *testing.T) {
	r := &Reconciler{Clock: clock.RealClock{}, pending: map[string]observation{}}
	if write, _ := r.decide("m", &metav1.Condition{Status: metav1.ConditionTrue}, metav1.ConditionFalse); !write {
		t.Fatal("with no threshold a change is written at once")
	}
}

func node(ready bool, cpu, mem string) *corev1.Node {
	st := corev1.ConditionFalse
	if ready {
		st = corev1.ConditionTrue
	}
	return &corev1.Node{Status: corev1.NodeStatus{
		Allocatable: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse(cpu), corev1.ResourceMemory: resource.MustParse(mem), corev1.ResourcePods: resource.MustParse("110")},
		Conditions:  []corev1.NodeCondition{{Type: corev1.NodeReady, Status: st}},
	}}
}

func pod(nodeName string, phase corev1.PodPhase, cpu string) *clusterclient.PodUsage {
	return clusterclient.UsageOf(&corev1.Pod{
		Spec: corev1.PodSpec{NodeName: nodeName, Containers: []corev1.Container{{Resources: corev1.ResourceRequirements{
			Requests: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse(cpu)},
		}}}},
		Status: corev1.PodStatus{Phase: phase},
	})
}

func TestSummaries(t *testing.T) {
	nodes := []*corev1.Node{node(true, "8", "32Gi"), node(false, "4", "16Gi")}
	ns := NodeSummary(nodes)
	if ns.TotalNum != 2 || ns.ReadyNum != 1 {
		t.Errorf("node summary %+v, want 2 total 1 ready", ns)
	}
	pods := []*clusterclient.PodUsage{
		pod("n1", corev1.PodRunning, "500m"),
		pod("n1", corev1.PodRunning, "250m"),
		pod("", corev1.PodPending, "1"),
		pod("n1", corev1.PodSucceeded, "4"), // finished: holds nothing
	}
	rs := ResourceSummary(nodes, pods, nil)
	checks := []struct {
		name string
		list corev1.ResourceList
		res  corev1.ResourceName
		want string
	}{
		{"allocatable cpu", rs.Allocatable, corev1.ResourceCPU, "12"},
		{"allocatable memory", rs.Allocatable, corev1.ResourceMemory, "48Gi"},
		{"allocated cpu", rs.Allocated, corev1.ResourceCPU, "750m"},
		{"allocated pods", rs.Allocated, corev1.ResourcePods, "2"},
		{"allocating cpu", rs.Allocating, corev1.ResourceCPU, "1"},
		{"allocating pods", rs.Allocating, corev1.ResourcePods, "1"},
	}
	for _, c := range checks {
		got := c.list[c.res]
		if got.Cmp(resource.MustParse(c.want)) != 0 {
			t.Errorf("%s = %s, want %s", c.name, got.String(), c.want)
		}
	}
}

func TestSummaryGradesNodesByFreeResources(t *testing.T) {
	r := func(lo, hi string) clusterv1alpha1.ResourceModelRange {
		return clusterv1alpha1.ResourceModelRange{Name: corev1.ResourceCPU, Min: resource.MustParse(lo), Max: resource.MustParse(hi)}
	}
	models := []clusterv1alpha1.ResourceModel{
		{Grade: 0, Ranges: []clusterv1alpha1.ResourceModelRange{r("0", "4")}},
		{Grade: 1, Ranges: []clusterv1alpha1.ResourceModelRange{r("4", "1k")}},
	}
	n1, n2, n3 := node(true, "8", "32Gi"), node(true, "8", "32Gi"), node(true, "2", "8Gi")
	n1.Name, n2.Name, n3.Name = "n1", "n2", "n3"
	// n1 has 5 of 8 cpu used: 3 free puts it in grade 0.
	pods := []*clusterclient.PodUsage{pod("n1", corev1.PodRunning, "5")}
	rs := ResourceSummary([]*corev1.Node{n1, n2, n3}, pods, models)
	want := []clusterv1alpha1.AllocatableModeling{{Grade: 0, Count: 2}, {Grade: 1, Count: 1}}
	if !reflect.DeepEqual(rs.AllocatableModelings, want) {
		t.Errorf("modelings %+v, want %+v", rs.AllocatableModelings, want)
	}
}

// reached says "again" once, on the first probe that reaches a cluster
// after probes that did not.
func TestReachedAgainAfterOutage(t *testing.T) {
	r := &Reconciler{}
	steps := []struct {
		ok, again bool
	}{{true, false}, {false, false}, {false, false}, {true, true}, {true, false}}
	for i, s := range steps {
		if got := r.reached("m", s.ok); got != s.again {
			t.Errorf("probe %d (reached %v): again %v, want %v", i, s.ok, got, s.again)
		}
	}
	r.reached("m", false)
	r.forget("m")
	if r.reached("m", true) {
		t.Error("a forgotten cluster is not back from an outage")
	}
}
