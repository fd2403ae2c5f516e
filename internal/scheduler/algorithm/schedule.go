package algorithm

import (
	"context"
	"errors"
	"fmt"
	"sort"
	"strings"
	"time"

	clusterv1alpha1 "github.com/karmada-go/karmada/api/cluster/v1alpha1"
	policyv1alpha1 "github.com/karmada-go/karmada/api/policy/v1alpha1"
	workv1alpha2 "github.com/karmada-go/karmada/api/work/v1alpha2"
	"github.com/karmada-go/karmada/internal/clusters/clusteraffinity"
	"github.com/karmada-go/karmada/internal/estimator"
	"github.com/karmada-go/karmada/internal/metrics"
	"github.com/karmada-go/karmada/internal/scheduler/core"
	"github.com/karmada-go/karmada/internal/scheduler/framework"
)

// EstimatorStep names the replica estimate in explanations, where it rules
// out clusters that cannot fit one replica of a divided workload.
const EstimatorStep = "GeneralEstimator"

// SpreadStep names the spread-constraint selection in explanations.
const SpreadStep = "SpreadConstraint"

// The scheduling algorithm's steps, timed.
var (
	stepFilter = metrics.SchedulingAlgorithmDuration.WithLabelValues(metrics.StepFilter)
	stepScore  = metrics.SchedulingAlgorithmDuration.WithLabelValues(metrics.StepScore)
	stepSelect = metrics.SchedulingAlgorithmDuration.WithLabelValues(metrics.StepSelect)
	stepAssign = metrics.SchedulingAlgorithmDuration.WithLabelValues(metrics.StepAssignReplicas)
)

// MaxExplained bounds the clusters kept in a placement explanation.
const MaxExplained = 64

// PluginError is a scheduling cycle that could not finish because a plugin
// failed (framework.Error): no verdict on the binding, which is retried.
type PluginError struct {
	Plugin  string
	Message string
}

func (e *PluginError) Error() string {
	return fmt.Sprintf("plugin %s failed: %s", e.Plugin, e.Message)
}

// Result is the outcome of one scheduling cycle.
type Result struct {
	// Targets is the placement; empty when Err is set.
	Targets []workv1alpha2.TargetCluster
	// AffinityName is the clusterAffinities term used ("" without terms).
	AffinityName string
	// Explanation says how every cluster fared (bounded, see MaxExplained).
	Explanation *workv1alpha2.PlacementExplanation
	// Err says why the binding fits no cluster, or is a *PluginError when a
	// plugin failed and the cycle must be retried.
	Err error
}

// Schedule places a binding: filter, estimate, score, select by spread
// constraints, divide replicas. With clusterAffinities the terms are tried
// in order and the first that places the binding wins. The cycle has no side
// effect, so it also serves dry runs (karmadactl plan).
func Schedule(ctx context.Context, fw *framework.Framework, spec *workv1alpha2.ResourceBindingSpec, clusters []clusterv1alpha1.Cluster) Result {
	return ScheduleFrom(ctx, fw, spec, clusters, "")
}

// ScheduleFrom is Schedule starting at the clusterAffinities term named
// from (the term the binding was last placed by), as Karmada does: a
// binding that fell through to a later term stays there, or falls further,
// and goes back to an earlier term only when scheduled afresh (from "").
// A name the terms no longer hold starts at the first.
func ScheduleFrom(ctx context.Context, fw *framework.Framework, spec *workv1alpha2.ResourceBindingSpec, clusters []clusterv1alpha1.Cluster, from string) Result {
	terms := []policyv1alpha1.ClusterAffinityTerm{{}}
	if spec.Placement != nil && len(spec.Placement.ClusterAffinities) > 0 {
		terms = spec.Placement.ClusterAffinities
		for i := range terms {
			if from != "" && terms[i].AffinityName == from {
				terms = terms[i:]
				break
			}
		}
	}
	var failures []string
	var last Result
	for i := range terms {
		r := scheduleTerm(ctx, fw, EffectiveSpec(spec, terms[i].AffinityName), clusters, OverflowTiers(spec, &terms[i]))
		r.AffinityName = terms[i].AffinityName
		r.Explanation.AffinityName = r.AffinityName
		var pe *PluginError
		if r.Err == nil || errors.As(r.Err, &pe) {
			return r
		}
		if r.AffinityName != "" {
			failures = append(failures, fmt.Sprintf("clusterAffinities[%s]: %v", r.AffinityName, r.Err))
		}
		last = r
	}
	if len(failures) > 1 {
		last.Err = fmt.Errorf("no affinity term fits: %s", strings.Join(failures, " | "))
		last.Explanation.Message = last.Err.Error()
	}
	return last
}

