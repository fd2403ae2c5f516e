// Command karmada-metrics-adapter serves the member clusters' resource
// metrics in the control plane's metrics.k8s.io/v1beta1, behind the
// karmada-apiserver's aggregation layer.
package main

import (
	"os"

	"github.com/karmada-go/karmada/internal/autoscaling/metricsadapter/app"
)

func main() {
	os.Exit(app.Main())
}
