// Package join is karmadactl join: its flags and help; what it does is
// internal/clusters/join (joining), which karmada-local uses too.
package join

import (
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/karmada-go/karmada/internal/cli"
	joining "github.com/karmada-go/karmada/internal/clusters/join"
	"github.com/karmada-go/karmada/internal/clusters/memberrights"
	"github.com/karmada-go/karmada/internal/karmadactl/options"
)

// NewCommand returns `karmadactl join`.
func NewCommand(g *options.Global) *cobra.Command {
	o := joining.Options{}
	var clusterKubeconfig, clusterContext string
	cmd := &cobra.Command{
		Use:   "join CLUSTER_NAME --cluster-kubeconfig=<member kubeconfig>",
		Short: "Register a member cluster with the Karmada control plane (push mode)",
		Long: `Register a member cluster with the Karmada control plane in push mode.

In the member, join creates the namespace karmada-cluster, a ServiceAccount
karmada-<name>, and a ClusterRole and ClusterRoleBinding granting it what the
controllers need: read every resource the member serves (Secrets only when
they are propagated), write namespaces and the kinds of --propagate-kinds
(by default what Karmada users propagate: workloads and Pods, ConfigMaps and
Secrets, Services, Ingresses, RBAC, quotas, policies and CRDs; RBAC objects
may grant only rights it holds, besides binding admin, edit and view),
create ResourceQuotas; and a Role letting it renew its own token. In the control plane, it stores a bound token of that
ServiceAccount (lasting --cluster-token-ttl; the controller manager renews it
at 80% of its lifetime) and the member's CA in the Secret
karmada-cluster/<name>, and creates the Cluster <name>, whose spec.id is the
UID of the member's kube-system namespace. A member can join
under one name only; joining again under the same name updates the
registration (without --propagate-kinds or --cluster-admin, keeping what the
earlier join granted).`,
		Example: `  # Join the cluster of context member1 in member.config as "member1"
  karmadactl join member1 --kubeconfig ~/.kube/karmada.config --karmada-context karmada-apiserver \
    --cluster-kubeconfig member.config --cluster-context member1

  # Narrow what Karmada may write, and add a custom resource's group
  karmadactl join member1 --cluster-kubeconfig member.config \
    --propagate-kinds deployments.apps,configmaps,services,*.example.com

  # With its topology
  karmadactl join member1 --cluster-kubeconfig member.config --cluster-provider aws --cluster-region us-east-1 --cluster-zone us-east-1a`,
		Args: cli.OneName("the name of the cluster to join"),
		RunE: func(cmd *cobra.Command, args []string) error {
			o.ClusterName = args[0]
			if clusterKubeconfig == "" {
				return errors.New("--cluster-kubeconfig is required: the kubeconfig of the member cluster to join")
			}
			member, err := cli.LoadConfig(clusterKubeconfig, clusterContext)
			if err != nil {
				return fmt.Errorf("reaching the member cluster (--cluster-kubeconfig %s, --cluster-context %q): %w", clusterKubeconfig, clusterContext, err)
			}
			karmada, err := g.KarmadaClient()
			if err != nil {
				return err
			}
			return joining.Run(cmd.Context(), karmada, member, o, cmd.OutOrStdout())
		},
	}
	f := cmd.Flags()
	f.StringVar(&clusterKubeconfig, "cluster-kubeconfig", "", "kubeconfig of the member cluster (required)")
	f.BoolVar(&o.DryRun, "dry-run", false, "check the member (reachable, not joined under another name, nothing of its own in the way) and write nothing")
	f.StringVar(&clusterContext, "cluster-context", "", "context of --cluster-kubeconfig (default: its current context)")
	f.StringVar(&o.ClusterNamespace, "cluster-namespace", joining.DefaultClusterNamespace, "control plane namespace that stores the member's credentials")
	f.StringVar(&o.Provider, "cluster-provider", "", "cloud provider of the member cluster")
	f.StringVar(&o.Region, "cluster-region", "", "region of the member cluster")
	f.StringVar(&o.Zone, "cluster-zone", "", "zone of the member cluster")
	f.StringSliceVar(&o.Zones, "cluster-zones", nil, "zones the member cluster spans")
	f.DurationVar(&o.TokenTimeout, "token-timeout", 30*time.Second, "how long to wait for the member's karmada-cluster namespace (an earlier unjoin may still be deleting it)")
	f.DurationVar(&o.TokenTTL, "cluster-token-ttl", joining.DefaultTokenTTL, "lifetime of the member token stored in the control plane (renewed by the controller manager at 80% of it; at least 10m)")
	f.StringSliceVar(&o.PropagateKinds, "propagate-kinds", nil, "resources Karmada may write in the member, as resource[.group] or *.group (default "+strings.Join(memberrights.DefaultKinds, ",")+"); namespaces are always included")
	f.BoolVar(&o.ClusterAdmin, "cluster-admin", false, "grant Karmada every right in the member instead (Secrets everywhere, escalate, bind, impersonate), as Karmada's join does")
	f.BoolVar(&o.InsecureSkipTLSVerify, "cluster-insecure-skip-tls-verify", false, "accept a member kubeconfig that skips TLS verification (the Cluster then skips it too, shown by `kubectl get clusters -o wide`)")
	return cmd
}
