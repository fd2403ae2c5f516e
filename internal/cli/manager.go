package cli

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"net"
	"net/http"
	"os"
	"strings"
	"time"

	"github.com/spf13/pflag"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/uuid"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/discovery"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
	"k8s.io/client-go/tools/leaderelection/resourcelock"
	"k8s.io/klog/v2"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/healthz"
	"sigs.k8s.io/controller-runtime/pkg/manager"

	workv1alpha1 "github.com/karmada-go/karmada/api/work/v1alpha1"
	workv1alpha2 "github.com/karmada-go/karmada/api/work/v1alpha2"
	"github.com/karmada-go/karmada/internal/cache/intern"
	"github.com/karmada-go/karmada/internal/cache/pagedlist"
	"github.com/karmada-go/karmada/internal/certexpiry"
	"github.com/karmada-go/karmada/internal/leaderfence"
	"github.com/karmada-go/karmada/internal/scheme"
	"github.com/karmada-go/karmada/internal/yield"
)

// DefaultWriteQueueTarget is --write-queue-target's default.
const DefaultWriteQueueTarget = 20 * time.Millisecond

// ManagerOptions are the flags of every binary that runs a controller-runtime
// manager against the karmada-apiserver, with Karmada's flag names.
type ManagerOptions struct {
	Kubeconfig              string
	LeaderElect             bool
	LeaderElectionNamespace string
	// LeaseDuration, RenewDeadline and RetryPeriod time the election, as
	// Karmada's --leader-elect-lease-duration, -renew-deadline and
	// -retry-period do.
	LeaseDuration, RenewDeadline, RetryPeriod time.Duration
	Metrics                                   MetricsFlags
	HealthProbeBindAddress                    string
	PprofBindAddress                          string
	KubeAPIQPS                                float32
	KubeAPIBurst                              int
	// WriteQueueTarget is the queueing delay past which the process sends
	// fewer writes at a time (yield); 0 turns that off.
	WriteQueueTarget time.Duration
}

// AddFlags registers the flags, with the component's own health probe
// address as the default, and klog's flags.
func (o *ManagerOptions) AddFlags(f *pflag.FlagSet, healthProbeAddress string) {
	f.StringVar(&o.Kubeconfig, "kubeconfig", "", "kubeconfig of the karmada-apiserver (default: in-cluster, then $KUBECONFIG)")
	f.BoolVar(&o.LeaderElect, "leader-elect", true, "elect a leader before running, so that several replicas can run")
	f.StringVar(&o.LeaderElectionNamespace, "leader-elect-resource-namespace", "karmada-system", "namespace of the leader election lease")
	f.DurationVar(&o.LeaseDuration, "leader-elect-lease-duration", 15*time.Second, "how long a standby waits after the leader's last renewal before it takes the lease over")
	f.DurationVar(&o.RenewDeadline, "leader-elect-renew-deadline", 10*time.Second, "how long the leader keeps trying to renew before it stops leading (and exits); less than the lease duration")
	f.DurationVar(&o.RetryPeriod, "leader-elect-retry-period", 2*time.Second, "how often candidates try to acquire or renew the lease")
	o.Metrics.AddFlags(f)
	f.StringVar(&o.HealthProbeBindAddress, "health-probe-bind-address", healthProbeAddress, "address of plain-HTTP /healthz and /readyz (unauthenticated, as Kubernetes serves them; they tell only ok or not)")
	f.StringVar(&o.PprofBindAddress, "profiling-bind-address", "", "loopback address of an unauthenticated plain-HTTP /debug/pprof; empty disables it (--enable-pprof serves it behind the metrics authentication instead)")
	f.Float32Var(&o.KubeAPIQPS, "kube-api-qps", 200, "queries per second to the karmada-apiserver")
	f.IntVar(&o.KubeAPIBurst, "kube-api-burst", 400, "burst of queries to the karmada-apiserver")
	f.DurationVar(&o.WriteQueueTarget, "write-queue-target", DefaultWriteQueueTarget, "how long this process's writes may queue in the karmada-apiserver (their latency above the least seen in the last two minutes) before it sends fewer at a time, so that users' requests go first; 0 sends every write its workers make at once")
	gofs := flag.NewFlagSet("klog", flag.ExitOnError)
	klog.InitFlags(gofs)
	f.AddGoFlagSet(gofs)
}

