// Package register is karmadactl register: its flags and help; what it does is
// internal/registration/register (registering), which karmada-local uses too.
package register

import (
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/karmada-go/karmada/internal/cli"
	"github.com/karmada-go/karmada/internal/clusters/memberrights"
	"github.com/karmada-go/karmada/internal/karmadactl/options"
	"github.com/karmada-go/karmada/internal/names"
	registering "github.com/karmada-go/karmada/internal/registration/register"
)

// upstreamFlags answers Karmada's register flags that ask for something
// register does not do: set to what it does, they are accepted; otherwise
// refused, saying why.
func upstreamFlags(cmd *cobra.Command, agentNamespace, clusterNamespace string, certRotation, skipCA bool, proxyServer string) error {
	switch {
	case agentNamespace != registering.AgentNamespace:
		return fmt.Errorf("--namespace %q: the agent's objects live in %s (karmadactl unregister and the agent's certificate rotation find them there); leave it out", agentNamespace, registering.AgentNamespace)
	case clusterNamespace != names.ClusterNamespace:
		return fmt.Errorf("--cluster-namespace %q: the control plane keeps member clusters' Secrets in %s only; leave it out", clusterNamespace, names.ClusterNamespace)
	case cmd.Flags().Changed("enable-cert-rotation") && !certRotation:
		return errors.New("--enable-cert-rotation=false: the agent always renews its certificate (at 80% of its lifetime, --cert-expiration-seconds); it cannot be turned off")
	case skipCA:
		return errors.New("--discovery-token-unsafe-skip-ca-verification: refused; without the CA's hash anyone holding the token could pose as the control plane. Pass --discovery-token-ca-cert-hash (karmadactl token create --print-register-command prints it)")
	case proxyServer != "":
		return errors.New("--proxy-server-address: not supported; the agent reaches the control plane at the endpoint directly")
	}
	return nil
}

