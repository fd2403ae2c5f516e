// Package app builds the karmada-local command: a whole Karmada fleet on one
// machine, from the binaries in bin/, with nothing downloaded.
package app

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"
	corev1 "k8s.io/api/core/v1"

	"github.com/karmada-go/karmada/internal/certexpiry"
	"github.com/karmada-go/karmada/internal/cli"
	"github.com/karmada-go/karmada/internal/localup"
	"github.com/karmada-go/karmada/internal/localup/custommetrics"
	"github.com/karmada-go/karmada/internal/localup/kwok"
	"github.com/karmada-go/karmada/internal/localup/pki"
	"github.com/karmada-go/karmada/internal/localup/plan"
	"github.com/karmada-go/karmada/internal/localup/process"
	"github.com/karmada-go/karmada/internal/version"
)

// Defaults of the fleet.
const (
	defaultMembers        = 3
	defaultNodesPerMember = 3
	defaultPortBase       = 31000
)

type globalOptions struct {
	stateDir string
	binDir   string
}

// NewCommand returns the karmada-local root command.
func NewCommand() *cobra.Command {
	g := &globalOptions{}
	cmd := &cobra.Command{
		Version: version.Get().String(),
		Use:     "karmada-local",
		Short:   "Run a whole Karmada fleet on this machine",
		Long: `karmada-local runs a Karmada control plane and member clusters on this
machine as local processes: etcd, karmada-apiserver (a real kube-apiserver)
with its kube-controller-manager, and member clusters member1..N, each a real
kube-apiserver, kube-controller-manager and kube-scheduler with kwok nodes.
Everything listens on 127.0.0.1 with TLS; nothing is downloaded.`,
		SilenceUsage:  true,
		SilenceErrors: true,
	}
	home, _ := os.UserHomeDir()
	defaultState := filepath.Join(home, ".karmada-local")
	if env := os.Getenv("KARMADA_LOCAL_STATE_DIR"); env != "" {
		defaultState = env
	}
	cmd.PersistentFlags().StringVar(&g.stateDir, "state-dir", defaultState,
		"directory holding certificates, etcd data, logs and pids (env KARMADA_LOCAL_STATE_DIR)")
	cmd.PersistentFlags().StringVar(&g.binDir, "bin-dir", defaultBinDir(),
		"directory holding kube-apiserver, kube-controller-manager, kube-scheduler, etcd and kwok")
	cmd.AddCommand(newUpCommand(g), newDownCommand(g), newStatusCommand(g), newMemberCommand(g), newAgentCommand(g), newComponentCommand(g), newCertsCommand(g), newHostCommand(g), newUsageCommand(g), newMemberCustomMetricsCommand())
	return cmd
}

// defaultBinDir is the directory of this executable, where `make build` puts
// every binary.
func defaultBinDir() string {
	exe, err := os.Executable()
	if err != nil {
		return "bin"
	}
	if resolved, err := filepath.EvalSymlinks(exe); err == nil {
		exe = resolved
	}
	return filepath.Dir(exe)
}

// Run executes the command and returns the process exit code.
func Run() int { return cli.Run(NewCommand()) }

