//go:build tools

// Package metricsserver only records the metrics-server command as a
// dependency of this module (each member of the local fleet runs it).
package metricsserver

import _ "sigs.k8s.io/metrics-server/cmd/metrics-server"
