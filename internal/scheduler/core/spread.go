package core

import (
	"fmt"
	"sort"
	"strings"

	clusterv1alpha1 "github.com/karmada-go/karmada/api/cluster/v1alpha1"
	policyv1alpha1 "github.com/karmada-go/karmada/api/policy/v1alpha1"
)

// GroupValue is the value a spread constraint groups a cluster by ("" when
// the cluster has none: such clusters cannot take part in the spread).
func GroupValue(sc policyv1alpha1.SpreadConstraint, c *clusterv1alpha1.Cluster) string {
	if sc.SpreadByLabel != "" {
		return c.Labels[sc.SpreadByLabel]
	}
	switch sc.SpreadByField {
	case policyv1alpha1.SpreadByFieldCluster:
		return c.Name
	case policyv1alpha1.SpreadByFieldRegion:
		return c.Spec.Region
	case policyv1alpha1.SpreadByFieldZone:
		if c.Spec.Zone != "" {
			return c.Spec.Zone
		}
		if len(c.Spec.Zones) > 0 {
			return c.Spec.Zones[0]
		}
		return ""
	case policyv1alpha1.SpreadByFieldProvider:
		return c.Spec.Provider
	}
	return ""
}

// constraintName is how a constraint is named in messages: the field or
// "label <key>".
func constraintName(sc policyv1alpha1.SpreadConstraint) string {
	if sc.SpreadByLabel != "" {
		return "label " + sc.SpreadByLabel
	}
	return string(sc.SpreadByField)
}

type group struct {
	value     string
	clusters  []Candidate
	tier      int
	score     int64
	available int64
}

// better orders candidates for selection: the earlier overflow tier, then
// higher score, then more available replicas, then name.
func better(a, b Candidate) bool {
	if a.Tier != b.Tier {
		return a.Tier < b.Tier
	}
	if a.Score != b.Score {
		return a.Score > b.Score
	}
	if a.Available != b.Available {
		return a.Available > b.Available
	}
	return a.Name() < b.Name()
}

// SelectBySpread picks, among the feasible candidates, the clusters the
// spread constraints allow. For each constraint by region, zone, provider or
// label (in order) it keeps the best groups, at most maxGroups, and fails
// when fewer than minGroups groups are feasible; a constraint by cluster
// then bounds how many clusters are kept, keeping one cluster of every group
// chosen before. As in Karmada, the groups win over the cluster bound: a
// maxGroups by cluster below the number of groups chosen keeps one cluster
// per group (two regions with at most one cluster: two clusters). Groups
// rank by their earliest overflow tier (overflowAffinities), their best
// cluster's score, then their total available replicas, then name. needed
// is the number of replicas a divided workload must fit (0 for duplicated
// ones): groups are added beyond the best ones until they hold it, when
// maxGroups allows. The second result names, per cluster left out, why.
func SelectBySpread(constraints []policyv1alpha1.SpreadConstraint, cands []Candidate, needed int32) ([]Candidate, map[string]string, error) {
	if len(constraints) == 0 {
		return cands, nil, nil
	}
	dropped := map[string]string{}
	selected := append([]Candidate(nil), cands...)
	var groupBy []policyv1alpha1.SpreadConstraint
	var byCluster *policyv1alpha1.SpreadConstraint
	for i := range constraints {
		sc := constraints[i]
		if sc.SpreadByLabel == "" && sc.SpreadByField == policyv1alpha1.SpreadByFieldCluster {
			byCluster = &constraints[i]
			continue
		}
		groupBy = append(groupBy, sc)
	}
	chosen := 0 // the most groups a constraint chose
	for _, sc := range groupBy {
		groups := groupsOf(sc, selected)
		if len(groups) < sc.MinGroups {
			return nil, dropped, fmt.Errorf("spread constraint by %s needs at least %d groups but the feasible clusters are in %d (%s)",
				constraintName(sc), sc.MinGroups, len(groups), groupValues(groups))
		}
		limit := len(groups)
		if sc.MaxGroups > 0 && sc.MaxGroups < limit {
			limit = sc.MaxGroups
		}
		// Take at least minGroups (and at least one) of the best groups, then
		// more while the workload does not fit yet, up to the limit.
		take := max(sc.MinGroups, 1)
		if needed == 0 {
			take = limit
		}
		take = min(take, limit)
		var fits int64
		for _, g := range groups[:take] {
			fits += g.available
		}
		for take < limit && fits < int64(needed) {
			fits += groups[take].available
			take++
		}
		chosen = max(chosen, take)
		selected = selected[:0]
		for i, g := range groups {
			if i < take {
				selected = append(selected, g.clusters...)
				continue
			}
			for _, c := range g.clusters {
				dropped[c.Name()] = fmt.Sprintf("%s %q was not among the %d groups chosen by the spread constraint", constraintName(sc), g.value, take)
			}
		}
	}
	if byCluster != nil {
		sc := *byCluster
		if len(selected) < sc.MinGroups {
			return nil, dropped, fmt.Errorf("spread constraint by cluster needs at least %d clusters but %d are feasible", sc.MinGroups, len(selected))
		}
		if n := max(sc.MaxGroups, chosen); sc.MaxGroups > 0 && len(selected) > n {
			selected = pickClusters(selected, n, groupBy, dropped)
		}
	}
	sort.Slice(selected, func(i, j int) bool { return selected[i].Name() < selected[j].Name() })
	return selected, dropped, nil
}