func newUpCommand(g *globalOptions) *cobra.Command {
	cfg := plan.Config{}
	home, _ := os.UserHomeDir()
	var nodeCapacity []string
	cmd := &cobra.Command{
		Use:   "up",
		Short: "Start the fleet, or whatever part of it is not running",
		Long: `Start etcd, the Karmada control plane and the member clusters, and wait until
every API server answers and every node is Ready. Running it again when the
fleet is up changes nothing. Data is kept in --state-dir across down and up.`,
		Example: `  # three members of three nodes each, contexts in ~/.kube/karmada.config
  karmada-local up

  # ten members of two nodes each
  karmada-local up --members 10 --nodes-per-member 2

  # two members, member2 in pull mode, joined to a control plane installed on
  # the host cluster (karmada-local host up; karmadactl init)
  karmada-local up --members 2 --pull-members member2 --advertise-address 172.30.255.1 \
    --karmada-kubeconfig /etc/karmada/karmada-apiserver.config`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			cfg.StateDir, cfg.BinDir = g.stateDir, g.binDir
			if cfg.ExternalKarmada != "" {
				abs, err := filepath.Abs(cfg.ExternalKarmada)
				if err != nil {
					return err
				}
				cfg.ExternalKarmada = abs
			}
			// Lifetimes not given keep what up was last given (0).
			if !cmd.Flags().Changed("cert-validity-period") {
				cfg.CertValidity = 0
			}
			if !cmd.Flags().Changed("ca-validity-period") {
				cfg.CAValidity = 0
			}
			if !cmd.Flags().Changed("pull-members") && cfg.Members >= 3 {
				// As Karmada's own local setup: member3 in pull mode.
				cfg.PullMembers = []string{plan.MemberName(3)}
			}
			if cmd.Flags().Changed("node-capacity") {
				nc, err := kwok.ParseNodeCapacity(nodeCapacity)
				if err != nil {
					return err
				}
				if cfg.NodeCapacity = nc; nc == nil {
					// --node-capacity= resets every member to the default.
					cfg.NodeCapacity = map[string]corev1.ResourceList{}
				}
			}
			return localup.Up(cmd.Context(), cfg, cmd.OutOrStdout())
		},
	}
	cmd.Flags().IntVar(&cfg.Members, "members", defaultMembers, "number of member clusters (member1..N)")
	cmd.Flags().IntVar(&cfg.NodesPerMember, "nodes-per-member", defaultNodesPerMember, "number of kwok nodes in each member")
	cmd.Flags().StringArrayVar(&nodeCapacity, "node-capacity", nil, "capacity of a member's kwok nodes, MEMBER:RESOURCE=QUANTITY[,...] (repeatable), e.g. member2:cpu=16,memory=64Gi; unnamed resources keep the default 8 cpu, 32Gi, 110 pods (kept by later ups without the flag; --node-capacity= resets)")
	cmd.Flags().StringVar(&cfg.Kubeconfig, "kubeconfig", filepath.Join(home, ".kube", "karmada.config"), "kubeconfig file that receives the contexts karmada-apiserver and member1..N")
	cmd.Flags().IntVar(&cfg.PortBase, "port-base", defaultPortBase, "first port of the fleet; cluster i (0 = control plane) uses the ten ports from port-base+10*i (--ha: and the twenty after the last member's)")
	cmd.Flags().BoolVar(&cfg.HA, "ha", false, "a highly available control plane: three etcd members, two karmada-apiservers and two karmada-webhooks behind haproxy (Debian package; make ha-deps), two leader-elected replicas of kube-controller-manager, karmada-controller-manager and karmada-scheduler")
	cmd.Flags().StringSliceVar(&cfg.PropagateKinds, "propagate-kinds", nil, "kinds Karmada may write in the members, as karmadactl join --propagate-kinds takes them (default "+strings.Join(plan.DefaultPropagateKinds, ",")+")")
	cmd.Flags().BoolVar(&cfg.ClusterAdmin, "cluster-admin", false, "join the members with karmadactl join --cluster-admin (every right in the members) instead")
	cmd.Flags().BoolVar(&cfg.Profiling, "profiling", false, "serve /debug/pprof on every kube-apiserver (kube-apiserver --profiling; an admin's credentials are needed) and on etcd (--enable-pprof; its client certificates); off by default")
	cmd.Flags().StringVar(&cfg.AdvertiseAddress, "advertise-address", "", "address the API servers listen at and are reached at (default 127.0.0.1); the host cluster's node address lets its pods reach the members")
	cmd.Flags().StringVar(&cfg.ExternalKarmada, "karmada-kubeconfig", "", "kubeconfig of a Karmada control plane running elsewhere (on a host cluster): start no control plane, and join or register the members there")
	cmd.Flags().StringVar(&cfg.ExternalKarmadaContext, "karmada-context", "", "context of --karmada-kubeconfig (default: its current context)")
	cmd.Flags().DurationVar(&cfg.CertValidity, "cert-validity-period", pki.DefaultCertValidity, "lifetime of the certificates karmada-local issues (each one issued for another lifetime is issued again; kept by later ups without the flag)")
	cmd.Flags().DurationVar(&cfg.ClusterFailureThreshold, "cluster-failure-threshold", 0, "how long a member must keep failing its health probe before its Cluster turns NotReady (the controller manager's and agents' flag; default theirs, 30s; kept by later ups without the flag)")
	cmd.Flags().DurationVar(&cfg.ClusterSuccessThreshold, "cluster-success-threshold", 0, "how long a NotReady member must keep passing its health probe before its Cluster turns Ready (default 30s; kept by later ups without the flag)")
	cmd.Flags().DurationVar(&cfg.DeschedulingInterval, "descheduling-interval", 0, "karmada-descheduler's --descheduling-interval (default its own, 2m; kept by later ups without the flag)")
	cmd.Flags().DurationVar(&cfg.UnschedulableThreshold, "unschedulable-threshold", 0, "karmada-descheduler's --unschedulable-threshold (default its own, 5m; kept by later ups without the flag)")
	cmd.Flags().DurationVar(&cfg.CAValidity, "ca-validity-period", pki.DefaultCAValidity, "lifetime of a new CA (an existing CA is kept: replacing it would invalidate every kubeconfig)")
	cmd.Flags().StringSliceVar(&cfg.PullMembers, "pull-members", nil, "members registered in pull mode (karmadactl register) and served by a karmada-agent process; the others are joined in push mode (default member3 when the fleet has three members or more; --pull-members= for none)")
	return cmd
}

