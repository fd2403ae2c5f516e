//go:build tools

// Package tools only records the generators as dependencies of this module.
package tools

import _ "sigs.k8s.io/controller-tools/cmd/controller-gen"
