package v1alpha2

import (
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"

	policyv1alpha1 "github.com/karmada-go/karmada/api/policy/v1alpha1"
	workv1alpha1 "github.com/karmada-go/karmada/api/work/v1alpha1"
)

// ResourceBinding ties a namespaced resource template to the clusters it is
// scheduled to, and aggregates its state there.
//
// +genclient
// +kubebuilder:object:root=true
// +kubebuilder:storageversion
// +kubebuilder:resource:shortName=rb,categories=karmada-io
// +kubebuilder:subresource:status
// +kubebuilder:printcolumn:name="SCHEDULED",type=string,JSONPath=`.status.conditions[?(@.type=="Scheduled")].status`
// +kubebuilder:printcolumn:name="FULLYAPPLIED",type=string,JSONPath=`.status.conditions[?(@.type=="FullyApplied")].status`
// +kubebuilder:printcolumn:name="AGE",type=date,JSONPath=`.metadata.creationTimestamp`
type ResourceBinding struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	// Spec is the template, its placement and its scheduling result.
	// +required
	Spec ResourceBindingSpec `json:"spec"`

	// Status is the scheduling and aggregated state.
	// +optional
	Status ResourceBindingStatus `json:"status,omitempty"`
}

// ClusterResourceBinding ties a cluster-scoped resource template to the
// clusters it is scheduled to.
//
// +genclient
// +genclient:nonNamespaced
// +kubebuilder:object:root=true
// +kubebuilder:storageversion
// +kubebuilder:resource:scope=Cluster,shortName=crb,categories=karmada-io
// +kubebuilder:subresource:status
// +kubebuilder:printcolumn:name="SCHEDULED",type=string,JSONPath=`.status.conditions[?(@.type=="Scheduled")].status`
// +kubebuilder:printcolumn:name="FULLYAPPLIED",type=string,JSONPath=`.status.conditions[?(@.type=="FullyApplied")].status`
// +kubebuilder:printcolumn:name="AGE",type=date,JSONPath=`.metadata.creationTimestamp`
type ClusterResourceBinding struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	// Spec is the template, its placement and its scheduling result.
	// +required
	Spec ResourceBindingSpec `json:"spec"`

	// Status is the scheduling and aggregated state.
	// +optional
	Status ResourceBindingStatus `json:"status,omitempty"`
}

// ResourceBindingSpec is the template, its placement and its scheduling result.
type ResourceBindingSpec struct {
	// Resource is the bound template.
	// +required
	Resource ObjectReference `json:"resource"`

	// PropagateDeps propagates the template's dependencies with it.
	// +optional
	PropagateDeps bool `json:"propagateDeps,omitempty"`

	// ReplicaRequirements is what one replica needs.
	// +optional
	ReplicaRequirements *ReplicaRequirements `json:"replicaRequirements,omitempty"`

	// Replicas of the template.
	// +optional
	Replicas int32 `json:"replicas,omitempty"`

	// Components describe templates made of several kinds of replicas.
	// +optional
	Components []Component `json:"components,omitempty"`

	// Clusters are the scheduling result.
	// +optional
	Clusters []TargetCluster `json:"clusters,omitempty"`

	// Placement is copied from the policy.
	// +optional
	Placement *policyv1alpha1.Placement `json:"placement,omitempty"`

	// GracefulEvictionTasks are evictions waiting for the workload to be
	// healthy elsewhere.
	// +optional
	GracefulEvictionTasks []GracefulEvictionTask `json:"gracefulEvictionTasks,omitempty"`

	// RequiredBy lists the bindings that depend on this one.
	// +optional
	RequiredBy []BindingSnapshot `json:"requiredBy,omitempty"`

	// SchedulerName is the scheduler responsible for the binding.
	// +optional
	SchedulerName string `json:"schedulerName,omitempty"`

	// Failover is copied from the policy.
	// +optional
	Failover *policyv1alpha1.FailoverBehavior `json:"failover,omitempty"`

	// ConflictResolution is copied from the policy.
	// +kubebuilder:validation:Enum=Abort;Overwrite
	// +kubebuilder:default=Abort
	// +optional
	ConflictResolution policyv1alpha1.ConflictResolution `json:"conflictResolution,omitempty"`

	// RescheduleTriggeredAt asks for a new scheduling when later than the last.
	// +optional
	RescheduleTriggeredAt *metav1.Time `json:"rescheduleTriggeredAt,omitempty"`

	// Suspension pauses scheduling or dispatching.
	// +optional
	Suspension *Suspension `json:"suspension,omitempty"`

	// PreserveResourcesOnDeletion keeps member copies on deletion.
	// +optional
	PreserveResourcesOnDeletion *bool `json:"preserveResourcesOnDeletion,omitempty"`

	// SchedulePriority orders the binding in the scheduling queue.
	// +optional
	SchedulePriority *SchedulePriority `json:"schedulePriority,omitempty"`

	// WorkloadAffinityGroups are the affinity groups of the workload.
	// +optional
	WorkloadAffinityGroups *WorkloadAffinityGroups `json:"workloadAffinityGroups,omitempty"`
}

