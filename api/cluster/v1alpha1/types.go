package v1alpha1

import (
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// Cluster is one member cluster of the fleet: how to reach it, how workloads are
// delivered to it, and what the control plane last observed about it.
//
// +genclient
// +genclient:nonNamespaced
// +kubebuilder:object:root=true
// +kubebuilder:resource:scope=Cluster,categories=karmada-io
// +kubebuilder:subresource:status
// +kubebuilder:printcolumn:name="VERSION",type=string,JSONPath=`.status.kubernetesVersion`
// +kubebuilder:printcolumn:name="MODE",type=string,JSONPath=`.spec.syncMode`
// +kubebuilder:printcolumn:name="READY",type=string,JSONPath=`.status.conditions[?(@.type=="Ready")].status`
// +kubebuilder:printcolumn:name="AGE",type=date,JSONPath=`.metadata.creationTimestamp`
// +kubebuilder:printcolumn:name="APIENDPOINT",type=string,JSONPath=`.spec.apiEndpoint`,priority=1
// +kubebuilder:printcolumn:name="INSECURE-SKIP-TLS-VERIFY",type=boolean,JSONPath=`.spec.insecureSkipTLSVerification`,priority=1
type Cluster struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	// Spec is the desired description of the member cluster.
	// +required
	Spec ClusterSpec `json:"spec"`

	// Status is what the control plane last observed about the member cluster.
	// +optional
	Status ClusterStatus `json:"status,omitempty"`
}

// ClusterSyncMode says how resources reach a member cluster.
// +kubebuilder:validation:Enum=Push;Pull
type ClusterSyncMode string

const (
	// Push: the control plane writes to the member cluster's API directly.
	Push ClusterSyncMode = "Push"
	// Pull: an agent in the member cluster fetches its Works and applies them.
	Pull ClusterSyncMode = "Pull"
)

// ClusterSpec describes how to reach and use a member cluster.
type ClusterSpec struct {
	// ID uniquely identifies the member cluster; it is the UID of the member's
	// kube-system namespace, so one cluster cannot join twice under two names.
	// +optional
	ID string `json:"id,omitempty"`

	// SyncMode is Push or Pull.
	// +required
	SyncMode ClusterSyncMode `json:"syncMode"`

	// APIEndpoint is the URL of the member cluster's API server.
	// +optional
	APIEndpoint string `json:"apiEndpoint,omitempty"`

	// SecretRef names the Secret holding the credentials (keys token and
	// caBundle) the control plane uses to reach the member cluster.
	// +optional
	SecretRef *LocalSecretReference `json:"secretRef,omitempty"`

	// ImpersonatorSecretRef names the Secret holding the token used to
	// impersonate users on the member cluster.
	// +optional
	ImpersonatorSecretRef *LocalSecretReference `json:"impersonatorSecretRef,omitempty"`

	// InsecureSkipTLSVerification disables verification of the member's
	// serving certificate.
	// +optional
	InsecureSkipTLSVerification bool `json:"insecureSkipTLSVerification,omitempty"`

	// ProxyURL is the proxy through which the member cluster is reached.
	// +optional
	ProxyURL string `json:"proxyURL,omitempty"`

	// ProxyHeader holds headers sent to the proxy.
	// +optional
	ProxyHeader map[string]string `json:"proxyHeader,omitempty"`

	// Provider is the cloud provider of the cluster.
	// +optional
	Provider string `json:"provider,omitempty"`

	// Region is the region the cluster runs in.
	// +optional
	Region string `json:"region,omitempty"`

	// Zone is the zone the cluster runs in. Deprecated in favour of Zones.
	// +optional
	Zone string `json:"zone,omitempty"`

	// Zones are the zones the cluster spans.
	// +optional
	Zones []string `json:"zones,omitempty"`

	// Taints keep workloads off the cluster unless they tolerate them.
	// +optional
	Taints []corev1.Taint `json:"taints,omitempty"`

	// ResourceModels grade the cluster's nodes by capacity, for estimating how
	// many replicas fit.
	// +optional
	ResourceModels []ResourceModel `json:"resourceModels,omitempty"`
}

// LocalSecretReference names a Secret in the control plane.
type LocalSecretReference struct {
	// Namespace of the Secret.
	Namespace string `json:"namespace"`
	// Name of the Secret.
	Name string `json:"name"`
}

