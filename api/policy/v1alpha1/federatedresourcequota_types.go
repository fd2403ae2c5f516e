package v1alpha1

import (
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// FederatedResourceQuota limits what the workloads of a namespace may
// request across every member cluster (overall), and can set a
// ResourceQuota in chosen members (staticAssignments).
//
// +genclient
// +kubebuilder:object:root=true
// +kubebuilder:resource:categories=karmada-io
// +kubebuilder:subresource:status
// +kubebuilder:printcolumn:name="OVERALL",type=string,JSONPath=`.status.overall`
// +kubebuilder:printcolumn:name="OVERALL_USED",type=string,JSONPath=`.status.overallUsed`
type FederatedResourceQuota struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	// Spec is the quota.
	// +required
	Spec FederatedResourceQuotaSpec `json:"spec"`

	// Status is what is enforced and used.
	// +optional
	Status FederatedResourceQuotaStatus `json:"status,omitempty"`
}

// FederatedResourceQuotaSpec is the quota of a namespace across clusters.
type FederatedResourceQuotaSpec struct {
	// Overall is the most the namespace's workloads may request, summed over
	// every cluster, per resource.
	// +required
	Overall corev1.ResourceList `json:"overall"`

	// StaticAssignments set a ResourceQuota of these hard limits in the
	// namespace of each cluster named. Clusters not named get none. The
	// scheduler does not read them.
	// +optional
	StaticAssignments []StaticClusterAssignment `json:"staticAssignments,omitempty"`
}

// StaticClusterAssignment is the ResourceQuota of one cluster.
type StaticClusterAssignment struct {
	// ClusterName is the member cluster.
	// +required
	ClusterName string `json:"clusterName"`

	// Hard is the ResourceQuota's hard limits there.
	// +required
	Hard corev1.ResourceList `json:"hard"`
}

// FederatedResourceQuotaStatus is what is enforced and used.
type FederatedResourceQuotaStatus struct {
	// Overall is the enforced overall limit.
	// +optional
	Overall corev1.ResourceList `json:"overall,omitempty"`

	// OverallUsed is what the namespace's scheduled workloads request,
	// summed over every cluster.
	// +optional
	OverallUsed corev1.ResourceList `json:"overallUsed,omitempty"`

	// AggregatedStatus is, per cluster with a static assignment, its
	// ResourceQuota's hard limits and usage there.
	// +optional
	AggregatedStatus []ClusterQuotaStatus `json:"aggregatedStatus,omitempty"`
}

// ClusterQuotaStatus is one cluster's ResourceQuota.
type ClusterQuotaStatus struct {
	// ClusterName is the member cluster.
	// +required
	ClusterName string `json:"clusterName"`

	// Hard is the ResourceQuota's enforced limits there.
	// +optional
	Hard corev1.ResourceList `json:"hard,omitempty"`

	// Used is the ResourceQuota's observed usage there.
	// +optional
	Used corev1.ResourceList `json:"used,omitempty"`
}

// FederatedResourceQuotaList is a list of FederatedResourceQuota.
//
// +kubebuilder:object:root=true
type FederatedResourceQuotaList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	Items           []FederatedResourceQuota `json:"items"`
}