// NewCommand returns `karmadactl register`.
func NewCommand(g *options.Global) *cobra.Command {
	o := registering.Options{}
	var memberContext string
	// Karmada's flags that scripts pass, accepted where they ask for what
	// register does anyway, refused with the reason otherwise.
	var agentNamespace, clusterNamespace, proxyServer string
	var certRotation, skipCA bool
	cmd := &cobra.Command{
		Use:   "register ENDPOINT --token T --discovery-token-ca-cert-hash sha256:H --cluster-name NAME",
		Short: "Register a member cluster with the Karmada control plane (pull mode)",
		Long: `Register the member cluster of --kubeconfig (and --context) with the Karmada
control plane at ENDPOINT (host:port) in pull mode.

register trusts the control plane by the bootstrap token and the hash of its
CA, never by skipping TLS verification: it reads kube-public/cluster-info,
checks its signature with the token, and compares the CA it names with
--discovery-token-ca-cert-hash. With the token it then requests the agent's
client certificate (user system:karmada:agent:<name>, group
system:karmada:agents), which the control plane approves for a cluster not
registered yet, and stores the agent's kubeconfig in the member's Secret
karmada-system/karmada-kubeconfig (key karmada-kubeconfig). The agent,
started with it, creates the Cluster and pulls its Works.

karmadactl token create --print-register-command prints the whole command.

Run again against a member registered already (its Secret holds the agent's
kubeconfig, made by register for --cluster-name, with a valid certificate),
register keeps the registration, needs no token, and only brings the
agent's rights (--propagate-kinds or --cluster-admin) and Deployment in the
member up to date.`,
		Example: `  karmadactl register 10.10.0.1:5443 --token abcdef.0123456789abcdef \
    --discovery-token-ca-cert-hash sha256:0123...cdef --cluster-name member4 --kubeconfig member4.config

  # Later, from the same member: let its agent write Pods too (no token needed)
  karmadactl register 10.10.0.1:5443 --cluster-name member4 --kubeconfig member4.config \
    --propagate-kinds deployments.apps,configmaps,pods`,
		Args: cli.OneName("the control plane's endpoint, host:port"),
		RunE: func(cmd *cobra.Command, args []string) error {
			o.Endpoint = args[0]
			if err := upstreamFlags(cmd, agentNamespace, clusterNamespace, certRotation, skipCA, proxyServer); err != nil {
				return err
			}
			if err := o.Validate(); err != nil {
				return err
			}
			member, err := cli.LoadConfig(g.Kubeconfig, memberContext)
			if err != nil {
				return fmt.Errorf("reaching the member cluster (--kubeconfig %s, --context %q): %w", g.Kubeconfig, memberContext, err)
			}
			return registering.Run(cmd.Context(), member, o, cmd.OutOrStdout())
		},
	}
	f := cmd.Flags()
	f.StringVar(&o.Token, "token", "", "bootstrap token (karmadactl token create)")
	f.StringVar(&o.CACertHash, "discovery-token-ca-cert-hash", "", "sha256:<hash> of the control plane CA's public key")
	f.StringVar(&o.ClusterName, "cluster-name", "", "name of the member cluster in the control plane")
	f.StringVar(&memberContext, "context", "", "context of --kubeconfig that reaches the member cluster (for register, --kubeconfig is the member's)")
	f.DurationVar(&o.Timeout, "discovery-timeout", 5*time.Minute, "how long to wait for the control plane's cluster-info and for the agent's certificate")
	f.Int32Var(&o.CertExpirationSeconds, "cert-expiration-seconds", registering.DefaultCertExpirationSeconds, "lifetime asked for the agent's certificate (the agent renews it at 80% of it; the control plane approves at most its --agent-certificate-max-lifetime, a week by default)")
	f.StringSliceVar(&o.Agent.PropagateKinds, "propagate-kinds", nil, "kinds the agent may write in the member, resource[.group] or *.group, as karmadactl join takes them (default "+strings.Join(memberrights.DefaultKinds, ",")+")")
	f.BoolVar(&o.Agent.ClusterAdmin, "cluster-admin", false, "give the agent every right in the member instead of --propagate-kinds")
	f.StringVar(&o.Agent.Image, "karmada-agent-image", "", "install the agent as Deployment karmada-system/karmada-agent of this image (default: none; run the agent yourself)")
	f.Int32Var(&o.Agent.Replicas, "karmada-agent-replicas", 1, "replicas of the agent's Deployment (0 or 1)")
	f.StringVar(&o.Agent.Provider, "cluster-provider", "", "the cluster's provider, recorded on its Cluster by the agent")
	f.StringVar(&o.Agent.Region, "cluster-region", "", "the cluster's region, recorded on its Cluster by the agent")
	f.StringSliceVar(&o.Agent.Zones, "cluster-zones", nil, "the cluster's zones, recorded on its Cluster by the agent")
	f.StringVar(&o.Agent.FeatureGates, "feature-gates", "", "the agent's --feature-gates (Karmada's gates, as karmada-agent --help lists them), passed to its Deployment (needs --karmada-agent-image)")
	f.BoolVar(&o.DryRun, "dry-run", false, "check the member, what it holds and the control plane's cluster-info against the token and the CA hash, and write nothing")
	f.StringVarP(&agentNamespace, "namespace", "n", registering.AgentNamespace, "namespace of the agent in the member (only "+registering.AgentNamespace+": unregister and the agent's certificate rotation find it there)")
	f.StringVar(&clusterNamespace, "cluster-namespace", names.ClusterNamespace, "namespace of the control plane holding member clusters' Secrets (only "+names.ClusterNamespace+")")
	f.BoolVar(&certRotation, "enable-cert-rotation", true, "the agent renews its certificate at 80% of its lifetime: always on")
	f.BoolVar(&skipCA, "discovery-token-unsafe-skip-ca-verification", false, "refused: register trusts the control plane only by --discovery-token-ca-cert-hash")
	f.StringVar(&proxyServer, "proxy-server-address", "", "refused: the agent reaches the control plane directly")
	return cmd
}
