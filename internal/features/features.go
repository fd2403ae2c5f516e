// Package features holds the feature gates of the Karmada components
// (--feature-gates), with Karmada's names, stages and defaults.
package features

import (
	"k8s.io/apimachinery/pkg/util/runtime"
	"k8s.io/component-base/featuregate"
)

// Failover turns on failover: the clusterTaintPolicy controller (taints
// from cluster conditions) and, later, eviction of workloads from tainted
// or unhealthy clusters. Beta, off by default, as in Karmada.
const Failover featuregate.Feature = "Failover"

// Gate is the components' feature gate; --feature-gates sets it.
var Gate featuregate.MutableFeatureGate = featuregate.NewFeatureGate()

func init() {
	runtime.Must(Gate.Add(map[featuregate.Feature]featuregate.FeatureSpec{
		Failover: {Default: false, PreRelease: featuregate.Beta},
	}))
}
