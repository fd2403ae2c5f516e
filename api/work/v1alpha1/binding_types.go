package v1alpha1

import (
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
)

// ResourceBinding (v1alpha1) is the older served version of the binding
// between a namespaced template and its clusters; v1alpha2 is stored.
//
// +kubebuilder:object:root=true
// +kubebuilder:resource:shortName=rb,categories=karmada-io
// +kubebuilder:subresource:status
type ResourceBinding struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	// Spec is the template and its scheduling result.
	// +required
	Spec ResourceBindingSpec `json:"spec"`

	// Status is the aggregated state in the clusters.
	// +optional
	Status ResourceBindingStatus `json:"status,omitempty"`
}

// ClusterResourceBinding (v1alpha1) is the older served version of the binding
// of a cluster-scoped template; v1alpha2 is stored.
//
// +kubebuilder:object:root=true
// +kubebuilder:resource:scope=Cluster,shortName=crb,categories=karmada-io
// +kubebuilder:subresource:status
type ClusterResourceBinding struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	// Spec is the template and its scheduling result.
	// +required
	Spec ResourceBindingSpec `json:"spec"`

	// Status is the aggregated state in the clusters.
	// +optional
	Status ResourceBindingStatus `json:"status,omitempty"`
}

// ResourceBindingSpec is the template and its scheduling result.
type ResourceBindingSpec struct {
	// Resource is the bound template.
	// +required
	Resource ObjectReference `json:"resource"`
	// Clusters are the scheduled clusters.
	// +optional
	Clusters []TargetCluster `json:"clusters,omitempty"`
}

// ObjectReference names the bound template, with its replica shape.
type ObjectReference struct {
	// APIVersion of the template.
	// +required
	APIVersion string `json:"apiVersion"`
	// Kind of the template.
	// +required
	Kind string `json:"kind"`
	// Namespace of the template.
	// +optional
	Namespace string `json:"namespace,omitempty"`
	// Name of the template.
	// +required
	Name string `json:"name"`
	// ResourceVersion of the template last bound.
	// +optional
	ResourceVersion string `json:"resourceVersion,omitempty"`
	// ReplicaResourceRequirements is what one replica requests.
	// +optional
	ReplicaResourceRequirements corev1.ResourceList `json:"resourcePerReplicas,omitempty"`
	// Replicas of the template.
	// +optional
	Replicas int32 `json:"replicas,omitempty"`
}

// TargetCluster is one scheduled cluster and its share of replicas.
type TargetCluster struct {
	// Name of the cluster.
	// +required
	Name string `json:"name"`
	// Replicas assigned to the cluster.
	// +optional
	Replicas int32 `json:"replicas,omitempty"`
}

// ResourceBindingStatus is the aggregated state in the clusters.
type ResourceBindingStatus struct {
	// Conditions of the binding.
	// +optional
	Conditions []metav1.Condition `json:"conditions,omitempty"`
	// AggregatedStatus holds one item per cluster.
	// +optional
	AggregatedStatus []AggregatedStatusItem `json:"aggregatedStatus,omitempty"`
}

// AggregatedStatusItem is the template's state in one cluster.
type AggregatedStatusItem struct {
	// ClusterName is the cluster.
	// +required
	ClusterName string `json:"clusterName"`
	// Status is the resource's status there.
	// +kubebuilder:pruning:PreserveUnknownFields
	// +optional
	Status *runtime.RawExtension `json:"status,omitempty"`
	// Applied reports whether the resource was applied there.
	// +optional
	Applied bool `json:"applied,omitempty"`
	// AppliedMessage explains a failure to apply.
	// +optional
	AppliedMessage string `json:"appliedMessage,omitempty"`
}

// ResourceBindingList is a list of ResourceBindings.
// +kubebuilder:object:root=true
type ResourceBindingList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	Items           []ResourceBinding `json:"items"`
}

// ClusterResourceBindingList is a list of ClusterResourceBindings.
// +kubebuilder:object:root=true
type ClusterResourceBindingList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	Items           []ClusterResourceBinding `json:"items"`
}