// pickClusters keeps n clusters: the best of every group of the other
// constraints first (so that their groups stay covered), then the best of the
// rest.
func pickClusters(cands []Candidate, n int, groupBy []policyv1alpha1.SpreadConstraint, dropped map[string]string) []Candidate {
	order := append([]Candidate(nil), cands...)
	sort.SliceStable(order, func(i, j int) bool { return better(order[i], order[j]) })
	kept := map[string]bool{}
	var out []Candidate
	for _, sc := range groupBy {
		seen := map[string]bool{}
		for _, c := range order {
			v := GroupValue(sc, c.Cluster)
			if !seen[v] && !kept[c.Name()] && len(out) < n {
				seen[v] = true
				kept[c.Name()] = true
				out = append(out, c)
			}
		}
	}
	for _, c := range order {
		if len(out) >= n {
			break
		}
		if !kept[c.Name()] {
			kept[c.Name()] = true
			out = append(out, c)
		}
	}
	for _, c := range order {
		if !kept[c.Name()] {
			dropped[c.Name()] = fmt.Sprintf("not among the %d best clusters the spread constraint by cluster allows", n)
		}
	}
	return out
}

func groupsOf(sc policyv1alpha1.SpreadConstraint, cands []Candidate) []*group {
	byValue := map[string]*group{}
	var out []*group
	for _, c := range cands {
		v := GroupValue(sc, c.Cluster)
		if v == "" {
			continue
		}
		g := byValue[v]
		if g == nil {
			g = &group{value: v, tier: c.Tier, score: c.Score}
			byValue[v] = g
			out = append(out, g)
		}
		g.clusters = append(g.clusters, c)
		g.tier = min(g.tier, c.Tier)
		g.score = max(g.score, c.Score)
		g.available += int64(c.Available)
	}
	sort.Slice(out, func(i, j int) bool {
		a, b := out[i], out[j]
		if a.tier != b.tier {
			return a.tier < b.tier
		}
		if a.score != b.score {
			return a.score > b.score
		}
		if a.available != b.available {
			return a.available > b.available
		}
		return a.value < b.value
	})
	return out
}

func groupValues(gs []*group) string {
	if len(gs) == 0 {
		return "none"
	}
	vs := make([]string, 0, len(gs))
	for _, g := range gs {
		vs = append(vs, g.value)
	}
	sort.Strings(vs)
	return strings.Join(vs, ", ")
}
