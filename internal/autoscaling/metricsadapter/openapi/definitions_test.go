package openapi

import (
	"testing"

	metricsv1beta1 "k8s.io/metrics/pkg/apis/metrics/v1beta1"

	"github.com/karmada-go/karmada/internal/apiserverapp/openapitest"
)

// The generated definitions match the metrics API's types.
func TestDefinitionsMatchTheTypes(t *testing.T) {
	openapitest.CheckDefinitions(t, GetOpenAPIDefinitions,
		[]any{metricsv1beta1.PodMetrics{}, metricsv1beta1.PodMetricsList{}, metricsv1beta1.NodeMetrics{}, metricsv1beta1.NodeMetricsList{}})
}
