// Package metrics defines the Prometheus metrics our components export with
// Karmada's names, labels and bucket ranges (Karmada's metrics reference),
// so that dashboards and alerts written for Karmada work unchanged. Each
// component registers the set it owns (RegisterScheduler,
// RegisterControllerManager, RegisterAgent) into controller-runtime's
// registry, which its /metrics endpoint serves; every component exports
// karmada_build_info (RegisterBuildInfo).
//
// Label values that are known in advance (result, schedule_type, queue
// names) are created at registration, so a series exists, at zero, before
// the first event: an alert on a rate then has something to compare, and a
// dashboard shows 0 rather than "no data".
package metrics

import (
	"strings"
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"sigs.k8s.io/controller-runtime/pkg/metrics"

	"github.com/karmada-go/karmada/internal/version"
)

// Result label values.
const (
	Success = "success"
	Error   = "error"
)

// ResultOf is Error when err is set, else Success.
func ResultOf(err error) string {
	if err != nil {
		return Error
	}
	return Success
}

// Since is the time since start in seconds, for Observe.
func Since(start time.Time) float64 { return time.Since(start).Seconds() }

var results = []string{Success, Error}

// Build information, every component.
var buildInfo = prometheus.NewGaugeVec(prometheus.GaugeOpts{
	Name: "karmada_build_info",
	Help: "A metric with a constant '1' value labeled by the build of the component: version, commit, date, Go version, compiler and platform.",
}, []string{"git_version", "git_commit", "git_short_commit", "git_tree_state", "build_date", "go_version", "compiler", "platform"})

// Scheduler.
var (
	ScheduleAttempts = prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "karmada_scheduler_schedule_attempts_total",
		Help: "Number of attempts to schedule a ResourceBinding or ClusterResourceBinding, by result.",
	}, []string{"result", "schedule_type"})
	E2ESchedulingDuration = prometheus.NewHistogramVec(prometheus.HistogramOpts{
		Name:    "karmada_scheduler_e2e_scheduling_duration_seconds",
		Help:    "Scheduling latency of a binding, from the start of its scheduling cycle to its placement written.",
		Buckets: prometheus.ExponentialBuckets(0.001, 2, 16),
	}, []string{"result", "schedule_type"})
	SchedulingAlgorithmDuration = prometheus.NewHistogramVec(prometheus.HistogramOpts{
		Name:    "karmada_scheduler_scheduling_algorithm_duration_seconds",
		Help:    "Latency of each step of the scheduling algorithm (Filter, Score, Select, AssignReplicas).",
		Buckets: prometheus.ExponentialBuckets(0.001, 2, 16),
	}, []string{"schedule_step"})
	QueueIncomingBindings = prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "karmada_scheduler_queue_incoming_bindings_total",
		Help: "Number of bindings added to the scheduling queue, by event (Add, Update, Delete, ClusterChanged).",
	}, []string{"event"})
	FrameworkExtensionPointDuration = prometheus.NewHistogramVec(prometheus.HistogramOpts{
		Name:    "karmada_scheduler_framework_extension_point_duration_seconds",
		Help:    "Latency of running every plugin of an extension point for one cluster.",
		Buckets: prometheus.ExponentialBuckets(0.0001, 2, 16),
	}, []string{"extension_point", "result"})
	PluginExecutionDuration = prometheus.NewHistogramVec(prometheus.HistogramOpts{
		Name:    "karmada_scheduler_plugin_execution_duration_seconds",
		Help:    "Duration of one plugin at one extension point.",
		Buckets: prometheus.ExponentialBuckets(0.00001, 1.5, 20),
	}, []string{"plugin", "extension_point", "result"})
	// PendingBindings is read when scraped, from the sources the scheduler
	// adds (AddPending).
	PendingBindings = &pending{
		desc: prometheus.NewDesc("scheduler_pending_bindings",
			"Number of pending bindings, by queue: active (waiting for a worker), backoff (a plugin failed; retried with backoff), unschedulable (fits no cluster now).",
			[]string{"queue"}, nil),
		sources: map[string][]func() int{},
	}
)

