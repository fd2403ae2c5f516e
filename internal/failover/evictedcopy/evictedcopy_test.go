package evictedcopy

import (
	"fmt"
	"testing"

	"k8s.io/apimachinery/pkg/runtime"

	workv1alpha1 "github.com/karmada-go/karmada/api/work/v1alpha1"
	workv1alpha2 "github.com/karmada-go/karmada/api/work/v1alpha2"
	"github.com/karmada-go/karmada/internal/eviction"
)

func TestDecide(t *testing.T) {
	healthy := func(cluster string, available int) workv1alpha2.AggregatedStatusItem {
		return workv1alpha2.AggregatedStatusItem{ClusterName: cluster, Applied: true, Health: workv1alpha1.ResourceHealthy,
			Status: &runtime.RawExtension{Raw: []byte(fmt.Sprintf(`{"availableReplicas":%d}`, available))}}
	}
	placed := func(ts ...string) *workv1alpha2.ResourceBindingSpec {
		s := &workv1alpha2.ResourceBindingSpec{}
		for _, c := range ts {
			s.Clusters = append(s.Clusters, workv1alpha2.TargetCluster{Name: c, Replicas: 2})
		}
		return s
	}
	allReady := func(string) bool { return true }
	for _, c := range []struct {
		name    string
		spec    *workv1alpha2.ResourceBindingSpec
		status  workv1alpha2.ResourceBindingStatus
		ready   func(string) bool
		verdict Verdict
		why     string
	}{
		{"the copy's cluster is placed again", placed("member1", "member2"), workv1alpha2.ResourceBindingStatus{}, allReady, Keep, ""},
		{"healthy where it went", placed("member2"), workv1alpha2.ResourceBindingStatus{AggregatedStatus: []workv1alpha2.AggregatedStatusItem{healthy("member2", 2)}}, allReady, Delete, ""},
		{"too few available where it went", placed("member2"), workv1alpha2.ResourceBindingStatus{AggregatedStatus: []workv1alpha2.AggregatedStatusItem{healthy("member2", 1)}}, allReady, Hold, "the workload is not healthy in member2"},
		{"where it went is not Ready", placed("member2"), workv1alpha2.ResourceBindingStatus{AggregatedStatus: []workv1alpha2.AggregatedStatusItem{healthy("member2", 2)}}, func(string) bool { return false }, Hold, "the workload is not healthy in member2"},
		{"placed nowhere", placed(), workv1alpha2.ResourceBindingStatus{}, allReady, Hold, "the workload is placed nowhere"},
	} {
		v, why := Decide(c.spec, &c.status, "member1", c.ready)
		if v != c.verdict || why != c.why {
			t.Errorf("%s: %v %q, want %v %q", c.name, v, why, c.verdict, c.why)
		}
	}
}

// A verdict recorded for the agent reads back as it was given; a Work with
// none (or a value the agent does not know) is held.
func TestAnnotationRoundTrip(t *testing.T) {
	notReady, notReadyWhy := NotReady("edge")
	for _, c := range []struct {
		verdict Verdict
		why     string
		value   string
	}{
		{Delete, "", eviction.VerdictDelete},
		{Keep, "", eviction.VerdictKeep},
		{Hold, "the workload is not healthy in member2", "Hold: the workload is not healthy in member2"},
		{notReady, notReadyWhy, "Hold: cluster edge is not Ready"},
	} {
		value := Annotation(c.verdict, c.why)
		if value != c.value {
			t.Errorf("Annotation(%v, %q) = %q, want %q", c.verdict, c.why, value, c.value)
		}
		w := &workv1alpha1.Work{}
		w.Annotations = map[string]string{workv1alpha1.EvictedCopyVerdictAnnotation: value}
		if v, why := Recorded(w); v != c.verdict || why != c.why {
			t.Errorf("Recorded(%q) = %v %q", value, v, why)
		}
	}
	for _, value := range []string{"", "Remove", "Hold"} {
		w := &workv1alpha1.Work{}
		if value != "" {
			w.Annotations = map[string]string{workv1alpha1.EvictedCopyVerdictAnnotation: value}
		}
		if v, why := Recorded(w); v != Hold || why != "the control plane has not judged it yet" {
			t.Errorf("Recorded(%q) = %v %q, want Hold", value, v, why)
		}
	}
}
