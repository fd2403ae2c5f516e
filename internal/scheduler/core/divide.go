// Package core turns the clusters that passed the filters into a placement:
// which clusters get the workload and how many replicas each.
package core

import (
	"fmt"
	"sort"

	clusterv1alpha1 "github.com/karmada-go/karmada/api/cluster/v1alpha1"
	policyv1alpha1 "github.com/karmada-go/karmada/api/policy/v1alpha1"
	workv1alpha2 "github.com/karmada-go/karmada/api/work/v1alpha2"
	"github.com/karmada-go/karmada/internal/clusteraffinity"
)

// WeightedCluster is a feasible cluster with its weight for division.
type WeightedCluster struct {
	Name   string
	Weight int64
}

// Assign places replicas on the feasible clusters as the strategy says.
// Duplicated (also when strategy is nil) gives every cluster all replicas;
// Divided gives each a share by weight (static weights, or equal weights when
// none are given). The result is sorted by cluster name and leaves out
// clusters that get no replica of a divided workload.
func Assign(replicas int32, strategy *policyv1alpha1.ReplicaSchedulingStrategy, clusters []*clusterv1alpha1.Cluster) ([]workv1alpha2.TargetCluster, error) {
	if len(clusters) == 0 {
		return nil, nil
	}
	if strategy == nil || strategy.ReplicaSchedulingType == policyv1alpha1.ReplicaSchedulingTypeDuplicated || replicas == 0 {
		out := make([]workv1alpha2.TargetCluster, 0, len(clusters))
		for _, c := range clusters {
			out = append(out, workv1alpha2.TargetCluster{Name: c.Name, Replicas: replicas})
		}
		sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
		return out, nil
	}
	if strategy.ReplicaDivisionPreference == policyv1alpha1.ReplicaDivisionPreferenceAggregated {
		return nil, fmt.Errorf("replicaDivisionPreference Aggregated is not supported yet")
	}
	if wp := strategy.WeightPreference; wp != nil && wp.DynamicWeight != "" {
		return nil, fmt.Errorf("weightPreference.dynamicWeight %s is not supported yet", wp.DynamicWeight)
	}
	var list []policyv1alpha1.StaticClusterWeight
	if strategy.WeightPreference != nil {
		list = strategy.WeightPreference.StaticWeightList
	}
	weighted := StaticWeights(list, clusters)
	if len(weighted) == 0 {
		return nil, fmt.Errorf("no feasible cluster has a static weight above zero")
	}
	return DivideByWeight(replicas, weighted), nil
}

// StaticWeights gives each cluster the highest weight among the rules that
// select it; clusters no rule selects get none. With no rules every cluster
// weighs 1.
func StaticWeights(rules []policyv1alpha1.StaticClusterWeight, clusters []*clusterv1alpha1.Cluster) []WeightedCluster {
	out := make([]WeightedCluster, 0, len(clusters))
	for _, c := range clusters {
		var w int64
		if len(rules) == 0 {
			w = 1
		}
		for _, r := range rules {
			if r.Weight > w && clusteraffinity.Matches(&r.TargetCluster, c) {
				w = r.Weight
			}
		}
		if w > 0 {
			out = append(out, WeightedCluster{Name: c.Name, Weight: w})
		}
	}
	return out
}

// DivideByWeight splits replicas in proportion to weight. Each cluster first
// gets the whole part of its share; the replicas left over go one each to the
// clusters of highest weight, then by name, so that the result is the same
// every time. Clusters that get nothing are left out; the result is sorted by
// name.
func DivideByWeight(replicas int32, clusters []WeightedCluster) []workv1alpha2.TargetCluster {
	var sum int64
	for _, c := range clusters {
		sum += c.Weight
	}
	if sum == 0 || replicas <= 0 {
		return nil
	}
	order := append([]WeightedCluster(nil), clusters...)
	sort.Slice(order, func(i, j int) bool {
		if order[i].Weight != order[j].Weight {
			return order[i].Weight > order[j].Weight
		}
		return order[i].Name < order[j].Name
	})
	got := make(map[string]int32, len(order))
	var given int32
	for _, c := range order {
		n := int32(int64(replicas) * c.Weight / sum)
		got[c.Name] = n
		given += n
	}
	for i := 0; given < replicas; i = (i + 1) % len(order) {
		got[order[i].Name]++
		given++
	}
	out := make([]workv1alpha2.TargetCluster, 0, len(got))
	for name, n := range got {
		if n > 0 {
			out = append(out, workv1alpha2.TargetCluster{Name: name, Replicas: n})
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out
}
