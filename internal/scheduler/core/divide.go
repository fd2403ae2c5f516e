// Package core turns the clusters that passed the filters into a placement:
// which clusters get the workload and how many replicas each.
package core

import (
	"fmt"
	"math/big"
	"math/bits"
	"sort"

	clusterv1alpha1 "github.com/karmada-go/karmada/api/cluster/v1alpha1"
	policyv1alpha1 "github.com/karmada-go/karmada/api/policy/v1alpha1"
	workv1alpha2 "github.com/karmada-go/karmada/api/work/v1alpha2"
	"github.com/karmada-go/karmada/internal/clusters/clusteraffinity"
)

// WeightedCluster is a feasible cluster with its weight for division.
type WeightedCluster struct {
	Name   string
	Weight int64
}

// Candidate is a cluster that passed the filters, with its total score and
// the estimator's count of replicas it can still take.
type Candidate struct {
	Cluster   *clusterv1alpha1.Cluster
	Score     int64
	Available int32
}

// Name is the cluster's name.
func (c Candidate) Name() string { return c.Cluster.Name }

// Assign places replicas on the selected clusters as the strategy says.
// Duplicated (also when strategy is nil, or the workload has no replicas)
// gives every cluster all replicas. Divided gives each a share: by static
// weight (equal weights when none are given), by available replicas
// (dynamicWeight AvailableReplicas), or on as few clusters as possible
// (Aggregated). The dynamic modes are steady: previous is the binding's
// current placement, and scaling changes as few replicas per cluster as it
// can. The result is sorted by cluster name and leaves out clusters that get
// no replica of a divided workload.
func Assign(replicas int32, strategy *policyv1alpha1.ReplicaSchedulingStrategy, cands []Candidate, previous []workv1alpha2.TargetCluster) ([]workv1alpha2.TargetCluster, error) {
	if len(cands) == 0 {
		return nil, nil
	}
	if strategy == nil || strategy.ReplicaSchedulingType != policyv1alpha1.ReplicaSchedulingTypeDivided || replicas == 0 {
		out := make([]workv1alpha2.TargetCluster, 0, len(cands))
		for _, c := range cands {
			out = append(out, workv1alpha2.TargetCluster{Name: c.Name(), Replicas: replicas})
		}
		sortTargets(out)
		return out, nil
	}
	switch {
	case strategy.ReplicaDivisionPreference == policyv1alpha1.ReplicaDivisionPreferenceAggregated:
		return steady(replicas, cands, previous, aggregate)
	case strategy.WeightPreference != nil && strategy.WeightPreference.DynamicWeight == policyv1alpha1.DynamicWeightByAvailableReplicas:
		return steady(replicas, cands, previous, byAvailable)
	case strategy.WeightPreference != nil && strategy.WeightPreference.DynamicWeight != "":
		return nil, fmt.Errorf("weightPreference.dynamicWeight %q is not supported (supported: %s)", strategy.WeightPreference.DynamicWeight, policyv1alpha1.DynamicWeightByAvailableReplicas)
	}
	var list []policyv1alpha1.StaticClusterWeight
	if strategy.WeightPreference != nil {
		list = strategy.WeightPreference.StaticWeightList
	}
	clusters := make([]*clusterv1alpha1.Cluster, 0, len(cands))
	for _, c := range cands {
		clusters = append(clusters, c.Cluster)
	}
	weighted := StaticWeights(list, clusters)
	if len(weighted) == 0 {
		return nil, fmt.Errorf("no feasible cluster has a static weight above zero")
	}
	return DivideByWeight(replicas, weighted), nil
}

// divider places n new replicas on candidates.
type divider func(n int32, cands []Candidate, preferred map[string]bool) ([]workv1alpha2.TargetCluster, error)

// steady keeps the previous placement on clusters still selected and only
// places (or removes) the difference: scaling up divides the new replicas
// with the strategy, scaling down takes replicas away in proportion to what
// each cluster has.
func steady(replicas int32, cands []Candidate, previous []workv1alpha2.TargetCluster, divide divider) ([]workv1alpha2.TargetCluster, error) {
	selected := map[string]bool{}
	for _, c := range cands {
		selected[c.Name()] = true
	}
	kept := map[string]int32{}
	var have int32
	var keptWeights []WeightedCluster
	for _, t := range previous {
		if selected[t.Name] && t.Replicas > 0 {
			kept[t.Name] += t.Replicas
			have += t.Replicas
			keptWeights = append(keptWeights, WeightedCluster{Name: t.Name, Weight: int64(t.Replicas)})
		}
	}
	switch {
	case have == replicas:
		return merge(kept, nil), nil
	case have > replicas:
		return DivideByWeight(replicas, keptWeights), nil
	}
	// Candidates' available replicas count what the binding already runs
	// there; the new replicas only get the rest.
	room := make([]Candidate, 0, len(cands))
	for _, c := range cands {
		c.Available = max(c.Available-kept[c.Name()], 0)
		room = append(room, c)
	}
	extra, err := divide(replicas-have, room, selectedKeys(kept))
	if err != nil {
		return nil, err
	}
	return merge(kept, extra), nil
}

