// Package plugins lists the in-tree scheduler plugins.
package plugins

import (
	"github.com/karmada-go/karmada/internal/scheduler/framework"
	"github.com/karmada-go/karmada/internal/scheduler/plugins/apienablement"
	"github.com/karmada-go/karmada/internal/scheduler/plugins/clusteraffinity"
	"github.com/karmada-go/karmada/internal/scheduler/plugins/tainttoleration"
)

// NewInTreeRegistry returns every in-tree plugin by its Karmada name.
func NewInTreeRegistry() framework.Registry {
	return framework.Registry{
		apienablement.Name:   apienablement.New,
		clusteraffinity.Name: clusteraffinity.New,
		tainttoleration.Name: tainttoleration.New,
	}
}
