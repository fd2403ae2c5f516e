// Package algorithm is the scheduling cycle with no side effect: the
// filters, scores, spread constraints and division that turn a binding and
// the fleet into a placement, with the explanation of each cluster. The
// scheduler controller runs it on every binding; karmadactl plan and explain
// run it as a dry run.
package algorithm

import (
	"fmt"
	"sort"
	"strings"

	clusterv1alpha1 "github.com/karmada-go/karmada/api/cluster/v1alpha1"
	policyv1alpha1 "github.com/karmada-go/karmada/api/policy/v1alpha1"
	workv1alpha2 "github.com/karmada-go/karmada/api/work/v1alpha2"
	"github.com/karmada-go/karmada/internal/clusters/clusteraffinity"
)

// EffectiveSpec is the binding spec as scheduled under the named
// clusterAffinities term: the term's affinity in place of clusterAffinity.
// Without terms (or with an unknown name: the first term) it is spec.
func EffectiveSpec(spec *workv1alpha2.ResourceBindingSpec, affinityName string) *workv1alpha2.ResourceBindingSpec {
	term := AffinityTerm(spec, affinityName)
	if term == nil {
		return spec
	}
	cp := *spec
	placement := *spec.Placement
	placement.ClusterAffinity = &term.ClusterAffinity
	cp.Placement = &placement
	return &cp
}

// AffinityTerm is the clusterAffinities term of that name (the first for
// an unknown name), or nil without terms.
func AffinityTerm(spec *workv1alpha2.ResourceBindingSpec, affinityName string) *policyv1alpha1.ClusterAffinityTerm {
	if spec.Placement == nil || len(spec.Placement.ClusterAffinities) == 0 {
		return nil
	}
	for i := range spec.Placement.ClusterAffinities {
		if spec.Placement.ClusterAffinities[i].AffinityName == affinityName {
			return &spec.Placement.ClusterAffinities[i]
		}
	}
	return &spec.Placement.ClusterAffinities[0]
}

// Deselected names the clusters the binding is placed on that its cluster
// affinity no longer selects (their labels or topology changed): the user's
// selection changed, which is not an eviction, so the binding is scheduled
// again and leaves them, as in Karmada. Taints, readiness and capacity are
// not looked at: those never move a placed workload by themselves. With
// overflow groups (tiers, OverflowTiers), a cluster any group selects is
// still selected.
func Deselected(spec *workv1alpha2.ResourceBindingSpec, clusters []clusterv1alpha1.Cluster, tiers []policyv1alpha1.ClusterAffinityTerm) []string {
	if spec.Placement == nil || spec.Placement.ClusterAffinity == nil || len(spec.Clusters) == 0 {
		return nil
	}
	byName := make(map[string]*clusterv1alpha1.Cluster, len(clusters))
	for i := range clusters {
		byName[clusters[i].Name] = &clusters[i]
	}
	var out []string
	for _, t := range spec.Clusters {
		c, ok := byName[t.Name]
		if !ok || !c.DeletionTimestamp.IsZero() {
			continue
		}
		selected := clusteraffinity.Matches(spec.Placement.ClusterAffinity, c)
		for i := range tiers {
			selected = selected || clusteraffinity.Matches(&tiers[i].ClusterAffinity, c)
		}
		if !selected {
			out = append(out, t.Name)
		}
	}
	return out
}

// summarize groups clusters by reason: "2 clusters: reason; 1 cluster: ...".
func summarize(diagnosis map[string]string) string {
	if len(diagnosis) == 0 {
		return "there are no clusters"
	}
	byReason := map[string][]string{}
	for c, r := range diagnosis {
		byReason[r] = append(byReason[r], c)
	}
	reasons := make([]string, 0, len(byReason))
	for r := range byReason {
		reasons = append(reasons, r)
	}
	sort.Strings(reasons)
	parts := make([]string, 0, len(reasons))
	for _, r := range reasons {
		names := byReason[r]
		sort.Strings(names)
		parts = append(parts, fmt.Sprintf("%s: %s", strings.Join(names, ", "), r))
	}
	return strings.Join(parts, "; ")
}
