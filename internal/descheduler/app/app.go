// Package app builds the karmada-descheduler command.
package app

import (
	"context"
	"fmt"
	"time"

	"github.com/spf13/cobra"
	"k8s.io/klog/v2"
	ctrl "sigs.k8s.io/controller-runtime"

	"github.com/karmada-go/karmada/internal/cli"
	"github.com/karmada-go/karmada/internal/descheduler"
	estimatorclient "github.com/karmada-go/karmada/internal/estimator/client"
	"github.com/karmada-go/karmada/internal/events"
	"github.com/karmada-go/karmada/internal/features"
	"github.com/karmada-go/karmada/internal/metrics"
	"github.com/karmada-go/karmada/internal/version"
)

// Options are the flags, Karmada's names.
type Options struct {
	cli.ManagerOptions
	Interval  time.Duration
	Threshold time.Duration
	Estimator estimatorclient.Options
}

// Validate checks the flags, naming the bad one.
func (o *Options) Validate() error {
	if err := o.ManagerOptions.Validate(); err != nil {
		return err
	}
	switch {
	case o.Interval <= 0:
		return fmt.Errorf("--descheduling-interval=%s: must be positive", o.Interval)
	case o.Threshold <= 0:
		return fmt.Errorf("--unschedulable-threshold=%s: must be positive", o.Threshold)
	}
	o.Estimator.Enabled = true
	return o.Estimator.ValidateConnection("karmada-descheduler")
}

// NewCommand returns the karmada-descheduler command.
func NewCommand() *cobra.Command {
	o := &Options{}
	cmd := &cobra.Command{
		Version: version.Get().String(),
		Use:     "karmada-descheduler",
		Short:   "Move replicas that stay unschedulable in a member to clusters where they fit",
		Long: `karmada-descheduler, every --descheduling-interval, asks each member's
karmada-scheduler-estimator how many replicas of every dynamically divided
ResourceBinding (Divided with dynamicWeight, or Aggregated) have waited longer
than --unschedulable-threshold for a node there, and takes them out of that
cluster's share of spec.clusters. karmada-scheduler then places them where
they fit. It never takes more of a cluster's replicas than are not available
there, so the workload's available replicas do not drop (the member scales
its pending pods down first), and a fleet-wide availability budget holds.
Each change is a DescheduleBindingSucceed event on the binding and its
template.`,
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
	o.ManagerOptions.AddFlags(f, "127.0.0.1:10358")
	f.DurationVar(&o.Interval, "descheduling-interval", 2*time.Minute, "time between two descheduling passes")
	f.DurationVar(&o.Threshold, "unschedulable-threshold", 5*time.Minute, "how long a replica must have waited for a node before it is taken out of its cluster")
	o.Estimator.AddConnectionFlags(f)
	features.Gate.AddFlag(f)
	return cmd
}

// Run starts the descheduler and blocks until ctx ends.
func Run(ctx context.Context, o *Options) error {
	ctrl.SetLogger(klog.NewKlogr())
	metrics.RegisterBuildInfo()
	cfg, err := o.RESTConfig()
	if err != nil {
		return err
	}
	mgr, err := o.NewManager(ctx, cfg, "karmada-descheduler")
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
	pool, err := estimatorclient.NewPool(o.Estimator)
	if err != nil {
		return err
	}
	defer pool.Close()
	if err := mgr.Add(&descheduler.Descheduler{Client: mgr.GetClient(), Pool: pool, Interval: o.Interval, Threshold: o.Threshold,
		Recorder: recorders.RecorderFor(events.SourceDescheduler)}); err != nil {
		return err
	}
	klog.FromContext(ctx).Info("Starting karmada-descheduler", "interval", o.Interval, "unschedulableThreshold", o.Threshold)
	return mgr.Start(ctx)
}

// Main runs the command and returns the exit code.
func Main() int { return cli.Run(NewCommand()) }