// pending is scheduler_pending_bindings: each queue's count is the sum of
// the functions added for it, read at scrape time (nothing on the hot path).
type pending struct {
	desc    *prometheus.Desc
	mu      sync.Mutex
	sources map[string][]func() int
}

// AddPending adds a source of queue's count.
func (p *pending) AddPending(queue string, count func() int) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.sources[queue] = append(p.sources[queue], count)
}

func (p *pending) Describe(ch chan<- *prometheus.Desc) { ch <- p.desc }

func (p *pending) Collect(ch chan<- prometheus.Metric) {
	p.mu.Lock()
	defer p.mu.Unlock()
	for _, q := range []string{QueueActive, QueueBackoff, QueueUnschedulable} {
		n := 0
		for _, f := range p.sources[q] {
			n += f()
		}
		ch <- prometheus.MustNewConstMetric(p.desc, prometheus.GaugeValue, float64(n), q)
	}
}

// Scheduling steps and extension points, as Karmada names them.
const (
	StepFilter         = "Filter"
	StepScore          = "Score"
	StepSelect         = "Select"
	StepAssignReplicas = "AssignReplicas"
)

// Schedule types.
const (
	ResourceBinding        = "ResourceBinding"
	ClusterResourceBinding = "ClusterResourceBinding"
)

// Pending queues.
const (
	QueueActive        = "active"
	QueueBackoff       = "backoff"
	QueueUnschedulable = "unschedulable"
)

// Clusters (karmada-controller-manager for every cluster; karmada-agent for
// its own).
var (
	ClusterReadyState         = clusterGauge("cluster_ready_state", "State of the cluster: 1 when Ready, else 0.")
	ClusterNodeNumber         = clusterGauge("cluster_node_number", "Number of nodes in the cluster.")
	ClusterReadyNodeNumber    = clusterGauge("cluster_ready_node_number", "Number of ready nodes in the cluster.")
	ClusterMemoryAllocatable  = clusterGauge("cluster_memory_allocatable_bytes", "Allocatable memory of the cluster, in bytes.")
	ClusterCPUAllocatable     = clusterGauge("cluster_cpu_allocatable_number", "Allocatable CPU of the cluster, in cores.")
	ClusterPodAllocatable     = clusterGauge("cluster_pod_allocatable_number", "Number of pods the cluster can hold.")
	ClusterMemoryAllocated    = clusterGauge("cluster_memory_allocated_bytes", "Memory requested by the cluster's pods, in bytes.")
	ClusterCPUAllocated       = clusterGauge("cluster_cpu_allocated_number", "CPU requested by the cluster's pods, in cores.")
	ClusterPodAllocated       = clusterGauge("cluster_pod_allocated_number", "Number of pods scheduled in the cluster.")
	ClusterSyncStatusDuration = prometheus.NewHistogramVec(prometheus.HistogramOpts{
		Name:    "cluster_sync_status_duration_seconds",
		Help:    "Duration of one collection of a cluster's status (health probe, nodes, resource summary).",
		Buckets: prometheus.ExponentialBuckets(0.001, 2, 16),
	}, []string{"member_cluster"})
)

func clusterGauge(name, help string) *prometheus.GaugeVec {
	return prometheus.NewGaugeVec(prometheus.GaugeOpts{Name: name, Help: help}, []string{"member_cluster"})
}

// ClusterGauges are the per-cluster gauges, to forget a cluster that left.
var ClusterGauges = []*prometheus.GaugeVec{ClusterReadyState, ClusterNodeNumber, ClusterReadyNodeNumber,
	ClusterMemoryAllocatable, ClusterCPUAllocatable, ClusterPodAllocatable,
	ClusterMemoryAllocated, ClusterCPUAllocated, ClusterPodAllocated}

