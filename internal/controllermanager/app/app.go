// Package app builds karmada-controller-manager: the controllers of the
// Karmada control plane in one controller-runtime manager.
package app

import (
	"context"
	"fmt"
	"math"
	"os"
	"runtime/debug"
	"slices"
	"sort"
	"strings"
	"time"

	"github.com/spf13/cobra"
	"k8s.io/apimachinery/pkg/api/resource"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/dynamic"
	"k8s.io/klog/v2"
	ctrl "sigs.k8s.io/controller-runtime"

	policyv1alpha1 "github.com/karmada-go/karmada/api/policy/v1alpha1"
	"github.com/karmada-go/karmada/internal/anybinding"
	"github.com/karmada-go/karmada/internal/autoscaling/hpamarker"
	"github.com/karmada-go/karmada/internal/autoscaling/replicassyncer"
	"github.com/karmada-go/karmada/internal/cache/templatecache"
	"github.com/karmada-go/karmada/internal/cli"
	"github.com/karmada-go/karmada/internal/clusters/clusterclient"
	"github.com/karmada-go/karmada/internal/events"
	"github.com/karmada-go/karmada/internal/failover/gracefuleviction"
	"github.com/karmada-go/karmada/internal/failover/taintmanager"
	"github.com/karmada-go/karmada/internal/features"
	"github.com/karmada-go/karmada/internal/interpreter"
	"github.com/karmada-go/karmada/internal/interpreter/customization"
	"github.com/karmada-go/karmada/internal/interpreter/thirdparty"
	interpreterwebhook "github.com/karmada-go/karmada/internal/interpreter/webhook"
	"github.com/karmada-go/karmada/internal/metrics"
	"github.com/karmada-go/karmada/internal/propagation/binding"
	"github.com/karmada-go/karmada/internal/propagation/bindingstatus"
	"github.com/karmada-go/karmada/internal/propagation/workstatus"
	"github.com/karmada-go/karmada/internal/quota/quotacontroller"
	"github.com/karmada-go/karmada/internal/registration/agentcsr"
	"github.com/karmada-go/karmada/internal/version"
)

// Options are the flags of karmada-controller-manager.
type Options struct {
	cli.ManagerOptions
	Controllers []string

	ClusterAPIQPS   float32
	ClusterAPIBurst int

	ClusterStatusUpdateFrequency time.Duration
	// Pull-mode clusters' leases: how often silent ones are looked at, how
	// long a lease may go unrenewed, and how long a new cluster's agent has.
	ClusterMonitorPeriod      time.Duration
	ClusterMonitorGracePeriod time.Duration
	ClusterStartupGracePeriod time.Duration
	// PullWorkReleaseGrace: how long a pull-mode cluster's agent may be
	// silent before deleted Works of the cluster are let go (0: never).
	PullWorkReleaseGrace time.Duration
	// The FederatedHPA controller's settings (kube-controller-manager's
	// HPA flags, under Karmada's names).
	HPASyncPeriod, HPADownscaleStabilization, HPACPUInitializationPeriod, HPAInitialReadinessDelay time.Duration
	HPATolerance                                                                                   float64
	// AgentCertificateMaxLifetime is the longest lifetime an agent's
	// certificate is approved for.
	AgentCertificateMaxLifetime time.Duration
	ClusterFailureThreshold     time.Duration
	ClusterSuccessThreshold     time.Duration

	ConcurrentClusterSyncs   int
	ConcurrentWorkSyncs      int
	ConcurrentNamespaceSyncs int
	// ConcurrentResourceTemplateSyncs are detector workers.
	ConcurrentResourceTemplateSyncs int
	ConcurrentBindingSyncs          int

	// OrphanSweepInterval spaces the sweeps for orphaned member objects
	// (0: none); RemoveOrphans removes what two sweeps find.
	OrphanSweepInterval time.Duration
	RemoveOrphans       bool

	// Failover: the taint manager and graceful evictions.
	EnableNoExecuteTaintEviction     bool
	NoExecuteTaintEvictionPurgeMode  string
	ResourceEvictionRate             float32
	GracefulEvictionTimeout          time.Duration
	FederatedResourceQuotaSyncPeriod time.Duration

	// GCPercent is the garbage collector's target (as GOGC); applied
	// unless GOGC is set and the flag is not given.
	GCPercent        int
	gcPercentChanged bool
	// MemoryLimit is the runtime's soft memory limit (as GOMEMLIMIT), a
	// quantity; "0" sets none. Applied like GCPercent.
	MemoryLimit        string
	memoryLimitChanged bool
}

