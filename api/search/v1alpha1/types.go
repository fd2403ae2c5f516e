package v1alpha1

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	clusterv1alpha1 "github.com/karmada-go/karmada/api/cluster/v1alpha1"
	policyv1alpha1 "github.com/karmada-go/karmada/api/policy/v1alpha1"
)

// +genclient
// +genclient:nonNamespaced
// +kubebuilder:object:root=true
// +kubebuilder:resource:scope=Cluster

// ResourceRegistry chooses what karmada-search caches: the kinds its
// resource selectors name, from the member clusters its target selects.
type ResourceRegistry struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	// Spec is what to cache.
	// +required
	Spec ResourceRegistrySpec `json:"spec"`

	// Status is what is cached.
	// +optional
	Status ResourceRegistryStatus `json:"status,omitempty"`
}

// ResourceRegistrySpec is what to cache, from where.
type ResourceRegistrySpec struct {
	// TargetCluster selects the member clusters to cache from.
	// +required
	TargetCluster policyv1alpha1.ClusterAffinity `json:"targetCluster"`

	// ResourceSelectors name the kinds to cache (and optionally a
	// namespace).
	// +required
	ResourceSelectors []ResourceSelector `json:"resourceSelectors"`

	// BackendStore is where the cache is kept: in karmada-search's memory
	// when nil (the only store karmada-search supports).
	// +optional
	BackendStore *BackendStoreConfig `json:"backendStore,omitempty"`
}

// ResourceSelector names a kind to cache.
type ResourceSelector struct {
	// APIVersion of the kind.
	// +required
	APIVersion string `json:"apiVersion"`

	// Kind to cache.
	// +required
	Kind string `json:"kind"`

	// Namespace, when set, caches only that namespace's objects.
	// +optional
	Namespace string `json:"namespace,omitempty"`
}

// BackendStoreConfig names a store outside karmada-search.
type BackendStoreConfig struct {
	// OpenSearch is an OpenSearch store.
	// +optional
	OpenSearch *OpenSearchConfig `json:"openSearch,omitempty"`
}

// OpenSearchConfig reaches an OpenSearch store.
type OpenSearchConfig struct {
	// Addresses of OpenSearch nodes.
	// +required
	Addresses []string `json:"addresses"`

	// SecretRef names the Secret with the store's credentials.
	// +optional
	SecretRef clusterv1alpha1.LocalSecretReference `json:"secretRef,omitempty"`
}

// ResourceRegistryStatus is what is cached.
type ResourceRegistryStatus struct {
	// Conditions: Ready when every selected cluster's selected kinds are
	// cached.
	// +optional
	Conditions []metav1.Condition `json:"conditions,omitempty"`
}

// +kubebuilder:object:root=true

// ResourceRegistryList is a list of ResourceRegistries.
type ResourceRegistryList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	Items           []ResourceRegistry `json:"items"`
}

// CachedFromClusterAnnotation names the member cluster an object served by
// karmada-search was cached from.
const CachedFromClusterAnnotation = "resource.karmada.io/cached-from-cluster"

// ConditionReady is the registry's condition: every selected cluster's
// selected kinds are cached.
const ConditionReady = "Ready"

// +kubebuilder:object:root=true

// Search is the search/cache endpoint's placeholder kind: its query options.
type Search struct {
	metav1.TypeMeta `json:",inline"`
}

// +kubebuilder:object:root=true

// Proxying is the proxying/proxy endpoint's placeholder kind: its query
// options.
type Proxying struct {
	metav1.TypeMeta `json:",inline"`
}
