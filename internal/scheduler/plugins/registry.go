// Package plugins holds the in-tree scheduler plugins, one file each, and
// their registry.
package plugins

import (
	"github.com/karmada-go/karmada/internal/scheduler/framework"
)

// NewInTreeRegistry returns every in-tree plugin by its Karmada name.
func NewInTreeRegistry() framework.Registry {
	return framework.Registry{
		APIEnablementName:    NewAPIEnablement,
		ClusterAffinityName:  NewClusterAffinity,
		ClusterEvictionName:  NewClusterEviction,
		ClusterLocalityName:  NewClusterLocality,
		SpreadConstraintName: NewSpreadConstraint,
		TaintTolerationName:  NewTaintToleration,
		WorkloadAffinityName: NewWorkloadAffinity,
	}
}