func (o *Options) addFlags(cmd *cobra.Command) {
	f := cmd.Flags()
	o.ManagerOptions.AddFlags(f, "127.0.0.1:10357")
	f.StringSliceVar(&o.Controllers, "controllers", []string{"*"}, fmt.Sprintf("controllers to run: '*' for all, 'name' to enable, '-name' to disable; known: %s", strings.Join(controllerNames(), ", ")))
	f.Float32Var(&o.ClusterAPIQPS, "cluster-api-qps", 40, "queries per second to each member cluster")
	f.IntVar(&o.ClusterAPIBurst, "cluster-api-burst", 60, "burst of queries to each member cluster")
	f.DurationVar(&o.ClusterStatusUpdateFrequency, "cluster-status-update-frequency", 10*time.Second, "how often each push-mode cluster is probed and its status updated")
	f.DurationVar(&o.ClusterMonitorPeriod, "cluster-monitor-period", 5*time.Second, "how often a pull-mode cluster whose agent went silent is looked at again")
	f.DurationVar(&o.ClusterMonitorGracePeriod, "cluster-monitor-grace-period", 40*time.Second, "how long a pull-mode cluster's lease may go unrenewed before it is marked Ready=Unknown (and tainted unreachable)")
	f.DurationVar(&o.ClusterStartupGracePeriod, "cluster-startup-grace-period", 60*time.Second, "how long a new pull-mode cluster's agent has to renew its lease first")
	f.DurationVar(&o.AgentCertificateMaxLifetime, "agent-certificate-max-lifetime", agentcsr.DefaultMaxLifetime, "the longest lifetime a pull-mode agent's client certificate is approved for (agentcsrapproving); the agent renews it at 80% of it, so a short one limits how long a copied certificate works")
	f.DurationVar(&o.HPASyncPeriod, "horizontal-pod-autoscaler-sync-period", 15*time.Second, "how often each FederatedHPA's metrics are read and its target scaled (0: 15s)")
	f.DurationVar(&o.HPADownscaleStabilization, "horizontal-pod-autoscaler-downscale-stabilization", 5*time.Minute, "the window over which a FederatedHPA without a behaviour takes the highest recommendation before scaling down")
	f.DurationVar(&o.HPACPUInitializationPeriod, "horizontal-pod-autoscaler-cpu-initialization-period", 5*time.Minute, "how long after a pod starts its cpu samples may be set aside")
	f.DurationVar(&o.HPAInitialReadinessDelay, "horizontal-pod-autoscaler-initial-readiness-delay", 30*time.Second, "how long after a pod starts a change of its readiness counts as its first")
	f.Float64Var(&o.HPATolerance, "horizontal-pod-autoscaler-tolerance", 0.1, "how far the ratio of a metric to its target may be from 1.0 without a scale")
	f.DurationVar(&o.PullWorkReleaseGrace, "pull-work-release-grace", 0, "how long a pull-mode cluster may be Ready=Unknown (its agent silent) before the Works deleted for it are let go without their copies being removed (they stay in the member); 0 keeps them until the agent is back or the cluster is unregistered")
	f.DurationVar(&o.ClusterFailureThreshold, "cluster-failure-threshold", 30*time.Second, "how long a cluster must keep failing its probe before it is marked NotReady")
	f.DurationVar(&o.ClusterSuccessThreshold, "cluster-success-threshold", 30*time.Second, "how long a NotReady cluster must keep passing its probe before it is marked Ready")
	f.IntVar(&o.ConcurrentClusterSyncs, "concurrent-cluster-syncs", 5, "clusters reconciled at once")
	f.IntVar(&o.ConcurrentWorkSyncs, "concurrent-work-syncs", DefaultConcurrentWorkSyncs, "works applied at once")
	f.IntVar(&o.ConcurrentNamespaceSyncs, "concurrent-namespace-syncs", 1, "namespaces propagated at once")
	f.IntVar(&o.ConcurrentResourceTemplateSyncs, "concurrent-resource-template-syncs", DefaultConcurrentResourceTemplateSyncs, "resource templates matched with policies at once")
	f.IntVar(&o.ConcurrentBindingSyncs, "concurrent-resourcebinding-syncs", DefaultConcurrentBindingSyncs, "bindings turned into works at once")
	f.DurationVar(&o.OrphanSweepInterval, "orphan-sweep-interval", 10*time.Minute, "how often members are swept for objects marked as Karmada's whose Work no longer exists (reported as karmada_orphaned_member_objects and an OrphanedObjects event on the Cluster); 0 disables the sweep")
	f.BoolVar(&o.RemoveOrphans, "remove-orphans", false, "remove what two sweeps in a row find orphaned: delete what Karmada created, release what it adopted (namespaces are only reported)")
	features.Gate.AddFlag(f)
	f.BoolVar(&o.EnableNoExecuteTaintEviction, "enable-no-execute-taint-eviction", false, "evict workloads from clusters with NoExecute taints they do not tolerate (after their tolerationSeconds); needs --feature-gates=Failover=true")
	f.StringVar(&o.NoExecuteTaintEvictionPurgeMode, "no-execute-taint-eviction-purge-mode", string(taintmanager.DefaultPurgeMode), "how an evicted cluster's copy is removed when the policy's failover.cluster sets no purgeMode: Gracefully (once the workload is healthy elsewhere, or the grace period is over) or Directly (at once)")
	f.Float32Var(&o.ResourceEvictionRate, "resource-eviction-rate", taintmanager.DefaultEvictionRate, "evictions per second across the fleet, by the taint manager")
	f.DurationVar(&o.FederatedResourceQuotaSyncPeriod, "federated-resource-quota-sync-period", quotacontroller.EnforcementResync, "how often FederatedResourceQuotas' overallUsed is recounted from the bindings (with --feature-gates=FederatedQuotaEnforcement=true), besides when a quota's overall changes or a binding is deleted: karmada-webhook records each admitted placement, and a recount corrects what was admitted but never written")
	f.DurationVar(&o.GracefulEvictionTimeout, "graceful-eviction-timeout", gracefuleviction.DefaultTimeout, "how long an evicted copy may wait for the workload to be healthy elsewhere before it is removed (when the eviction sets no gracePeriodSeconds); never removed while it is the last healthy copy or nothing can replace it")
	f.IntVar(&o.GCPercent, "gc-percent", DefaultGCPercent, "how far the heap may grow over live data before a garbage collection, in percent (Go's GOGC; GOGC in the environment wins unless this flag is given): lower holds less memory for more CPU")
	f.StringVar(&o.MemoryLimit, "memory-limit", "0", "soft limit on the memory the process holds, as a quantity (512Mi, 1Gi); near it the garbage collector runs more often and returns freed memory to the system sooner, for more CPU; 0 sets none (Go's GOMEMLIMIT, which wins when set in the environment and the flag is not given). Set it under the memory the process may use, with room over its live heap")
}