func newDownCommand(g *globalOptions) *cobra.Command {
	opts := localup.DownOptions{}
	cmd := &cobra.Command{
		Use:   "down",
		Short: "Stop every process of the fleet",
		Long: `Stop every process karmada-local started for this state directory, by pid,
and wait until each has exited. Data is kept for the next up unless --purge.`,
		Example: `  karmada-local down
  # also delete etcd data, certificates, logs and the kubeconfig contexts
  karmada-local down --purge`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			return localup.Down(g.stateDir, opts, cmd.OutOrStdout())
		},
	}
	cmd.Flags().BoolVar(&opts.Purge, "purge", false, "also delete the state directory and the fleet's kubeconfig contexts")
	return cmd
}

func newUsageCommand(g *globalOptions) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "usage",
		Short: "Set the cpu and memory the members' pods report using (kwok's emulated usage, served by each member's metrics-server) and their custom metrics",
	}
	o := localup.UsageOptions{}
	set := &cobra.Command{
		Use:   "set",
		Short: "Set the usage of every container of the matching pods in every member (or one)",
		Long: `Set what every container of the pods matching a selector reports using, in
every member or the one --cluster names: kwok emulates the usage, each member's
metrics-server serves it (kubectl top pods), and FederatedHPAs scale on it.
The pods carry it as the annotations kwok.x-k8s.io/usage-cpu and
kwok.x-k8s.io/usage-memory; pods created later report 1m and 1Mi unless their
template carries them. The first samples follow within 10 to 20 seconds.

--metric NAME=QUANTITY sets a custom metric instead: each push member's
custom.metrics.k8s.io serves it at once as pods/NAME (the annotation
custom-metrics.local.karmada.io/NAME), and the control plane's
karmada-metrics-adapter adds the members' values up (FederatedHPA Pods
metrics). Another object (a Service for an Object metric) carries the same
annotation when it is set with kubectl annotate in the member.`,
		Example: `  karmada-local usage set -n default -l app=web --cpu 800m
  karmada-local usage set -n default -l app=web --metric http_requests_per_second=120
  karmada-local usage set -n shop -l app=web --cpu 100m --memory 256Mi --cluster member2`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if !cmd.Flags().Changed("selector") {
				return fmt.Errorf("--selector (-l) is required: the pods to set, e.g. -l app=web")
			}
			return localup.UsageSet(cmd.Context(), g.stateDir, g.binDir, o, cmd.OutOrStdout())
		},
	}
	set.Flags().StringVarP(&o.Namespace, "namespace", "n", "default", "namespace of the pods")
	set.Flags().StringVarP(&o.Selector, "selector", "l", "", "label selector of the pods (required)")
	set.Flags().StringVar(&o.CPU, "cpu", "", "cpu each container uses, e.g. 500m")
	set.Flags().StringVar(&o.Memory, "memory", "", "memory each container uses, e.g. 256Mi")
	set.Flags().StringArrayVar(&o.Metrics, "metric", nil, "a custom metric each pod reports, NAME=QUANTITY (repeatable)")
	set.Flags().StringVar(&o.Cluster, "cluster", "", "only this member (default: every member)")
	cmd.AddCommand(set)
	return cmd
}

