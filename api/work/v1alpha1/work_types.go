package v1alpha1

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
)

// Work is the set of manifests to apply to one member cluster. It lives in the
// member's execution namespace, karmada-es-<cluster>.
//
// +genclient
// +kubebuilder:object:root=true
// +kubebuilder:resource:shortName=wk,categories=karmada-io
// +kubebuilder:subresource:status
// +kubebuilder:printcolumn:name="WORKLOAD-KIND",type=string,JSONPath=`.spec.workload.manifests[*].kind`
// +kubebuilder:printcolumn:name="APPLIED",type=string,JSONPath=`.status.conditions[?(@.type=="Applied")].status`
// +kubebuilder:printcolumn:name="AGE",type=date,JSONPath=`.metadata.creationTimestamp`
type Work struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	// Spec holds the manifests to apply.
	// +required
	Spec WorkSpec `json:"spec"`

	// Status reports how applying them went.
	// +optional
	Status WorkStatus `json:"status,omitempty"`
}

// WorkSpec holds the manifests to apply.
type WorkSpec struct {
	// Workload holds the manifests.
	// +optional
	Workload WorkloadTemplate `json:"workload,omitempty"`

	// SuspendDispatching stops the manifests from being applied.
	// +optional
	SuspendDispatching *bool `json:"suspendDispatching,omitempty"`

	// PreserveResourcesOnDeletion keeps the applied resources in the member
	// when the Work is deleted.
	// +optional
	PreserveResourcesOnDeletion *bool `json:"preserveResourcesOnDeletion,omitempty"`
}

// WorkloadTemplate is a list of manifests.
type WorkloadTemplate struct {
	// Manifests are whole Kubernetes objects.
	// +optional
	Manifests []Manifest `json:"manifests,omitempty"`
}

// Manifest is one Kubernetes object, kept as raw JSON.
// +kubebuilder:pruning:PreserveUnknownFields
type Manifest struct {
	runtime.RawExtension `json:",inline"`
}

// Condition types of a Work.
const (
	// WorkApplied reports whether the manifests were applied to the member.
	WorkApplied = "Applied"
	// WorkAvailable reports whether the applied resources are available.
	WorkAvailable = "Available"
	// WorkDispatching reports whether dispatching is suspended.
	WorkDispatching = "Dispatching"
)

// WorkStatus reports how applying the manifests went.
type WorkStatus struct {
	// Conditions of the Work, such as Applied.
	// +optional
	Conditions []metav1.Condition `json:"conditions,omitempty"`

	// ManifestStatuses hold the status of each applied resource.
	// +optional
	ManifestStatuses []ManifestStatus `json:"manifestStatuses,omitempty"`
}

// ResourceHealth is the health of an applied resource.
// +kubebuilder:validation:Enum=Healthy;Unhealthy;Unknown
type ResourceHealth string

// Resource health values.
const (
	ResourceHealthy       ResourceHealth = "Healthy"
	ResourceUnhealthy     ResourceHealth = "Unhealthy"
	ResourceUnknownHealth ResourceHealth = "Unknown"
)

// ManifestStatus is the status of one applied resource.
type ManifestStatus struct {
	// Identifier names the resource.
	// +required
	Identifier ResourceIdentifier `json:"identifier"`
	// Status is the resource's status as reflected from the member.
	// +kubebuilder:pruning:PreserveUnknownFields
	// +optional
	Status *runtime.RawExtension `json:"status,omitempty"`
	// Health of the resource.
	// +optional
	Health ResourceHealth `json:"health,omitempty"`
}

// ResourceIdentifier names one resource of a Work.
type ResourceIdentifier struct {
	// Ordinal is the index of the manifest in the Work.
	// +required
	Ordinal int `json:"ordinal"`
	// Group of the resource.
	// +optional
	Group string `json:"group"`
	// Version of the resource.
	// +required
	Version string `json:"version"`
	// Kind of the resource.
	// +required
	Kind string `json:"kind"`
	// Resource is the plural resource name.
	// +required
	Resource string `json:"resource"`
	// Namespace of the resource; empty for cluster-scoped ones.
	// +optional
	Namespace string `json:"namespace"`
	// Name of the resource.
	// +required
	Name string `json:"name"`
}

// WorkList is a list of Works.
// +kubebuilder:object:root=true
type WorkList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	Items           []Work `json:"items"`
}