// OverflowTiers is the term's groups in the order they are filled (the
// primary group, then its overflowAffinities), or nil when the binding is
// not placed by overflow. As in Karmada, overflow groups serve workloads
// whose replicas are divided by what the clusters can take (dynamicWeight or
// Aggregated; the webhook refuses them with other strategies): a workload
// without replicas, or of several components, uses the primary group only.
func OverflowTiers(spec *workv1alpha2.ResourceBindingSpec, term *policyv1alpha1.ClusterAffinityTerm) []policyv1alpha1.ClusterAffinityTerm {
	if len(term.OverflowAffinities) == 0 || spec.Replicas == 0 || spec.Placement == nil || !dynamicDivision(spec.Placement.ReplicaScheduling) {
		return nil
	}
	tiers := make([]policyv1alpha1.ClusterAffinityTerm, 0, 1+len(term.OverflowAffinities))
	tiers = append(tiers, policyv1alpha1.ClusterAffinityTerm{AffinityName: term.AffinityName, ClusterAffinity: term.ClusterAffinity})
	for _, o := range term.OverflowAffinities {
		tiers = append(tiers, policyv1alpha1.ClusterAffinityTerm{AffinityName: o.AffinityName, ClusterAffinity: o.ClusterAffinity})
	}
	return tiers
}

// dynamicDivision reports whether a strategy divides replicas by what the
// clusters can take: Divided by dynamicWeight, or Aggregated.
func dynamicDivision(s *policyv1alpha1.ReplicaSchedulingStrategy) bool {
	return s != nil && s.ReplicaSchedulingType == policyv1alpha1.ReplicaSchedulingTypeDivided && !staticWeights(s)
}

// scheduleTerm places the binding under one clusterAffinities term (or the
// clusterAffinity). With tiers (OverflowTiers), a cluster belongs to the
// first group that selects it and is filtered as that group's, and the
// replicas fill the groups in order.
func scheduleTerm(ctx context.Context, fw *framework.Framework, spec *workv1alpha2.ResourceBindingSpec, clusters []clusterv1alpha1.Cluster, tiers []policyv1alpha1.ClusterAffinityTerm) Result {
	c := newTermCycle(fw, spec, tiers)
	step := time.Now()
	passed, res := c.filter(ctx, clusters)
	if res != nil {
		return *res
	}
	feasible, available := c.room(ctx, passed)
	stepFilter.Observe(metrics.Since(step))
	if len(feasible) == 0 {
		// Every cluster was ruled out: the explanation holds why.
		diagnosis := make(map[string]string, len(c.ex))
		for name, e := range c.ex {
			diagnosis[name] = fmt.Sprintf("%s (%s)", e.Reason, e.Plugin)
		}
		return c.result(fmt.Errorf("0/%d clusters are available: %s", len(clusters), summarize(diagnosis)))
	}
	step = time.Now()
	cands, err := c.score(ctx, feasible, available)
	stepScore.Observe(metrics.Since(step))
	if err != nil {
		return c.result(err)
	}
	selected, targets, err := c.place(cands)
	if err != nil {
		return c.result(err)
	}
	c.explainPlacement(selected, targets)
	return Result{Targets: targets, Explanation: explanation(c.ex, nil)}
}

// termCycle is one clusterAffinity term's scheduling cycle: the binding,
// what it has now, its overflow groups and each cluster's explanation as
// the cycle goes.
type termCycle struct {
	fw       *framework.Framework
	spec     *workv1alpha2.ResourceBindingSpec
	tiers    []policyv1alpha1.ClusterAffinityTerm
	strategy *policyv1alpha1.ReplicaSchedulingStrategy
	// divided: replicas divided between clusters; components: a workload
	// of several components, placed whole.
	divided, components bool
	previous            map[string]int32
	placedBefore        map[string]bool
	// tierSpecs: each group's spec (the binding with that group as its
	// clusterAffinity); tierOf: each cluster's group.
	tierSpecs []*workv1alpha2.ResourceBindingSpec
	tierOf    map[string]int
	ex        map[string]*workv1alpha2.ClusterExplanation
}