// newMemberCustomMetricsCommand is the process `up` runs in each push
// member: custom.metrics.k8s.io served from the values `usage set
// --metric` writes (not for users to run).
func newMemberCustomMetricsCommand() *cobra.Command {
	fs := pflag.NewFlagSet("member-custom-metrics", pflag.ContinueOnError)
	a := custommetrics.NewAdapter(fs)
	cmd := &cobra.Command{
		Use:    "member-custom-metrics",
		Short:  "Serve a member's emulated custom metrics in its custom.metrics.k8s.io (run by up in each push member)",
		Hidden: true,
		Args:   cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			return custommetrics.Run(cmd.Context(), a)
		},
	}
	cmd.Flags().AddFlagSet(fs)
	return cmd
}

func newStatusCommand(g *globalOptions) *cobra.Command {
	var output string
	cmd := &cobra.Command{
		Use:   "status",
		Short: "List each component of the fleet with its pid, ports, health, memory and (--ha) whether it leads",
		Example: `  karmada-local status
  karmada-local status -o json`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if output != "" && output != "json" {
				return fmt.Errorf("--output=%q: must be json, or empty for a table", output)
			}
			st, err := localup.Status(cmd.Context(), g.stateDir, g.binDir)
			if err != nil {
				return err
			}
			if output == "json" {
				enc := json.NewEncoder(cmd.OutOrStdout())
				enc.SetIndent("", "  ")
				return enc.Encode(st)
			}
			process.PrintStatus(cmd.OutOrStdout(), st)
			return nil
		},
	}
	cmd.Flags().StringVarP(&output, "output", "o", "", "output format: json (default: a table)")
	return cmd
}

func newMemberCommand(g *globalOptions) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "member",
		Short: "Stop or start one member cluster",
	}
	cmd.AddCommand(&cobra.Command{
		Use:     "stop NAME",
		Short:   "Stop a member's processes, keeping its data",
		Example: `  karmada-local member stop member2`,
		Args:    cli.OneName("the name of a member, such as member1"),
		RunE: func(cmd *cobra.Command, args []string) error {
			return localup.MemberStop(g.stateDir, g.binDir, args[0], cmd.OutOrStdout())
		},
	}, &cobra.Command{
		Use:     "start NAME",
		Short:   "Start a stopped member again and wait until it is ready",
		Example: `  karmada-local member start member2`,
		Args:    cli.OneName("the name of a member, such as member1"),
		RunE: func(cmd *cobra.Command, args []string) error {
			return localup.MemberStart(cmd.Context(), g.stateDir, g.binDir, args[0], cmd.OutOrStdout())
		},
	})
	return cmd
}

func newAgentCommand(g *globalOptions) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "agent",
		Short: "Stop or start a pull-mode member's karmada-agent",
		Long: `Stop or start the karmada-agent of a pull-mode member (karmada-local up
--pull-members) without touching the member: its workloads keep running,
and the control plane, no longer hearing from the agent, marks the cluster
Ready=Unknown after its grace period.`,
	}
	var kill bool
	stop := &cobra.Command{
		Use:     "stop NAME",
		Short:   "Stop a pull-mode member's agent; the member keeps running",
		Example: `  karmada-local agent stop member3`,
		Args:    cli.OneName("the name of a pull-mode member, such as member3"),
		RunE: func(cmd *cobra.Command, args []string) error {
			return localup.AgentStop(g.stateDir, g.binDir, args[0], kill, cmd.OutOrStdout())
		},
	}
	stop.Flags().BoolVar(&kill, "kill", false, "send SIGKILL at once instead of SIGTERM with a grace period")
	start := &cobra.Command{
		Use:     "start NAME",
		Short:   "Start a pull-mode member's agent again and wait until it is healthy",
		Example: `  karmada-local agent start member3`,
		Args:    cli.OneName("the name of a pull-mode member, such as member3"),
		RunE: func(cmd *cobra.Command, args []string) error {
			return localup.AgentStart(cmd.Context(), g.stateDir, g.binDir, args[0], cmd.OutOrStdout())
		},
	}
	cmd.AddCommand(stop, start)
	return cmd
}

