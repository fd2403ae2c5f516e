package v1alpha1

import (
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// PropagationPolicy selects namespaced resource templates in its own namespace
// and says where they are propagated.
//
// +genclient
// +kubebuilder:object:root=true
// +kubebuilder:resource:shortName=pp,categories=karmada-io
// +kubebuilder:printcolumn:name="CONFLICT-RESOLUTION",type=string,JSONPath=`.spec.conflictResolution`
// +kubebuilder:printcolumn:name="PRIORITY",type=string,JSONPath=`.spec.priority`
// +kubebuilder:printcolumn:name="AGE",type=date,JSONPath=`.metadata.creationTimestamp`
type PropagationPolicy struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	// Spec is the desired propagation.
	// +required
	Spec PropagationSpec `json:"spec"`
}

// ClusterPropagationPolicy selects namespaced or cluster-scoped resource
// templates in any namespace and says where they are propagated.
//
// +genclient
// +genclient:nonNamespaced
// +kubebuilder:object:root=true
// +kubebuilder:resource:scope=Cluster,shortName=cpp,categories=karmada-io
// +kubebuilder:printcolumn:name="CONFLICT-RESOLUTION",type=string,JSONPath=`.spec.conflictResolution`
// +kubebuilder:printcolumn:name="PRIORITY",type=string,JSONPath=`.spec.priority`
// +kubebuilder:printcolumn:name="AGE",type=date,JSONPath=`.metadata.creationTimestamp`
type ClusterPropagationPolicy struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	// Spec is the desired propagation.
	// +required
	Spec PropagationSpec `json:"spec"`
}

// PropagationSpec is the body of both propagation policy kinds.
type PropagationSpec struct {
	// ResourceSelectors pick the resource templates this policy applies to.
	// +kubebuilder:validation:MinItems=1
	// +required
	ResourceSelectors []ResourceSelector `json:"resourceSelectors"`

	// Association is deprecated; use PropagateDeps.
	// +optional
	Association bool `json:"association,omitempty"`

	// PropagateDeps propagates the resources a template depends on
	// (ConfigMaps, Secrets, ServiceAccounts...) along with it.
	// +optional
	PropagateDeps bool `json:"propagateDeps,omitempty"`

	// Placement says which clusters receive the templates and how replicas
	// are divided between them.
	// +optional
	Placement Placement `json:"placement,omitempty"`

	// Priority decides between policies that select the same template: the
	// higher wins.
	// +kubebuilder:default=0
	// +optional
	Priority *int32 `json:"priority,omitempty"`

	// Preemption lets this policy take templates already claimed by a policy
	// of lower priority.
	// +kubebuilder:default=Never
	// +optional
	Preemption PreemptionBehavior `json:"preemption,omitempty"`

	// DependentOverrides lists OverridePolicies that must exist before the
	// templates are propagated.
	// +optional
	DependentOverrides []string `json:"dependentOverrides,omitempty"`

	// SchedulerName is the scheduler that places the templates.
	// +kubebuilder:default="default-scheduler"
	// +optional
	SchedulerName string `json:"schedulerName,omitempty"`

	// Failover says how workloads move when a cluster or application fails.
	// +optional
	Failover *FailoverBehavior `json:"failover,omitempty"`

	// ConflictResolution says what to do when the resource already exists in
	// a member cluster: Abort leaves it and reports, Overwrite takes it over.
	// +kubebuilder:default=Abort
	// +optional
	ConflictResolution ConflictResolution `json:"conflictResolution,omitempty"`

	// ActivationPreference Lazy applies policy changes only when the template
	// itself changes.
	// +optional
	ActivationPreference ActivationPreference `json:"activationPreference,omitempty"`

	// Suspension pauses propagation.
	// +optional
	Suspension *Suspension `json:"suspension,omitempty"`

	// PreserveResourcesOnDeletion keeps member copies when the template is
	// deleted.
	// +optional
	PreserveResourcesOnDeletion *bool `json:"preserveResourcesOnDeletion,omitempty"`

	// SchedulePriority orders templates in the scheduling queue.
	// +optional
	SchedulePriority *SchedulePriority `json:"schedulePriority,omitempty"`
}

