// The ClusterLocality plugin is a score: clusters the binding
// is already placed on score highest, so that rescheduling prefers to stay.

package plugins

import (
	"context"

	clusterv1alpha1 "github.com/karmada-go/karmada/api/cluster/v1alpha1"
	workv1alpha2 "github.com/karmada-go/karmada/api/work/v1alpha2"
	"github.com/karmada-go/karmada/internal/scheduler/framework"
)

// ClusterLocalityName is the plugin's name.
const ClusterLocalityName = "ClusterLocality"

// ClusterLocality scores the clusters a binding is on.
type ClusterLocality struct{}

var _ framework.ScorePlugin = &ClusterLocality{}

// NewClusterLocality returns the plugin.
func NewClusterLocality() (framework.Plugin, error) { return &ClusterLocality{}, nil }

// Name returns the plugin's name.
func (p *ClusterLocality) Name() string { return ClusterLocalityName }

// Score is MaxScore for a cluster in spec.clusters, MinScore otherwise.
func (p *ClusterLocality) Score(_ context.Context, spec *workv1alpha2.ResourceBindingSpec, cluster *clusterv1alpha1.Cluster) (int64, *framework.Status) {
	for _, t := range spec.Clusters {
		if t.Name == cluster.Name {
			return framework.MaxScore, nil
		}
	}
	return framework.MinScore, nil
}