func selectedKeys(m map[string]int32) map[string]bool {
	out := make(map[string]bool, len(m))
	for k := range m {
		out[k] = true
	}
	return out
}

func merge(kept map[string]int32, extra []workv1alpha2.TargetCluster) []workv1alpha2.TargetCluster {
	sum := make(map[string]int32, len(kept)+len(extra))
	for k, v := range kept {
		sum[k] += v
	}
	for _, t := range extra {
		sum[t.Name] += t.Replicas
	}
	out := make([]workv1alpha2.TargetCluster, 0, len(sum))
	for k, v := range sum {
		if v > 0 {
			out = append(out, workv1alpha2.TargetCluster{Name: k, Replicas: v})
		}
	}
	sortTargets(out)
	return out
}

// capacityError says that the clusters cannot hold n more replicas.
func capacityError(n int32, cands []Candidate) error {
	var total int64
	for _, c := range cands {
		total += int64(c.Available)
	}
	return fmt.Errorf("%d replicas to place but the %d selected clusters can take only %d more (general estimator)", n, len(cands), total)
}

// byAvailable divides n in proportion to each cluster's available replicas.
func byAvailable(n int32, cands []Candidate, _ map[string]bool) ([]workv1alpha2.TargetCluster, error) {
	var total int64
	weighted := make([]WeightedCluster, 0, len(cands))
	for _, c := range cands {
		if c.Available > 0 {
			total += int64(c.Available)
			weighted = append(weighted, WeightedCluster{Name: c.Name(), Weight: int64(c.Available)})
		}
	}
	if total < int64(n) {
		return nil, capacityError(n, cands)
	}
	return DivideByWeight(n, weighted), nil
}

// aggregate places n on as few clusters as possible: clusters already
// holding the workload first, then by available replicas, score and name;
// the n replicas are divided among the clusters taken in proportion to
// their available replicas.
func aggregate(n int32, cands []Candidate, preferred map[string]bool) ([]workv1alpha2.TargetCluster, error) {
	order := append([]Candidate(nil), cands...)
	sort.SliceStable(order, func(i, j int) bool {
		a, b := order[i], order[j]
		if preferred[a.Name()] != preferred[b.Name()] {
			return preferred[a.Name()]
		}
		if a.Available != b.Available {
			return a.Available > b.Available
		}
		if a.Score != b.Score {
			return a.Score > b.Score
		}
		return a.Name() < b.Name()
	})
	var taken []Candidate
	var total int64
	for _, c := range order {
		if total >= int64(n) {
			break
		}
		if c.Available <= 0 {
			continue
		}
		taken = append(taken, c)
		total += int64(c.Available)
	}
	if total < int64(n) {
		return nil, capacityError(n, cands)
	}
	return byAvailable(n, taken, nil)
}

func sortTargets(ts []workv1alpha2.TargetCluster) {
	sort.Slice(ts, func(i, j int) bool { return ts[i].Name < ts[j].Name })
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
	// The weights may be as large as int64 allows (static weights are the
	// user's): their sum and each replicas×weight product are computed
	// without overflow.
	share := shares(replicas, clusters)
	if share == nil {
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
		n := share(c.Weight)
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
	sortTargets(out)
	return out
}

// shares returns the function giving a weight its whole share of replicas,
// floor(replicas × weight / sum of weights), exact for any int64 weights
// (negative ones count as 0); nil when there is nothing to divide.
func shares(replicas int32, clusters []WeightedCluster) func(weight int64) int32 {
	var sumHi, sumLo uint64
	for _, c := range clusters {
		var carry uint64
		sumLo, carry = bits.Add64(sumLo, uint64(max(c.Weight, 0)), 0)
		sumHi += carry
	}
	if (sumHi == 0 && sumLo == 0) || replicas <= 0 {
		return nil
	}
	if sumHi == 0 {
		return func(weight int64) int32 {
			// replicas × weight ≤ replicas × sum: the quotient fits, so
			// Div64 cannot overflow.
			hi, lo := bits.Mul64(uint64(replicas), uint64(max(weight, 0)))
			q, _ := bits.Div64(hi, lo, sumLo)
			return int32(q)
		}
	}
	// More than 2^64 in all: rare enough for big integers.
	sum := new(big.Int).Lsh(new(big.Int).SetUint64(sumHi), 64)
	sum.Or(sum, new(big.Int).SetUint64(sumLo))
	return func(weight int64) int32 {
		n := new(big.Int).Mul(big.NewInt(int64(replicas)), big.NewInt(max(weight, 0)))
		return int32(n.Quo(n, sum).Int64())
	}
}