// Worker defaults, chosen by sweeping them at 1,000 templates over 3
// members (README, Performance): 2 workers were slower than Karmada's 5,
// and 10 faster than 5 in every run; beyond 10 only the deletion was
// faster (with 20 or 40 execution workers).
const (
	DefaultConcurrentResourceTemplateSyncs = 10
	DefaultConcurrentBindingSyncs          = 10
	DefaultConcurrentWorkSyncs             = 20
)

// DefaultGCPercent is --gc-percent's default: half of Go's 100. Measured at
// 1,000 templates over 3 members: peak RSS 169 -> 138-140 MiB, CPU 30.7 ->
// 32.8-33.3 s (README, Performance).
const DefaultGCPercent = 50

// applyGCPercent sets the collector's target from the flag, or leaves GOGC
// from the environment in charge when it is set and the flag was not given.
func (o *Options) applyGCPercent() {
	if o.gcPercentChanged || os.Getenv("GOGC") == "" {
		debug.SetGCPercent(o.GCPercent)
	}
}

// memoryLimitBytes parses --memory-limit: 0 for none.
func (o *Options) memoryLimitBytes() (int64, error) {
	v := o.MemoryLimit
	if v == "" {
		v = "0"
	}
	q, err := resource.ParseQuantity(v)
	if err != nil || q.Sign() < 0 {
		return 0, fmt.Errorf("--memory-limit=%q: must be a non-negative quantity such as 512Mi or 1Gi (0: no limit)", o.MemoryLimit)
	}
	n, ok := q.AsInt64()
	if !ok {
		return 0, fmt.Errorf("--memory-limit=%q: must be a whole number of bytes that fits in 64 bits", o.MemoryLimit)
	}
	return n, nil
}

