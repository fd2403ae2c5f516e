package core

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	clusterv1alpha1 "github.com/karmada-go/karmada/api/cluster/v1alpha1"
	policyv1alpha1 "github.com/karmada-go/karmada/api/policy/v1alpha1"
	workv1alpha2 "github.com/karmada-go/karmada/api/work/v1alpha2"
)

func clusters(names ...string) []Candidate {
	var out []Candidate
	for _, n := range names {
		out = append(out, Candidate{Cluster: &clusterv1alpha1.Cluster{ObjectMeta: metav1.ObjectMeta{Name: n}}})
	}
	return out
}

// avail returns candidates with available replicas: name, available, ...
func avail(pairs ...any) []Candidate {
	var out []Candidate
	for i := 0; i < len(pairs); i += 2 {
		out = append(out, Candidate{Cluster: &clusterv1alpha1.Cluster{ObjectMeta: metav1.ObjectMeta{Name: pairs[i].(string)}}, Available: int32(pairs[i+1].(int))})
	}
	return out
}

func tc(pairs ...any) []workv1alpha2.TargetCluster {
	var out []workv1alpha2.TargetCluster
	for i := 0; i < len(pairs); i += 2 {
		out = append(out, workv1alpha2.TargetCluster{Name: pairs[i].(string), Replicas: int32(pairs[i+1].(int))})
	}
	return out
}

func weights(pairs ...any) *policyv1alpha1.ReplicaSchedulingStrategy {
	s := &policyv1alpha1.ReplicaSchedulingStrategy{ReplicaSchedulingType: policyv1alpha1.ReplicaSchedulingTypeDivided,
		ReplicaDivisionPreference: policyv1alpha1.ReplicaDivisionPreferenceWeighted, WeightPreference: &policyv1alpha1.ClusterPreferences{}}
	for i := 0; i < len(pairs); i += 2 {
		s.WeightPreference.StaticWeightList = append(s.WeightPreference.StaticWeightList, policyv1alpha1.StaticClusterWeight{
			TargetCluster: policyv1alpha1.ClusterAffinity{ClusterNames: []string{pairs[i].(string)}}, Weight: int64(pairs[i+1].(int))})
	}
	return s
}

var (
	dynamic = &policyv1alpha1.ReplicaSchedulingStrategy{ReplicaSchedulingType: policyv1alpha1.ReplicaSchedulingTypeDivided,
		ReplicaDivisionPreference: policyv1alpha1.ReplicaDivisionPreferenceWeighted,
		WeightPreference:          &policyv1alpha1.ClusterPreferences{DynamicWeight: policyv1alpha1.DynamicWeightByAvailableReplicas}}
	aggregated = &policyv1alpha1.ReplicaSchedulingStrategy{ReplicaSchedulingType: policyv1alpha1.ReplicaSchedulingTypeDivided,
		ReplicaDivisionPreference: policyv1alpha1.ReplicaDivisionPreferenceAggregated}
)

func TestAssign(t *testing.T) {
	divided := &policyv1alpha1.ReplicaSchedulingStrategy{ReplicaSchedulingType: policyv1alpha1.ReplicaSchedulingTypeDivided}
	cases := []struct {
		name     string
		replicas int32
		strategy *policyv1alpha1.ReplicaSchedulingStrategy
		clusters []Candidate
		want     []workv1alpha2.TargetCluster
		wantErr  string
	}{
		{"no strategy duplicates", 3, nil, clusters("m2", "m1"), tc("m1", 3, "m2", 3), ""},
		{"duplicated", 2, &policyv1alpha1.ReplicaSchedulingStrategy{ReplicaSchedulingType: policyv1alpha1.ReplicaSchedulingTypeDuplicated}, clusters("m1", "m2"), tc("m1", 2, "m2", 2), ""},
		{"no replicas (a ConfigMap) goes everywhere", 0, divided, clusters("m1", "m2"), tc("m1", 0, "m2", 0), ""},
		{"divided without weights is even", 4, divided, clusters("m1", "m2"), tc("m1", 2, "m2", 2), ""},
		{"static 1:2", 3, weights("m1", 1, "m2", 2), clusters("m1", "m2"), tc("m1", 1, "m2", 2), ""},
		{"shares round to the nearest (1.67:3.33)", 5, weights("m1", 1, "m2", 2), clusters("m1", "m2"), tc("m1", 2, "m2", 3), ""},
		{"remainder by name on equal weight", 5, weights("m1", 1, "m2", 1), clusters("m2", "m1"), tc("m1", 3, "m2", 2), ""},
		{"unweighted cluster gets nothing", 4, weights("m1", 1), clusters("m1", "m2"), tc("m1", 4), ""},
		{"a cluster with a zero share is left out", 1, weights("m1", 1, "m2", 1, "m3", 1), clusters("m1", "m2", "m3"), tc("m1", 1), ""},
		{"no feasible cluster", 3, divided, nil, nil, ""},
		{"nobody weighted", 3, weights("m9", 1), clusters("m1"), nil, "static weight"},
		{"dynamic: by available", 9, dynamic, avail("m1", 10, "m2", 20), tc("m1", 3, "m2", 6), ""},
		{"dynamic: remainder to the roomier", 10, dynamic, avail("m1", 10, "m2", 20), tc("m1", 3, "m2", 7), ""},
		{"dynamic: a full cluster gets nothing", 4, dynamic, avail("m1", 0, "m2", 20), tc("m2", 4), ""},
		{"dynamic: not enough room", 31, dynamic, avail("m1", 10, "m2", 20), nil, "Clusters available replicas 30 are not enough to schedule."},
		{"dynamic: zero available everywhere", 1, dynamic, avail("m1", 0, "m2", 0), nil, "Clusters available replicas 0 are not enough to schedule."},
		{"aggregated: one cluster when it fits", 8, aggregated, avail("m1", 10, "m2", 20), tc("m2", 8), ""},
		{"aggregated: fewest clusters", 25, aggregated, avail("m1", 10, "m2", 20, "m3", 5), tc("m1", 8, "m2", 17), ""},
		{"aggregated: not enough room", 40, aggregated, avail("m1", 10, "m2", 20), nil, "Clusters available replicas 30 are not enough to schedule."},
		{"unknown dynamic weight", 3, &policyv1alpha1.ReplicaSchedulingStrategy{ReplicaSchedulingType: policyv1alpha1.ReplicaSchedulingTypeDivided,
			WeightPreference: &policyv1alpha1.ClusterPreferences{DynamicWeight: "Magic"}}, avail("m1", 9), nil, "not supported"},
	}
	for _, c := range cases {
		got, err := Assign(c.replicas, c.strategy, c.clusters, nil)
		if c.wantErr != "" {
			if err == nil || !strings.Contains(err.Error(), c.wantErr) {
				t.Errorf("%s: error %v, want one containing %q", c.name, err, c.wantErr)
			}
			continue
		}
		if err != nil {
			t.Errorf("%s: %v", c.name, err)
			continue
		}
		if diff := cmp.Diff(c.want, got); diff != "" {
			t.Errorf("%s (-want,+got):\n%s", c.name, diff)
		}
	}
}