// ForgetCluster removes a cluster's series.
func ForgetCluster(name string) {
	for _, g := range ClusterGauges {
		g.DeleteLabelValues(name)
	}
	ClusterSyncStatusDuration.DeleteLabelValues(name)
}

// Propagation (karmada-controller-manager; the work metrics also karmada-agent).
var (
	ResourceMatchPolicyDuration = prometheus.NewHistogram(prometheus.HistogramOpts{
		Name:    "resource_match_policy_duration_seconds",
		Help:    "Duration of finding the PropagationPolicy or ClusterPropagationPolicy that matches a resource template.",
		Buckets: prometheus.ExponentialBuckets(0.001, 2, 12),
	})
	ResourceApplyPolicyDuration = prometheus.NewHistogramVec(prometheus.HistogramOpts{
		Name:    "resource_apply_policy_duration_seconds",
		Help:    "Duration of applying a policy to a resource template (its binding written).",
		Buckets: prometheus.ExponentialBuckets(0.001, 2, 12),
	}, []string{"result"})
	PolicyApplyAttempts = prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "karmada_policy_apply_attempts_total",
		Help: "Number of attempts to apply a PropagationPolicy or ClusterPropagationPolicy to a resource template, by result.",
	}, []string{"result"})
	PolicyPreemption = prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "policy_preemption_total",
		Help: "Number of resource templates taken over by a policy of higher priority, by result.",
	}, []string{"result"})
	BindingSyncWorkDuration = prometheus.NewHistogramVec(prometheus.HistogramOpts{
		Name:    "karmada_binding_sync_work_duration_seconds",
		Help:    "Duration of syncing the Works of a ResourceBinding or ClusterResourceBinding.",
		Buckets: prometheus.ExponentialBuckets(0.001, 2, 12),
	}, []string{"result"})
	CronFederatedHPADuration = prometheus.NewHistogramVec(prometheus.HistogramOpts{
		Name:    "karmada_cronfederatedhpa_process_duration_seconds",
		Help:    "Duration of processing a CronFederatedHPA, by result.",
		Buckets: prometheus.ExponentialBuckets(0.001, 2, 12),
	}, []string{"result"})
	CronFederatedHPARuleDuration = prometheus.NewHistogramVec(prometheus.HistogramOpts{
		Name:    "karmada_cronfederatedhpa_rule_process_duration_seconds",
		Help:    "Duration of running one CronFederatedHPA rule's execution, by result.",
		Buckets: prometheus.ExponentialBuckets(0.001, 2, 12),
	}, []string{"result"})
	FederatedHPADuration = prometheus.NewHistogramVec(prometheus.HistogramOpts{
		Name:    "karmada_federatedhpa_process_duration_seconds",
		Help:    "Duration of processing a FederatedHPA, by result.",
		Buckets: prometheus.ExponentialBuckets(0.001, 2, 12),
	}, []string{"result"})
	FederatedHPAPullMetricsDuration = prometheus.NewHistogramVec(prometheus.HistogramOpts{
		Name:    "karmada_federatedhpa_pull_metrics_duration_seconds",
		Help:    "Duration of pulling one metric of a FederatedHPA's pods, by result and metric type.",
		Buckets: prometheus.ExponentialBuckets(0.001, 2, 12),
	}, []string{"result", "metricType"})
	WorkSyncWorkloadDuration = prometheus.NewHistogramVec(prometheus.HistogramOpts{
		Name:    "karmada_work_sync_workload_duration_seconds",
		Help:    "Duration of syncing a Work's manifests to its member cluster.",
		Buckets: prometheus.ExponentialBuckets(0.001, 2, 12),
	}, []string{"result"})
	CreateResourceToCluster = prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "karmada_create_resource_to_cluster",
		Help: "Number of creations of a resource in a member cluster.",
	}, []string{"result", "apiversion", "kind", "member_cluster", "recreate"})
	UpdateResourceToCluster = prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "karmada_update_resource_to_cluster",
		Help: "Number of updates of a resource in a member cluster.",
	}, []string{"result", "apiversion", "kind", "member_cluster", "operationResult"})
	DeleteResourceFromCluster = prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "karmada_delete_resource_from_cluster",
		Help: "Number of deletions of a resource from a member cluster.",
	}, []string{"result", "apiversion", "kind", "member_cluster"})
)

