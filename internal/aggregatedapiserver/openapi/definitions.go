// Package openapi holds the OpenAPI definitions karmada-aggregated-apiserver
// serves: those generated from the Cluster API's types and the apimachinery
// types they use (hack/update-codegen.sh), and the one core/v1 type the
// Cluster uses, Taint, written here rather than generating all of core/v1.
package openapi

import (
	"k8s.io/kube-openapi/pkg/common"
	"k8s.io/kube-openapi/pkg/validation/spec"
)

// Definitions are every definition the server's OpenAPI needs.
func Definitions(ref common.ReferenceCallback) map[string]common.OpenAPIDefinition {
	defs := GetOpenAPIDefinitions(ref)
	defs["k8s.io/api/core/v1.Taint"] = taint(ref)
	return defs
}

// taint is core/v1's Taint.
func taint(ref common.ReferenceCallback) common.OpenAPIDefinition {
	str := func(desc string) spec.Schema {
		return spec.Schema{SchemaProps: spec.SchemaProps{Description: desc, Type: []string{"string"}, Format: ""}}
	}
	return common.OpenAPIDefinition{
		Schema: spec.Schema{
			SchemaProps: spec.SchemaProps{
				Description: "A taint keeps off whatever does not tolerate it.",
				Type:        []string{"object"},
				Properties: map[string]spec.Schema{
					"key":    str("The taint's key."),
					"value":  str("The taint's value."),
					"effect": str("NoSchedule, PreferNoSchedule or NoExecute."),
					"timeAdded": {SchemaProps: spec.SchemaProps{
						Description: "When a NoExecute taint was added.",
						Ref:         ref("k8s.io/apimachinery/pkg/apis/meta/v1.Time"),
					}},
				},
				Required: []string{"key", "effect"},
			},
		},
		Dependencies: []string{"k8s.io/apimachinery/pkg/apis/meta/v1.Time"},
	}
}