func newTermCycle(fw *framework.Framework, spec *workv1alpha2.ResourceBindingSpec, tiers []policyv1alpha1.ClusterAffinityTerm) *termCycle {
	c := &termCycle{fw: fw, spec: spec, tiers: tiers, components: len(spec.Components) > 0,
		previous: map[string]int32{}, placedBefore: map[string]bool{}, tierOf: map[string]int{}, ex: map[string]*workv1alpha2.ClusterExplanation{}}
	if spec.Placement != nil {
		c.strategy = spec.Placement.ReplicaScheduling
	}
	c.divided = c.strategy != nil && c.strategy.ReplicaSchedulingType == policyv1alpha1.ReplicaSchedulingTypeDivided && spec.Replicas > 0
	for _, t := range spec.Clusters {
		c.previous[t.Name] = t.Replicas
		c.placedBefore[t.Name] = true
	}
	c.tierSpecs = make([]*workv1alpha2.ResourceBindingSpec, len(tiers))
	for k := range tiers {
		cp, placement := *spec, *spec.Placement
		placement.ClusterAffinity = &tiers[k].ClusterAffinity
		cp.Placement = &placement
		c.tierSpecs[k] = &cp
	}
	return c
}

// rule records why a cluster is ruled out.
func (c *termCycle) rule(name, plugin, reason string) {
	e := c.ex[name]
	e.Feasible, e.Plugin, e.Reason = false, plugin, reason
}

func (c *termCycle) result(err error) Result {
	return Result{Err: err, Explanation: explanation(c.ex, err)}
}

// filter runs the filter plugins on every cluster (with its overflow
// group's spec); a failed plugin ends the cycle (res): ruling the cluster
// out would move workloads off a healthy cluster.
func (c *termCycle) filter(ctx context.Context, clusters []clusterv1alpha1.Cluster) (passed []*clusterv1alpha1.Cluster, res *Result) {
	for i := range clusters {
		cl := &clusters[i]
		c.ex[cl.Name] = &workv1alpha2.ClusterExplanation{Name: cl.Name, Feasible: true}
		if !cl.DeletionTimestamp.IsZero() {
			c.rule(cl.Name, "Cluster", "cluster is being removed")
			continue
		}
		filtered := c.spec
		for k := range c.tiers {
			if clusteraffinity.Matches(&c.tiers[k].ClusterAffinity, cl) {
				// The first group that selects a cluster is its group;
				// one no group selects is ruled out as the primary's.
				filtered, c.tierOf[cl.Name] = c.tierSpecs[k], k
				break
			}
		}
		if st := c.fw.RunFilters(ctx, filtered, cl); !st.IsSuccess() {
			if st.Code() == framework.Error {
				return nil, &Result{Err: &PluginError{Plugin: st.Plugin(), Message: st.Message()}, Explanation: explanation(c.ex, nil)}
			}
			c.rule(cl.Name, st.Plugin(), st.Message())
			continue
		}
		passed = append(passed, cl)
	}
	return passed, nil
}

// room estimates, all at once, how many replicas (or sets of components)
// each cluster that passed can take, counting what the binding runs there
// now as room it may keep, and rules out the clusters that cannot take
// one.
func (c *termCycle) room(ctx context.Context, passed []*clusterv1alpha1.Cluster) (feasible []*clusterv1alpha1.Cluster, available map[string]int32) {
	spec := c.spec
	// One estimate per cluster that passed, all at once (an accurate
	// estimator asks the members in parallel).
	var estimates []framework.Estimate
	if spec.Replicas > 0 || c.components {
		estimates = estimate(ctx, c.fw, spec, passed)
	}
	available = map[string]int32{}
	for i, cl := range passed {
		if spec.Replicas > 0 {
			n := estimates[i].Replicas
			if n < estimator.Unlimited-c.previous[cl.Name] {
				n += c.previous[cl.Name]
			}
			available[cl.Name] = n
			c.ex[cl.Name].AvailableReplicas = &n
			// A full cluster cannot take a divided workload. One that has not
			// reported its resources yet is unknown rather than full: static
			// weights (which do not depend on capacity) may still use it.
			if c.divided && n == 0 && (cl.Status.ResourceSummary != nil || !staticWeights(c.strategy)) {
				c.rule(cl.Name, estimates[i].By, "cluster cannot fit one replica")
				continue
			}
		} else if c.components {
			// A workload of several components is placed whole: a cluster
			// must fit one set of all of them.
			n := estimates[i].Replicas
			if c.placedBefore[cl.Name] && n < estimator.Unlimited {
				n++
			}
			available[cl.Name] = n
			c.ex[cl.Name].AvailableReplicas = &n
			if n == 0 && cl.Status.ResourceSummary != nil {
				c.rule(cl.Name, estimates[i].By, "cluster cannot fit one set of the workload's components")
				continue
			}
		}
		feasible = append(feasible, cl)
	}
	return feasible, available
}

