package bindingstatus

import (
	"slices"
	"testing"

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

// The Works' interpretation failures reach the binding one per cluster, in
// cluster order whatever the order of the list; a Work without the
// condition, or with it True, adds nothing.
func TestCopyFailures(t *testing.T) {
	failed := func(cluster, msg string) workv1alpha1.Work {
		w := work(cluster, 1, metav1.ConditionTrue, 1, workv1alpha1.ResourceHealthy)
		w.Status.Conditions = append(w.Status.Conditions, metav1.Condition{Type: workv1alpha1.WorkResourceInterpreted, Status: metav1.ConditionFalse, Message: msg})
		return w
	}
	fine := work("m3", 1, metav1.ConditionTrue, 1, workv1alpha1.ResourceHealthy)
	odd := work("m4", 1, metav1.ConditionTrue, 1, workv1alpha1.ResourceHealthy)
	odd.Status.Conditions = append(odd.Status.Conditions, metav1.Condition{Type: workv1alpha1.WorkResourceInterpreted, Status: metav1.ConditionTrue})
	got := copyFailures([]workv1alpha1.Work{failed("m2", "b"), fine, failed("m1", "a"), odd})
	want := []string{"cluster m1: a", "cluster m2: b"}
	if !slices.Equal(got, want) {
		t.Errorf("copyFailures = %q, want %q", got, want)
	}
	if got := copyFailures([]workv1alpha1.Work{fine}); got != nil {
		t.Errorf("no failure: %q, want nil", got)
	}
}

// A copy turning unhealthy is written at once; one that was never healthy
// (a rollout under way) is paced.
func TestHealthLost(t *testing.T) {
	item := func(cluster string, h workv1alpha1.ResourceHealth) workv1alpha2.AggregatedStatusItem {
		return workv1alpha2.AggregatedStatusItem{ClusterName: cluster, Health: h}
	}
	for _, c := range []struct {
		name        string
		before, now []workv1alpha2.AggregatedStatusItem
		want        bool
	}{
		{"healthy to unhealthy", []workv1alpha2.AggregatedStatusItem{item("m1", workv1alpha1.ResourceHealthy)}, []workv1alpha2.AggregatedStatusItem{item("m1", workv1alpha1.ResourceUnhealthy)}, true},
		{"never healthy", []workv1alpha2.AggregatedStatusItem{item("m1", workv1alpha1.ResourceUnknownHealth)}, []workv1alpha2.AggregatedStatusItem{item("m1", workv1alpha1.ResourceUnhealthy)}, false},
		{"first report", nil, []workv1alpha2.AggregatedStatusItem{item("m1", workv1alpha1.ResourceUnhealthy)}, false},
		{"another cluster", []workv1alpha2.AggregatedStatusItem{item("m1", workv1alpha1.ResourceHealthy)}, []workv1alpha2.AggregatedStatusItem{item("m1", workv1alpha1.ResourceHealthy), item("m2", workv1alpha1.ResourceUnhealthy)}, false},
	} {
		if got := healthLost(c.before, c.now); got != c.want {
			t.Errorf("%s: %v, want %v", c.name, got, c.want)
		}
	}
}