// Validate checks the flags, naming the bad one.
func (o *ManagerOptions) Validate() error {
	if o.KubeAPIQPS <= 0 {
		return fmt.Errorf("--kube-api-qps=%v: must be positive", o.KubeAPIQPS)
	}
	if o.WriteQueueTarget < 0 {
		return fmt.Errorf("--write-queue-target=%s: must be 0 (off) or positive", o.WriteQueueTarget)
	}
	if o.KubeAPIBurst <= 0 {
		return fmt.Errorf("--kube-api-burst=%d: must be positive", o.KubeAPIBurst)
	}
	if o.LeaderElect {
		switch {
		case o.RetryPeriod <= 0:
			return fmt.Errorf("--leader-elect-retry-period=%s: must be positive", o.RetryPeriod)
		case o.RenewDeadline <= o.RetryPeriod:
			return fmt.Errorf("--leader-elect-renew-deadline=%s: must be longer than --leader-elect-retry-period (%s)", o.RenewDeadline, o.RetryPeriod)
		case o.LeaseDuration <= o.RenewDeadline:
			return fmt.Errorf("--leader-elect-lease-duration=%s: must be longer than --leader-elect-renew-deadline (%s), or a standby could take the lease while the leader still acts on it", o.LeaseDuration, o.RenewDeadline)
		}
	}
	if o.PprofBindAddress != "" && o.PprofBindAddress != "0" {
		host, _, err := net.SplitHostPort(o.PprofBindAddress)
		if ip := net.ParseIP(host); err != nil || (host != "localhost" && (ip == nil || !ip.IsLoopback())) {
			return fmt.Errorf("--profiling-bind-address=%q: /debug/pprof there is not authenticated, so it listens on a loopback address only (127.0.0.1:6060); --enable-pprof serves it on the metrics address, authenticated", o.PprofBindAddress)
		}
	}
	return o.Metrics.Validate()
}

// RESTConfig loads the karmada-apiserver's configuration from --kubeconfig
// when given (and only from it), else in-cluster or $KUBECONFIG, with the
// flags' QPS and burst.
func (o *ManagerOptions) RESTConfig() (*rest.Config, error) {
	var cfg *rest.Config
	var err error
	if o.Kubeconfig != "" {
		if cfg, err = clientcmd.BuildConfigFromFlags("", o.Kubeconfig); err != nil {
			return nil, fmt.Errorf("--kubeconfig %s: %w", o.Kubeconfig, err)
		}
	} else if cfg, err = ctrl.GetConfig(); err != nil {
		return nil, fmt.Errorf("no --kubeconfig and no in-cluster or $KUBECONFIG configuration: %w", err)
	}
	cfg.QPS, cfg.Burst = o.KubeAPIQPS, o.KubeAPIBurst
	certexpiry.Config(certexpiry.KarmadaAPIServer, cfg)
	return cfg, nil
}

// CacheTransform is what every cache of the project's managers does to an
// object before keeping it: managedFields stripped (nothing reads them, and
// they are often the larger part of an object), the metadata strings
// that repeat across objects shared (intern.Meta), and the raw JSON that
// repeats across objects shared (shareRaw): a binding duplicated to three
// clusters has three Works with the same manifest, and the statuses
// reflected from the members are mostly equal.
func CacheTransform(o any) (any, error) {
	o, err := cache.TransformStripManagedFields()(o)
	if m, ok := o.(metav1.Object); ok && err == nil {
		intern.Meta(m)
	}
	shareRaw(o)
	return o, err
}