// applyMemoryLimit sets the runtime's soft memory limit from the flag, or
// leaves GOMEMLIMIT from the environment in charge when it is set and the
// flag was not given. 0 from the flag removes any limit.
func (o *Options) applyMemoryLimit() error {
	if !o.memoryLimitChanged && os.Getenv("GOMEMLIMIT") != "" {
		return nil
	}
	n, err := o.memoryLimitBytes()
	if err != nil {
		return err
	}
	if n == 0 {
		n = math.MaxInt64
	}
	debug.SetMemoryLimit(n)
	return nil
}

// Validate checks the flags, naming the bad one.
func (o *Options) Validate() error {
	if err := features.Check(); err != nil {
		return err
	}
	if err := o.ManagerOptions.Validate(); err != nil {
		return err
	}
	if _, err := enabledControllers(o.Controllers); err != nil {
		return err
	}
	switch {
	case o.ClusterMonitorPeriod <= 0 || o.ClusterMonitorGracePeriod <= 0 || o.ClusterStartupGracePeriod <= 0:
		return fmt.Errorf("--cluster-monitor-period=%s, --cluster-monitor-grace-period=%s, --cluster-startup-grace-period=%s: must be positive", o.ClusterMonitorPeriod, o.ClusterMonitorGracePeriod, o.ClusterStartupGracePeriod)
	case o.AgentCertificateMaxLifetime < 10*time.Minute:
		return fmt.Errorf("--agent-certificate-max-lifetime=%s: must be at least 10m (the signer's shortest lifetime)", o.AgentCertificateMaxLifetime)
	case o.HPASyncPeriod < 0:
		return fmt.Errorf("--horizontal-pod-autoscaler-sync-period=%s: must not be negative (0: 15s)", o.HPASyncPeriod)
	case o.HPATolerance < 0 || o.HPATolerance >= 1:
		return fmt.Errorf("--horizontal-pod-autoscaler-tolerance=%v: must be at least 0 and below 1", o.HPATolerance)
	case o.HPADownscaleStabilization < 0 || o.HPACPUInitializationPeriod < 0 || o.HPAInitialReadinessDelay < 0:
		return fmt.Errorf("the --horizontal-pod-autoscaler-* durations must not be negative")
	case o.PullWorkReleaseGrace < 0:
		return fmt.Errorf("--pull-work-release-grace=%s: must not be negative (0: never)", o.PullWorkReleaseGrace)
	case o.ClusterStatusUpdateFrequency <= 0:
		return fmt.Errorf("--cluster-status-update-frequency=%s: must be positive", o.ClusterStatusUpdateFrequency)
	case o.ClusterFailureThreshold < 0 || o.ClusterSuccessThreshold < 0:
		return fmt.Errorf("--cluster-failure-threshold and --cluster-success-threshold must not be negative")
	case o.GCPercent <= 0:
		return fmt.Errorf("--gc-percent=%d: must be positive", o.GCPercent)
	case o.OrphanSweepInterval < 0:
		return fmt.Errorf("--orphan-sweep-interval=%s: must not be negative (0 disables the sweep)", o.OrphanSweepInterval)
	case o.NoExecuteTaintEvictionPurgeMode != string(policyv1alpha1.PurgeModeGracefully) && o.NoExecuteTaintEvictionPurgeMode != string(policyv1alpha1.PurgeModeDirectly):
		return fmt.Errorf("--no-execute-taint-eviction-purge-mode=%q: must be Gracefully or Directly", o.NoExecuteTaintEvictionPurgeMode)
	case o.ResourceEvictionRate <= 0:
		return fmt.Errorf("--resource-eviction-rate=%v: must be positive", o.ResourceEvictionRate)
	case o.FederatedResourceQuotaSyncPeriod <= 0:
		return fmt.Errorf("--federated-resource-quota-sync-period=%s: must be positive", o.FederatedResourceQuotaSyncPeriod)
	case o.GracefulEvictionTimeout <= 0:
		return fmt.Errorf("--graceful-eviction-timeout=%s: must be positive", o.GracefulEvictionTimeout)
	case o.ClusterAPIQPS <= 0 || o.ClusterAPIBurst <= 0:
		return fmt.Errorf("--cluster-api-qps=%v and --cluster-api-burst=%d must be positive", o.ClusterAPIQPS, o.ClusterAPIBurst)
	}
	_, err := o.memoryLimitBytes()
	return err
}

