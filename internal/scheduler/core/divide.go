// Package core turns the clusters that passed the filters into a placement:
// which clusters get the workload and how many replicas each.
package core

import (
	"fmt"
	"sort"

	clusterv1alpha1 "github.com/karmada-go/karmada/api/cluster/v1alpha1"
	policyv1alpha1 "github.com/karmada-go/karmada/api/policy/v1alpha1"
	workv1alpha2 "github.com/karmada-go/karmada/api/work/v1alpha2"
	"github.com/karmada-go/karmada/internal/clusters/clusteraffinity"
	"github.com/karmada-go/karmada/internal/division"
)

// Candidate is a cluster that passed the filters, with its total score and
// the estimator's count of replicas it can still take.
type Candidate struct {
	Cluster   *clusterv1alpha1.Cluster
	Score     int64
	Available int32
	// Tier is the cluster's group under overflowAffinities: 0 for the
	// primary group (and without overflow groups), i for the i-th overflow
	// group. Lower tiers are filled first and emptied last.
	Tier int
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
	return division.DivideByWeight(replicas, weighted), nil
}

// AssignTiers divides a dynamically divided workload (dynamicWeight or
// Aggregated) over tiers of clusters, Karmada's overflowAffinities: scaling
// up keeps every replica where it is and fills the tiers in order, each as
// far as its clusters' available replicas allow, the division within a tier
// being the strategy's; scaling down takes replicas from the last tier
// first, in proportion to what its clusters have. Replicas in a later tier
// stay there when an earlier one frees up (no migration, as in Karmada).
func AssignTiers(replicas int32, strategy *policyv1alpha1.ReplicaSchedulingStrategy, cands []Candidate, previous []workv1alpha2.TargetCluster) ([]workv1alpha2.TargetCluster, error) {
	divide := byAvailable
	if strategy != nil && strategy.ReplicaDivisionPreference == policyv1alpha1.ReplicaDivisionPreferenceAggregated {
		divide = aggregate
	}
	tierOf := make(map[string]int, len(cands))
	last := 0
	for _, c := range cands {
		tierOf[c.Name()] = c.Tier
		last = max(last, c.Tier)
	}
	kept := map[string]int32{}
	var have int32
	for _, t := range previous {
		if _, ok := tierOf[t.Name]; ok && t.Replicas > 0 {
			kept[t.Name] += t.Replicas
			have += t.Replicas
		}
	}
	if have >= replicas {
		excess := have - replicas
		for tier := last; tier >= 0 && excess > 0; tier-- {
			var weights []division.WeightedCluster
			var total int32
			for name, n := range kept {
				if tierOf[name] == tier {
					weights = append(weights, division.WeightedCluster{Name: name, Weight: int64(n)})
					total += n
				}
			}
			take := min(excess, total)
			for _, w := range weights {
				delete(kept, w.Name)
			}
			for _, t := range division.DivideByWeight(total-take, weights) {
				kept[t.Name] = t.Replicas
			}
			excess -= take
		}
		return merge(kept, nil), nil
	}
	need := replicas - have
	var extra []workv1alpha2.TargetCluster
	room := make([]Candidate, 0, len(cands))
	for tier := 0; tier <= last && need > 0; tier++ {
		var inTier []Candidate
		var total int64
		for _, c := range cands {
			if c.Tier == tier {
				c.Available = max(c.Available-kept[c.Name()], 0)
				inTier = append(inTier, c)
				total += int64(c.Available)
			}
		}
		room = append(room, inTier...)
		n := int32(min(int64(need), total))
		if n == 0 {
			continue
		}
		part, err := divide(n, inTier, selectedKeys(kept))
		if err != nil {
			return nil, err
		}
		extra = append(extra, part...)
		need -= n
	}
	if need > 0 {
		return nil, capacityError(replicas-have, room)
	}
	return merge(kept, extra), nil
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
	var keptWeights []division.WeightedCluster
	for _, t := range previous {
		if selected[t.Name] && t.Replicas > 0 {
			kept[t.Name] += t.Replicas
			have += t.Replicas
			keptWeights = append(keptWeights, division.WeightedCluster{Name: t.Name, Weight: int64(t.Replicas)})
		}
	}
	switch {
	case have == replicas:
		return merge(kept, nil), nil
	case have > replicas:
		return division.DivideByWeight(replicas, keptWeights), nil
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

// capacityError says that the clusters cannot hold n more replicas:
// Karmada's Unschedulable verdict and words.
func capacityError(n int32, cands []Candidate) error {
	var total int64
	for _, c := range cands {
		total += int64(c.Available)
	}
	return &UnschedulableError{Message: fmt.Sprintf("Clusters available replicas %d are not enough to schedule.", total)}
}

// UnschedulableError is a placement the clusters' room cannot hold
// (Karmada's Unschedulable reason); other errors are NoClusterFit.
type UnschedulableError struct{ Message string }

func (e *UnschedulableError) Error() string { return e.Message }

// byAvailable divides n in proportion to each cluster's available replicas.
func byAvailable(n int32, cands []Candidate, _ map[string]bool) ([]workv1alpha2.TargetCluster, error) {
	var total int64
	weighted := make([]division.WeightedCluster, 0, len(cands))
	for _, c := range cands {
		if c.Available > 0 {
			total += int64(c.Available)
			weighted = append(weighted, division.WeightedCluster{Name: c.Name(), Weight: int64(c.Available)})
		}
	}
	if total < int64(n) {
		return nil, capacityError(n, cands)
	}
	return division.DivideByWeight(n, weighted), nil
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
func StaticWeights(rules []policyv1alpha1.StaticClusterWeight, clusters []*clusterv1alpha1.Cluster) []division.WeightedCluster {
	out := make([]division.WeightedCluster, 0, len(clusters))
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
			out = append(out, division.WeightedCluster{Name: c.Name, Weight: w})
		}
	}
	return out
}
