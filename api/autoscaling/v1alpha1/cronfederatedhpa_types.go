package v1alpha1

import (
	autoscalingv2 "k8s.io/api/autoscaling/v2"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// CronFederatedHPA scales a resource template (anything with a scale
// subresource) or changes a FederatedHPA's bounds at the times its rules
// name.
//
// +genclient
// +kubebuilder:object:root=true
// +kubebuilder:subresource:status
// +kubebuilder:resource:shortName=cronfhpa,categories={karmada-io}
// +kubebuilder:printcolumn:name="REFERENCE-KIND",type=string,JSONPath=`.spec.scaleTargetRef.kind`
// +kubebuilder:printcolumn:name="REFERENCE-NAME",type=string,JSONPath=`.spec.scaleTargetRef.name`
// +kubebuilder:printcolumn:name="AGE",type=date,JSONPath=`.metadata.creationTimestamp`
type CronFederatedHPA struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	// Spec is what it scales, and when.
	Spec CronFederatedHPASpec `json:"spec"`

	// Status records each rule's executions.
	// +optional
	Status CronFederatedHPAStatus `json:"status,omitempty"`
}

// CronFederatedHPASpec is a CronFederatedHPA's schedules and target.
type CronFederatedHPASpec struct {
	// ScaleTargetRef is the template (with a scale subresource) or the
	// FederatedHPA the rules act on.
	ScaleTargetRef autoscalingv2.CrossVersionObjectReference `json:"scaleTargetRef"`

	// Rules are the schedules and what each does when it fires.
	Rules []CronFederatedHPARule `json:"rules"`
}

// CronFederatedHPARule is one schedule and its action.
type CronFederatedHPARule struct {
	// Name identifies the rule, and its execution history: unique within
	// the CronFederatedHPA; renaming a rule starts a new history.
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=32
	Name string `json:"name"`

	// Schedule is a cron expression, in the syntax of CronJobs.
	Schedule string `json:"schedule"`

	// TargetReplicas is the replicas to set on a target that is not a
	// FederatedHPA.
	// +optional
	TargetReplicas *int32 `json:"targetReplicas,omitempty"`

	// TargetMinReplicas is the minReplicas to set on a FederatedHPA
	// target (unchanged when unset).
	// +optional
	TargetMinReplicas *int32 `json:"targetMinReplicas,omitempty"`

	// TargetMaxReplicas is the maxReplicas to set on a FederatedHPA
	// target (unchanged when unset).
	// +optional
	TargetMaxReplicas *int32 `json:"targetMaxReplicas,omitempty"`

	// Suspend stops the rule's next executions.
	// +kubebuilder:default=false
	// +optional
	Suspend *bool `json:"suspend,omitempty"`

	// TimeZone of the schedule, a name of the tz database; the
	// controller manager's own when unset.
	// +optional
	TimeZone *string `json:"timeZone,omitempty"`

	// SuccessfulHistoryLimit is how many successful executions the rule's
	// history keeps.
	// +kubebuilder:default=3
	// +kubebuilder:validation:Minimum=1
	// +kubebuilder:validation:Maximum=32
	// +optional
	SuccessfulHistoryLimit *int32 `json:"successfulHistoryLimit,omitempty"`

	// FailedHistoryLimit is how many failed executions the rule's history
	// keeps.
	// +kubebuilder:default=3
	// +kubebuilder:validation:Minimum=0
	// +kubebuilder:validation:Maximum=32
	// +optional
	FailedHistoryLimit *int32 `json:"failedHistoryLimit,omitempty"`
}

// CronFederatedHPAStatus is the execution history of each rule.
type CronFederatedHPAStatus struct {
	// ExecutionHistories has one entry per rule.
	// +optional
	ExecutionHistories []ExecutionHistory `json:"executionHistories,omitempty"`
}

// ExecutionHistory is one rule's next and past executions.
type ExecutionHistory struct {
	// RuleName names the rule.
	RuleName string `json:"ruleName"`

	// NextExecutionTime is when the rule fires next.
	// +optional
	NextExecutionTime *metav1.Time `json:"nextExecutionTime,omitempty"`

	// SuccessfulExecutions are the latest successful executions, newest
	// first.
	// +optional
	SuccessfulExecutions []SuccessfulExecution `json:"successfulExecutions,omitempty"`

	// FailedExecutions are the latest failed executions, newest first.
	// +optional
	FailedExecutions []FailedExecution `json:"failedExecutions,omitempty"`
}

// SuccessfulExecution is one execution that did what its rule says.
type SuccessfulExecution struct {
	// ScheduleTime is when the rule was due.
	ScheduleTime *metav1.Time `json:"scheduleTime"`

	// ExecutionTime is when it ran.
	ExecutionTime *metav1.Time `json:"executionTime"`

	// AppliedReplicas is the replicas set on the target.
	// +optional
	AppliedReplicas *int32 `json:"appliedReplicas,omitempty"`

	// AppliedMaxReplicas is the maxReplicas set on the FederatedHPA.
	// +optional
	AppliedMaxReplicas *int32 `json:"appliedMaxReplicas,omitempty"`

	// AppliedMinReplicas is the minReplicas set on the FederatedHPA.
	// +optional
	AppliedMinReplicas *int32 `json:"appliedMinReplicas,omitempty"`
}

// FailedExecution is one execution that could not do what its rule says.
type FailedExecution struct {
	// ScheduleTime is when the rule was due.
	ScheduleTime *metav1.Time `json:"scheduleTime"`

	// ExecutionTime is when it ran.
	ExecutionTime *metav1.Time `json:"executionTime"`

	// Message says why it failed.
	Message string `json:"message"`
}

// CronFederatedHPAList is a list of CronFederatedHPAs.
//
// +kubebuilder:object:root=true
type CronFederatedHPAList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	Items           []CronFederatedHPA `json:"items"`
}