// ObjectReference names the bound template.
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
	// UID of the template.
	// +optional
	UID types.UID `json:"uid,omitempty"`
	// ResourceVersion of the template last bound.
	// +optional
	ResourceVersion string `json:"resourceVersion,omitempty"`
}

// ReplicaRequirements is what one replica needs.
type ReplicaRequirements struct {
	// NodeClaim is the node constraints of a replica.
	// +optional
	NodeClaim *NodeClaim `json:"nodeClaim,omitempty"`
	// ResourceRequest is the resources one replica requests.
	// +optional
	ResourceRequest corev1.ResourceList `json:"resourceRequest,omitempty"`
	// Namespace of the replicas.
	// +optional
	Namespace string `json:"namespace,omitempty"`
	// PriorityClassName of the replicas.
	// +optional
	PriorityClassName string `json:"priorityClassName,omitempty"`
}

// ComponentReplicaRequirements is what one replica of a component needs.
type ComponentReplicaRequirements struct {
	// NodeClaim is the node constraints of a replica.
	// +optional
	NodeClaim *NodeClaim `json:"nodeClaim,omitempty"`
	// ResourceRequest is the resources one replica requests.
	// +optional
	ResourceRequest corev1.ResourceList `json:"resourceRequest,omitempty"`
	// PriorityClassName of the replicas.
	// +optional
	PriorityClassName string `json:"priorityClassName,omitempty"`
}

// NodeClaim is the node constraints of a replica.
type NodeClaim struct {
	// HardNodeAffinity is the required node affinity.
	// +optional
	HardNodeAffinity *corev1.NodeSelector `json:"hardNodeAffinity,omitempty"`
	// NodeSelector is the node selector.
	// +optional
	NodeSelector map[string]string `json:"nodeSelector,omitempty"`
	// Tolerations of node taints.
	// +optional
	Tolerations []corev1.Toleration `json:"tolerations,omitempty"`
}

// Component is one kind of replica of a multi-component template.
type Component struct {
	// Name of the component.
	// +kubebuilder:validation:MaxLength=32
	// +required
	Name string `json:"name"`
	// Replicas of the component.
	// +required
	Replicas int32 `json:"replicas"`
	// ReplicaRequirements is what one replica of the component needs.
	// +optional
	ReplicaRequirements *ComponentReplicaRequirements `json:"replicaRequirements,omitempty"`
}

// TargetCluster is one scheduled cluster and its share of replicas.
type TargetCluster struct {
	// Name of the cluster.
	// +required
	Name string `json:"name"`
	// Replicas assigned to the cluster.
	// +optional
	Replicas int32 `json:"replicas,omitempty"`
	// Components are the per-component replicas assigned to the cluster.
	// +optional
	Components []ComponentReplicas `json:"components,omitempty"`
}

// ComponentReplicas is the replicas of one component.
type ComponentReplicas struct {
	// Name of the component.
	// +required
	Name string `json:"name"`
	// Replicas of the component.
	// +required
	Replicas int32 `json:"replicas"`
}

// GracefulEvictionTask is an eviction that waits for the workload to be
// healthy elsewhere before removing it from a cluster.
type GracefulEvictionTask struct {
	// FromCluster is the cluster being evicted from.
	// +required
	FromCluster string `json:"fromCluster"`
	// PurgeMode of the evicted copy.
	// +kubebuilder:validation:Enum=Directly;Gracefully;Never
	// +optional
	PurgeMode policyv1alpha1.PurgeMode `json:"purgeMode,omitempty"`
	// Replicas in the evicted cluster.
	// +optional
	Replicas *int32 `json:"replicas,omitempty"`
	// Reason of the eviction, CamelCase.
	// +kubebuilder:validation:Pattern=`^[A-Za-z]([A-Za-z0-9_,:]*[A-Za-z0-9_])?$`
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=32
	// +required
	Reason string `json:"reason"`
	// Message explains the eviction.
	// +kubebuilder:validation:MaxLength=1024
	// +optional
	Message string `json:"message,omitempty"`
	// Producer is the controller that asked for the eviction.
	// +required
	Producer string `json:"producer"`
	// GracePeriodSeconds before the evicted copy is removed anyway.
	// +optional
	GracePeriodSeconds *int32 `json:"gracePeriodSeconds,omitempty"`
	// SuppressDeletion holds the removal until cleared.
	// +optional
	SuppressDeletion *bool `json:"suppressDeletion,omitempty"`
	// PreservedLabelState is state carried to the new copy.
	// +optional
	PreservedLabelState map[string]string `json:"preservedLabelState,omitempty"`
	// ClustersBeforeFailover are the clusters before the eviction.
	// +optional
	ClustersBeforeFailover []string `json:"clustersBeforeFailover,omitempty"`
	// CreationTimestamp of the task.
	// +optional
	CreationTimestamp *metav1.Time `json:"creationTimestamp,omitempty"`
}

