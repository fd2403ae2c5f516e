// Package app is the karmada-agent command: flags, with Karmada's names.
package app

import (
	"errors"
	"flag"
	"fmt"
	"time"

	"github.com/spf13/cobra"
	"k8s.io/client-go/rest"
	"k8s.io/klog/v2"
	ctrl "sigs.k8s.io/controller-runtime"

	"github.com/karmada-go/karmada/internal/agent"
	"github.com/karmada-go/karmada/internal/cli"
	"github.com/karmada-go/karmada/internal/features"
	"github.com/karmada-go/karmada/internal/names"
	"github.com/karmada-go/karmada/internal/version"
)

// Options are karmada-agent's flags.
type Options struct {
	KarmadaKubeconfig      string
	KarmadaContext         string
	Kubeconfig             string
	ClusterName            string
	StatusUpdateFrequency  time.Duration
	FailureThreshold       time.Duration
	SuccessThreshold       time.Duration
	LeaseDuration          time.Duration
	RenewFraction          float64
	ConcurrentWorkSyncs    int
	HealthProbeBindAddress string
	Metrics                cli.MetricsFlags
	RotationInterval       time.Duration
	RotationThreshold      float64
	Provider, Region       string
	Zones                  []string
}

// Validate checks the flags, naming the bad one.
func (o *Options) Validate() error {
	switch {
	case o.KarmadaKubeconfig == "":
		return errors.New("--karmada-kubeconfig is required: the agent's kubeconfig of the control plane (karmadactl register writes it into the member's Secret karmada-system/karmada-kubeconfig)")
	case o.ClusterName == "":
		return errors.New("--cluster-name is required: the name the cluster was registered under")
	case o.StatusUpdateFrequency <= 0:
		return fmt.Errorf("--cluster-status-update-frequency=%s: must be positive", o.StatusUpdateFrequency)
	case o.FailureThreshold <= 0 || o.SuccessThreshold <= 0:
		return fmt.Errorf("--cluster-failure-threshold=%s, --cluster-success-threshold=%s: must be positive", o.FailureThreshold, o.SuccessThreshold)
	case o.LeaseDuration < time.Second:
		return fmt.Errorf("--cluster-lease-duration=%s: must be at least 1s", o.LeaseDuration)
	case o.RenewFraction <= 0 || o.RenewFraction >= 1:
		return fmt.Errorf("--cluster-lease-renew-interval-fraction=%v: must be between 0 and 1", o.RenewFraction)
	case o.ConcurrentWorkSyncs < 1:
		return fmt.Errorf("--concurrent-work-syncs=%d: must be positive", o.ConcurrentWorkSyncs)
	case o.RotationInterval < 0:
		return fmt.Errorf("--cert-rotation-checking-interval=%s: must not be negative (0 turns rotation off)", o.RotationInterval)
	case o.RotationThreshold <= 0 || o.RotationThreshold > 1:
		return fmt.Errorf("--cert-rotation-remaining-time-threshold=%v: must be in (0, 1]", o.RotationThreshold)
	}
	if errs := names.ClusterNameErrors(o.ClusterName); len(errs) > 0 {
		return fmt.Errorf("--cluster-name %q is invalid: %s", o.ClusterName, errs[0])
	}
	return o.Metrics.Validate()
}

