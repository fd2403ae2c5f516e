package interpreter

import (
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	workv1alpha1 "github.com/karmada-go/karmada/api/work/v1alpha1"
)

// The fields of each workload's status that members report and that add up
// over clusters.
var (
	deploymentSummed  = []string{"replicas", "updatedReplicas", "readyReplicas", "availableReplicas", "unavailableReplicas"}
	statefulSetSummed = []string{"replicas", "readyReplicas", "currentReplicas", "updatedReplicas", "availableReplicas"}
	replicaSetSummed  = []string{"replicas", "readyReplicas", "availableReplicas", "fullyLabeledReplicas"}
	daemonSetSummed   = []string{"currentNumberScheduled", "numberMisscheduled", "desiredNumberScheduled", "numberReady",
		"updatedNumberScheduled", "numberAvailable", "numberUnavailable"}
	jobSummed = []string{"active", "succeeded", "failed"}
	pdbSummed = []string{"currentHealthy", "desiredHealthy", "expectedPods", "disruptionsAllowed"}
)

// reflected is what a workload's Work records of its status: the summed
// fields and observedGeneration.
func reflected(summed []string) []string {
	return append(append([]string(nil), summed...), "observedGeneration")
}

// builtin is the registry of the kinds Karmada knows natively.
var builtin = Registry{
	{Group: "apps", Kind: "Deployment"}: {
		GetReplicas:        podReplicas("spec", "template", "spec"),
		ReviseReplica:      reviseSpecReplicas,
		ReflectStatus:      pickStatus(reflected(deploymentSummed)...),
		AggregateStatus:    sumStatus(observedGeneration, deploymentSummed...),
		Health:             infallible(deploymentHealth),
		Dependencies:       podDependencies("spec", "template", "spec"),
		ObservesGeneration: true,
	},
	{Group: "apps", Kind: "StatefulSet"}: {
		GetReplicas:        podReplicas("spec", "template", "spec"),
		ReviseReplica:      reviseSpecReplicas,
		ReflectStatus:      pickStatus(reflected(statefulSetSummed)...),
		AggregateStatus:    sumStatus(observedGeneration, statefulSetSummed...),
		Health:             infallible(statefulSetHealth),
		Dependencies:       podDependencies("spec", "template", "spec"),
		ObservesGeneration: true,
	},
	{Group: "apps", Kind: "ReplicaSet"}: {
		GetReplicas:        podReplicas("spec", "template", "spec"),
		ReviseReplica:      reviseSpecReplicas,
		ReflectStatus:      pickStatus(reflected(replicaSetSummed)...),
		AggregateStatus:    sumStatus(observedGeneration, replicaSetSummed...),
		Health:             infallible(replicaSetHealth),
		Dependencies:       podDependencies("spec", "template", "spec"),
		ObservesGeneration: true,
	},
	{Group: "apps", Kind: "DaemonSet"}: {
		// Every node runs one: nothing to divide.
		ReflectStatus:      pickStatus(reflected(daemonSetSummed)...),
		AggregateStatus:    sumStatus(observedGeneration, daemonSetSummed...),
		Health:             infallible(daemonSetHealth),
		Dependencies:       podDependencies("spec", "template", "spec"),
		ObservesGeneration: true,
	},
	{Group: "batch", Kind: "Job"}: {
		GetReplicas:     jobReplicas,
		ReviseReplica:   reviseJob,
		AggregateStatus: unlessFinished(sumStatus(aggregateJob, jobSummed...)),
		Dependencies:    podDependencies("spec", "template", "spec"),
		Prune:           pruneJob,
	},
	{Kind: "Pod"}: {
		GetReplicas:     podReplicas("spec"),
		AggregateStatus: aggregatePod,
		Health:          infallible(podHealth),
		Dependencies:    podDependencies("spec"),
	},
	{Kind: "Service"}: {
		AggregateStatus: aggregateService,
		Health:          infallible(serviceHealth),
		Prune:           pruneService,
	},
	{Group: "networking.k8s.io", Kind: "Ingress"}: {
		AggregateStatus: aggregateIngress,
		Health:          infallible(ingressHealth),
	},
	{Group: "policy", Kind: "PodDisruptionBudget"}: {
		AggregateStatus: sumStatus(disruptedPods, pdbSummed...),
		Health:          infallible(pdbHealth),
	},
	{Kind: "PersistentVolumeClaim"}: {
		Health: infallible(pvcHealth),
	},
	{Kind: "ServiceAccount"}: {
		Prune: pruneServiceAccount,
	},
}

// infallible adapts a health judgement that cannot fail.
func infallible(f func(*unstructured.Unstructured) workv1alpha1.ResourceHealth) func(*unstructured.Unstructured) (workv1alpha1.ResourceHealth, error) {
	return func(obj *unstructured.Unstructured) (workv1alpha1.ResourceHealth, error) { return f(obj), nil }
}
