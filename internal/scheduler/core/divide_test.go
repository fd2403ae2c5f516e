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

func clusters(names ...string) []*clusterv1alpha1.Cluster {
	var out []*clusterv1alpha1.Cluster
	for _, n := range names {
		out = append(out, &clusterv1alpha1.Cluster{ObjectMeta: metav1.ObjectMeta{Name: n}})
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

func TestAssign(t *testing.T) {
	divided := &policyv1alpha1.ReplicaSchedulingStrategy{ReplicaSchedulingType: policyv1alpha1.ReplicaSchedulingTypeDivided}
	cases := []struct {
		name     string
		replicas int32
		strategy *policyv1alpha1.ReplicaSchedulingStrategy
		clusters []*clusterv1alpha1.Cluster
		want     []workv1alpha2.TargetCluster
		wantErr  string
	}{
		{"no strategy duplicates", 3, nil, clusters("m2", "m1"), tc("m1", 3, "m2", 3), ""},
		{"duplicated", 2, &policyv1alpha1.ReplicaSchedulingStrategy{ReplicaSchedulingType: policyv1alpha1.ReplicaSchedulingTypeDuplicated}, clusters("m1", "m2"), tc("m1", 2, "m2", 2), ""},
		{"no replicas (a ConfigMap) goes everywhere", 0, divided, clusters("m1", "m2"), tc("m1", 0, "m2", 0), ""},
		{"divided without weights is even", 4, divided, clusters("m1", "m2"), tc("m1", 2, "m2", 2), ""},
		{"static 1:2", 3, weights("m1", 1, "m2", 2), clusters("m1", "m2"), tc("m1", 1, "m2", 2), ""},
		{"remainder to the heavier", 5, weights("m1", 1, "m2", 2), clusters("m1", "m2"), tc("m1", 1, "m2", 4), ""},
		{"remainder by name on equal weight", 5, weights("m1", 1, "m2", 1), clusters("m2", "m1"), tc("m1", 3, "m2", 2), ""},
		{"unweighted cluster gets nothing", 4, weights("m1", 1), clusters("m1", "m2"), tc("m1", 4), ""},
		{"a cluster with a zero share is left out", 1, weights("m1", 1, "m2", 1, "m3", 1), clusters("m1", "m2", "m3"), tc("m1", 1), ""},
		{"no feasible cluster", 3, divided, nil, nil, ""},
		{"nobody weighted", 3, weights("m9", 1), clusters("m1"), nil, "static weight"},
		{"aggregated not yet", 3, &policyv1alpha1.ReplicaSchedulingStrategy{ReplicaSchedulingType: policyv1alpha1.ReplicaSchedulingTypeDivided, ReplicaDivisionPreference: policyv1alpha1.ReplicaDivisionPreferenceAggregated}, clusters("m1"), nil, "Aggregated"},
	}
	for _, c := range cases {
		got, err := Assign(c.replicas, c.strategy, c.clusters)
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

func TestDivideByWeightAlwaysGivesAllReplicas(t *testing.T) {
	for replicas := int32(0); replicas < 50; replicas++ {
		got := DivideByWeight(replicas, []WeightedCluster{{"a", 3}, {"b", 5}, {"c", 7}})
		var sum int32
		for _, tc := range got {
			sum += tc.Replicas
		}
		if sum != replicas {
			t.Fatalf("%d replicas divided into %v (sum %d)", replicas, got, sum)
		}
	}
}
