package scheduler

import (
	"errors"
	"testing"

	policyv1alpha1 "github.com/karmada-go/karmada/api/policy/v1alpha1"
	workv1alpha2 "github.com/karmada-go/karmada/api/work/v1alpha2"
	"github.com/karmada-go/karmada/internal/scheduler/algorithm"
	"github.com/karmada-go/karmada/internal/scheduler/core"
)

// A binding that fits nowhere loses its placement only when every cluster
// it is on was ruled out by its cluster affinity (the user's selection),
// without clusterAffinities terms, and not for lack of room.
func TestAllDeselected(t *testing.T) {
	ex := func(entries ...workv1alpha2.ClusterExplanation) *workv1alpha2.PlacementExplanation {
		return &workv1alpha2.PlacementExplanation{Clusters: entries}
	}
	byAffinity := func(name string) workv1alpha2.ClusterExplanation {
		return workv1alpha2.ClusterExplanation{Name: name, Plugin: "ClusterAffinity", Reason: "cluster is not in clusterNames"}
	}
	tainted := workv1alpha2.ClusterExplanation{Name: "m2", Plugin: "TaintToleration", Reason: "untolerated taint"}
	spec := func(placement *policyv1alpha1.Placement, clusters ...string) *workv1alpha2.ResourceBindingSpec {
		s := &workv1alpha2.ResourceBindingSpec{Placement: placement}
		for _, c := range clusters {
			s.Clusters = append(s.Clusters, workv1alpha2.TargetCluster{Name: c})
		}
		return s
	}
	noFit := errors.New("0/3 clusters are available")
	terms := &policyv1alpha1.Placement{ClusterAffinities: []policyv1alpha1.ClusterAffinityTerm{{AffinityName: "a"}}}
	for _, c := range []struct {
		name string
		spec *workv1alpha2.ResourceBindingSpec
		res  algorithm.Result
		want bool
	}{
		{"every placed cluster deselected", spec(nil, "m1", "m3"), algorithm.Result{Err: noFit, Explanation: ex(byAffinity("m1"), tainted, byAffinity("m3"))}, true},
		{"one placed cluster only tainted", spec(nil, "m1", "m2"), algorithm.Result{Err: noFit, Explanation: ex(byAffinity("m1"), tainted)}, false},
		{"a placed cluster not explained", spec(nil, "m1", "m9"), algorithm.Result{Err: noFit, Explanation: ex(byAffinity("m1"))}, false},
		{"nothing placed", spec(nil), algorithm.Result{Err: noFit, Explanation: ex(byAffinity("m1"))}, false},
		{"clusterAffinities terms", spec(terms, "m1"), algorithm.Result{Err: noFit, Explanation: ex(byAffinity("m1"))}, false},
		{"no room", spec(nil, "m1"), algorithm.Result{Err: &core.UnschedulableError{Message: "full"}, Explanation: ex(byAffinity("m1"))}, false},
	} {
		if got := allDeselected(c.spec, c.res); got != c.want {
			t.Errorf("%s: %v, want %v", c.name, got, c.want)
		}
	}
}