// score runs the score plugins and makes the candidates; a score plugin has
// no verdict to give but a failure.
func (c *termCycle) score(ctx context.Context, feasible []*clusterv1alpha1.Cluster, available map[string]int32) ([]core.Candidate, error) {
	scores, st := c.fw.RunScores(ctx, c.spec, feasible)
	if !st.IsSuccess() {
		return nil, &PluginError{Plugin: st.Plugin(), Message: st.Message()}
	}
	cands := make([]core.Candidate, 0, len(feasible))
	for _, cl := range feasible {
		e := c.ex[cl.Name]
		for i, p := range scores.Plugins {
			e.Scores = append(e.Scores, workv1alpha2.PluginScore{Plugin: p, Score: scores.Scores[cl.Name][i]})
		}
		e.Score = scores.Total(cl.Name)
		cands = append(cands, core.Candidate{Cluster: cl, Score: e.Score, Available: available[cl.Name], Tier: c.tierOf[cl.Name]})
	}
	return cands, nil
}

// place selects the clusters by the spread constraints and assigns the
// replicas (by overflow group when there are groups), whole sets for a
// workload of several components.
func (c *termCycle) place(cands []core.Candidate) ([]core.Candidate, []workv1alpha2.TargetCluster, error) {
	spec := c.spec
	var constraints []policyv1alpha1.SpreadConstraint
	if spec.Placement != nil {
		constraints = spec.Placement.SpreadConstraints
	}
	var needed int32
	if c.divided {
		needed = spec.Replicas
	}
	step := time.Now()
	selected, dropped, err := core.SelectBySpread(constraints, cands, needed)
	stepSelect.Observe(metrics.Since(step))
	for name, why := range dropped {
		c.ex[name].Reason, c.ex[name].Plugin = why, SpreadStep
	}
	if err != nil {
		return nil, nil, err
	}
	step = time.Now()
	var targets []workv1alpha2.TargetCluster
	if c.tiers != nil {
		targets, err = core.AssignTiers(spec.Replicas, c.strategy, selected, spec.Clusters)
	} else {
		targets, err = core.Assign(spec.Replicas, c.strategy, selected, spec.Clusters)
	}
	stepAssign.Observe(metrics.Since(step))
	if err != nil {
		return nil, nil, err
	}
	if len(targets) == 0 {
		return nil, nil, fmt.Errorf("no replica could be assigned to the %d feasible clusters", len(selected))
	}
	if c.components {
		targets = wholeSets(targets, spec, c.strategy, c.ex)
	}
	return selected, targets, nil
}

// explainPlacement marks the clusters given replicas and says why each
// other selected cluster got none.
func (c *termCycle) explainPlacement(selected []core.Candidate, targets []workv1alpha2.TargetCluster) {
	for _, t := range targets {
		c.ex[t.Name].Selected, c.ex[t.Name].Replicas = true, t.Replicas
	}
	used := map[int]bool{}
	for _, t := range targets {
		used[c.tierOf[t.Name]] = true
	}
	for _, cand := range selected {
		e := c.ex[cand.Name()]
		switch {
		case e.Selected || e.Reason != "":
		case cand.Tier > 0 && !used[cand.Tier]:
			e.Reason = fmt.Sprintf("overflow group %q not needed: the groups before it hold the replicas", c.tiers[cand.Tier].AffinityName)
		default:
			e.Reason = "given no replica by the division"
		}
	}
}

