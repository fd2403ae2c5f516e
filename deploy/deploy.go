// Package deploy holds the manifests that install Karmada's components:
// the RBAC of each component's control plane identity and the API Priority
// and Fairness of their requests, applied by karmada-local and readable
// (and appliable with kubectl) as they are.
package deploy

import "embed"

// RBAC holds rbac/*.yaml.
//
//go:embed rbac/*.yaml
var RBAC embed.FS

// FlowControl holds flowcontrol/*.yaml: the priority level and flow schema
// of Karmada's components on the karmada-apiserver.
//
//go:embed flowcontrol/*.yaml
var FlowControl embed.FS