// ResourceSelector picks resource templates by type and, optionally, by
// namespace, name or labels.
type ResourceSelector struct {
	// APIVersion of the target resources.
	// +required
	APIVersion string `json:"apiVersion"`
	// Kind of the target resources.
	// +required
	Kind string `json:"kind"`
	// Namespace of the target resources; empty means the policy's own.
	// +optional
	Namespace string `json:"namespace,omitempty"`
	// Name of the target resource; empty means any.
	// +optional
	Name string `json:"name,omitempty"`
	// LabelSelector filters by labels; ignored when Name is set.
	// +optional
	LabelSelector *metav1.LabelSelector `json:"labelSelector,omitempty"`
}

// FieldSelector matches clusters by their provider, region or zone.
//
// +k8s:openapi-gen=true
type FieldSelector struct {
	// MatchExpressions are ANDed requirements on cluster fields.
	// +optional
	MatchExpressions []corev1.NodeSelectorRequirement `json:"matchExpressions,omitempty"`
}

// PreemptionBehavior says whether a policy may take claimed templates.
// +kubebuilder:validation:Enum=Always;Never
type PreemptionBehavior string

// Preemption behaviours.
const (
	PreemptAlways PreemptionBehavior = "Always"
	PreemptNever  PreemptionBehavior = "Never"
)

// ConflictResolution says what happens when a member already has the resource.
// +kubebuilder:validation:Enum=Abort;Overwrite
type ConflictResolution string

// Conflict resolutions.
const (
	ConflictOverwrite ConflictResolution = "Overwrite"
	ConflictAbort     ConflictResolution = "Abort"
)

// ActivationPreference says when policy changes take effect.
// +kubebuilder:validation:Enum=Lazy
type ActivationPreference string

// LazyActivation applies policy changes only when the template changes.
const LazyActivation ActivationPreference = "Lazy"

// Suspension pauses parts of propagation.
type Suspension struct {
	// Dispatching stops Works from reaching every member cluster.
	// +optional
	Dispatching *bool `json:"dispatching,omitempty"`
	// DispatchingOnClusters stops Works from reaching the named clusters.
	// +optional
	DispatchingOnClusters *SuspendClusters `json:"dispatchingOnClusters,omitempty"`
}

// SuspendClusters names clusters.
type SuspendClusters struct {
	// ClusterNames to suspend dispatching to.
	// +optional
	ClusterNames []string `json:"clusterNames,omitempty"`
}

// SchedulePriority takes the scheduling priority from a PriorityClass.
type SchedulePriority struct {
	// PriorityClassSource says where the class lives.
	// +kubebuilder:validation:Enum=KubePriorityClass
	// +required
	PriorityClassSource PriorityClassSource `json:"priorityClassSource"`
	// PriorityClassName is the name of the class.
	// +required
	PriorityClassName string `json:"priorityClassName"`
}

// PriorityClassSource says where a priority class is defined.
type PriorityClassSource string

// KubePriorityClass is the scheduling.k8s.io PriorityClass in the control plane.
const KubePriorityClass PriorityClassSource = "KubePriorityClass"

// Placement says which clusters receive a template and how.
type Placement struct {
	// ClusterAffinity restricts the candidate clusters.
	// +optional
	ClusterAffinity *ClusterAffinity `json:"clusterAffinity,omitempty"`

	// ClusterAffinities are ordered groups of candidate clusters; the first
	// group that can hold the workload is used.
	// +optional
	ClusterAffinities []ClusterAffinityTerm `json:"clusterAffinities,omitempty"`

	// ClusterTolerations let the template land on tainted clusters.
	// +optional
	ClusterTolerations []corev1.Toleration `json:"clusterTolerations,omitempty"`

	// SpreadConstraints spread the template over groups of clusters.
	// +optional
	SpreadConstraints []SpreadConstraint `json:"spreadConstraints,omitempty"`

	// ReplicaScheduling says how replicas are assigned to clusters.
	// +optional
	ReplicaScheduling *ReplicaSchedulingStrategy `json:"replicaScheduling,omitempty"`

	// WorkloadAffinity keeps related workloads together or apart.
	// +optional
	WorkloadAffinity *WorkloadAffinity `json:"workloadAffinity,omitempty"`
}

