// Package agent is karmada-agent: run once per pull-mode member, with the
// identity karmadactl register obtained for it, it does for its own cluster
// what the controller manager does for push-mode ones — reports the
// cluster's status, applies its Works (the same execution code, with
// conflict resolution) and reports their status — and renews its Lease in
// the control plane, by which the control plane knows it is alive.
//
// It never deletes a member object but for a Work it saw being deleted (the
// execution controller's finalizer), or a manifest the Work dropped: a
// restart, an empty cache, or a control plane out of reach deletes nothing.
package agent

import (
	"context"
	"errors"
	"fmt"
	"time"

	coordinationv1 "k8s.io/api/coordination/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/component-helpers/apimachinery/lease"
	"k8s.io/klog/v2"
	"k8s.io/utils/clock"
	"k8s.io/utils/ptr"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/config"
	"sigs.k8s.io/controller-runtime/pkg/healthz"
	"sigs.k8s.io/controller-runtime/pkg/manager"
	metricsserver "sigs.k8s.io/controller-runtime/pkg/metrics/server"

	clusterv1alpha1 "github.com/karmada-go/karmada/api/cluster/v1alpha1"
	workv1alpha1 "github.com/karmada-go/karmada/api/work/v1alpha1"
	"github.com/karmada-go/karmada/internal/certexpiry"
	"github.com/karmada-go/karmada/internal/cli"
	"github.com/karmada-go/karmada/internal/clusters/clusterclient"
	"github.com/karmada-go/karmada/internal/clusters/clusterstatus"
	"github.com/karmada-go/karmada/internal/events"
	"github.com/karmada-go/karmada/internal/interpreter"
	"github.com/karmada-go/karmada/internal/interpreter/customization"
	"github.com/karmada-go/karmada/internal/interpreter/thirdparty"
	interpreterwebhook "github.com/karmada-go/karmada/internal/interpreter/webhook"
	"github.com/karmada-go/karmada/internal/metrics"
	"github.com/karmada-go/karmada/internal/names"
	"github.com/karmada-go/karmada/internal/propagation/execution"
	"github.com/karmada-go/karmada/internal/propagation/workstatus"
	"github.com/karmada-go/karmada/internal/scheme"
	"github.com/karmada-go/karmada/internal/services/export"
)

// Config is what the agent runs with.
type Config struct {
	// Karmada reaches the control plane as the agent; Member the member.
	Karmada, Member *rest.Config
	ClusterName     string
	// StatusUpdateFrequency spaces the cluster's status probes; a new
	// Ready state is reported once it has held for FailureThreshold or
	// SuccessThreshold (30s when 0).
	StatusUpdateFrequency              time.Duration
	FailureThreshold, SuccessThreshold time.Duration
	// LeaseDuration is the Lease's duration; it is renewed every
	// LeaseDuration * RenewFraction.
	LeaseDuration time.Duration
	RenewFraction float64
	// Metrics serves /metrics (reviewed by the member's API server).
	Metrics                metricsserver.Options
	HealthProbeBindAddress string
	Workers                int
	// Credentials, when the agent has a client certificate of the
	// control plane (Karmada's config made by RotatingConfig), are renewed
	// as Rotation says.
	Credentials *Credentials
	Rotation    RotationConfig
	// Provider, Region and Zones, when set, are recorded on the Cluster.
	Provider, Region string
	Zones            []string
	// SkipNameValidation lets the agent run more than once in one process
	// (tests): controller names are otherwise unique per process.
	SkipNameValidation bool
}

// ErrWrongCluster: the member is not the cluster registered under the name.
var ErrWrongCluster = errors.New("the member is not the registered cluster")

