package v1alpha1

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// Remedy names actions to take on clusters in a given state: for each
// cluster it selects (all when clusterAffinity is empty) whose conditions
// meet any of its decisionMatches (at once when there are none), its
// actions are listed in the cluster's status.remedyActions, and go from it
// when the conditions stop matching or the Remedy goes.
//
// +genclient
// +genclient:nonNamespaced
// +kubebuilder:object:root=true
// +kubebuilder:resource:scope=Cluster,categories=karmada-io
type Remedy struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	// Spec says which clusters, in which state, get which actions.
	// +required
	Spec RemedySpec `json:"spec"`
}

// RemedySpec is what a Remedy asks for.
type RemedySpec struct {
	// ClusterAffinity selects the clusters the Remedy looks at; every
	// cluster when empty.
	// +optional
	ClusterAffinity *ClusterAffinity `json:"clusterAffinity,omitempty"`

	// DecisionMatches are the states that call for the actions: any one
	// matching is enough. When empty, the actions apply to the selected
	// clusters at once.
	// +optional
	DecisionMatches []DecisionMatch `json:"decisionMatches,omitempty"`

	// Actions are what the selected clusters get while a decision matches;
	// none when empty.
	// +optional
	Actions []RemedyAction `json:"actions,omitempty"`
}

// ClusterAffinity selects clusters by name.
type ClusterAffinity struct {
	// ClusterNames are the names of the selected clusters.
	// +optional
	ClusterNames []string `json:"clusterNames,omitempty"`
}

// DecisionMatch is one state of a cluster that calls for the actions.
type DecisionMatch struct {
	// ClusterConditionMatch compares one condition of the cluster's status.
	// +optional
	ClusterConditionMatch *ClusterConditionRequirement `json:"clusterConditionMatch,omitempty"`
}

// ClusterConditionRequirement compares the status of the cluster's
// condition of a type with a value. A cluster without that condition does
// not match.
type ClusterConditionRequirement struct {
	// ConditionType is the type of the cluster's condition.
	// +required
	ConditionType ConditionType `json:"conditionType"`

	// Operator is how the condition's status compares with
	// conditionStatus.
	// +kubebuilder:validation:Enum=Equal;NotEqual
	// +required
	Operator ClusterConditionOperator `json:"operator"`

	// ConditionStatus is the status compared with: True, False or Unknown.
	// +kubebuilder:validation:Enum=True;False;Unknown
	// +required
	ConditionStatus string `json:"conditionStatus"`
}

// ConditionType is the type of a cluster condition.
// +kubebuilder:validation:MinLength=1
type ConditionType string

// ServiceDomainNameResolutionReady is the condition a detector in the
// member sets: whether the member's cluster DNS answers for its Services.
const ServiceDomainNameResolutionReady ConditionType = "ServiceDomainNameResolutionReady"

// ClusterConditionOperator relates a condition's status to a value.
type ClusterConditionOperator string

const (
	// ClusterConditionEqual matches a condition whose status is the value.
	ClusterConditionEqual ClusterConditionOperator = "Equal"
	// ClusterConditionNotEqual matches a condition whose status is another
	// value.
	ClusterConditionNotEqual ClusterConditionOperator = "NotEqual"
)

// RemedyAction is an action taken on a cluster.
// +kubebuilder:validation:Enum=TrafficControl
type RemedyAction string

// TrafficControl keeps multi-cluster traffic away from the cluster: its
// endpoints are not dispatched to the consumers of a MultiClusterService or
// a ServiceImport.
const TrafficControl RemedyAction = "TrafficControl"

// RemedyList is a list of Remedy.
//
// +kubebuilder:object:root=true
type RemedyList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	Items           []Remedy `json:"items"`
}