// Scaling a dynamically divided workload moves as few replicas as it can.
func TestAssignIsSteady(t *testing.T) {
	cases := []struct {
		name     string
		strategy *policyv1alpha1.ReplicaSchedulingStrategy
		replicas int32
		clusters []Candidate
		previous []workv1alpha2.TargetCluster
		want     []workv1alpha2.TargetCluster
	}{
		// Available counts what the binding runs there already. Fresh, 12 over
		// 10:20:30 would be 2:4:6; steady keeps 5:5:0 and adds 2 over the room
		// left, 5:15:30.
		{"scale up keeps what is placed", dynamic, 12, avail("m1", 10, "m2", 20, "m3", 30), tc("m1", 5, "m2", 5), tc("m1", 5, "m2", 6, "m3", 1)},
		{"scale down takes in proportion", dynamic, 6, avail("m1", 10, "m2", 20), tc("m1", 4, "m2", 8), tc("m1", 2, "m2", 4)},
		{"scale down by one changes one cluster", dynamic, 11, avail("m1", 10, "m2", 20), tc("m1", 4, "m2", 8), tc("m1", 4, "m2", 7)},
		{"same size: unchanged even if capacity moved", dynamic, 12, avail("m1", 100, "m2", 1), tc("m1", 4, "m2", 8), tc("m1", 4, "m2", 8)},
		{"a cluster no longer selected: its share is placed again", dynamic, 12, avail("m1", 10, "m3", 10), tc("m1", 4, "m2", 8), tc("m1", 7, "m3", 5)},
		{"aggregated scale up fills the clusters in use first", aggregated, 10, avail("m1", 10, "m2", 20), tc("m1", 4), tc("m1", 10)},
		{"aggregated scale up overflows to the roomiest", aggregated, 16, avail("m1", 10, "m2", 20, "m3", 5), tc("m1", 4), tc("m1", 7, "m2", 9)},
	}
	for _, c := range cases {
		got, err := Assign(c.replicas, c.strategy, c.clusters, c.previous)
		if err != nil {
			t.Errorf("%s: %v", c.name, err)
			continue
		}
		if diff := cmp.Diff(c.want, got); diff != "" {
			t.Errorf("%s (-want,+got):\n%s", c.name, diff)
		}
	}
}

func TestSteadyScalingNeverMovesMoreThanTheDifference(t *testing.T) {
	cands := avail("a", 50, "b", 30, "c", 20)
	prev, err := Assign(20, dynamic, cands, nil)
	if err != nil {
		t.Fatal(err)
	}
	for _, n := range []int32{21, 35, 34, 10, 1, 60, 60} {
		next, err := Assign(n, dynamic, cands, prev)
		if err != nil {
			t.Fatal(err)
		}
		var before, after, moved int32
		old := map[string]int32{}
		for _, t := range prev {
			old[t.Name] = t.Replicas
			before += t.Replicas
		}
		for _, t := range next {
			after += t.Replicas
			if d := t.Replicas - old[t.Name]; (n > before && d < 0) || (n < before && d > 0) {
				moved++
			}
		}
		if after != n {
			t.Fatalf("%d replicas placed as %v (sum %d)", n, next, after)
		}
		if moved != 0 {
			t.Fatalf("scaling %d -> %d moved replicas against the direction: %v -> %v", before, n, prev, next)
		}
		prev = next
	}
}