// BindingSnapshot is a dependent binding and its clusters.
type BindingSnapshot struct {
	// Namespace of the binding.
	// +optional
	Namespace string `json:"namespace,omitempty"`
	// Name of the binding.
	// +required
	Name string `json:"name"`
	// Clusters of the binding.
	// +optional
	Clusters []TargetCluster `json:"clusters,omitempty"`
}

// Suspension pauses scheduling or dispatching of a binding.
type Suspension struct {
	policyv1alpha1.Suspension `json:",inline"`
	// Scheduling stops the binding from being scheduled.
	// +optional
	Scheduling *bool `json:"scheduling,omitempty"`
}

// SchedulePriority is the resolved scheduling priority.
type SchedulePriority struct {
	// Priority; higher is scheduled first.
	// +kubebuilder:default=0
	// +optional
	Priority int32 `json:"priority,omitempty"`
}

// WorkloadAffinityGroups are the resolved affinity groups of a workload.
type WorkloadAffinityGroups struct {
	// AffinityGroup the workload belongs to.
	// +optional
	AffinityGroup string `json:"affinityGroup,omitempty"`
	// AntiAffinityGroup the workload belongs to.
	// +optional
	AntiAffinityGroup string `json:"antiAffinityGroup,omitempty"`
}

// Condition types of a binding.
const (
	// Scheduled reports whether the binding has been scheduled.
	Scheduled = "Scheduled"
	// FullyApplied reports whether every Work of the binding was applied.
	FullyApplied = "FullyApplied"
)

// ResourceBindingStatus is the scheduling and aggregated state.
type ResourceBindingStatus struct {
	// SchedulerObservedGeneration is the generation the scheduler last acted on.
	// +optional
	SchedulerObservedGeneration int64 `json:"schedulerObservedGeneration,omitempty"`
	// SchedulerObservingAffinityName is the affinity group in use.
	// +optional
	SchedulerObservingAffinityName string `json:"schedulerObservingAffinityName,omitempty"`
	// LastScheduledTime is when the binding was last scheduled.
	// +optional
	LastScheduledTime *metav1.Time `json:"lastScheduledTime,omitempty"`
	// Conditions of the binding, such as Scheduled.
	// +optional
	Conditions []metav1.Condition `json:"conditions,omitempty"`
	// AggregatedStatus holds one item per cluster.
	// +optional
	AggregatedStatus []AggregatedStatusItem `json:"aggregatedStatus,omitempty"`
	// PlacementExplanation records how the last scheduling cycle judged the
	// clusters. It is this implementation's addition to Karmada's API
	// (clients that do not know it ignore it); `karmadactl
	// explain-placement` prints it.
	// +optional
	PlacementExplanation *PlacementExplanation `json:"placementExplanation,omitempty"`
}

// PlacementExplanation is the scheduler's account of one scheduling cycle.
type PlacementExplanation struct {
	// AffinityName is the clusterAffinities term the placement used, if any.
	// +optional
	AffinityName string `json:"affinityName,omitempty"`
	// Message is the outcome: success, or why no cluster fits.
	// +optional
	Message string `json:"message,omitempty"`
	// Clusters holds the clusters that were judged: the selected ones
	// first, then the feasible ones by score, then the filtered ones, at
	// most 64.
	// +optional
	Clusters []ClusterExplanation `json:"clusters,omitempty"`
	// Omitted counts the clusters left out of Clusters to bound its size.
	// +optional
	Omitted int32 `json:"omitted,omitempty"`
}

// ClusterExplanation is how one cluster fared.
type ClusterExplanation struct {
	// Name of the cluster.
	// +required
	Name string `json:"name"`
	// Feasible is true when every filter passed the cluster.
	// +optional
	Feasible bool `json:"feasible,omitempty"`
	// Plugin is the filter (or selection step) that ruled the cluster out.
	// +optional
	Plugin string `json:"plugin,omitempty"`
	// Reason is why the cluster was ruled out or not selected.
	// +optional
	Reason string `json:"reason,omitempty"`
	// Scores holds each score plugin's normalised score.
	// +optional
	Scores []PluginScore `json:"scores,omitempty"`
	// Score is the sum of Scores.
	// +optional
	Score int64 `json:"score,omitempty"`
	// AvailableReplicas is the estimate of how many replicas the cluster
	// can still run, when the workload has replicas.
	// +optional
	AvailableReplicas *int32 `json:"availableReplicas,omitempty"`
	// Replicas assigned to the cluster (0 when not selected).
	// +optional
	Replicas int32 `json:"replicas,omitempty"`
	// Selected is true when the binding was placed on the cluster.
	// +optional
	Selected bool `json:"selected,omitempty"`
}

// PluginScore is one score plugin's score for a cluster.
type PluginScore struct {
	// Plugin is the score plugin's name.
	// +required
	Plugin string `json:"plugin"`
	// Score is the normalised score in [0, 100].
	// +required
	Score int64 `json:"score"`
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
	// Health of the resource there.
	// +optional
	Health workv1alpha1.ResourceHealth `json:"health,omitempty"`
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
