// Package v1alpha1 holds the search.karmada.io/v1alpha1 API that
// karmada-search serves: ResourceRegistry, which chooses what karmada-search
// caches from which member clusters.
//
// It is served by karmada-search behind the aggregation layer, not by a
// CRD.
//
// +kubebuilder:object:generate=true
// +kubebuilder:skip
// +k8s:openapi-gen=true
// +groupName=search.karmada.io
package v1alpha1
