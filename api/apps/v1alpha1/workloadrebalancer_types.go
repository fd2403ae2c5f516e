package v1alpha1

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// WorkloadRebalancer asks, once, for the listed workloads to be scheduled
// afresh, ignoring where they are now, and reports how each went.
//
// +genclient
// +genclient:nonNamespaced
// +kubebuilder:object:root=true
// +kubebuilder:subresource:status
// +kubebuilder:resource:scope=Cluster,categories=karmada-io
type WorkloadRebalancer struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	// Spec lists the workloads to rebalance.
	// +required
	Spec WorkloadRebalancerSpec `json:"spec"`

	// Status reports each workload's result.
	// +optional
	Status WorkloadRebalancerStatus `json:"status,omitempty"`
}

// WorkloadRebalancerSpec is what a WorkloadRebalancer asks for.
type WorkloadRebalancerSpec struct {
	// Workloads are the resource templates to schedule afresh; at least
	// one.
	// +kubebuilder:validation:MinItems=1
	// +required
	Workloads []ObjectReference `json:"workloads"`

	// TTLSecondsAfterFinished, when set, deletes the WorkloadRebalancer
	// that long after every workload has a result (0: at once).
	// +optional
	TTLSecondsAfterFinished *int32 `json:"ttlSecondsAfterFinished,omitempty"`
}

// ObjectReference names a resource template.
type ObjectReference struct {
	// APIVersion of the template.
	// +required
	APIVersion string `json:"apiVersion"`

	// Kind of the template.
	// +required
	Kind string `json:"kind"`

	// Name of the template.
	// +required
	Name string `json:"name"`

	// Namespace of the template; empty for a cluster-scoped one.
	// +optional
	Namespace string `json:"namespace,omitempty"`
}

// WorkloadRebalancerStatus is how the rebalance went.
type WorkloadRebalancerStatus struct {
	// ObservedWorkloads has one entry per workload of the spec.
	// +optional
	ObservedWorkloads []ObservedWorkload `json:"observedWorkloads,omitempty"`

	// ObservedGeneration is the generation these results are for.
	// +optional
	ObservedGeneration int64 `json:"observedGeneration,omitempty"`

	// FinishTime is when every workload had a result.
	// +optional
	FinishTime *metav1.Time `json:"finishTime,omitempty"`
}

// ObservedWorkload is one workload's result.
type ObservedWorkload struct {
	// Workload is the template.
	// +required
	Workload ObjectReference `json:"workload"`

	// Result is Successful or Failed (empty while in progress).
	// +optional
	Result RebalanceResult `json:"result,omitempty"`

	// Reason says why it failed.
	// +optional
	Reason RebalanceFailedReason `json:"reason,omitempty"`
}

// RebalanceResult is a workload's outcome.
type RebalanceResult string

// Outcomes of a workload's rebalance.
const (
	RebalanceSuccessful RebalanceResult = "Successful"
	RebalanceFailed     RebalanceResult = "Failed"
)

// RebalanceFailedReason says why a workload's rebalance failed.
type RebalanceFailedReason string

// RebalanceObjectNotFound: the template (or its binding) does not exist.
const RebalanceObjectNotFound RebalanceFailedReason = "ReferencedBindingNotFound"

// WorkloadRebalancerList is a list of WorkloadRebalancer.
//
// +kubebuilder:object:root=true
type WorkloadRebalancerList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	Items           []WorkloadRebalancer `json:"items"`
}
