package scheduler

import (
	"context"
	"sync"

	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	workv1alpha2 "github.com/karmada-go/karmada/api/work/v1alpha2"
	"github.com/karmada-go/karmada/internal/anybinding"
	"github.com/karmada-go/karmada/internal/scheduler/plugins"
)

// The cache's indexes of ResourceBindings and ClusterResourceBindings by
// their affinity groups (within a namespace: groups do not cross
// namespaces, as in Karmada; ClusterResourceBindings form groups of their
// own, apart from every namespace's).
const (
	affinityGroupIndex     = "workloadAffinityGroups.affinityGroup"
	antiAffinityGroupIndex = "workloadAffinityGroups.antiAffinityGroup"
)

// groups keeps, per group, the placements this scheduler decided that the
// cache may not show yet, so that two workloads of a group scheduled one
// after the other see each other.
type groups struct {
	mu sync.Mutex
	// decided: group key ("a/<ns>/<group>" or "x/<ns>/<group>") → binding
	// key → clusters.
	decided map[string]map[string][]string
}

func indexAffinityGroups(ctx context.Context, mgr ctrl.Manager) error {
	idx := mgr.GetFieldIndexer()
	group := func(anti bool) client.IndexerFunc {
		return func(o client.Object) []string {
			b, err := anybinding.Of(o)
			if err != nil || b.Spec.WorkloadAffinityGroups == nil {
				return nil
			}
			name := b.Spec.WorkloadAffinityGroups.AffinityGroup
			if anti {
				name = b.Spec.WorkloadAffinityGroups.AntiAffinityGroup
			}
			if name == "" {
				return nil
			}
			return []string{name}
		}
	}
	for _, k := range anybinding.Kinds {
		if err := idx.IndexField(ctx, k.New().Object, affinityGroupIndex, group(false)); err != nil {
			return err
		}
		if err := idx.IndexField(ctx, k.New().Object, antiAffinityGroupIndex, group(true)); err != nil {
			return err
		}
	}
	return nil
}

// peers finds where the other workloads of b's groups run (nil: b has no
// groups). The caller holds s.groups.mu for the cycle, so that the decision it records is seen by the next cycle of
// the group.
func (s *Scheduler) peers(ctx context.Context, b anybinding.Binding, key string) (*plugins.Peers, error) {
	g := b.Spec.WorkloadAffinityGroups
	ns := b.Object.GetNamespace()
	if g == nil || (g.AffinityGroup == "" && g.AntiAffinityGroup == "") {
		return nil, nil
	}
	p := &plugins.Peers{AffinityGroup: g.AffinityGroup, AntiAffinityGroup: g.AntiAffinityGroup, AntiAffinity: map[string]bool{}}
	collect := func(index, group, kind string, into func(string)) error {
		if group == "" {
			return nil
		}
		// The group's members: bindings of b's namespace, or cluster
		// bindings for a cluster binding.
		members, err := anybinding.KindFor(ns).List(ctx, s.Client, client.InNamespace(ns), client.MatchingFields{index: group})
		if err != nil {
			return err
		}
		placed := map[string][]string{}
		for _, m := range members {
			if !m.Object.GetDeletionTimestamp().IsZero() {
				continue
			}
			k := client.ObjectKeyFromObject(m.Object).String()
			for _, t := range m.Spec.Clusters {
				placed[k] = append(placed[k], t.Name)
			}
		}
		for k, clusters := range s.groups.decided[kind+"/"+ns+"/"+group] {
			placed[k] = clusters
		}
		delete(placed, key)
		for _, clusters := range placed {
			for _, c := range clusters {
				into(c)
			}
		}
		return nil
	}
	if err := collect(affinityGroupIndex, g.AffinityGroup, "a", func(c string) {
		if p.Affinity == nil {
			p.Affinity = map[string]bool{}
		}
		p.Affinity[c] = true
	}); err != nil {
		return nil, err
	}
	if err := collect(antiAffinityGroupIndex, g.AntiAffinityGroup, "x", func(c string) { p.AntiAffinity[c] = true }); err != nil {
		return nil, err
	}
	return p, nil
}

// decide records where b's cycle placed it (nil targets: it is gone).
func (s *Scheduler) decide(b anybinding.Binding, key string, targets []workv1alpha2.TargetCluster) {
	g := b.Spec.WorkloadAffinityGroups
	if g == nil {
		return
	}
	ns := b.Object.GetNamespace()
	var clusters []string
	for _, t := range targets {
		clusters = append(clusters, t.Name)
	}
	if s.groups.decided == nil {
		s.groups.decided = map[string]map[string][]string{}
	}
	for kind, group := range map[string]string{"a": g.AffinityGroup, "x": g.AntiAffinityGroup} {
		if group == "" {
			continue
		}
		k := kind + "/" + ns + "/" + group
		if s.groups.decided[k] == nil {
			s.groups.decided[k] = map[string][]string{}
		}
		s.groups.decided[k][key] = clusters
	}
}

// forgetGroups drops a deleted binding's recorded decisions.
func (s *Scheduler) forgetGroups(key string) {
	s.groups.mu.Lock()
	defer s.groups.mu.Unlock()
	for _, m := range s.groups.decided {
		delete(m, key)
	}
}
