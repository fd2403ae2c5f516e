// Package features says which parts of a component are on: the feature
// gates of the Karmada components (--feature-gates), with Karmada's names,
// stages and defaults, and the lists of named parts a flag such as
// --controllers or --plugins turns on and off.
package features

import (
	"k8s.io/apimachinery/pkg/util/runtime"
	"k8s.io/component-base/featuregate"
)

// Failover turns on failover: the clusterTaintPolicy controller (taints
// from cluster conditions) and, later, eviction of workloads from tainted
// or unhealthy clusters. Beta, off by default, as in Karmada.
const Failover featuregate.Feature = "Failover"

// GracefulEviction makes evictions graceful: an evicted cluster's copy
// stays (as a graceful eviction task on the binding) until the workload is
// healthy where it was moved to, or the grace period ends. Off, an eviction
// removes the copy at once. Beta, on by default, as in Karmada.
const GracefulEviction featuregate.Feature = "GracefulEviction"

// FederatedQuotaEnforcement enforces FederatedResourceQuotas' overall
// limits: karmada-webhook refuses a binding's placement that would take its
// namespace past one (the scheduler reports SchedulerError with the denial). Alpha, off by
// default, as in Karmada.
const FederatedQuotaEnforcement featuregate.Feature = "FederatedQuotaEnforcement"

// MultiClusterService turns on the MultiClusterService controllers
// (multiclusterservice, and the collection of its providers' EndpointSlices
// by serviceExport). Alpha, off by default, as in Karmada.
const MultiClusterService featuregate.Feature = "MultiClusterService"

// Gate is the components' feature gate; --feature-gates sets it.
var Gate featuregate.MutableFeatureGate = featuregate.NewFeatureGate()

func init() {
	runtime.Must(Gate.Add(map[featuregate.Feature]featuregate.FeatureSpec{
		Failover:                  {Default: false, PreRelease: featuregate.Beta},
		GracefulEviction:          {Default: true, PreRelease: featuregate.Beta},
		FederatedQuotaEnforcement: {Default: false, PreRelease: featuregate.Alpha},
		MultiClusterService:       {Default: false, PreRelease: featuregate.Alpha},
	}))
}