// ResourceModel is one grade of node capacity.
type ResourceModel struct {
	// Grade orders the models; a higher grade means larger nodes.
	Grade uint `json:"grade"`
	// Ranges bound each resource of this grade: min <= capacity < max.
	Ranges []ResourceModelRange `json:"ranges"`
}

// ResourceModelRange bounds one resource of a model.
type ResourceModelRange struct {
	// Name of the resource, such as cpu or memory.
	Name corev1.ResourceName `json:"name"`
	// Min is the inclusive lower bound.
	Min resource.Quantity `json:"min"`
	// Max is the exclusive upper bound.
	Max resource.Quantity `json:"max"`
}

// Condition types and reasons of a Cluster.
const (
	// ClusterConditionReady reports whether the cluster's API answers health probes.
	ClusterConditionReady = "Ready"
	// ClusterConditionCompleteAPIEnablements reports whether API discovery was complete.
	ClusterConditionCompleteAPIEnablements = "CompleteAPIEnablements"
)

// ClusterStatus is what the control plane observed about a member cluster.
type ClusterStatus struct {
	// KubernetesVersion is the version the member's API server reports.
	// +optional
	KubernetesVersion string `json:"kubernetesVersion,omitempty"`

	// APIEnablements lists the resources the member serves.
	// +optional
	APIEnablements []APIEnablement `json:"apiEnablements,omitempty"`

	// Conditions of the cluster, such as Ready.
	// +optional
	Conditions []metav1.Condition `json:"conditions,omitempty"`

	// NodeSummary counts the member's nodes.
	// +optional
	NodeSummary *NodeSummary `json:"nodeSummary,omitempty"`

	// ResourceSummary sums the member's resources.
	// +optional
	ResourceSummary *ResourceSummary `json:"resourceSummary,omitempty"`

	// RemedyActions are the remedies currently applied to the cluster.
	// +optional
	RemedyActions []string `json:"remedyActions,omitempty"`
}

// APIEnablement is one group/version served by the member and its resources.
type APIEnablement struct {
	// GroupVersion such as apps/v1.
	GroupVersion string `json:"groupVersion"`
	// Resources of that group/version.
	// +optional
	Resources []APIResource `json:"resources,omitempty"`
}

// APIResource is one resource of a group/version.
type APIResource struct {
	// Name is the plural resource name, such as deployments.
	Name string `json:"name"`
	// Kind is the kind of the resource, such as Deployment.
	Kind string `json:"kind"`
}

// NodeSummary counts nodes.
type NodeSummary struct {
	// TotalNum is the number of nodes.
	// +optional
	TotalNum int32 `json:"totalNum,omitempty"`
	// ReadyNum is the number of Ready nodes.
	// +optional
	ReadyNum int32 `json:"readyNum,omitempty"`
}

// ResourceSummary sums the resources of a member's nodes and pods.
type ResourceSummary struct {
	// Allocatable is the sum of the nodes' allocatable resources.
	// +optional
	Allocatable corev1.ResourceList `json:"allocatable,omitempty"`
	// Allocating is the sum of requests of pods not yet scheduled.
	// +optional
	Allocating corev1.ResourceList `json:"allocating,omitempty"`
	// Allocated is the sum of requests of scheduled pods.
	// +optional
	Allocated corev1.ResourceList `json:"allocated,omitempty"`
	// AllocatableModelings counts nodes per resource model grade.
	// +optional
	AllocatableModelings []AllocatableModeling `json:"allocatableModelings,omitempty"`
}

// AllocatableModeling is the number of nodes in one resource model grade.
type AllocatableModeling struct {
	// Grade of the model.
	Grade uint `json:"grade"`
	// Count of nodes in that grade.
	Count int `json:"count"`
}

// ClusterList is a list of Clusters.
// +kubebuilder:object:root=true
type ClusterList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	Items           []Cluster `json:"items"`
}

// ClusterProxyOptions are the options of a request to a Cluster's proxy
// subresource (`clusters/<name>/proxy/<path>`), served by
// karmada-aggregated-apiserver.
//
// +kubebuilder:object:root=true
type ClusterProxyOptions struct {
	metav1.TypeMeta `json:",inline"`

	// Path is the path, in the member cluster's API, the request is for.
	// +optional
	Path string `json:"path,omitempty"`
}