// ClusterAffinity selects clusters; all set criteria must hold.
//
// +k8s:openapi-gen=true
type ClusterAffinity struct {
	// LabelSelector matches cluster labels.
	// +optional
	LabelSelector *metav1.LabelSelector `json:"labelSelector,omitempty"`
	// FieldSelector matches provider, region and zone.
	// +optional
	FieldSelector *FieldSelector `json:"fieldSelector,omitempty"`
	// ClusterNames lists clusters by name.
	// +optional
	ClusterNames []string `json:"clusterNames,omitempty"`
	// Exclude lists clusters never selected.
	// +optional
	Exclude []string `json:"exclude,omitempty"`
}

// ClusterAffinityTerm is one named group of candidate clusters.
type ClusterAffinityTerm struct {
	// AffinityName identifies the group.
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=32
	// +required
	AffinityName string `json:"affinityName"`

	ClusterAffinity `json:",inline"`

	// OverflowAffinities take the replicas the group cannot hold.
	// +optional
	OverflowAffinities []OverflowAffinityTerm `json:"overflowAffinities,omitempty"`
}

// OverflowAffinityTerm is a named group that takes overflowing replicas.
type OverflowAffinityTerm struct {
	// AffinityName identifies the group.
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=32
	// +required
	AffinityName string `json:"affinityName"`

	ClusterAffinity `json:",inline"`
}

// SpreadFieldValue is a cluster field to spread over.
// +kubebuilder:validation:Enum=cluster;region;zone;provider
type SpreadFieldValue string

// Spread fields.
const (
	SpreadByFieldCluster  SpreadFieldValue = "cluster"
	SpreadByFieldRegion   SpreadFieldValue = "region"
	SpreadByFieldZone     SpreadFieldValue = "zone"
	SpreadByFieldProvider SpreadFieldValue = "provider"
)

// SpreadConstraint spreads a workload over groups of clusters.
type SpreadConstraint struct {
	// SpreadByField groups clusters by a field.
	// +optional
	SpreadByField SpreadFieldValue `json:"spreadByField,omitempty"`
	// SpreadByLabel groups clusters by the value of a label.
	// +optional
	SpreadByLabel string `json:"spreadByLabel,omitempty"`
	// MaxGroups is the most groups used.
	// +optional
	MaxGroups int `json:"maxGroups,omitempty"`
	// MinGroups is the fewest groups used.
	// +optional
	MinGroups int `json:"minGroups,omitempty"`
}

// ReplicaSchedulingType says whether replicas are copied or divided.
// +kubebuilder:validation:Enum=Duplicated;Divided
type ReplicaSchedulingType string

// Replica scheduling types.
const (
	ReplicaSchedulingTypeDuplicated ReplicaSchedulingType = "Duplicated"
	ReplicaSchedulingTypeDivided    ReplicaSchedulingType = "Divided"
)

// ReplicaDivisionPreference says how divided replicas are split.
// +kubebuilder:validation:Enum=Aggregated;Weighted
type ReplicaDivisionPreference string

// Replica division preferences.
const (
	ReplicaDivisionPreferenceAggregated ReplicaDivisionPreference = "Aggregated"
	ReplicaDivisionPreferenceWeighted   ReplicaDivisionPreference = "Weighted"
)

// ReplicaSchedulingStrategy says how replicas are assigned.
type ReplicaSchedulingStrategy struct {
	// ReplicaSchedulingType is Duplicated or Divided.
	// +kubebuilder:default=Divided
	// +optional
	ReplicaSchedulingType ReplicaSchedulingType `json:"replicaSchedulingType,omitempty"`
	// ReplicaDivisionPreference applies to Divided: Aggregated or Weighted.
	// +optional
	ReplicaDivisionPreference ReplicaDivisionPreference `json:"replicaDivisionPreference,omitempty"`
	// WeightPreference gives the weights of Weighted division.
	// +optional
	WeightPreference *ClusterPreferences `json:"weightPreference,omitempty"`
}

// DynamicWeightFactor is what dynamic weights are computed from.
// +kubebuilder:validation:Enum=AvailableReplicas
type DynamicWeightFactor string

// DynamicWeightByAvailableReplicas weighs clusters by how many replicas fit.
const DynamicWeightByAvailableReplicas DynamicWeightFactor = "AvailableReplicas"

// ClusterPreferences are the weights of Weighted division.
type ClusterPreferences struct {
	// StaticWeightList gives fixed weights to clusters.
	// +optional
	StaticWeightList []StaticClusterWeight `json:"staticWeightList,omitempty"`
	// DynamicWeight computes weights from the clusters' state.
	// +optional
	DynamicWeight DynamicWeightFactor `json:"dynamicWeight,omitempty"`
}

