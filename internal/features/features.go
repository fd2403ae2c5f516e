// Package features says which parts of a component are on: the feature
// gates of the Karmada components (--feature-gates), with Karmada's names,
// stages and defaults, and the lists of named parts a flag such as
// --controllers or --plugins turns on and off.
package features

import (
	"fmt"
	"sort"
	"strings"

	"k8s.io/apimachinery/pkg/util/runtime"
	"k8s.io/component-base/featuregate"
	logsapi "k8s.io/component-base/logs/api/v1"
	"k8s.io/klog/v2"
)

// Karmada's gates, by Karmada's names. Each binary that Karmada gives
// --feature-gates accepts every one of them (a script passing the same
// flag to every component keeps working); what a gate turns on is said
// where it is declared.
const (
	// Failover turns on cluster failover: the clusterTaintPolicy
	// controller (taints from cluster conditions) and the taint manager's
	// evictions. Beta, off.
	Failover featuregate.Feature = "Failover"
	// GracefulEviction makes evictions graceful: an evicted cluster's copy
	// stays (as a graceful eviction task on the binding) until the
	// workload is healthy where it was moved to, or the grace period ends.
	// Off, an eviction removes the copy at once. Beta, on.
	GracefulEviction featuregate.Feature = "GracefulEviction"
	// PropagateDeps honours propagateDeps on policies: the dependencies
	// distributor makes attached bindings for a workload's ConfigMaps,
	// Secrets, ServiceAccounts and PVCs. Off, propagateDeps is ignored.
	// Beta, on.
	PropagateDeps featuregate.Feature = "PropagateDeps"
	// CustomizedClusterResourceModeling has each Cluster's status count
	// its nodes into resource models (status.resourceSummary
	// .allocatableModelings), which the general estimator reads. Beta, on.
	CustomizedClusterResourceModeling featuregate.Feature = "CustomizedClusterResourceModeling"
	// PolicyPreemption lets a policy with preemption: Always take a
	// template from a policy of lower priority. Off, a claimed template
	// stays with its policy. Alpha, off.
	PolicyPreemption featuregate.Feature = "PropagationPolicyPreemption"
	// MultiClusterService turns on the MultiClusterService controllers
	// (multiclusterservice, and the collection of its providers'
	// EndpointSlices by serviceExport). Alpha, off.
	MultiClusterService featuregate.Feature = "MultiClusterService"
	// ResourceQuotaEstimate has the scheduler estimators count the
	// namespace's ResourceQuotas in a member as well as its nodes. Alpha,
	// off.
	ResourceQuotaEstimate featuregate.Feature = "ResourceQuotaEstimate"
	// StatefulFailoverInjection honours statePreservation on application
	// failover: the state read from the failed copy is injected as labels
	// into the copy that replaces it. Alpha, off.
	StatefulFailoverInjection featuregate.Feature = "StatefulFailoverInjection"
	// PriorityBasedScheduling orders the scheduler's queue by the
	// policies' schedulePriority (the value of the PriorityClass it names,
	// resolved into the binding's spec.schedulePriority by the detector).
	// Beta, on (Karmada v1.19).
	PriorityBasedScheduling featuregate.Feature = "PriorityBasedScheduling"
	// FederatedQuotaEnforcement enforces FederatedResourceQuotas' overall
	// limits: karmada-webhook refuses a binding's placement that would
	// take its namespace past one (the scheduler reports SchedulerError
	// with the denial). Alpha, off.
	FederatedQuotaEnforcement featuregate.Feature = "FederatedQuotaEnforcement"
	// MultiplePodTemplatesScheduling schedules multi-component workloads
	// (the interpreter's componentResource) by whole sets of components.
	// Off, a binding carries the workload's replicas and their one
	// requirement only. Alpha, off.
	MultiplePodTemplatesScheduling featuregate.Feature = "MultiplePodTemplatesScheduling"
	// ControllerPriorityQueue gives the controller manager's and the
	// agent's controllers controller-runtime's priority queue: what a
	// watch's initial list (a start's backlog) or a resync queues waits
	// behind fresh changes (internal/queues). Beta, on.
	ControllerPriorityQueue featuregate.Feature = "ControllerPriorityQueue"
	// WorkloadAffinity places workloads with, or away from, those of their
	// affinity group (the policy's placement.workloadAffinity: the detector
	// writes the template's groups into the binding, the scheduler's
	// WorkloadAffinity filter honours them). Alpha, off.
	WorkloadAffinity featuregate.Feature = "WorkloadAffinity"
	// The logging gates Karmada takes from Kubernetes, with Kubernetes'
	// stages and defaults: ContextualLogging (klog's contextual logging),
	// LoggingAlphaOptions and LoggingBetaOptions (they unlock logging
	// options of those stages; our binaries have none of them).
	ContextualLogging   = logsapi.ContextualLogging
	LoggingAlphaOptions = logsapi.LoggingAlphaOptions
	LoggingBetaOptions  = logsapi.LoggingBetaOptions
)

