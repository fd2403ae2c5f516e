// Package events holds the reasons of the events Karmada records, with the
// objects each is recorded on, and the helpers that record them. The reason
// strings are Karmada's: dashboards and scripts match on them.
//
// Events go through client-go's recorder (aggregated, rate-limited per
// object, dropped rather than blocking when the API server is slow). They
// are recorded when something changed, not on every reconcile that found
// nothing to do.
package events

import (
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/tools/record"

	workv1alpha2 "github.com/karmada-go/karmada/api/work/v1alpha2"
)

// Reasons recorded on Clusters.
const (
	CreateExecutionSpaceSucceed = "CreateExecutionSpaceSucceed"
	CreateExecutionSpaceFailed  = "CreateExecutionSpaceFailed"
	RemoveExecutionSpaceSucceed = "RemoveExecutionSpaceSucceed"
	RemoveExecutionSpaceFailed  = "RemoveExecutionSpaceFailed"
	TaintClusterSucceed         = "TaintClusterSucceed"
	TaintClusterFailed          = "TaintClusterFailed"
	// OrphanedObjects (ours): the member holds objects marked as Karmada's
	// whose Work no longer exists.
	OrphanedObjects = "OrphanedObjects"
	// TokenRenewed / TokenRenewFailed (ours): the member token in the
	// Cluster's credentials Secret was renewed, or could not be.
	TokenRenewed     = "TokenRenewed"
	TokenRenewFailed = "TokenRenewFailed"
	// SyncImpersonationConfigSucceed / SyncImpersonationConfigFailed: the
	// member's impersonator was given the subjects allowed clusters/proxy
	// (unifiedAuth), or could not be.
	SyncImpersonationConfigSucceed = "SyncImpersonationConfigSucceed"
	SyncImpersonationConfigFailed  = "SyncImpersonationConfigFailed"
)

// Reasons recorded on Works.
const (
	SyncSucceed            = "SyncSucceed"
	SyncFailed             = "SyncFailed"
	WorkDispatching        = "WorkDispatching"
	ReflectStatusSucceed   = "ReflectStatusSucceed"
	ReflectStatusFailed    = "ReflectStatusFailed"
	InterpretHealthSucceed = "InterpretHealthSucceed"
	InterpretHealthFailed  = "InterpretHealthFailed"
	// ReleaseNamespace (ours; Karmada has none): a namespace Karmada made in
	// a member is left there, not deleted, because it holds the member's
	// own objects.
	ReleaseNamespace = "ReleaseNamespace"
	// ReleaseWork (ours): a deleted Work of a pull-mode cluster whose agent
	// has been silent past --pull-work-release-grace is let go; its copies
	// stay in the member.
	ReleaseWork = "ReleaseWork"
)

// Reasons recorded on bindings and on their templates.
const (
	ScheduleBindingSucceed = "ScheduleBindingSucceed"
	ScheduleBindingFailed  = "ScheduleBindingFailed"
	SyncWorkSucceed        = "SyncWorkSucceed"
	SyncWorkFailed         = "SyncWorkFailed"
	AggregateStatusSucceed = "AggregateStatusSucceed"
	AggregateStatusFailed  = "AggregateStatusFailed"
	// InterpretFailed (ours): a customization or interpreter webhook
	// failed; the message names it and the operation.
	InterpretFailed = "InterpretFailed"
	// EstimatorFallback (ours): a member's karmada-scheduler-estimator did
	// not answer in time; the binding was placed by the general estimator
	// for that cluster.
	EstimatorFallback = "EstimatorFallback"
	// CleanupWorkFailed (on the binding): a Work of a cluster the binding
	// left could not be deleted.
	CleanupWorkFailed = "CleanupWorkFailed"
	// karmada-descheduler's.
	DescheduleBindingSucceed = "DescheduleBindingSucceed"
	DescheduleBindingFailed  = "DescheduleBindingFailed"
)

