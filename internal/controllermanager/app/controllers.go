package app

import (
	"context"
	"slices"

	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/discovery"
	"k8s.io/client-go/kubernetes"
	custommetrics "k8s.io/metrics/pkg/client/custom_metrics"
	externalmetrics "k8s.io/metrics/pkg/client/external_metrics"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/manager"

	policyv1alpha1 "github.com/karmada-go/karmada/api/policy/v1alpha1"
	"github.com/karmada-go/karmada/internal/autoscaling/cronfhpa"
	"github.com/karmada-go/karmada/internal/autoscaling/fhpa"
	"github.com/karmada-go/karmada/internal/autoscaling/hpa"
	"github.com/karmada-go/karmada/internal/autoscaling/hpamarker"
	"github.com/karmada-go/karmada/internal/autoscaling/replicassyncer"
	"github.com/karmada-go/karmada/internal/cache/templatecache"
	"github.com/karmada-go/karmada/internal/clusters/cluster"
	"github.com/karmada-go/karmada/internal/clusters/clusterclient"
	"github.com/karmada-go/karmada/internal/clusters/clusterlease"
	"github.com/karmada-go/karmada/internal/clusters/clusterstatus"
	"github.com/karmada-go/karmada/internal/clusters/clustertaint"
	"github.com/karmada-go/karmada/internal/clusters/remedy"
	"github.com/karmada-go/karmada/internal/clusters/tokenrenewal"
	"github.com/karmada-go/karmada/internal/clusters/unifiedauth"
	"github.com/karmada-go/karmada/internal/events"
	"github.com/karmada-go/karmada/internal/failover/applicationfailover"
	"github.com/karmada-go/karmada/internal/failover/gracefuleviction"
	"github.com/karmada-go/karmada/internal/failover/taintmanager"
	"github.com/karmada-go/karmada/internal/failover/workloadrebalancer"
	"github.com/karmada-go/karmada/internal/features"
	"github.com/karmada-go/karmada/internal/interpreter"
	"github.com/karmada-go/karmada/internal/propagation/binding"
	"github.com/karmada-go/karmada/internal/propagation/bindingstatus"
	"github.com/karmada-go/karmada/internal/propagation/dependencies"
	"github.com/karmada-go/karmada/internal/propagation/detector"
	"github.com/karmada-go/karmada/internal/propagation/execution"
	"github.com/karmada-go/karmada/internal/propagation/namespace"
	"github.com/karmada-go/karmada/internal/propagation/orphans"
	"github.com/karmada-go/karmada/internal/propagation/workstatus"
	"github.com/karmada-go/karmada/internal/quota/quotacontroller"
	"github.com/karmada-go/karmada/internal/registration/agentcsr"
	"github.com/karmada-go/karmada/internal/services/endpointslice"
	"github.com/karmada-go/karmada/internal/services/export"
	"github.com/karmada-go/karmada/internal/services/imports"
	"github.com/karmada-go/karmada/internal/services/ingress"
	"github.com/karmada-go/karmada/internal/services/multiclusterservice"
)

// setupContext is what each controller's setup function gets.
type setupContext struct {
	ctx     context.Context
	mgr     manager.Manager
	opts    *Options
	members *clusterclient.Cache
	events  *events.Provider
	// templates is the compact cache of resource templates.
	templates *templatecache.Store
	// workStatus says the workStatus controller runs.
	workStatus bool
	// enabled are the controllers --controllers turns on.
	enabled []string
	// reinterpret are told the kinds whose customizations changed.
	reinterpret *[]func([]schema.GroupKind)
	// interpreter is every controller's: customizations, then interpreter
	// webhooks, then the shipped third-party customizations, then the
	// built-in knowledge.
	interpreter *interpreter.Interpreter
}