func controllerNames() []string {
	names := make([]string, 0, len(controllers))
	for n := range controllers {
		names = append(names, n)
	}
	sort.Strings(names)
	return names
}

// offByDefault are the controllers '*' leaves out (Karmada's): they are
// turned on by name.
var offByDefault = []string{hpamarker.ControllerName, replicassyncer.ControllerName}

// enabledControllers resolves --controllers: '*' enables all, 'name' one,
// '-name' disables one (which wins over '*').
func enabledControllers(spec []string) ([]string, error) {
	return features.Enabled("--controllers", "controller", controllerNames(), spec, offByDefault...)
}

// NewCommand returns the karmada-controller-manager command.
func NewCommand() *cobra.Command {
	o := &Options{}
	cmd := &cobra.Command{
		Version: version.Get().String(),
		Use:     "karmada-controller-manager",
		Short:   "Run the controllers of the Karmada control plane",
		Long: `karmada-controller-manager runs the controllers of the Karmada control plane:
cluster (execution namespaces, readiness taints), clusterStatus (health, version,
APIs and resources of push-mode members), namespace (namespace propagation),
detector (matching templates with propagation policies, keeping bindings),
binding (Works from scheduled bindings), execution (applying Works to
push-mode members), workStatus (member state into Works), bindingStatus
(aggregated status into bindings and templates), dependenciesDistributor (the
ConfigMaps, Secrets, ServiceAccounts and claims of workloads with
propagateDeps, sent where they run), orphanSweep (member objects
whose Work is gone), tokenRenewal (push-mode members' tokens, renewed
before they expire), unifiedAuth (each push-mode member's impersonator
narrowed to the subjects allowed clusters/proxy on it) and the multi-cluster
services: serviceExport and endpointsliceCollect (members' EndpointSlices
collected; ServiceExport conditions), endpointSlice, serviceImport,
multiclusterservice and endpointsliceDispatch; federatedHorizontalPodAutoscaler
(FederatedHPAs on the members' metrics) and cronFederatedHorizontalPodAutoscaler
(CronFederatedHPA rules); hpaScaleTargetMarker and deploymentReplicasSyncer (the
native-HPA path, off unless named).`,
		SilenceUsage:  true,
		SilenceErrors: true,
		RunE: func(cmd *cobra.Command, _ []string) error {
			o.gcPercentChanged = cmd.Flags().Changed("gc-percent")
			o.memoryLimitChanged = cmd.Flags().Changed("memory-limit")
			if err := o.Validate(); err != nil {
				return err
			}
			return Run(cmd.Context(), o)
		},
	}
	o.addFlags(cmd)
	return cmd
}