// Reasons recorded on templates.
const (
	ApplyPolicySucceed = "ApplyPolicySucceed"
	ApplyPolicyFailed  = "ApplyPolicyFailed"
	GetReplicasSucceed = "GetReplicasSucceed"
	GetReplicasFailed  = "GetReplicasFailed"
	// GetComponentsSucceed / GetComponentsFailed: a multi-component
	// workload's components read by the interpreter (Karmada's).
	GetComponentsSucceed       = "GetComponentsSucceed"
	GetComponentsFailed        = "GetComponentsFailed"
	ApplyOverridePolicySucceed = "ApplyOverridePolicySucceed"
	ApplyOverridePolicyFailed  = "ApplyOverridePolicyFailed"
	GetDependenciesSucceed     = "GetDependenciesSucceed"
	GetDependenciesFailed      = "GetDependenciesFailed"
	// SyncScheduleResultToDependenciesSucceed / Failed (on the workload's
	// binding): its placement copied to its dependencies' bindings.
	SyncScheduleResultToDependenciesSucceed = "SyncScheduleResultToDependenciesSucceed"
	SyncScheduleResultToDependenciesFailed  = "SyncScheduleResultToDependenciesFailed"
	// DependencyPolicyConflict: the workloads needing one dependency
	// disagree on conflictResolution or preserveResourcesOnDeletion (on the
	// dependency's attached binding, as Karmada records it), or a
	// dependency with a policy of its own has other settings than a
	// workload's (ours, on the workload's binding and template).
	DependencyPolicyConflict = "DependencyPolicyConflict"
	PreemptPolicySucceed     = "PreemptPolicySucceed"
)

// Reasons recorded on FederatedResourceQuotas (Karmada's; the sync and
// status controllers record SyncWorkSucceed/Failed and
// AggregateStatusSucceed/Failed on the quota).
// Reasons of the multi-cluster services controllers (ours: Karmada records
// none there).
const (
	// EndpointSliceImportFailed, on a collected Work: its EndpointSlice is
	// not imported (malformed, or of a Service the cluster does not export).
	EndpointSliceImportFailed = "EndpointSliceImportFailed"
	// DeriveServiceFailed, on a ServiceImport: its derived Service could
	// not be written (a Service of that name that Karmada did not create).
	DeriveServiceFailed = "DeriveServiceFailed"
)

// Reasons recorded on CronFederatedHPAs (Karmada's).
const (
	// ScaleFailed: a rule's execution could not scale its target.
	ScaleFailed = "ScaleFailed"
	// UpdateStatusFailed: an execution's history could not be recorded.
	UpdateStatusFailed = "UpdateStatusFailed"
	// StartRuleFailed: a rule's schedule or time zone cannot be read.
	StartRuleFailed = "StartRuleFailed"
	// UpdateCronFederatedHPAFailed: the rules' next execution times could
	// not be recorded.
	UpdateCronFederatedHPAFailed = "UpdateCronFederatedHPAFailed"
)

// Reasons recorded on FederatedHPAs (Karmada's, most of them
// kube-controller-manager's HPA's).
const (
	FailedGetScale               = "FailedGetScale"
	FailedGetScaleTargetRef      = "FailedGetScaleTargetRef"
	FailedGetBindings            = "FailedGetBindings"
	FailedGetTargetClusters      = "FailedGetTargetClusters"
	FailedComputeMetricsReplicas = "FailedComputeMetricsReplicas"
	FailedGetResourceMetric      = "FailedGetResourceMetric"
	FailedGetContainerResource   = "FailedGetContainerResourceMetric"
	InvalidMetricSourceType      = "InvalidMetricSourceType"
	FailedRescale                = "FailedRescale"
	SuccessfulRescale            = "SuccessfulRescale"
)

const (
	CollectOverallStatusSucceed = "CollectOverallStatusSucceed"
	CollectOverallStatusFailed  = "CollectOverallStatusFailed"
)

// The messages of WorkDispatching.
const (
	MessageDispatching          = "Work is being dispatched to member clusters."
	MessageDispatchingSuspended = "Work dispatching is in a suspended state."
)