func newComponentCommand(g *globalOptions) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "component",
		Short: "Stop, start or restart one process of the fleet",
		Long: `Stop, start or restart one process of the fleet, named as ` + "`karmada-local status`" + `
lists it (karmada/karmada-controller-manager) or by the part after the slash
when that is unique (karmada-controller-manager). A member's name stands for
all of that member's processes.`,
	}
	var kill bool
	stop := &cobra.Command{
		Use:   "stop NAME",
		Short: "Stop a process, keeping its data",
		Example: `  karmada-local component stop karmada-scheduler
  # as a crash: SIGKILL without a grace period
  karmada-local component stop karmada-controller-manager --kill`,
		Args: cli.OneName("the name of a component, such as karmada-controller-manager"),
		RunE: func(cmd *cobra.Command, args []string) error {
			return localup.ComponentStop(g.stateDir, g.binDir, args[0], kill, cmd.OutOrStdout())
		},
	}
	stop.Flags().BoolVar(&kill, "kill", false, "send SIGKILL at once instead of SIGTERM with a grace period")
	start := &cobra.Command{
		Use:     "start NAME",
		Short:   "Start a stopped process again and wait until it is healthy",
		Example: `  karmada-local component start karmada-controller-manager`,
		Args:    cli.OneName("the name of a component, such as karmada-controller-manager"),
		RunE: func(cmd *cobra.Command, args []string) error {
			return localup.ComponentStart(cmd.Context(), g.stateDir, g.binDir, args[0], cmd.OutOrStdout())
		},
	}
	var restartKill bool
	restart := &cobra.Command{
		Use:     "restart NAME",
		Short:   "Stop a process and start it again, waiting until it is healthy",
		Example: `  karmada-local component restart karmada-controller-manager --kill`,
		Args:    cli.OneName("the name of a component, such as karmada-controller-manager"),
		RunE: func(cmd *cobra.Command, args []string) error {
			if err := localup.ComponentStop(g.stateDir, g.binDir, args[0], restartKill, cmd.OutOrStdout()); err != nil {
				return err
			}
			return localup.ComponentStart(cmd.Context(), g.stateDir, g.binDir, args[0], cmd.OutOrStdout())
		},
	}
	restart.Flags().BoolVar(&restartKill, "kill", false, "send SIGKILL at once instead of SIGTERM with a grace period")
	cmd.AddCommand(stop, start, restart)
	return cmd
}

func newCertsCommand(g *globalOptions) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "certs",
		Short: "List the fleet's certificates with their expiry, or renew them in place",
	}
	var output string
	check := &cobra.Command{
		Use:   "check",
		Short: "List every certificate of the fleet: its expiry, time left, CA and the processes that use it",
		Example: `  karmada-local certs check
  karmada-local certs check -o json`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if err := certexpiry.CheckOutput(output); err != nil {
				return err
			}
			certs, err := localup.Certificates(g.stateDir, g.binDir)
			if err != nil {
				return err
			}
			return certexpiry.Write(cmd.OutOrStdout(), certs, output)
		},
	}
	check.Flags().StringVarP(&output, "output", "o", "", "output format: json (default: a table)")
	opts := localup.RenewOptions{}
	renew := &cobra.Command{
		Use:   "renew",
		Short: "Issue every certificate of the fleet again while it runs; no process is restarted",
		Long: `Issue every leaf certificate of the fleet again, with the lifetime up was
given (--cert-validity-period), and write the kubeconfig's admin credentials.
The CAs are kept, so every certificate they signed before stays trusted until
it expires. Running processes read their renewed files themselves: the command
waits until every server presents its new certificate. Clients pick up their
renewed client certificates as they reconnect (within five minutes).`,
		Example: `  karmada-local certs renew`,
		Args:    cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			return localup.RenewCertificates(cmd.Context(), g.stateDir, g.binDir, opts, cmd.OutOrStdout())
		},
	}
	renew.Flags().DurationVar(&opts.Timeout, "timeout", 2*time.Minute, "how long to wait for every server to present its renewed certificate")
	cmd.AddCommand(check, renew)
	return cmd
}
