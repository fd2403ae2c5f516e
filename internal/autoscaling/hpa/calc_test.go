package hpa

import (
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

var now = time.Date(2026, 11, 29, 12, 0, 0, 0, time.UTC)

// pod is a running pod started long ago, ready since soon after, asking
// 1 cpu and 1Gi.
func pod(name string, mods ...func(*corev1.Pod)) *corev1.Pod {
	p := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: name},
		Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "app", Resources: corev1.ResourceRequirements{Requests: corev1.ResourceList{
			corev1.ResourceCPU: resource.MustParse("1"), corev1.ResourceMemory: resource.MustParse("1Gi")}}}}},
		Status: corev1.PodStatus{Phase: corev1.PodRunning, StartTime: &metav1.Time{Time: now.Add(-time.Hour)},
			Conditions: []corev1.PodCondition{{Type: corev1.PodReady, Status: corev1.ConditionTrue, LastTransitionTime: metav1.Time{Time: now.Add(-time.Hour + 10*time.Second)}}}}}
	for _, m := range mods {
		m(p)
	}
	return p
}

func pending(p *corev1.Pod)  { p.Status.Phase = corev1.PodPending }
func failed(p *corev1.Pod)   { p.Status.Phase = corev1.PodFailed }
func deleting(p *corev1.Pod) { p.DeletionTimestamp = &metav1.Time{Time: now} }

// startedAgo starts the pod d ago; it became ready (or not) at readyAt
// after its start.
func startedAgo(d, readyAt time.Duration, status corev1.ConditionStatus) func(*corev1.Pod) {
	return func(p *corev1.Pod) {
		p.Status.StartTime = &metav1.Time{Time: now.Add(-d)}
		p.Status.Conditions = []corev1.PodCondition{{Type: corev1.PodReady, Status: status, LastTransitionTime: metav1.Time{Time: now.Add(-d + readyAt)}}}
	}
}

func noRequest(p *corev1.Pod) { p.Spec.Containers[0].Resources.Requests = nil }

func milli(v int64) Sample {
	return Sample{Milli: v, Timestamp: now.Add(-10 * time.Second), Window: 15 * time.Second}
}