// NewCommand returns the karmada-agent command.
func NewCommand() *cobra.Command {
	o := &Options{}
	cmd := &cobra.Command{
		Version: version.Get().String(),
		Use:     "karmada-agent --karmada-kubeconfig F --cluster-name NAME",
		Short:   "Run a pull-mode member's side of Karmada",
		Long: `karmada-agent runs in (or beside) a pull-mode member cluster, registered with
karmadactl register. With the identity register obtained, it records the
member's id on its Cluster (refusing a Cluster registered for another
member), reports the cluster's status, applies the Works of its execution
namespace and reports their status (the controller manager's own code, with
conflict resolution), and renews its Lease karmada-cluster/<name> in the
control plane. It deletes a member object only for a Work it saw deleted;
a restart or a control plane out of reach deletes nothing.

It renews its client certificate of the control plane at 80% of its
lifetime (--cert-rotation-remaining-time-threshold), uses the new one at
once, and keeps it in the member's Secret karmada-system/karmada-kubeconfig
(and in --karmada-kubeconfig, when that file is writable).`,
		SilenceUsage:  true,
		SilenceErrors: true,
		Args:          cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if err := features.Check(); err != nil {
				return err
			}
			if err := o.Validate(); err != nil {
				return err
			}
			ctrl.SetLogger(klog.NewKlogr())
			karmada, err := cli.LoadConfig(o.KarmadaKubeconfig, o.KarmadaContext)
			if err != nil {
				return fmt.Errorf("--karmada-kubeconfig %s: %w", o.KarmadaKubeconfig, err)
			}
			karmada, creds, err := agent.RotatingConfig(karmada)
			if err != nil {
				return fmt.Errorf("--karmada-kubeconfig %s: %w", o.KarmadaKubeconfig, err)
			}
			var member *rest.Config
			if o.Kubeconfig != "" {
				member, err = cli.LoadConfig(o.Kubeconfig, "")
			} else {
				member, err = ctrl.GetConfig()
			}
			if err != nil {
				return fmt.Errorf("reaching the member cluster (--kubeconfig, in-cluster or $KUBECONFIG): %w", err)
			}
			return agent.Run(cmd.Context(), agent.Config{
				Karmada: karmada, Member: member, ClusterName: o.ClusterName,
				StatusUpdateFrequency: o.StatusUpdateFrequency, FailureThreshold: o.FailureThreshold, SuccessThreshold: o.SuccessThreshold, LeaseDuration: o.LeaseDuration, RenewFraction: o.RenewFraction,
				Metrics:                o.Metrics.ServerOptionsReviewedBy(member),
				HealthProbeBindAddress: o.HealthProbeBindAddress, Workers: o.ConcurrentWorkSyncs,
				Credentials: creds,
				Rotation:    agent.RotationConfig{CheckInterval: o.RotationInterval, Threshold: o.RotationThreshold, KubeconfigFile: o.KarmadaKubeconfig},
				Provider:    o.Provider, Region: o.Region, Zones: o.Zones,
			})
		},
	}
	f := cmd.Flags()
	f.StringVar(&o.KarmadaKubeconfig, "karmada-kubeconfig", "", "kubeconfig of the Karmada control plane, with the agent's identity (required)")
	f.StringVar(&o.KarmadaContext, "karmada-context", "", "context of --karmada-kubeconfig (default: its current context)")
	f.StringVar(&o.Kubeconfig, "kubeconfig", "", "kubeconfig of the member cluster (default: in-cluster, then $KUBECONFIG)")
	f.StringVar(&o.ClusterName, "cluster-name", "", "name of the member cluster in the control plane (required)")
	f.DurationVar(&o.StatusUpdateFrequency, "cluster-status-update-frequency", 10*time.Second, "how often the cluster's status is probed and updated")
	f.DurationVar(&o.FailureThreshold, "cluster-failure-threshold", 30*time.Second, "how long the cluster must keep failing its probe before it is reported not Ready")
	f.DurationVar(&o.SuccessThreshold, "cluster-success-threshold", 30*time.Second, "how long the cluster must keep passing its probe before it is reported Ready again (not waited for after Unknown: the control plane had only stopped hearing from the agent)")
	f.DurationVar(&o.LeaseDuration, "cluster-lease-duration", 40*time.Second, "duration of the cluster's Lease in the control plane")
	f.Float64Var(&o.RenewFraction, "cluster-lease-renew-interval-fraction", 0.25, "the Lease is renewed every --cluster-lease-duration times this")
	f.IntVar(&o.ConcurrentWorkSyncs, "concurrent-work-syncs", 5, "Works applied at once")
	f.StringVar(&o.HealthProbeBindAddress, "health-probe-bind-address", "127.0.0.1:10357", "address of plain-HTTP /healthz and /readyz")
	f.DurationVar(&o.RotationInterval, "cert-rotation-checking-interval", 5*time.Minute, "how often the agent checks whether its client certificate of the control plane is due for renewal (0: never renew)")
	f.Float64Var(&o.RotationThreshold, "cert-rotation-remaining-time-threshold", 0.2, "the certificate is renewed when this share of its lifetime is left (0.2: at 80%)")
	f.StringVar(&o.Provider, "cluster-provider", "", "the cluster's provider, recorded on its Cluster")
	f.StringVar(&o.Region, "cluster-region", "", "the cluster's region, recorded on its Cluster")
	f.StringSliceVar(&o.Zones, "cluster-zones", nil, "the cluster's zones, recorded on its Cluster")
	o.Metrics.AddFlags(f)
	features.Gate.AddFlag(f)
	gofs := flag.NewFlagSet("klog", flag.ExitOnError)
	klog.InitFlags(gofs)
	f.AddGoFlagSet(gofs)
	return cmd
}

// Main runs the command and returns the exit code.
func Main() int { return cli.Run(NewCommand()) }
