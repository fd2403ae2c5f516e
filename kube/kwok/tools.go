//go:build tools

// Package kwok only records the kwok command as a dependency of this module.
package kwok

import _ "sigs.k8s.io/kwok/cmd/kwok"