// Run starts the manager and blocks until ctx ends.
func Run(ctx context.Context, o *Options) error {
	o.applyGCPercent()
	if err := o.applyMemoryLimit(); err != nil {
		return err
	}
	ctrl.SetLogger(klog.NewKlogr())
	metrics.RegisterControllerManager()
	log := klog.FromContext(ctx)
	cfg, err := o.RESTConfig()
	if err != nil {
		return err
	}
	mgr, err := o.NewManager(ctx, cfg, "karmada-controller-manager")
	if err != nil {
		return err
	}
	// Resource templates are read on every binding and status change: from
	// a cache of their JSON (templatecache), one informer per kind in use,
	// rather than a GET each time or a cache of unstructured objects ten
	// times their size.
	dyn, err := dynamic.NewForConfig(mgr.GetConfig())
	if err != nil {
		return err
	}
	templates := templatecache.New(dyn, mgr.GetRESTMapper())
	if err := mgr.Add(templates); err != nil {
		return err
	}
	// Credentials are read uncached: caching every Secret of the control
	// plane to read a few would cost far more.
	members := clusterclient.NewCache(mgr.GetAPIReader(), clusterclient.Options{QPS: o.ClusterAPIQPS, Burst: o.ClusterAPIBurst, Timeout: 30 * time.Second})
	enabled, err := enabledControllers(o.Controllers)
	if err != nil {
		return err
	}
	if slices.Contains(enabled, binding.ControllerName) || slices.Contains(enabled, bindingstatus.ControllerName) {
		if err := anybinding.IndexWorks(ctx, mgr.GetFieldIndexer()); err != nil {
			return fmt.Errorf("indexing works by binding: %w", err)
		}
	}
	recorders, err := events.NewProvider(mgr.GetConfig(), mgr.GetScheme())
	if err != nil {
		return err
	}
	if err := mgr.Add(recorders); err != nil {
		return err
	}
	// Every controller interprets templates with the customizations in
	// force, loaded before any starts (below).
	reinterpret := &[]func([]schema.GroupKind){}
	custom := customization.NewWatcher(func(kinds []schema.GroupKind) {
		for _, f := range *reinterpret {
			f(kinds)
		}
	})
	hooks := &interpreterwebhook.Layer{}
	sc := setupContext{ctx: ctx, mgr: mgr, opts: o, members: members, events: recorders, templates: templates, reinterpret: reinterpret,
		interpreter: interpreter.New(custom.Layer, hooks, thirdparty.Layer{})}
	if slices.Contains(enabled, workstatus.ControllerName) {
		sc.workStatus = true
	}
	sc.enabled = enabled
	for _, name := range enabled {
		if err := controllers[name](sc); err != nil {
			return fmt.Errorf("setting up controller %s: %w", name, err)
		}
	}
	if err := interpreterwebhook.Watch(ctx, mgr.GetAPIReader(), mgr.GetCache(), hooks); err != nil {
		return err
	}
	if err := custom.Install(ctx, mgr.GetAPIReader(), mgr.GetCache()); err != nil {
		return err
	}
	log.Info("Starting karmada-controller-manager", "controllers", enabled)
	return mgr.Start(ctx)
}

// Main runs the command and returns the exit code.
func Main() int { return cli.Run(NewCommand()) }
