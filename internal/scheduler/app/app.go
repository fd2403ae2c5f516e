// Package app builds the karmada-scheduler command.
package app

import (
	"context"
	"flag"
	"fmt"

	"github.com/spf13/cobra"
	"k8s.io/client-go/tools/clientcmd"
	"k8s.io/klog/v2"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/healthz"

	"github.com/karmada-go/karmada/internal/cli"
	"github.com/karmada-go/karmada/internal/scheduler"
	"github.com/karmada-go/karmada/internal/scheduler/framework"
	"github.com/karmada-go/karmada/internal/scheduler/plugins"
	"github.com/karmada-go/karmada/internal/scheme"
)

// Options are the flags of karmada-scheduler.
type Options struct {
	Kubeconfig              string
	LeaderElect             bool
	LeaderElectionNamespace string
	MetricsBindAddress      string
	HealthProbeBindAddress  string
	PprofBindAddress        string
	EnablePprof             bool
	SchedulerName           string
	Plugins                 []string
	KubeAPIQPS              float32
	KubeAPIBurst            int
	Workers                 int
}

// NewCommand returns the karmada-scheduler command.
func NewCommand() *cobra.Command {
	o := &Options{}
	cmd := &cobra.Command{
		Use:   "karmada-scheduler",
		Short: "Place ResourceBindings and ClusterResourceBindings on member clusters",
		Long: `karmada-scheduler filters the member clusters with its filter plugins
(APIEnablement, ClusterAffinity, ClusterEviction, SpreadConstraint,
TaintToleration), estimates the replicas each can still take from its
resource summary, scores them (ClusterLocality), selects groups by the spread
constraints, divides the binding's replicas (Duplicated; Divided by static
weight, by available replicas, or Aggregated), trying clusterAffinities terms
in order, and writes spec.clusters. The outcome goes to the binding's
Scheduled condition (with the reason per cluster when nothing fits) and, per
cluster, to status.placementExplanation (see karmadactl explain-placement).`,
		SilenceUsage:  true,
		SilenceErrors: true,
		RunE: func(cmd *cobra.Command, _ []string) error {
			return Run(cmd.Context(), o)
		},
	}
	f := cmd.Flags()
	f.StringVar(&o.Kubeconfig, "kubeconfig", "", "kubeconfig of the karmada-apiserver (default: in-cluster, then $KUBECONFIG)")
	f.BoolVar(&o.LeaderElect, "leader-elect", true, "elect a leader before scheduling, so that several replicas can run")
	f.StringVar(&o.LeaderElectionNamespace, "leader-elect-resource-namespace", "karmada-system", "namespace of the leader election lease")
	f.StringVar(&o.MetricsBindAddress, "metrics-bind-address", ":8080", "address of /metrics; '0' disables it")
	f.StringVar(&o.HealthProbeBindAddress, "health-probe-bind-address", ":10351", "address of /healthz and /readyz")
	f.StringVar(&o.PprofBindAddress, "profiling-bind-address", "", "address of /debug/pprof; empty disables it")
	f.BoolVar(&o.EnablePprof, "enable-pprof", false, "also serve /debug/pprof on the metrics address")
	f.StringVar(&o.SchedulerName, "scheduler-name", scheduler.DefaultSchedulerName, "bindings naming this scheduler (or none) are scheduled here")
	f.StringSliceVar(&o.Plugins, "plugins", []string{"*"}, "plugins to run: '*' for all, 'name' to enable, '-name' to disable")
	f.Float32Var(&o.KubeAPIQPS, "kube-api-qps", 200, "queries per second to the karmada-apiserver")
	f.IntVar(&o.KubeAPIBurst, "kube-api-burst", 400, "burst of queries to the karmada-apiserver")
	f.IntVar(&o.Workers, "concurrent-syncs", 5, "bindings scheduled at once")
	gofs := flag.NewFlagSet("klog", flag.ExitOnError)
	klog.InitFlags(gofs)
	f.AddGoFlagSet(gofs)
	return cmd
}

// Run starts the scheduler and blocks until ctx ends.
func Run(ctx context.Context, o *Options) error {
	ctrl.SetLogger(klog.NewKlogr())
	fw, err := framework.New(plugins.NewInTreeRegistry(), o.Plugins)
	if err != nil {
		return err
	}
	cfg, err := ctrl.GetConfig()
	if o.Kubeconfig != "" {
		cfg, err = clientcmd.BuildConfigFromFlags("", o.Kubeconfig)
	}
	if err != nil {
		return fmt.Errorf("loading the karmada-apiserver configuration (--kubeconfig): %w", err)
	}
	cfg.QPS, cfg.Burst = o.KubeAPIQPS, o.KubeAPIBurst
	mgr, err := ctrl.NewManager(cfg, ctrl.Options{
		Scheme:                  scheme.Scheme,
		Metrics:                 cli.MetricsOptions(o.MetricsBindAddress, o.EnablePprof),
		HealthProbeBindAddress:  o.HealthProbeBindAddress,
		PprofBindAddress:        o.PprofBindAddress,
		LeaderElection:          o.LeaderElect,
		LeaderElectionID:        "karmada-scheduler",
		LeaderElectionNamespace: o.LeaderElectionNamespace,
	})
	if err != nil {
		return fmt.Errorf("creating the manager: %w", err)
	}
	if err := (&scheduler.Scheduler{Client: mgr.GetClient(), Framework: fw, SchedulerName: o.SchedulerName, Workers: o.Workers}).SetupWithManager(mgr); err != nil {
		return err
	}
	if err := mgr.AddHealthzCheck("ping", healthz.Ping); err != nil {
		return err
	}
	if err := mgr.AddReadyzCheck("ping", healthz.Ping); err != nil {
		return err
	}
	klog.FromContext(ctx).Info("Starting karmada-scheduler", "plugins", o.Plugins, "schedulerName", o.SchedulerName)
	return mgr.Start(ctx)
}

// Main runs the command and returns the exit code.
func Main() int { return cli.Run(NewCommand()) }