// shareRaw passes the raw JSON of Works and bindings through intern.Bytes:
// their manifests, and the member statuses they report. What a cache holds is
// never written to, so shared bytes are safe there; the cached client's
// reads deep-copy them.
func shareRaw(o any) {
	switch o := o.(type) {
	case *workv1alpha1.Work:
		for i := range o.Spec.Workload.Manifests {
			o.Spec.Workload.Manifests[i].Raw = intern.Bytes(o.Spec.Workload.Manifests[i].Raw)
		}
		for i := range o.Status.ManifestStatuses {
			shareStatus(o.Status.ManifestStatuses[i].Status)
		}
	case *workv1alpha2.ResourceBinding:
		shareAggregated(o.Status.AggregatedStatus)
	case *workv1alpha2.ClusterResourceBinding:
		shareAggregated(o.Status.AggregatedStatus)
	}
}

func shareAggregated(items []workv1alpha2.AggregatedStatusItem) {
	for i := range items {
		shareStatus(items[i].Status)
	}
}

func shareStatus(s *runtime.RawExtension) {
	if s != nil {
		s.Raw = intern.Bytes(s.Raw)
	}
}

// CacheOptions are the options of every cache of the project's managers:
// CacheTransform on every object, and informers that list a page at a time
// (pagedlist), each page through CacheTransform before the next is read, so
// that a start with tens of thousands of objects does not hold them all as
// they came from the API server at once.
func CacheOptions() cache.Options {
	return cache.Options{DefaultTransform: CacheTransform, NewInformer: pagedlist.NewInformerFunc(CacheTransform, 0)}
}

