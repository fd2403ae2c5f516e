package metricsadapter

import (
	"k8s.io/component-base/metrics"
	"k8s.io/component-base/metrics/legacyregistry"
)

// memberRequestDuration times each member's answer to a request, by
// resource (pods, nodes) and result (success, not_found, error).
var memberRequestDuration = metrics.NewHistogramVec(&metrics.HistogramOpts{
	Namespace:      "karmada",
	Subsystem:      "metrics_adapter",
	Name:           "member_request_duration_seconds",
	Help:           "How long a member cluster's metrics API took to answer, by resource (pods, nodes, custom, custom_discovery) and result (success, not_found, error).",
	Buckets:        metrics.ExponentialBuckets(0.005, 2, 12),
	StabilityLevel: metrics.ALPHA,
}, []string{"resource", "result"})

func init() {
	legacyregistry.MustRegister(memberRequestDuration)
}