// The documented cases of the algorithm (kubernetes.io, "Horizontal Pod
// Autoscaling", Algorithm details), for cpu utilisation against a 50 %
// target with 1-cpu requests.
func TestResourceUtilization(t *testing.T) {
	cases := []struct {
		name    string
		current int32
		pods    []*corev1.Pod
		samples Samples
		want    int32
		wantPct int32
		err     string
	}{
		{name: "twice the target doubles", current: 2, pods: []*corev1.Pod{pod("a"), pod("b")},
			samples: Samples{"a": milli(1000), "b": milli(1000)}, want: 4, wantPct: 100},
		{name: "within tolerance keeps the count", current: 2, pods: []*corev1.Pod{pod("a"), pod("b")},
			samples: Samples{"a": milli(520), "b": milli(530)}, want: 2, wantPct: 52},
		{name: "just past tolerance scales", current: 4, pods: []*corev1.Pod{pod("a"), pod("b"), pod("c"), pod("d")},
			samples: Samples{"a": milli(600), "b": milli(600), "c": milli(600), "d": milli(600)}, want: 5, wantPct: 60},
		{name: "half the target halves", current: 4, pods: []*corev1.Pod{pod("a"), pod("b"), pod("c"), pod("d")},
			samples: Samples{"a": milli(250), "b": milli(250), "c": milli(250), "d": milli(250)}, want: 2, wantPct: 25},
		{name: "a pod without samples counts as its whole request when scaling down", current: 3,
			pods:    []*corev1.Pod{pod("a"), pod("b"), pod("c")},
			samples: Samples{"a": milli(200), "b": milli(200)}, want: 3, wantPct: 20},
		{name: "a pod without samples counts as nothing when scaling up", current: 3,
			pods:    []*corev1.Pod{pod("a"), pod("b"), pod("c")},
			samples: Samples{"a": milli(1000), "b": milli(1000)}, want: 4, wantPct: 100},
		{name: "a pending pod counts as nothing when scaling up", current: 3,
			pods:    []*corev1.Pod{pod("a"), pod("b"), pod("c", pending)},
			samples: Samples{"a": milli(1000), "b": milli(1000)}, want: 4, wantPct: 100},
		{name: "pods without samples that reverse the direction keep the count", current: 4,
			pods:    []*corev1.Pod{pod("a"), pod("b"), pod("c"), pod("d")},
			samples: Samples{"a": milli(600), "b": milli(600)}, want: 4, wantPct: 60},
		{name: "deleted and failed pods are ignored", current: 4,
			pods:    []*corev1.Pod{pod("a"), pod("b"), pod("c", deleting), pod("d", failed)},
			samples: Samples{"a": milli(1000), "b": milli(1000), "c": milli(0), "d": milli(0)}, want: 4, wantPct: 100},
		{name: "a starting pod not ready yet is set aside", current: 2,
			pods:    []*corev1.Pod{pod("a"), pod("b", startedAgo(time.Minute, 0, corev1.ConditionFalse))},
			samples: Samples{"a": milli(250), "b": milli(1000)}, want: 1, wantPct: 25},
		{name: "a starting pod sampled before it was ready is set aside", current: 2,
			pods:    []*corev1.Pod{pod("a"), pod("b", startedAgo(time.Minute, 55*time.Second, corev1.ConditionTrue))},
			samples: Samples{"a": milli(250), "b": milli(1000)}, want: 1, wantPct: 25},
		{name: "an old pod that turned unready later still counts", current: 2,
			pods:    []*corev1.Pod{pod("a"), pod("b", startedAgo(time.Hour, 40*time.Minute, corev1.ConditionFalse))},
			samples: Samples{"a": milli(250), "b": milli(250)}, want: 1, wantPct: 25},
		{name: "an old pod that never became ready is set aside", current: 2,
			pods:    []*corev1.Pod{pod("a"), pod("b", startedAgo(time.Hour, 10*time.Second, corev1.ConditionFalse))},
			samples: Samples{"a": milli(250), "b": milli(1000)}, want: 1, wantPct: 25},
		{name: "no samples at all", current: 2, pods: []*corev1.Pod{pod("a")}, samples: Samples{}, err: ErrNoMetrics.Error()},
		{name: "samples only of pods set aside", current: 2, pods: []*corev1.Pod{pod("a", pending)}, samples: Samples{"a": milli(1)},
			err: ErrNoReadyMetrics.Error()},
		{name: "a pod without a request", current: 1, pods: []*corev1.Pod{pod("a", noRequest)}, samples: Samples{"a": milli(1)},
			err: "missing request for cpu in container app of Pod a"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			res, err := ResourceUtilization(tc.current, 50, corev1.ResourceCPU, "", tc.pods, tc.samples, DefaultConfig, now)
			if tc.err != "" {
				if err == nil || !strings.Contains(err.Error(), tc.err) {
					t.Fatalf("error %v, want %q", err, tc.err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if res.Replicas != tc.want || res.Utilization != tc.wantPct {
				t.Errorf("replicas %d at %d%%, want %d at %d%%", res.Replicas, res.Utilization, tc.want, tc.wantPct)
			}
		})
	}
}

// Readiness sets samples aside for cpu only: memory counts an unready
// starting pod's sample.
func TestReadinessOnlyForCPU(t *testing.T) {
	pods := []*corev1.Pod{pod("a"), pod("b", startedAgo(time.Minute, 0, corev1.ConditionFalse))}
	gi := int64(1 << 30 * 1000)
	res, err := ResourceUtilization(2, 50, corev1.ResourceMemory, "", pods, Samples{"a": milli(gi / 4), "b": milli(gi)}, DefaultConfig, now)
	if err != nil || res.Replicas != 3 {
		t.Fatalf("memory: %+v %v, want 3 (both samples: 62%% against 50%%)", res, err)
	}
}

func TestAverageValue(t *testing.T) {
	pods := []*corev1.Pod{pod("a"), pod("b"), pod("c")}
	// Requests per second per pod, against 10 each.
	res, err := AverageValue(3, 10000, "", pods, Samples{"a": milli(30000), "b": milli(30000), "c": milli(30000)}, DefaultConfig, now)
	if err != nil || res.Replicas != 9 || res.Average != 30000 {
		t.Fatalf("%+v %v, want 9 replicas averaging 30", res, err)
	}
	// A missing pod on the way down counts as the target.
	res, err = AverageValue(3, 10000, "", pods, Samples{"a": milli(5000), "b": milli(5000)}, DefaultConfig, now)
	if err != nil || res.Replicas != 2 {
		t.Fatalf("%+v %v, want 2 (the missing pod counts as the target: 20/3 against 10)", res, err)
	}
}

func TestObjectMetrics(t *testing.T) {
	if n, err := ObjectValue(2, 300, 100, 2, DefaultConfig); err != nil || n != 6 {
		t.Errorf("value 3× the target over 2 ready pods: %d %v, want 6", n, err)
	}
	if n, err := ObjectValue(2, 105, 100, 2, DefaultConfig); err != nil || n != 2 {
		t.Errorf("within tolerance: %d %v", n, err)
	}
	if n, err := ObjectAverage(3, 1000, 100, DefaultConfig); err != nil || n != 10 {
		t.Errorf("1000 at 100 per pod: %d %v, want 10", n, err)
	}
	if n, err := ObjectAverage(10, 1040, 100, DefaultConfig); err != nil || n != 10 {
		t.Errorf("within tolerance of 10 pods: %d %v", n, err)
	}
	if _, err := ObjectAverage(1, 1, 0, DefaultConfig); err == nil {
		t.Error("a zero target was accepted")
	}
}