// NewManager creates the manager: the project's scheme, CacheOptions, metrics, probes, pprof and leader election
// under leaderElectionID; customize, when given, changes those options
// further. /healthz and /readyz answer once it runs.
//
// It first waits until the karmada-apiserver serves the Karmada API
// (KarmadaGroupVersions): on a fresh install the CRDs come a moment after
// the components start (the chart's setup Job), and a component that exits
// for want of them would be restarted with a growing back-off.
func (o *ManagerOptions) NewManager(ctx context.Context, cfg *rest.Config, leaderElectionID string, customize ...func(*ctrl.Options)) (manager.Manager, error) {
	if err := WaitForAPIs(ctx, cfg, o.HealthProbeBindAddress, KarmadaGroupVersions...); err != nil {
		return nil, err
	}
	var lock resourcelock.Interface
	if o.LeaderElect {
		// Every write of the process, to the karmada-apiserver and (through
		// clusterclient) to the members, passes the fence: none once the
		// lease may have passed to another replica (leaderfence).
		cfg = rest.CopyConfig(cfg)
		cfg.Wrap(leaderfence.Default.Wrap)
		var err error
		if lock, err = o.leaseLock(cfg, leaderElectionID); err != nil {
			return nil, err
		}
		leaderfence.Default.Enable(o.RenewDeadline)
	}
	if o.WriteQueueTarget > 0 {
		// Outside the fence, so that a write held here is fenced when it is
		// sent, not when it was made.
		cfg = rest.CopyConfig(cfg)
		cfg.Wrap(yield.New(o.WriteQueueTarget).Wrap)
	}
	opts := ctrl.Options{
		Scheme:                  scheme.Scheme,
		Cache:                   CacheOptions(),
		Metrics:                 o.Metrics.ServerOptions(),
		HealthProbeBindAddress:  o.HealthProbeBindAddress,
		PprofBindAddress:        o.PprofBindAddress,
		LeaderElection:          o.LeaderElect,
		LeaderElectionID:        leaderElectionID,
		LeaderElectionNamespace: o.LeaderElectionNamespace,
		// The lease lock, whose renewals open the fence.
		LeaderElectionResourceLockInterface: lock,
		LeaseDuration:                       &o.LeaseDuration,
		RenewDeadline:                       &o.RenewDeadline,
		RetryPeriod:                         &o.RetryPeriod,
		// A replica that stops (SIGTERM, a rollout) hands the lease over
		// at once instead of leaving the standby to wait for it to expire.
		// Every runnable has returned by then, so nothing acts after.
		LeaderElectionReleaseOnCancel: true,
	}
	for _, c := range customize {
		c(&opts)
	}
	mgr, err := ctrl.NewManager(cfg, opts)
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

// leaseLock is the Lease leaderElectionID in the election's namespace, held
// under an identity of this process (host name and a random suffix, as
// Kubernetes' components name theirs), recorded by the fence.
func (o *ManagerOptions) leaseLock(cfg *rest.Config, leaderElectionID string) (resourcelock.Interface, error) {
	host, err := os.Hostname()
	if err != nil {
		return nil, fmt.Errorf("leader election identity: %w", err)
	}
	lockCfg := rest.AddUserAgent(rest.CopyConfig(cfg), "leader-election")
	// A renewal that hangs must not outlast the renew deadline.
	lockCfg.Timeout = o.RenewDeadline / 2
	kc, err := kubernetes.NewForConfig(lockCfg)
	if err != nil {
		return nil, err
	}
	lock, err := resourcelock.New(resourcelock.LeasesResourceLock, o.LeaderElectionNamespace, leaderElectionID,
		kc.CoreV1(), kc.CoordinationV1(), resourcelock.ResourceLockConfig{Identity: host + "_" + string(uuid.NewUUID())})
	if err != nil {
		return nil, err
	}
	return leaderfence.Default.Lock(lock), nil
}

// KarmadaGroupVersions are the API versions of the Karmada CRDs every
// control plane component needs served before it starts.
var KarmadaGroupVersions = []string{"cluster.karmada.io/v1alpha1", "policy.karmada.io/v1alpha1", "work.karmada.io/v1alpha1", "work.karmada.io/v1alpha2"}

// WaitForAPIs returns once the API server cfg reaches serves every group
// version of gvs. Meanwhile, when healthAddress is set, it answers there
// /healthz (alive) and /readyz (not ready, saying what it waits for), so
// that the kubelet neither restarts nor routes to a component that waits.
func WaitForAPIs(ctx context.Context, cfg *rest.Config, healthAddress string, gvs ...string) error {
	dc, err := discovery.NewDiscoveryClientForConfig(cfg)
	if err != nil {
		return err
	}
	missing := func(ctx context.Context) []string {
		var out []string
		for _, gv := range gvs {
			if _, err := dc.ServerResourcesForGroupVersion(gv); err != nil {
				out = append(out, gv)
			}
		}
		return out
	}
	waiting := missing(ctx)
	if len(waiting) == 0 {
		return nil
	}
	log := klog.FromContext(ctx)
	if healthAddress != "" && healthAddress != "0" {
		l, err := net.Listen("tcp", healthAddress)
		if err != nil {
			return fmt.Errorf("--health-probe-bind-address: %w", err)
		}
		mux := http.NewServeMux()
		mux.HandleFunc("/healthz", func(w http.ResponseWriter, _ *http.Request) { _, _ = w.Write([]byte("ok")) })
		mux.HandleFunc("/readyz", func(w http.ResponseWriter, _ *http.Request) {
			http.Error(w, "waiting for the Karmada API to be installed (karmadactl setup)", http.StatusServiceUnavailable)
		})
		srv := &http.Server{Handler: mux, ReadHeaderTimeout: 5 * time.Second}
		go func() { _ = srv.Serve(l) }()
		// Closed before the manager binds the same address.
		defer srv.Close()
	}
	last := time.Time{}
	err = wait.PollUntilContextCancel(ctx, 2*time.Second, true, func(ctx context.Context) (bool, error) {
		waiting = missing(ctx)
		if len(waiting) > 0 && time.Since(last) > 30*time.Second {
			log.Info("Waiting for the Karmada API to be installed (karmadactl setup, or the chart's setup Job)", "server", cfg.Host, "missing", strings.Join(waiting, ","))
			last = time.Now()
		}
		return len(waiting) == 0, nil
	})
	if err != nil {
		return errors.Join(fmt.Errorf("the karmada-apiserver at %s does not serve %s", cfg.Host, strings.Join(waiting, ", ")), err)
	}
	log.Info("The Karmada API is served", "server", cfg.Host)
	return nil
}
