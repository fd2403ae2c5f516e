package bindingstatus

import (
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"

	workv1alpha1 "github.com/karmada-go/karmada/api/work/v1alpha1"
	workv1alpha2 "github.com/karmada-go/karmada/api/work/v1alpha2"
)

// work builds a Work for a cluster with one manifest; applied is "" for no
// Applied condition, "True" or "False"; health "" for no manifest status.
func work(cluster string, generation int64, applied metav1.ConditionStatus, observed int64, health workv1alpha1.ResourceHealth) workv1alpha1.Work {
	w := workv1alpha1.Work{ObjectMeta: metav1.ObjectMeta{Namespace: workv1alpha1.ExecutionNamespace(cluster), Name: "w", Generation: generation}}
	w.Spec.Workload.Manifests = []workv1alpha1.Manifest{{RawExtension: runtime.RawExtension{Raw: []byte(`{}`)}}}
	if applied != "" {
		w.Status.Conditions = []metav1.Condition{{Type: workv1alpha1.WorkApplied, Status: applied, ObservedGeneration: observed}}
	}
	if health != "" {
		w.Status.ManifestStatuses = []workv1alpha1.ManifestStatus{{Health: health}}
	}
	return w
}

func TestInProgress(t *testing.T) {
	targets := []workv1alpha2.TargetCluster{{Name: "m1"}, {Name: "m2"}}
	healthy := func(c string) workv1alpha1.Work {
		return work(c, 1, metav1.ConditionTrue, 1, workv1alpha1.ResourceHealthy)
	}
	cases := []struct {
		name  string
		works []workv1alpha1.Work
		want  bool
	}{
		{"every Work applied and healthy", []workv1alpha1.Work{healthy("m1"), healthy("m2")}, false},
		{"a target's Work missing", []workv1alpha1.Work{healthy("m1")}, true},
		{"a Work not applied yet", []workv1alpha1.Work{healthy("m1"), work("m2", 1, "", 0, "")}, true},
		{"a Work applied, its state not reported yet", []workv1alpha1.Work{healthy("m1"), work("m2", 1, metav1.ConditionTrue, 1, "")}, true},
		{"a workload not healthy yet", []workv1alpha1.Work{healthy("m1"), work("m2", 1, metav1.ConditionTrue, 1, workv1alpha1.ResourceUnhealthy)}, true},
		{"a new generation not applied yet", []workv1alpha1.Work{healthy("m1"), work("m2", 2, metav1.ConditionTrue, 1, workv1alpha1.ResourceHealthy)}, true},
		{"a condition without observedGeneration", []workv1alpha1.Work{healthy("m1"), work("m2", 2, metav1.ConditionTrue, 0, workv1alpha1.ResourceHealthy)}, false},
		{"a kind of unknown health", []workv1alpha1.Work{healthy("m1"), work("m2", 1, metav1.ConditionTrue, 1, workv1alpha1.ResourceUnknownHealth)}, false},
		{"a failure is written at once", []workv1alpha1.Work{work("m1", 1, metav1.ConditionFalse, 1, ""), work("m2", 1, "", 0, "")}, false},
		{"a Work of a cluster not targeted", []workv1alpha1.Work{healthy("m1"), healthy("m2"), work("m3", 1, "", 0, "")}, false},
	}
	for _, c := range cases {
		if got := inProgress(targets, c.works); got != c.want {
			t.Errorf("%s: %v, want %v", c.name, got, c.want)
		}
	}
}

func TestProgressWait(t *testing.T) {
	var p progress
	settle := 2 * time.Second
	t0 := time.Unix(1000, 0)
	if w := p.wait("ns/b", settle, t0); w != settle {
		t.Fatalf("the first aggregate in progress waits a full period, got %s", w)
	}
	if w := p.wait("ns/b", settle, t0.Add(500*time.Millisecond)); w != 1500*time.Millisecond {
		t.Fatalf("a later one waits what is left of it, got %s", w)
	}
	if w := p.wait("ns/b", settle, t0.Add(settle)); w > 0 {
		t.Fatalf("after the period it is written, got a wait of %s", w)
	}
	p.wrote("ns/b", true, t0.Add(settle))
	if w := p.wait("ns/b", settle, t0.Add(settle+time.Second)); w != time.Second {
		t.Fatalf("progress after a write waits a period from that write, got %s", w)
	}
	if w := p.wait("ns/other", settle, t0); w != settle {
		t.Fatalf("bindings wait apart, got %s", w)
	}
	p.wrote("ns/b", false, t0.Add(3*time.Second))
	if w := p.wait("ns/b", settle, t0.Add(10*time.Second)); w != settle {
		t.Fatalf("a final write ends the wait: the next progress starts a new one, got %s", w)
	}
	p.forget("ns/other")
	if w := p.wait("ns/other", settle, t0.Add(10*time.Second)); w != settle {
		t.Fatalf("a forgotten binding starts afresh, got %s", w)
	}
}