// estimate is the framework's estimator's answer, or the general
// estimator's from each Cluster's resource summary.
func estimate(ctx context.Context, fw *framework.Framework, spec *workv1alpha2.ResourceBindingSpec, clusters []*clusterv1alpha1.Cluster) []framework.Estimate {
	if fw.Estimator != nil {
		return fw.Estimator.Estimate(ctx, spec, clusters)
	}
	out := make([]framework.Estimate, len(clusters))
	for i, c := range clusters {
		out[i] = framework.Estimate{Replicas: GeneralEstimate(c, spec), By: EstimatorStep}
	}
	return out
}

// GeneralEstimate is the general estimator's answer for one cluster:
// replicas, or whole component sets of a multi-component workload.
func GeneralEstimate(c *clusterv1alpha1.Cluster, spec *workv1alpha2.ResourceBindingSpec) int32 {
	if spec.Replicas == 0 && len(spec.Components) > 0 {
		return estimator.ComponentSets(c, spec.Components)
	}
	return estimator.General(c, spec.ReplicaRequirements)
}

// wholeSets gives each target every component's replicas. A Divided
// placement cannot split a multi-component workload (its components work
// together): it goes whole to one cluster, the one it runs in if still
// selected, else the best scored (then by name).
func wholeSets(targets []workv1alpha2.TargetCluster, spec *workv1alpha2.ResourceBindingSpec, strategy *policyv1alpha1.ReplicaSchedulingStrategy,
	ex map[string]*workv1alpha2.ClusterExplanation) []workv1alpha2.TargetCluster {
	if strategy != nil && strategy.ReplicaSchedulingType == policyv1alpha1.ReplicaSchedulingTypeDivided && len(targets) > 1 {
		best := -1
		for i, t := range targets {
			for _, p := range spec.Clusters {
				if p.Name == t.Name {
					best = i
				}
			}
		}
		if best < 0 {
			best = 0
			for i, t := range targets {
				if ex[t.Name].Score > ex[targets[best].Name].Score || (ex[t.Name].Score == ex[targets[best].Name].Score && t.Name < targets[best].Name) {
					best = i
				}
			}
		}
		for i, t := range targets {
			if i != best {
				ex[t.Name].Reason = "a multi-component workload is placed whole in one cluster"
			}
		}
		targets = targets[best : best+1]
	}
	out := make([]workv1alpha2.TargetCluster, len(targets))
	for i, t := range targets {
		t.Replicas = 0
		t.Components = make([]workv1alpha2.ComponentReplicas, 0, len(spec.Components))
		for _, c := range spec.Components {
			t.Components = append(t.Components, workv1alpha2.ComponentReplicas{Name: c.Name, Replicas: c.Replicas})
		}
		out[i] = t
	}
	return out
}

// staticWeights reports whether a Divided strategy divides by static
// weights (as opposed to available replicas or aggregation).
func staticWeights(s *policyv1alpha1.ReplicaSchedulingStrategy) bool {
	return s.ReplicaDivisionPreference != policyv1alpha1.ReplicaDivisionPreferenceAggregated &&
		(s.WeightPreference == nil || s.WeightPreference.DynamicWeight == "")
}

// explanation orders the clusters (selected by name, then feasible by
// score, then ruled out by name) and keeps at most MaxExplained.
func explanation(ex map[string]*workv1alpha2.ClusterExplanation, err error) *workv1alpha2.PlacementExplanation {
	all := make([]workv1alpha2.ClusterExplanation, 0, len(ex))
	for _, e := range ex {
		all = append(all, *e)
	}
	rank := func(e workv1alpha2.ClusterExplanation) int {
		switch {
		case e.Selected:
			return 0
		case e.Feasible:
			return 1
		}
		return 2
	}
	sort.Slice(all, func(i, j int) bool {
		a, b := all[i], all[j]
		if rank(a) != rank(b) {
			return rank(a) < rank(b)
		}
		if rank(a) == 1 && a.Score != b.Score {
			return a.Score > b.Score
		}
		return a.Name < b.Name
	})
	out := &workv1alpha2.PlacementExplanation{Message: "scheduled"}
	if err != nil {
		out.Message = err.Error()
	}
	if len(all) > MaxExplained {
		out.Omitted = int32(len(all) - MaxExplained)
		all = all[:MaxExplained]
	}
	out.Clusters = all
	return out
}
