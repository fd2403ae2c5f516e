// The ClusterAffinity plugin is a filter: the placement's
// clusterAffinity must select the cluster.

package plugins

import (
	"context"

	clusterv1alpha1 "github.com/karmada-go/karmada/api/cluster/v1alpha1"
	workv1alpha2 "github.com/karmada-go/karmada/api/work/v1alpha2"
	"github.com/karmada-go/karmada/internal/clusters/clusteraffinity"
	"github.com/karmada-go/karmada/internal/scheduler/framework"
)

// ClusterAffinityName is the plugin's name.
const ClusterAffinityName = "ClusterAffinity"

// ClusterAffinity filters clusters by the placement's clusterAffinity.
type ClusterAffinity struct{}

var _ framework.FilterPlugin = &ClusterAffinity{}

// NewClusterAffinity returns the plugin.
func NewClusterAffinity() (framework.Plugin, error) { return &ClusterAffinity{}, nil }

// Name returns the plugin's name.
func (p *ClusterAffinity) Name() string { return ClusterAffinityName }

// Filter passes clusters the affinity selects.
func (p *ClusterAffinity) Filter(_ context.Context, spec *workv1alpha2.ResourceBindingSpec, cluster *clusterv1alpha1.Cluster) *framework.Status {
	if spec.Placement == nil {
		return nil
	}
	if ok, why := clusteraffinity.Explain(spec.Placement.ClusterAffinity, cluster); !ok {
		return framework.NewStatus(framework.Unschedulable, why)
	}
	return nil
}