// Event sources, shown as "From" by kubectl describe.
const (
	SourceDetector                = "resource-detector"
	SourceOrphanSweep             = "orphan-sweep"
	SourceScheduler               = "karmada-scheduler"
	SourceDescheduler             = "karmada-descheduler"
	SourceBinding                 = "binding-controller"
	SourceBindingStatus           = "resource-binding-status-controller"
	SourceDependenciesDistributor = "dependencies-distributor"
	SourceExecution               = "execution-controller"
	SourceWorkStatus              = "work-status-controller"
	SourceCluster                 = "cluster-controller"
	SourceTokenRenewal            = "token-renewal-controller"
	SourceUnifiedAuth             = "unified-auth-controller"
	// SourceAgentCSRApproving is Karmada's name for it.
	SourceAgentCSRApproving = "agent-csr-approving-controller"
	// SourceClusterTaintPolicy is Karmada's name for it.
	SourceClusterTaintPolicy  = "cluster-taint-policy-controller"
	SourceTaintManager        = "taint-manager"
	SourceGracefulEviction    = "graceful-eviction-controller"
	SourceApplicationFailover = "application-failover-controller"
	SourceEndpointSlice       = "endpointslice-controller"
	SourceServiceImport       = "service-import-controller"
	SourceMultiClusterService = "multiclusterservice-controller"
	SourceCronFederatedHPA    = "cronfederatedhpa-controller"
	// SourceFederatedHPA is Karmada's name for it.
	SourceFederatedHPA = "federatedHPA-controller"
)

// Normal records a Normal event on obj; a nil recorder records nothing.
func Normal(r record.EventRecorder, obj runtime.Object, reason, format string, args ...any) {
	if r != nil && obj != nil {
		r.Eventf(obj, corev1.EventTypeNormal, reason, format, args...)
	}
}

// Warning records a Warning event on obj; a nil recorder records nothing.
func Warning(r record.EventRecorder, obj runtime.Object, reason, format string, args ...any) {
	if r != nil && obj != nil {
		r.Eventf(obj, corev1.EventTypeWarning, reason, format, args...)
	}
}

// Template is a reference to a binding's resource template, for recording
// events on it; nil when the reference is unusable.
func Template(ref workv1alpha2.ObjectReference) *corev1.ObjectReference {
	gv, err := schema.ParseGroupVersion(ref.APIVersion)
	if err != nil || ref.Name == "" {
		return nil
	}
	return &corev1.ObjectReference{APIVersion: gv.String(), Kind: ref.Kind, Namespace: ref.Namespace, Name: ref.Name, UID: ref.UID}
}

// OnBinding records an event on a binding and the same on its template, as
// Karmada records scheduling, sync and status events on both.
func OnBinding(r record.EventRecorder, binding runtime.Object, ref workv1alpha2.ObjectReference, eventType, reason, format string, args ...any) {
	if r == nil {
		return
	}
	r.Eventf(binding, eventType, reason, format, args...)
	if t := Template(ref); t != nil {
		r.Eventf(t, eventType, reason, format, args...)
	}
}

// Reasons of evictions, recorded on bindings and their templates.
const (
	EvictWorkloadFromClusterSucceed = "EvictWorkloadFromClusterSucceed"
	EvictWorkloadFromClusterFailed  = "EvictWorkloadFromClusterFailed"
	GracefulEvictionCompleted       = "GracefulEvictionCompleted"
	EvictionBlocked                 = "EvictionBlocked"
)

// BindingWords names a binding as Karmada's event messages do:
// "ResourceBinding(ns/name)" or "ClusterResourceBinding(name)".
func BindingWords(obj metav1.Object) string {
	if obj.GetNamespace() == "" {
		return "ClusterResourceBinding(" + obj.GetName() + ")"
	}
	return "ResourceBinding(" + obj.GetNamespace() + "/" + obj.GetName() + ")"
}
