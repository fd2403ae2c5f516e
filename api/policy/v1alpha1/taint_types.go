package v1alpha1

import (
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// ClusterTaintPolicy adds taints to, and removes them from, the Clusters
// it targets when their status conditions match. Adding is decided before
// removing; deleting the policy leaves the taints it added in place.
//
// +genclient
// +genclient:nonNamespaced
// +kubebuilder:object:root=true
// +kubebuilder:resource:scope=Cluster,categories=karmada-io
type ClusterTaintPolicy struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	// Spec says which clusters, on which conditions, get which taints.
	// +required
	Spec ClusterTaintPolicySpec `json:"spec"`
}

// ClusterTaintPolicySpec is what a ClusterTaintPolicy does.
type ClusterTaintPolicySpec struct {
	// TargetClusters are the clusters the policy looks at (every cluster
	// when unset). A cluster that stops matching keeps its taints.
	// +optional
	TargetClusters *ClusterAffinity `json:"targetClusters,omitempty"`

	// AddOnConditions, all matching, add Taints to a target cluster. Empty:
	// the policy adds nothing.
	// +optional
	AddOnConditions []MatchCondition `json:"addOnConditions,omitempty"`

	// RemoveOnConditions, all matching, remove Taints from a target
	// cluster. Empty: the policy removes nothing.
	// +optional
	RemoveOnConditions []MatchCondition `json:"removeOnConditions,omitempty"`

	// Taints are added or removed; the latest list is the one applied at
	// the next match.
	// +required
	Taints []Taint `json:"taints"`
}

// MatchCondition matches one status condition of a cluster: its status is
// (In) or is not (NotIn) one of StatusValues. A condition the cluster does
// not have has no status, which only NotIn matches.
type MatchCondition struct {
	// ConditionType is the type of a Cluster status condition (Ready, …).
	// +required
	ConditionType string `json:"conditionType"`

	// Operator is In or NotIn (the webhook refuses others).
	// +required
	Operator MatchConditionOperator `json:"operator"`

	// StatusValues are condition statuses: True, False, Unknown.
	// +required
	StatusValues []metav1.ConditionStatus `json:"statusValues"`
}

// MatchConditionOperator relates a condition's status to StatusValues.
type MatchConditionOperator string

// Operators of a MatchCondition.
const (
	MatchConditionOpIn    MatchConditionOperator = "In"
	MatchConditionOpNotIn MatchConditionOperator = "NotIn"
)

// Taint is a taint a ClusterTaintPolicy puts on a cluster.
type Taint struct {
	// Key of the taint.
	// +required
	Key string `json:"key"`

	// Value of the taint.
	// +optional
	Value string `json:"value,omitempty"`

	// Effect of the taint: NoSchedule, or NoExecute where the webhook
	// allows it (--allow-no-execute-taint-policy).
	// +required
	Effect corev1.TaintEffect `json:"effect"`
}

// ClusterTaintPolicyList is a list of ClusterTaintPolicy.
//
// +kubebuilder:object:root=true
type ClusterTaintPolicyList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	Items           []ClusterTaintPolicy `json:"items"`
}