// Eviction (karmada-controller-manager).
var (
	EvictionQueueDepth = prometheus.NewGaugeVec(prometheus.GaugeOpts{
		Name: "karmada_eviction_queue_depth",
		Help: "Number of bindings waiting in an eviction queue.",
	}, []string{"name"})
	EvictionKindTotal = prometheus.NewGaugeVec(prometheus.GaugeOpts{
		Name: "karmada_eviction_kind_total",
		Help: "Number of resources being evicted from a cluster, by kind.",
	}, []string{"member_cluster", "resource_kind"})
	EvictionProcessingLatency = prometheus.NewHistogramVec(prometheus.HistogramOpts{
		Name:    "karmada_eviction_processing_latency_seconds",
		Help:    "Latency of processing one eviction (the binding's placement changed).",
		Buckets: prometheus.ExponentialBuckets(0.001, 2, 16),
	}, []string{"name"})
	EvictionProcessingTotal = prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "karmada_eviction_processing_total",
		Help: "Number of evictions processed, by result.",
	}, []string{"name", "result"})
)

// karmada-scheduler-estimator, and the scheduler's use of it.
var (
	EstimatingRequests = prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "karmada_scheduler_estimator_estimating_request_total",
		Help: "Number of scheduler estimator requests, by result and type (the gRPC method).",
	}, []string{"result", "type"})
	EstimatingAlgorithmDuration = prometheus.NewHistogramVec(prometheus.HistogramOpts{
		Name:    "karmada_scheduler_estimator_estimating_algorithm_duration_seconds",
		Help:    "Duration of one estimate, by result, type (the gRPC method) and step.",
		Buckets: prometheus.ExponentialBuckets(0.0001, 2, 16),
	}, []string{"result", "type", "step"})
	// EstimatorFallbacks counts estimates the scheduler took from the
	// general estimator alone because a cluster's accurate estimator did
	// not answer in time (or at all).
	EstimatorFallbacks = prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "karmada_scheduler_estimator_fallback_total",
		Help: "Number of estimates the scheduler made without a member's scheduler estimator (unreachable, slow or failing), by member cluster and reason.",
	}, []string{"member_cluster", "reason"})
)

// EstimatorTypes are the estimator's methods, the type label's values.
var EstimatorTypes = []string{"MaxAvailableReplicas", "MaxAvailableComponentSets", "GetUnschedulableReplicas"}

// EvictionQueues are the controllers that evict, the name label's values:
// the taint manager evicts bindings from clusters with a NoExecute taint
// they do not tolerate.
var EvictionQueues = []string{"taint-manager"}

// Resource interpreter (every component that interprets workloads).
var InterpreterErrors = prometheus.NewCounterVec(prometheus.CounterOpts{
	Name: "karmada_resource_interpreter_errors_total",
	Help: "Number of resource interpreter operations that failed, by operation (the workload's own status or replicas could not be read).",
}, []string{"operation"})

// Interpreter operations, Karmada's names.
var InterpreterOperations = []string{"InterpretReplica", "InterpretStatus", "InterpretHealth", "AggregateStatus", "InterpretDependency", "Retain", "ReviseReplica"}

var (
	buildOnce, schedulerOnce, cmOnce, agentOnce, interpOnce, estimatorOnce sync.Once
)