// controllers registers every controller by its Karmada name.
var controllers = map[string]func(c setupContext) error{
	cluster.ControllerName: func(c setupContext) error {
		if err := (&cluster.Reconciler{Client: c.mgr.GetClient(), Recorder: c.events.RecorderFor(events.SourceCluster), Workers: c.opts.ConcurrentClusterSyncs}).SetupWithManager(c.mgr); err != nil {
			return err
		}
		// Pull-mode clusters' heartbeats, as Karmada's cluster controller
		// watches them.
		if err := (&clusterlease.Monitor{Client: c.mgr.GetClient(), GracePeriod: c.opts.ClusterMonitorGracePeriod,
			StartupGrace: c.opts.ClusterStartupGracePeriod, Period: c.opts.ClusterMonitorPeriod}).SetupWithManager(c.mgr); err != nil {
			return err
		}
		// The taint manager is part of the cluster controller, as Karmada's.
		if !c.opts.EnableNoExecuteTaintEviction {
			return nil
		}
		if !features.Gate.Enabled(features.Failover) {
			ctrl.LoggerFrom(c.ctx).Info("Not starting the taint manager: --enable-no-execute-taint-eviction needs --feature-gates=Failover=true")
			return nil
		}
		return (&taintmanager.Manager{Client: c.mgr.GetClient(), Recorder: c.events.RecorderFor(events.SourceTaintManager),
			Rate: float64(c.opts.ResourceEvictionRate), PurgeMode: policyv1alpha1.PurgeMode(c.opts.NoExecuteTaintEvictionPurgeMode),
			Graceful: features.Gate.Enabled(features.GracefulEviction), Workers: c.opts.ConcurrentClusterSyncs}).SetupWithManager(c.mgr)
	},
	applicationfailover.ControllerName: func(c setupContext) error {
		if !features.Gate.Enabled(features.Failover) {
			ctrl.LoggerFrom(c.ctx).Info("Not starting applicationFailover: it needs --feature-gates=Failover=true")
			return nil
		}
		return (&applicationfailover.Reconciler{Client: c.mgr.GetClient(), Recorder: c.events.RecorderFor(events.SourceApplicationFailover),
			Graceful: features.Gate.Enabled(features.GracefulEviction), Workers: c.opts.ConcurrentBindingSyncs}).SetupWithManager(c.mgr)
	},
	gracefuleviction.ControllerName: func(c setupContext) error {
		if !features.Gate.Enabled(features.GracefulEviction) {
			return nil
		}
		return (&gracefuleviction.Reconciler{Client: c.mgr.GetClient(), Recorder: c.events.RecorderFor(events.SourceGracefulEviction),
			Timeout: c.opts.GracefulEvictionTimeout, Workers: c.opts.ConcurrentBindingSyncs}).SetupWithManager(c.mgr)
	},
	clusterstatus.ControllerName: func(c setupContext) error {
		return clusterstatus.ForControlPlane(&clusterstatus.Reconciler{
			Client: c.mgr.GetClient(), Members: c.members, Workers: c.opts.ConcurrentClusterSyncs,
			UpdateFrequency:  c.opts.ClusterStatusUpdateFrequency,
			FailureThreshold: c.opts.ClusterFailureThreshold,
			SuccessThreshold: c.opts.ClusterSuccessThreshold,
		}).SetupWithManager(c.mgr)
	},
	quotacontroller.SyncControllerName: func(c setupContext) error {
		return (&quotacontroller.Sync{Client: c.mgr.GetClient(), Recorder: c.events.RecorderFor(quotacontroller.SyncSource),
			Workers: c.opts.ConcurrentNamespaceSyncs}).SetupWithManager(c.mgr)
	},
	quotacontroller.StatusControllerName: func(c setupContext) error {
		return (&quotacontroller.Status{Client: c.mgr.GetClient(), Recorder: c.events.RecorderFor(quotacontroller.StatusSource),
			Enforcement: features.Gate.Enabled(features.FederatedQuotaEnforcement), Workers: c.opts.ConcurrentNamespaceSyncs}).SetupWithManager(c.mgr)
	},
	quotacontroller.EnforcementControllerName: func(c setupContext) error {
		if !features.Gate.Enabled(features.FederatedQuotaEnforcement) {
			return nil
		}
		return (&quotacontroller.Enforcement{Client: c.mgr.GetClient(), Recorder: c.events.RecorderFor(quotacontroller.EnforcementSource),
			Resync: c.opts.FederatedResourceQuotaSyncPeriod, Workers: c.opts.ConcurrentNamespaceSyncs}).SetupWithManager(c.mgr)
	},
	namespace.ControllerName: func(c setupContext) error {
		return (&namespace.Reconciler{Client: c.mgr.GetClient(), Workers: c.opts.ConcurrentNamespaceSyncs}).SetupWithManager(c.mgr)
	},
	detector.ControllerName: func(c setupContext) error {
		d := &detector.Detector{Client: c.mgr.GetClient(), Interpreter: c.interpreter, Recorder: c.events.RecorderFor(events.SourceDetector), Config: c.mgr.GetConfig(), Workers: c.opts.ConcurrentResourceTemplateSyncs, Templates: c.templates}
		*c.reinterpret = append(*c.reinterpret, d.KindsReinterpreted)
		return d.SetupWithManager(c.ctx, c.mgr)
	},
	binding.ControllerName: func(c setupContext) error {
		return (&binding.Reconciler{Client: c.mgr.GetClient(), Interpreter: c.interpreter, Templates: c.templates, Recorder: c.events.RecorderFor(events.SourceBinding), Workers: c.opts.ConcurrentBindingSyncs}).SetupWithManager(c.mgr)
	},
	workstatus.ControllerName: func(c setupContext) error {
		return workstatus.ForControlPlane(&workstatus.Reconciler{Client: c.mgr.GetClient(), Interpreter: c.interpreter, Recorder: c.events.RecorderFor(events.SourceWorkStatus), Members: c.members, Workers: c.opts.ConcurrentWorkSyncs}).SetupWithManager(c.mgr)
	},
	bindingstatus.ControllerName: func(c setupContext) error {
		return (&bindingstatus.Reconciler{Client: c.mgr.GetClient(), Interpreter: c.interpreter, Templates: c.templates, Recorder: c.events.RecorderFor(events.SourceBindingStatus), Workers: c.opts.ConcurrentBindingSyncs}).SetupWithManager(c.mgr)
	},
	dependencies.ControllerName: func(c setupContext) error {
		if !features.Gate.Enabled(features.PropagateDeps) {
			ctrl.LoggerFrom(c.ctx).Info("Not starting dependenciesDistributor: propagateDeps is honoured with --feature-gates=PropagateDeps=true")
			return nil
		}
		return (&dependencies.Reconciler{Client: c.mgr.GetClient(), Interpreter: c.interpreter, Templates: c.templates, Recorder: c.events.RecorderFor(events.SourceDependenciesDistributor),
			Workers: c.opts.ConcurrentBindingSyncs}).SetupWithManager(c.ctx, c.mgr)
	},
	orphans.ControllerName: func(c setupContext) error {
		if c.opts.OrphanSweepInterval == 0 {
			return nil
		}
		return c.mgr.Add(&orphans.Sweeper{Client: c.mgr.GetClient(), Members: c.members, Recorder: c.events.RecorderFor(events.SourceOrphanSweep),
			Interval: c.opts.OrphanSweepInterval, Remove: c.opts.RemoveOrphans})
	},
	agentcsr.ControllerName: func(c setupContext) error {
		kc, err := kubernetes.NewForConfig(c.mgr.GetConfig())
		if err != nil {
			return err
		}
		return (&agentcsr.Reconciler{Client: c.mgr.GetClient(), Reader: c.mgr.GetAPIReader(), Kube: kc, Recorder: c.events.RecorderFor(events.SourceAgentCSRApproving),
			MaxLifetime: c.opts.AgentCertificateMaxLifetime}).SetupWithManager(c.mgr)
	},
	tokenrenewal.ControllerName: func(c setupContext) error {
		return (&tokenrenewal.Reconciler{Client: c.mgr.GetClient(), Reader: c.mgr.GetAPIReader(), Members: c.members,
			Recorder: c.events.RecorderFor(events.SourceTokenRenewal)}).SetupWithManager(c.mgr)
	},
	unifiedauth.ControllerName: func(c setupContext) error {
		return (&unifiedauth.Reconciler{Client: c.mgr.GetClient(), Reader: c.mgr.GetAPIReader(), Members: c.members,
			Recorder: c.events.RecorderFor(events.SourceUnifiedAuth)}).SetupWithManager(c.mgr)
	},
	clustertaint.ControllerName: func(c setupContext) error {
		if !features.Gate.Enabled(features.Failover) {
			ctrl.LoggerFrom(c.ctx).Info("Not starting clusterTaintPolicy: it needs --feature-gates=Failover=true")
			return nil
		}
		return (&clustertaint.Reconciler{Client: c.mgr.GetClient(), Recorder: c.events.RecorderFor(events.SourceClusterTaintPolicy)}).SetupWithManager(c.mgr)
	},
	remedy.ControllerName: func(c setupContext) error {
		return (&remedy.Reconciler{Client: c.mgr.GetClient()}).SetupWithManager(c.mgr)
	},
	ingress.ControllerName: func(c setupContext) error {
		return (&ingress.Reconciler{Client: c.mgr.GetClient()}).SetupWithManager(c.mgr)
	},
	workloadrebalancer.ControllerName: func(c setupContext) error {
		return (&workloadrebalancer.Reconciler{Client: c.mgr.GetClient()}).SetupWithManager(c.mgr)
	},
	export.ControllerName:        func(c setupContext) error { return setupCollection(c, export.ControllerName) },
	export.CollectControllerName: func(c setupContext) error { return setupCollection(c, export.CollectControllerName) },
	endpointslice.ControllerName: func(c setupContext) error {
		return (&endpointslice.Reconciler{Client: c.mgr.GetClient(), Recorder: c.events.RecorderFor(events.SourceEndpointSlice)}).SetupWithManager(c.mgr)
	},
	imports.ControllerName: func(c setupContext) error {
		return (&imports.Reconciler{Client: c.mgr.GetClient(), Recorder: c.events.RecorderFor(events.SourceServiceImport), Workers: c.opts.ConcurrentWorkSyncs}).SetupWithManager(c.mgr)
	},
	multiclusterservice.ControllerName: func(c setupContext) error {
		if !features.Gate.Enabled(features.MultiClusterService) {
			ctrl.LoggerFrom(c.ctx).Info("Not starting multiclusterservice: it needs --feature-gates=MultiClusterService=true")
			return nil
		}
		return (&multiclusterservice.Reconciler{Client: c.mgr.GetClient(), Recorder: c.events.RecorderFor(events.SourceMultiClusterService), Workers: c.opts.ConcurrentWorkSyncs,
			NoDispatch: !slices.Contains(c.enabled, multiclusterservice.DispatchControllerName)}).SetupWithManager(c.mgr)
	},
	// Dispatching the providers' slices is a phase of multiclusterservice.
	multiclusterservice.DispatchControllerName: func(c setupContext) error {
		if !slices.Contains(c.enabled, multiclusterservice.ControllerName) {
			ctrl.LoggerFrom(c.ctx).Info("Not starting endpointsliceDispatch: it dispatches for multiclusterservice, which is disabled")
		}
		return nil
	},
	fhpa.ControllerName: func(c setupContext) error {
		members := fhpa.MemberClients{Karmada: c.mgr.GetClient(), Cache: c.members}
		rec := hpa.NewRecommender()
		rec.DownscaleWindow = c.opts.HPADownscaleStabilization
		// Pods, Object and External metrics: the karmada-apiserver's
		// custom.metrics.k8s.io (karmada-metrics-adapter) and
		// external.metrics.k8s.io, as Karmada's FederatedHPA reads them.
		disco, err := discovery.NewDiscoveryClientForConfig(c.mgr.GetConfig())
		if err != nil {
			return err
		}
		external, err := externalmetrics.NewForConfig(c.mgr.GetConfig())
		if err != nil {
			return err
		}
		custom := fhpa.ControlPlaneMetrics{
			CustomClient:   custommetrics.NewForConfig(c.mgr.GetConfig(), c.mgr.GetRESTMapper(), custommetrics.NewAvailableAPIsGetter(disco)),
			ExternalClient: external,
		}
		return (&fhpa.Reconciler{Client: c.mgr.GetClient(), Recorder: c.events.RecorderFor(events.SourceFederatedHPA),
			Members: members, Metrics: fhpa.MemberMetrics{Members: members}, Custom: custom,
			SyncPeriod: c.opts.HPASyncPeriod, Recommender: rec,
			Config: hpa.Config{Tolerance: c.opts.HPATolerance, CPUInitializationPeriod: c.opts.HPACPUInitializationPeriod, InitialReadinessDelay: c.opts.HPAInitialReadinessDelay},
		}).SetupWithManager(c.mgr)
	},
	cronfhpa.ControllerName: func(c setupContext) error {
		return (&cronfhpa.Reconciler{Client: c.mgr.GetClient(), Recorder: c.events.RecorderFor(events.SourceCronFederatedHPA)}).SetupWithManager(c.mgr)
	},
	hpamarker.ControllerName: func(c setupContext) error {
		return (&hpamarker.Reconciler{Client: c.mgr.GetClient()}).SetupWithManager(c.mgr)
	},
	replicassyncer.ControllerName: func(c setupContext) error {
		return (&replicassyncer.Reconciler{Client: c.mgr.GetClient()}).SetupWithManager(c.mgr)
	},
	execution.ControllerName: func(c setupContext) error {
		return execution.ForControlPlane(&execution.Reconciler{Client: c.mgr.GetClient(), Interpreter: c.interpreter, Recorder: c.events.RecorderFor(events.SourceExecution), Members: c.members, Workers: c.opts.ConcurrentWorkSyncs,
			PullReleaseGrace:    c.opts.PullWorkReleaseGrace,
			StatusWritesApplied: c.workStatus}).SetupWithManager(c.mgr)
	},
}

// setupCollection sets up, once for both names, the controller that
// collects the exported Services' slices (serviceExport) and the
// MultiClusterServices' providers' (endpointsliceCollect).
func setupCollection(c setupContext, name string) error {
	r, first := collection(c.enabled)
	if r == nil || name != first {
		return nil
	}
	r.Client, r.Members, r.Workers = c.mgr.GetClient(), c.members, c.opts.ConcurrentWorkSyncs
	return export.ForControlPlane(r).SetupWithManager(c.mgr)
}

// collection is the collecting controller the enabled names ask for (nil
// for none) and which of the two names sets it up.
func collection(enabled []string) (*export.Reconciler, string) {
	exports, provided := slices.Contains(enabled, export.ControllerName), slices.Contains(enabled, export.CollectControllerName)
	switch {
	case exports:
		return &export.Reconciler{NoProvided: !provided}, export.ControllerName
	case provided:
		return &export.Reconciler{NoExports: true}, export.CollectControllerName
	}
	return nil, ""
}
