// The ClusterEviction plugin is a filter: a cluster the
// workload is being evicted from cannot take it again until the eviction
// is over.

package plugins

import (
	"context"

	clusterv1alpha1 "github.com/karmada-go/karmada/api/cluster/v1alpha1"
	workv1alpha2 "github.com/karmada-go/karmada/api/work/v1alpha2"
	"github.com/karmada-go/karmada/internal/eviction"
	"github.com/karmada-go/karmada/internal/scheduler/framework"
)

// ClusterEvictionName is the plugin's name.
const ClusterEvictionName = "ClusterEviction"

// ClusterEviction filters clusters in the binding's eviction tasks.
type ClusterEviction struct{}

var _ framework.FilterPlugin = &ClusterEviction{}

// NewClusterEviction returns the plugin.
func NewClusterEviction() (framework.Plugin, error) { return &ClusterEviction{}, nil }

// Name returns the plugin's name.
func (p *ClusterEviction) Name() string { return ClusterEvictionName }

// Filter rules out clusters the workload is being evicted from (but for
// narrowings: a cluster dropped by the placement may be chosen again).
func (p *ClusterEviction) Filter(_ context.Context, spec *workv1alpha2.ResourceBindingSpec, cluster *clusterv1alpha1.Cluster) *framework.Status {
	for i := range spec.GracefulEvictionTasks {
		if t := &spec.GracefulEvictionTasks[i]; t.FromCluster == cluster.Name && eviction.Blocks(t) {
			return framework.NewStatus(framework.Unschedulable, "the workload is being evicted from this cluster")
		}
	}
	return nil
}
