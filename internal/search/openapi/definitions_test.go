package openapi

import (
	"testing"

	searchv1alpha1 "github.com/karmada-go/karmada/api/search/v1alpha1"
	"github.com/karmada-go/karmada/internal/apiserverapp/openapitest"
)

// The generated definitions match the search API's types (the policy
// types a registry's target uses among them).
func TestDefinitionsMatchTheTypes(t *testing.T) {
	openapitest.CheckDefinitions(t, Definitions,
		[]any{searchv1alpha1.ResourceRegistry{}, searchv1alpha1.ResourceRegistryList{}, searchv1alpha1.Search{}, searchv1alpha1.Proxying{}},
		"k8s.io/api/core/v1.NodeSelectorRequirement")
}
