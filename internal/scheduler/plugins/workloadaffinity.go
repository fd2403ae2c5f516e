// The WorkloadAffinity plugin is a filter: a workload of an affinity group
// goes where the group's other workloads already run, and one of an
// anti-affinity group goes where none of its group runs (the policy's
// placement.workloadAffinity, the binding's workloadAffinityGroups;
// --feature-gates=WorkloadAffinity=true, as Karmada).

package plugins

import (
	"context"
	"fmt"
	"slices"
	"sort"
	"strings"

	clusterv1alpha1 "github.com/karmada-go/karmada/api/cluster/v1alpha1"
	workv1alpha2 "github.com/karmada-go/karmada/api/work/v1alpha2"
	"github.com/karmada-go/karmada/internal/scheduler/framework"
)

// WorkloadAffinityName is the plugin's name.
const WorkloadAffinityName = "WorkloadAffinity"

// Peers is where the other workloads of a binding's groups run, as the
// scheduler found them for this cycle.
type Peers struct {
	// Affinity are the clusters of the affinity group's other workloads;
	// nil when none is placed yet (the first goes anywhere).
	Affinity map[string]bool
	// AntiAffinity are the clusters of the anti-affinity group's other
	// workloads.
	AntiAffinity map[string]bool
	// AffinityGroup and AntiAffinityGroup name the groups (for reasons).
	AffinityGroup, AntiAffinityGroup string
}

type peersKey struct{}

// WithPeers gives the cycle's filters the binding's peers.
func WithPeers(ctx context.Context, p *Peers) context.Context {
	return context.WithValue(ctx, peersKey{}, p)
}

// WorkloadAffinity filters clusters by the binding's affinity groups.
type WorkloadAffinity struct{}

var _ framework.FilterPlugin = &WorkloadAffinity{}

// NewWorkloadAffinity returns the plugin.
func NewWorkloadAffinity() (framework.Plugin, error) { return &WorkloadAffinity{}, nil }

// Name returns the plugin's name.
func (p *WorkloadAffinity) Name() string { return WorkloadAffinityName }

// Filter passes every cluster of a binding without peers (no groups, or
// the gate off); else, with affinity, only the clusters where the group
// runs (once any of it does) and, with anti-affinity, none where its group
// runs. A cluster the binding is placed on already passes: the rules hold
// at scheduling and are not enforced afterwards (IgnoredDuringExecution).
func (p *WorkloadAffinity) Filter(ctx context.Context, spec *workv1alpha2.ResourceBindingSpec, cluster *clusterv1alpha1.Cluster) *framework.Status {
	peers, _ := ctx.Value(peersKey{}).(*Peers)
	if peers == nil {
		return nil
	}
	for _, t := range spec.Clusters {
		if t.Name == cluster.Name {
			return nil
		}
	}
	if peers.Affinity != nil && !peers.Affinity[cluster.Name] {
		return framework.NewStatus(framework.Unschedulable, fmt.Sprintf("cluster does not run a workload of affinity group %q (it runs in %s)", peers.AffinityGroup, names(peers.Affinity)))
	}
	if peers.AntiAffinity[cluster.Name] {
		return framework.NewStatus(framework.Unschedulable, fmt.Sprintf("cluster runs a workload of anti-affinity group %q", peers.AntiAffinityGroup))
	}
	return nil
}

func names(set map[string]bool) string {
	out := make([]string, 0, len(set))
	for n := range set {
		out = append(out, n)
	}
	sort.Strings(out)
	return strings.Join(slices.Compact(out), ", ")
}