// RegisterBuildInfo exports karmada_build_info.
func RegisterBuildInfo() {
	buildOnce.Do(func() {
		i := version.Get()
		short := i.GitCommit
		if len(short) > 7 {
			short = short[:7]
		}
		tree := "clean"
		if strings.HasSuffix(i.GitVersion, "-dirty") {
			tree = "dirty"
		}
		buildInfo.WithLabelValues(i.GitVersion, i.GitCommit, short, tree, i.BuildDate, i.GoVersion, i.Compiler, i.Platform).Set(1)
		metrics.Registry.MustRegister(buildInfo)
	})
}

// RegisterScheduler exports karmada-scheduler's metrics.
func RegisterScheduler() {
	RegisterBuildInfo()
	schedulerOnce.Do(func() {
		metrics.Registry.MustRegister(ScheduleAttempts, E2ESchedulingDuration, SchedulingAlgorithmDuration,
			QueueIncomingBindings, FrameworkExtensionPointDuration, PluginExecutionDuration, PendingBindings, EstimatorFallbacks)
		for _, r := range results {
			for _, t := range []string{ResourceBinding, ClusterResourceBinding} {
				ScheduleAttempts.WithLabelValues(r, t)
			}
		}
		for _, e := range []string{"Add", "Update", "Delete"} {
			QueueIncomingBindings.WithLabelValues(e)
		}
	})
}

// RegisterEstimator registers karmada-scheduler-estimator's metrics.
func RegisterEstimator() {
	RegisterBuildInfo()
	estimatorOnce.Do(func() {
		metrics.Registry.MustRegister(EstimatingRequests, EstimatingAlgorithmDuration)
		for _, r := range results {
			for _, t := range EstimatorTypes {
				EstimatingRequests.WithLabelValues(r, t)
			}
		}
	})
}

// RegisterControllerManager exports karmada-controller-manager's metrics.
func RegisterControllerManager() {
	RegisterBuildInfo()
	registerInterpreter()
	cmOnce.Do(func() {
		metrics.Registry.MustRegister(ResourceMatchPolicyDuration, ResourceApplyPolicyDuration,
			PolicyApplyAttempts, PolicyPreemption, BindingSyncWorkDuration, CronFederatedHPADuration, CronFederatedHPARuleDuration,
			FederatedHPADuration, FederatedHPAPullMetricsDuration,
			EvictionQueueDepth, EvictionKindTotal, EvictionProcessingLatency, EvictionProcessingTotal)
		registerClusters()
		registerWork()
		for _, r := range results {
			PolicyApplyAttempts.WithLabelValues(r)
			PolicyPreemption.WithLabelValues(r)
			CronFederatedHPADuration.WithLabelValues(r)
			CronFederatedHPARuleDuration.WithLabelValues(r)
			FederatedHPADuration.WithLabelValues(r)
			for _, q := range EvictionQueues {
				EvictionProcessingTotal.WithLabelValues(q, r)
			}
		}
		for _, q := range EvictionQueues {
			EvictionQueueDepth.WithLabelValues(q)
			EvictionProcessingLatency.WithLabelValues(q)
		}
	})
}

// RegisterAgent exports karmada-agent's metrics.
func RegisterAgent() {
	RegisterBuildInfo()
	registerInterpreter()
	agentOnce.Do(func() {
		registerClusters()
		registerWork()
	})
}

var clustersOnce, workOnce sync.Once

func registerClusters() {
	clustersOnce.Do(func() {
		metrics.Registry.MustRegister(ClusterSyncStatusDuration)
		for _, g := range ClusterGauges {
			metrics.Registry.MustRegister(g)
		}
	})
}

func registerWork() {
	workOnce.Do(func() {
		metrics.Registry.MustRegister(WorkSyncWorkloadDuration, CreateResourceToCluster, UpdateResourceToCluster, DeleteResourceFromCluster)
		for _, r := range results {
			WorkSyncWorkloadDuration.WithLabelValues(r)
		}
	})
}

func registerInterpreter() {
	interpOnce.Do(func() {
		metrics.Registry.MustRegister(InterpreterErrors)
		for _, op := range InterpreterOperations {
			InterpreterErrors.WithLabelValues(op)
		}
	})
}
