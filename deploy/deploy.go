// Package deploy holds the manifests that install Karmada's components:
// the RBAC of each component's control plane identity, applied by
// karmada-local and readable (and appliable with kubectl) as they are.
package deploy

import "embed"

// RBAC holds rbac/*.yaml.
//
//go:embed rbac/*.yaml
var RBAC embed.FS
