// The SpreadConstraint plugin is a filter: a cluster can
// only take part in a spread by region, zone, provider or label if it has a
// value for it. Choosing the groups happens after scoring (core.SelectBySpread).

package plugins

import (
	"context"
	"fmt"

	clusterv1alpha1 "github.com/karmada-go/karmada/api/cluster/v1alpha1"
	workv1alpha2 "github.com/karmada-go/karmada/api/work/v1alpha2"
	"github.com/karmada-go/karmada/internal/scheduler/core"
	"github.com/karmada-go/karmada/internal/scheduler/framework"
)

// SpreadConstraintName is the plugin's name.
const SpreadConstraintName = "SpreadConstraint"

// SpreadConstraint filters clusters missing a spread property.
type SpreadConstraint struct{}

var _ framework.FilterPlugin = &SpreadConstraint{}

// NewSpreadConstraint returns the plugin.
func NewSpreadConstraint() (framework.Plugin, error) { return &SpreadConstraint{}, nil }

// Name returns the plugin's name.
func (p *SpreadConstraint) Name() string { return SpreadConstraintName }

// Filter passes clusters that have every property the constraints group by.
func (p *SpreadConstraint) Filter(_ context.Context, spec *workv1alpha2.ResourceBindingSpec, cluster *clusterv1alpha1.Cluster) *framework.Status {
	if spec.Placement == nil {
		return nil
	}
	for _, sc := range spec.Placement.SpreadConstraints {
		if core.GroupValue(sc, cluster) != "" {
			continue
		}
		if sc.SpreadByLabel != "" {
			return framework.NewStatus(framework.Unschedulable, fmt.Sprintf("cluster has no label %s to spread by", sc.SpreadByLabel))
		}
		return framework.NewStatus(framework.Unschedulable, fmt.Sprintf("cluster has no %s to spread by", sc.SpreadByField))
	}
	return nil
}
