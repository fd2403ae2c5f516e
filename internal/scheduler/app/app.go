// Package app builds the karmada-scheduler command.
package app

import (
	"context"
	"fmt"

	"github.com/spf13/cobra"
	"k8s.io/klog/v2"
	ctrl "sigs.k8s.io/controller-runtime"

	"github.com/karmada-go/karmada/internal/cli"
	estimatorclient "github.com/karmada-go/karmada/internal/estimator/client"
	"github.com/karmada-go/karmada/internal/events"
	"github.com/karmada-go/karmada/internal/features"
	"github.com/karmada-go/karmada/internal/metrics"
	"github.com/karmada-go/karmada/internal/scheduler"
	"github.com/karmada-go/karmada/internal/scheduler/framework"
	"github.com/karmada-go/karmada/internal/scheduler/plugins"
	"github.com/karmada-go/karmada/internal/version"
)

// Options are the flags of karmada-scheduler.
type Options struct {
	cli.ManagerOptions
	SchedulerName string
	Plugins       []string
	Workers       int
	Estimator     estimatorclient.Options
}

// Validate checks the flags, naming the bad one.
func (o *Options) Validate() error {
	if err := o.ManagerOptions.Validate(); err != nil {
		return err
	}
	if _, err := framework.Enabled(plugins.NewInTreeRegistry(), o.Plugins); err != nil {
		return err
	}
	if o.Workers <= 0 {
		return fmt.Errorf("--concurrent-syncs=%d: must be positive", o.Workers)
	}
	return o.Estimator.Validate()
}

// NewCommand returns the karmada-scheduler command.
func NewCommand() *cobra.Command {
	o := &Options{}
	cmd := &cobra.Command{
		Version: version.Get().String(),
		Use:     "karmada-scheduler",
		Short:   "Place ResourceBindings and ClusterResourceBindings on member clusters",
		Long: `karmada-scheduler filters the member clusters with its filter plugins
(APIEnablement, ClusterAffinity, ClusterEviction, SpreadConstraint,
TaintToleration), estimates the replicas each can still take from its
resource summary, scores them (ClusterLocality), selects groups by the spread
constraints, divides the binding's replicas (Duplicated; Divided by static
weight, by available replicas, or Aggregated), trying clusterAffinities terms
in order, and writes spec.clusters. The outcome goes to the binding's
Scheduled condition (with the reason per cluster when nothing fits) and, per
cluster, to status.placementExplanation (see karmadactl explain-placement).

Replicas it has just assigned to a cluster are deducted from later estimates
until the binding reports its copy there Healthy (or a minute has passed), so
that bindings scheduled back to back do not all count the same free room.
With --enable-scheduler-estimator it also asks each feasible member's
karmada-scheduler-estimator (in parallel, within --scheduler-estimator-timeout)
and keeps the smaller answer: node-level fit, which the resource summary
cannot see. An estimator that does not answer leaves the general estimate
standing, with an EstimatorFallback event on the binding and
karmada_scheduler_estimator_fallback_total.`,
		SilenceUsage:  true,
		SilenceErrors: true,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if err := features.Check(); err != nil {
				return err
			}
			if err := o.Validate(); err != nil {
				return err
			}
			return Run(cmd.Context(), o)
		},
	}
	f := cmd.Flags()
	o.ManagerOptions.AddFlags(f, "127.0.0.1:10351")
	features.Gate.AddFlag(f)
	f.StringVar(&o.SchedulerName, "scheduler-name", scheduler.DefaultSchedulerName, "bindings naming this scheduler (or none) are scheduled here")
	f.StringSliceVar(&o.Plugins, "plugins", []string{"*"}, "plugins to run: '*' for all, 'name' to enable, '-name' to disable")
	f.IntVar(&o.Workers, "concurrent-syncs", 5, "bindings scheduled at once")
	o.Estimator.AddFlags(f)
	return cmd
}

// Run starts the scheduler and blocks until ctx ends.
func Run(ctx context.Context, o *Options) error {
	ctrl.SetLogger(klog.NewKlogr())
	metrics.RegisterScheduler()
	fw, err := framework.New(plugins.NewInTreeRegistry(), o.Plugins)
	if err != nil {
		return err
	}
	estimates := &scheduler.Estimates{Assumed: &scheduler.Assumptions{}, DisableInPullMode: o.Estimator.DisableInPullMode}
	if o.Estimator.Enabled {
		if estimates.Pool, err = estimatorclient.NewPool(o.Estimator); err != nil {
			return err
		}
		defer estimates.Pool.Close()
	}
	fw.Estimator = estimates
	cfg, err := o.RESTConfig()
	if err != nil {
		return err
	}
	mgr, err := o.NewManager(ctx, cfg, "karmada-scheduler")
	if err != nil {
		return err
	}
	recorders, err := events.NewProvider(mgr.GetConfig(), mgr.GetScheme())
	if err != nil {
		return err
	}
	if err := mgr.Add(recorders); err != nil {
		return err
	}
	if err := (&scheduler.Scheduler{Client: mgr.GetClient(), Framework: fw, SchedulerName: o.SchedulerName, Workers: o.Workers,
		Recorder: recorders.RecorderFor(events.SourceScheduler), DirectNarrowing: !features.Gate.Enabled(features.GracefulEviction), Estimates: estimates,
		PriorityOrder: features.Gate.Enabled(features.PriorityBasedScheduling), WorkloadAffinity: features.Gate.Enabled(features.WorkloadAffinity)}).SetupWithManager(mgr); err != nil {
		return err
	}
	klog.FromContext(ctx).Info("Starting karmada-scheduler", "plugins", o.Plugins, "schedulerName", o.SchedulerName, "schedulerEstimator", o.Estimator.Enabled)
	return mgr.Start(ctx)
}

// Main runs the command and returns the exit code.
func Main() int { return cli.Run(NewCommand()) }