// Gate is the components' feature gate; --feature-gates sets it.
var Gate featuregate.MutableFeatureGate = featuregate.NewFeatureGate()

// Specs are Karmada's gates with their stages and defaults (Karmada
// v1.19's), but for those not implemented here, which are off.
var Specs = map[featuregate.Feature]featuregate.FeatureSpec{
	Failover:                          {Default: false, PreRelease: featuregate.Beta},
	GracefulEviction:                  {Default: true, PreRelease: featuregate.Beta},
	PropagateDeps:                     {Default: true, PreRelease: featuregate.Beta},
	CustomizedClusterResourceModeling: {Default: true, PreRelease: featuregate.Beta},
	PolicyPreemption:                  {Default: false, PreRelease: featuregate.Alpha},
	MultiClusterService:               {Default: false, PreRelease: featuregate.Alpha},
	ResourceQuotaEstimate:             {Default: false, PreRelease: featuregate.Alpha},
	StatefulFailoverInjection:         {Default: false, PreRelease: featuregate.Alpha},
	PriorityBasedScheduling:           {Default: true, PreRelease: featuregate.Beta},
	FederatedQuotaEnforcement:         {Default: false, PreRelease: featuregate.Alpha},
	MultiplePodTemplatesScheduling:    {Default: false, PreRelease: featuregate.Alpha},
	ControllerPriorityQueue:           {Default: true, PreRelease: featuregate.Beta},
	WorkloadAffinity:                  {Default: false, PreRelease: featuregate.Alpha},
	ContextualLogging:                 {Default: true, PreRelease: featuregate.Beta},
	LoggingAlphaOptions:               {Default: false, PreRelease: featuregate.Alpha},
	LoggingBetaOptions:                {Default: true, PreRelease: featuregate.Beta},
}

// NotImplemented are Karmada's gates whose feature this control plane does
// not have yet, with what they would turn on: turning one on is refused by
// Check, never ignored.
var NotImplemented = map[featuregate.Feature]string{}

func init() {
	runtime.Must(Gate.Add(Specs))
}

// Check refuses a gate that is on but not implemented, by name, and
// applies the gates that act on the process itself (contextual logging).
// Every binary with --feature-gates calls it once its flags are parsed.
func Check() error { return CheckGate(Gate) }

// CheckGate is Check for a gate holding Karmada's gates among others (the
// aggregated API servers' --feature-gates, Kubernetes' and Karmada's).
func CheckGate(gate featuregate.FeatureGate) error {
	var on []string
	for g, what := range NotImplemented {
		if gate.Enabled(g) {
			on = append(on, fmt.Sprintf("%s (%s)", g, what))
		}
	}
	if len(on) > 0 {
		sort.Strings(on)
		return fmt.Errorf("--feature-gates: %s: not implemented by this control plane yet; leave it off", strings.Join(on, ", "))
	}
	klog.EnableContextualLogging(gate.Enabled(ContextualLogging))
	return nil
}

// AddTo registers Karmada's gates (those Kubernetes does not have already)
// in another gate: the aggregated API servers' --feature-gates.
func AddTo(gate featuregate.MutableFeatureGate) error {
	known := gate.GetAll()
	add := map[featuregate.Feature]featuregate.FeatureSpec{}
	for g, spec := range Specs {
		if _, ok := known[g]; !ok {
			add[g] = spec
		}
	}
	return gate.Add(add)
}
