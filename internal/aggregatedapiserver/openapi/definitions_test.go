package openapi

import (
	"testing"

	clusterv1alpha1 "github.com/karmada-go/karmada/api/cluster/v1alpha1"
	"github.com/karmada-go/karmada/internal/apiserverapp/openapitest"
)

// The generated definitions match the Cluster API's types.
func TestDefinitionsMatchTheTypes(t *testing.T) {
	openapitest.CheckDefinitions(t, Definitions,
		[]any{clusterv1alpha1.Cluster{}, clusterv1alpha1.ClusterList{}, clusterv1alpha1.ClusterProxyOptions{}},
		"k8s.io/api/core/v1.Taint")
}
