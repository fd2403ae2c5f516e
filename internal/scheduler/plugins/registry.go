// Package plugins lists the in-tree scheduler plugins.
package plugins

import (
	"github.com/karmada-go/karmada/internal/scheduler/framework"
	"github.com/karmada-go/karmada/internal/scheduler/plugins/apienablement"
	"github.com/karmada-go/karmada/internal/scheduler/plugins/clusteraffinity"
	"github.com/karmada-go/karmada/internal/scheduler/plugins/clustereviction"
	"github.com/karmada-go/karmada/internal/scheduler/plugins/clusterlocality"
	"github.com/karmada-go/karmada/internal/scheduler/plugins/spreadconstraint"
	"github.com/karmada-go/karmada/internal/scheduler/plugins/tainttoleration"
)

// NewInTreeRegistry returns every in-tree plugin by its Karmada name.
func NewInTreeRegistry() framework.Registry {
	return framework.Registry{
		apienablement.Name:    apienablement.New,
		clusteraffinity.Name:  clusteraffinity.New,
		clustereviction.Name:  clustereviction.New,
		clusterlocality.Name:  clusterlocality.New,
		spreadconstraint.Name: spreadconstraint.New,
		tainttoleration.Name:  tainttoleration.New,
	}
}
