// Package charts embeds the Helm charts, so that `karmadactl init` installs
// the very chart it was built with (internal/helmchart renders and installs
// it).
package charts

import "embed"

// FS holds karmada/ (the chart, hidden files included).
//
//go:embed all:karmada
var FS embed.FS