// StaticClusterWeight is the weight of the clusters an affinity selects.
type StaticClusterWeight struct {
	// TargetCluster selects the clusters.
	// +required
	TargetCluster ClusterAffinity `json:"targetCluster"`
	// Weight of those clusters.
	// +kubebuilder:validation:Minimum=1
	// +required
	Weight int64 `json:"weight"`
}

// WorkloadAffinity keeps workloads of a group together or apart.
type WorkloadAffinity struct {
	// Affinity co-locates workloads sharing the label value.
	// +optional
	Affinity *WorkloadAffinityTerm `json:"affinity,omitempty"`
	// AntiAffinity separates workloads sharing the label value.
	// +optional
	AntiAffinity *WorkloadAffinityTerm `json:"antiAffinity,omitempty"`
}

// WorkloadAffinityTerm groups workloads by a label key.
type WorkloadAffinityTerm struct {
	// GroupByLabelKey is the label whose value names the group.
	// +required
	GroupByLabelKey string `json:"groupByLabelKey"`
}

// FailoverBehavior says how workloads move on failure.
type FailoverBehavior struct {
	// Application failover: move the workload when it is unhealthy.
	// +optional
	Application *ApplicationFailoverBehavior `json:"application,omitempty"`
	// Cluster failover: move the workload when its cluster fails.
	// +optional
	Cluster *ClusterFailoverBehavior `json:"cluster,omitempty"`
}

// PurgeMode says how the old copy is removed after failover.
type PurgeMode string

// Purge modes.
const (
	PurgeModeDirectly   PurgeMode = "Directly"
	PurgeModeGracefully PurgeMode = "Gracefully"
	PurgeModeNever      PurgeMode = "Never"
)

// ApplicationFailoverBehavior moves unhealthy applications.
type ApplicationFailoverBehavior struct {
	// DecisionConditions say when an application is failed over.
	// +required
	DecisionConditions DecisionConditions `json:"decisionConditions"`
	// PurgeMode of the old copy.
	// +kubebuilder:validation:Enum=Directly;Gracefully;Never
	// +kubebuilder:default=Gracefully
	// +optional
	PurgeMode PurgeMode `json:"purgeMode,omitempty"`
	// GracePeriodSeconds to wait for the new copy before purging the old.
	// +optional
	GracePeriodSeconds *int32 `json:"gracePeriodSeconds,omitempty"`
	// StatePreservation carries state from the old copy to the new.
	// +optional
	StatePreservation *StatePreservation `json:"statePreservation,omitempty"`
}

// DecisionConditions say when to fail over.
type DecisionConditions struct {
	// TolerationSeconds an application may stay unhealthy.
	// +kubebuilder:default=300
	// +optional
	TolerationSeconds *int32 `json:"tolerationSeconds,omitempty"`
}

// ClusterFailoverBehavior moves workloads off failed clusters.
type ClusterFailoverBehavior struct {
	// PurgeMode of the old copy.
	// +kubebuilder:validation:Enum=Directly;Gracefully
	// +kubebuilder:default=Gracefully
	// +optional
	PurgeMode PurgeMode `json:"purgeMode,omitempty"`
	// StatePreservation carries state from the old copy to the new.
	// +optional
	StatePreservation *StatePreservation `json:"statePreservation,omitempty"`
}

// StatePreservation lists state to carry over.
type StatePreservation struct {
	// Rules extract state into labels of the new copy.
	// +required
	Rules []StatePreservationRule `json:"rules"`
}

// StatePreservationRule copies one value of the old copy's status into a label.
type StatePreservationRule struct {
	// AliasLabelName is the label that receives the value.
	// +required
	AliasLabelName string `json:"aliasLabelName"`
	// JSONPath selects the value in the old copy.
	// +required
	JSONPath string `json:"jsonPath"`
}

// PropagationPolicyList is a list of PropagationPolicies.
// +kubebuilder:object:root=true
type PropagationPolicyList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	Items           []PropagationPolicy `json:"items"`
}

// ClusterPropagationPolicyList is a list of ClusterPropagationPolicies.
// +kubebuilder:object:root=true
type ClusterPropagationPolicyList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	Items           []ClusterPropagationPolicy `json:"items"`
}