// Run runs the agent until ctx ends.
func Run(ctx context.Context, cfg Config) error {
	metrics.RegisterAgent()
	// The control plane's serving certificate, as the agent sees it.
	cfg.Karmada = rest.CopyConfig(cfg.Karmada)
	cfg.Karmada.Wrap(certexpiry.Wrap(certexpiry.KarmadaAPIServer))
	log := klog.FromContext(ctx).WithValues("cluster", cfg.ClusterName)
	mc, err := kubernetes.NewForConfig(cfg.Member)
	if err != nil {
		return err
	}
	ks, err := mc.CoreV1().Namespaces().Get(ctx, metav1.NamespaceSystem, metav1.GetOptions{})
	if err != nil {
		return fmt.Errorf("reading the member's kube-system namespace: %w", err)
	}
	direct, err := client.New(cfg.Karmada, client.Options{Scheme: scheme.Scheme})
	if err != nil {
		return err
	}
	if cfg.Credentials != nil && cfg.Rotation.CheckInterval > 0 {
		rotating := make(chan struct{})
		rctx, stop := context.WithCancel(ctx)
		go func() {
			defer close(rotating)
			_ = cfg.Credentials.rotate(rctx, cfg.Karmada, mc, cfg.ClusterName, cfg.Rotation)
		}()
		defer func() { stop(); <-rotating }()
	}
	if err := waitForClaim(ctx, direct, cfg, string(ks.UID)); err != nil {
		return err
	}
	mgr, err := newManager(cfg)
	if err != nil {
		return err
	}
	members := clusterclient.NewCache(mgr.GetAPIReader(), clusterclient.Options{Static: map[string]*rest.Config{cfg.ClusterName: cfg.Member}, Timeout: 30 * time.Second})
	defer members.Close()
	recorders, err := events.NewProvider(cfg.Karmada, scheme.Scheme)
	if err != nil {
		return err
	}
	if err := mgr.Add(recorders); err != nil {
		return err
	}
	// The Works' copies are interpreted (status, health, retention) with
	// the control plane's customizations and interpreter webhooks, loaded
	// before the controllers start (below).
	custom := customization.NewWatcher(nil)
	hooks := &interpreterwebhook.Layer{}
	side := memberSide(cfg, mgr, members, recorders, interpreter.New(custom.Layer, hooks, thirdparty.Layer{}))
	for _, c := range side {
		if err := c.setup(mgr); err != nil {
			return fmt.Errorf("setting up %s: %w", c.name, err)
		}
	}
	kc, err := kubernetes.NewForConfig(cfg.Karmada)
	if err != nil {
		return err
	}
	if err := mgr.Add(manager.RunnableFunc(func(ctx context.Context) error {
		leaseController(kc, cfg).Run(ctx)
		return nil
	})); err != nil {
		return err
	}
	if err := interpreterwebhook.Watch(ctx, mgr.GetAPIReader(), mgr.GetCache(), hooks); err != nil {
		return err
	}
	if err := custom.Install(ctx, mgr.GetAPIReader(), mgr.GetCache()); err != nil {
		return err
	}
	log.Info("Starting karmada-agent", "controllers", controllerNames(side))
	return mgr.Start(ctx)
}

// waitForClaim claims the Cluster (claim): the Cluster and the agent's
// rights come with the registration's approval; until they are there (or
// visible), the claim is retried.
func waitForClaim(ctx context.Context, direct client.Client, cfg Config, id string) error {
	log := klog.FromContext(ctx).WithValues("cluster", cfg.ClusterName)
	return wait.PollUntilContextCancel(ctx, 2*time.Second, true, func(ctx context.Context) (bool, error) {
		err := claim(ctx, direct, cfg, id)
		if errors.Is(err, ErrWrongCluster) {
			return false, err
		}
		if err != nil {
			log.Info("Waiting to claim the Cluster", "err", err.Error())
		}
		return err == nil, nil
	})
}

// newManager is the agent's manager, reading only what the agent may
// read in the control plane: its Works and its Cluster.
func newManager(cfg Config) (ctrl.Manager, error) {
	es := workv1alpha1.ExecutionNamespace(cfg.ClusterName)
	cacheOpts := cli.CacheOptions()
	cacheOpts.ByObject = map[client.Object]cache.ByObject{
		&workv1alpha1.Work{}:       {Namespaces: map[string]cache.Config{es: {}}},
		&clusterv1alpha1.Cluster{}: {Field: fields.OneTermEqualSelector("metadata.name", cfg.ClusterName)},
	}
	// A cached read of any other type fails at once instead of starting an
	// informer the agent's rights cannot fill (which would wait for ever, a
	// worker with it).
	cacheOpts.ReaderFailOnMissingInformer = true
	mgr, err := ctrl.NewManager(cfg.Karmada, ctrl.Options{
		Scheme:                 scheme.Scheme,
		Cache:                  cacheOpts,
		Metrics:                cfg.Metrics,
		HealthProbeBindAddress: cfg.HealthProbeBindAddress,
		Controller:             config.Controller{SkipNameValidation: ptr.To(cfg.SkipNameValidation)},
	})
	if err != nil {
		return nil, fmt.Errorf("creating the manager: %w", err)
	}
	if err := mgr.AddHealthzCheck("ping", healthz.Ping); err != nil {
		return nil, err
	}
	if err := mgr.AddReadyzCheck("ping", healthz.Ping); err != nil {
		return nil, err
	}
	return mgr, nil
}

