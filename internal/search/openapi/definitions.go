// Package openapi holds the OpenAPI definitions karmada-search serves:
// those generated from the search API's types, the policy types its target
// uses and the apimachinery types (hack/update-openapi.sh), and the one
// core/v1 type a target's fieldSelector uses, written here.
package openapi

import (
	"k8s.io/kube-openapi/pkg/common"
	"k8s.io/kube-openapi/pkg/validation/spec"
)

// Definitions are every definition the server's OpenAPI needs.
func Definitions(ref common.ReferenceCallback) map[string]common.OpenAPIDefinition {
	defs := GetOpenAPIDefinitions(ref)
	defs["k8s.io/api/core/v1.NodeSelectorRequirement"] = nodeSelectorRequirement()
	return defs
}

// nodeSelectorRequirement is core/v1's NodeSelectorRequirement, as a
// cluster field selector uses it.
func nodeSelectorRequirement() common.OpenAPIDefinition {
	return common.OpenAPIDefinition{
		Schema: spec.Schema{
			SchemaProps: spec.SchemaProps{
				Description: "A requirement on a field: key, operator (In, NotIn, Exists, DoesNotExist, Gt, Lt) and values.",
				Type:        []string{"object"},
				Properties: map[string]spec.Schema{
					"key":      {SchemaProps: spec.SchemaProps{Description: "The field: provider, region or zone.", Type: []string{"string"}}},
					"operator": {SchemaProps: spec.SchemaProps{Description: "In, NotIn, Exists, DoesNotExist, Gt or Lt.", Type: []string{"string"}}},
					"values": {SchemaProps: spec.SchemaProps{Description: "The values.", Type: []string{"array"},
						Items: &spec.SchemaOrArray{Schema: &spec.Schema{SchemaProps: spec.SchemaProps{Type: []string{"string"}}}}}},
				},
				Required: []string{"key", "operator"},
			},
		},
	}
}
