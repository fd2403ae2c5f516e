package registry

import (
	"strings"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	policyv1alpha1 "github.com/karmada-go/karmada/api/policy/v1alpha1"
	searchv1alpha1 "github.com/karmada-go/karmada/api/search/v1alpha1"
)

// Bad registries are refused naming the field, the value and what is
// allowed.
func TestValidate(t *testing.T) {
	good := searchv1alpha1.ResourceRegistrySpec{
		TargetCluster:     policyv1alpha1.ClusterAffinity{ClusterNames: []string{"member1"}},
		ResourceSelectors: []searchv1alpha1.ResourceSelector{{APIVersion: "apps/v1", Kind: "Deployment", Namespace: "shop"}},
	}
	if errs := Validate(&searchv1alpha1.ResourceRegistry{Spec: good}); len(errs) != 0 {
		t.Fatalf("a good registry: %v", errs)
	}
	for _, tc := range []struct {
		edit func(*searchv1alpha1.ResourceRegistrySpec)
		want string
	}{
		{func(s *searchv1alpha1.ResourceRegistrySpec) { s.ResourceSelectors = nil }, "spec.resourceSelectors: Required value"},
		{func(s *searchv1alpha1.ResourceRegistrySpec) { s.ResourceSelectors[0].Kind = "" }, "spec.resourceSelectors[0].kind: Required value"},
		{func(s *searchv1alpha1.ResourceRegistrySpec) { s.ResourceSelectors[0].APIVersion = "a/b/c" }, `spec.resourceSelectors[0].apiVersion: Invalid value: "a/b/c"`},
		{func(s *searchv1alpha1.ResourceRegistrySpec) { s.ResourceSelectors[0].Namespace = "Shop_1" }, `spec.resourceSelectors[0].namespace: Invalid value: "Shop_1"`},
		{func(s *searchv1alpha1.ResourceRegistrySpec) {
			s.TargetCluster.LabelSelector = &metav1.LabelSelector{MatchExpressions: []metav1.LabelSelectorRequirement{{Key: "a", Operator: "Near"}}}
		}, "spec.targetCluster.labelSelector"},
		{func(s *searchv1alpha1.ResourceRegistrySpec) {
			s.BackendStore = &searchv1alpha1.BackendStoreConfig{OpenSearch: &searchv1alpha1.OpenSearchConfig{Addresses: []string{"https://os:9200"}}}
		}, "spec.backendStore.openSearch: Unsupported value"},
	} {
		spec := *good.DeepCopy()
		tc.edit(&spec)
		errs := Validate(&searchv1alpha1.ResourceRegistry{Spec: spec})
		if !strings.Contains(errs.ToAggregate().Error(), tc.want) {
			t.Errorf("%v, want %q", errs, tc.want)
		}
	}
}