// claim makes sure the Cluster the control plane made at registration is
// this member's: its spec.id is set to the member's kube-system UID (the
// control plane refuses an id another Cluster has), a Cluster whose id is
// another's is refused, and the provider, region and zones the agent was
// given are recorded.
func claim(ctx context.Context, c client.Client, cfg Config, id string) error {
	name := cfg.ClusterName
	cluster := &clusterv1alpha1.Cluster{}
	if err := c.Get(ctx, client.ObjectKey{Name: name}, cluster); err != nil {
		return fmt.Errorf("reading Cluster %s (is it registered? karmadactl register makes it): %w", name, err)
	}
	switch {
	case cluster.Spec.SyncMode != clusterv1alpha1.Pull:
		return fmt.Errorf("cluster %s is in %s mode: %w", name, cluster.Spec.SyncMode, ErrWrongCluster)
	case cluster.Spec.ID != "" && cluster.Spec.ID != id:
		return fmt.Errorf("cluster %s has id %s, this member's is %s: %w", name, cluster.Spec.ID, id, ErrWrongCluster)
	}
	want := cluster.DeepCopy()
	want.Spec.ID = id
	if cfg.Provider != "" {
		want.Spec.Provider = cfg.Provider
	}
	if cfg.Region != "" {
		want.Spec.Region = cfg.Region
	}
	if len(cfg.Zones) > 0 {
		want.Spec.Zones = cfg.Zones
	}
	if equality.Semantic.DeepEqual(want.Spec, cluster.Spec) {
		return nil
	}
	if err := c.Update(ctx, want); err != nil {
		if cluster.Spec.ID == "" && refusedField(err, "spec.id") {
			// The webhook refuses an id another Cluster holds: this member
			// is registered under another name already.
			return fmt.Errorf("recording the member's id on Cluster %s: %w: %w", name, err, ErrWrongCluster)
		}
		return fmt.Errorf("recording the member's id on Cluster %s: %w", name, err)
	}
	return nil
}

// leaseController renews the cluster's Lease in the control plane every
// LeaseDuration * RenewFraction, with component-helpers' lease controller
// (the kubelet's): a failed renewal is retried with a short backoff, and
// the control plane marks the cluster Unknown only after its grace period.
// The control plane made the Lease at registration; the agent may only
// read and update it, and each renewal says again who holds it and for how
// long.
func leaseController(kc kubernetes.Interface, cfg Config) lease.Controller {
	seconds := int32(cfg.LeaseDuration / time.Second)
	every := time.Duration(float64(cfg.LeaseDuration) * cfg.RenewFraction)
	return lease.NewController(clock.RealClock{}, kc, cfg.ClusterName, seconds, nil, every, cfg.ClusterName, names.ClusterNamespace,
		func(l *coordinationv1.Lease) error {
			l.Spec.HolderIdentity = ptr.To(cfg.ClusterName)
			l.Spec.LeaseDurationSeconds = ptr.To(seconds)
			return nil
		})
}

func orDefault(d, def time.Duration) time.Duration {
	if d == 0 {
		return def
	}
	return d
}

// refusedField: err is an Invalid answer naming field among its causes.
func refusedField(err error, field string) bool {
	if !apierrors.IsInvalid(err) {
		return false
	}
	var status apierrors.APIStatus
	if !errors.As(err, &status) || status.Status().Details == nil {
		return false
	}
	for _, c := range status.Status().Details.Causes {
		if c.Field == field {
			return true
		}
	}
	return false
}

// memberController is one controller the agent runs.
type memberController struct {
	name  string
	setup func(ctrl.Manager) error
}

// memberSide is everything the agent runs against its own member, in one
// place: the member side of a pull-mode cluster. The control plane runs
// the same four controllers for its push-mode members; here each is built
// by its ForAgent constructor (its own cluster only, reading no bindings;
// the Works' Applied condition written with their first status).
func memberSide(cfg Config, mgr ctrl.Manager, members *clusterclient.Cache, recorders *events.Provider, in *interpreter.Interpreter) []memberController {
	workers := max(cfg.Workers, 1)
	return []memberController{
		{clusterstatus.ControllerName, clusterstatus.ForAgent(&clusterstatus.Reconciler{Client: mgr.GetClient(), Members: members, Workers: 1,
			UpdateFrequency: cfg.StatusUpdateFrequency, FailureThreshold: orDefault(cfg.FailureThreshold, 30*time.Second),
			SuccessThreshold: orDefault(cfg.SuccessThreshold, 30*time.Second)}).SetupWithManager},
		{execution.ControllerName, execution.ForAgent(&execution.Reconciler{Client: mgr.GetClient(), Interpreter: in, Members: members, Workers: workers,
			StatusWritesApplied: true, Recorder: recorders.RecorderFor(events.SourceExecution)}).SetupWithManager},
		{workstatus.ControllerName, workstatus.ForAgent(&workstatus.Reconciler{Client: mgr.GetClient(), Interpreter: in, Members: members, Workers: workers,
			Recorder: recorders.RecorderFor(events.SourceWorkStatus)}).SetupWithManager},
		{export.ControllerName, export.ForAgent(&export.Reconciler{Client: mgr.GetClient(), Members: members, Workers: workers}).SetupWithManager},
	}
}

func controllerNames(side []memberController) []string {
	out := make([]string, 0, len(side))
	for _, c := range side {
		out = append(out, c.name)
	}
	return out
}
