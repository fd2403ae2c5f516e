// Package unregister implements `karmadactl unregister`: it reverses
// `karmadactl register` for a pull-mode member — its Cluster (whose removal
// takes its execution namespace, Lease and the agent's rights with it) in
// the control plane, and the agent's kubeconfig in the member.
package unregister

import (
	"context"
	"errors"
	"fmt"
	"io"
	"time"

	"github.com/spf13/cobra"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/client"

	clusterv1alpha1 "github.com/karmada-go/karmada/api/cluster/v1alpha1"
	workv1alpha1 "github.com/karmada-go/karmada/api/work/v1alpha1"
	"github.com/karmada-go/karmada/internal/cli"
	"github.com/karmada-go/karmada/internal/karmadactl/options"
	"github.com/karmada-go/karmada/internal/registration/register"
)

// Options is what unregister needs.
type Options = options.RemovalOptions

// Run unregisters a cluster: karmada reaches the control plane; member, when
// not nil, the member (the agent's kubeconfig, identity and Deployment are
// removed there).
func Run(ctx context.Context, karmada client.Client, member *rest.Config, o Options, out io.Writer) error {
	if o.Wait == 0 {
		o.Wait = options.DefaultRemovalWait
	}
	cluster, err := options.GetCluster(ctx, karmada, o.ClusterName)
	if err != nil {
		return err
	}
	if cluster != nil && cluster.Spec.SyncMode != clusterv1alpha1.Pull {
		return fmt.Errorf("cluster %s is in %s mode: use karmadactl unjoin", o.ClusterName, cluster.Spec.SyncMode)
	}
	if cluster != nil {
		works := &workv1alpha1.WorkList{}
		if err := karmada.List(ctx, works, client.InNamespace(workv1alpha1.ExecutionNamespace(o.ClusterName))); err != nil {
			return fmt.Errorf("listing the Works of cluster %s: %w", o.ClusterName, err)
		}
		// Namespaces propagate to every cluster by themselves: only the
		// Works of workloads placed there count.
		var placed []string
		for _, w := range works.Items {
			if _, ns := w.Labels[workv1alpha1.NamespaceWorkLabel]; !ns {
				placed = append(placed, w.Name)
			}
		}
		if len(placed) > 0 && !o.Force {
			return fmt.Errorf("cluster %s still has %d Works of workloads placed there (e.g. %s): move them away first (its agent removes what a deleted Work applied), or pass --force to unregister it anyway (the member keeps what the agent applied)",
				o.ClusterName, len(placed), placed[0])
		}
		if err := options.DeleteCluster(ctx, karmada, cluster, o.Wait); err != nil {
			return err
		}
	}
	if member != nil {
		mc, err := kubernetes.NewForConfig(member)
		if err != nil {
			return err
		}
		s, err := mc.CoreV1().Secrets(register.AgentNamespace).Get(ctx, register.AgentSecretName, metav1.GetOptions{})
		switch {
		case apierrors.IsNotFound(err):
		case err != nil:
			return fmt.Errorf("reading the agent's Secret %s/%s in the member: %w", register.AgentNamespace, register.AgentSecretName, err)
		case s.Labels[clusterv1alpha1.ManagedByLabel] != clusterv1alpha1.ManagedByKarmadactl || s.Labels[clusterv1alpha1.ClusterNameLabel] != o.ClusterName:
			fmt.Fprintf(out, "Secret %s/%s in the member was not made by karmadactl register for %s: left alone\n", register.AgentNamespace, register.AgentSecretName, o.ClusterName)
		default:
			uid := s.UID
			if err := mc.CoreV1().Secrets(register.AgentNamespace).Delete(ctx, s.Name, metav1.DeleteOptions{Preconditions: &metav1.Preconditions{UID: &uid}}); err != nil && !apierrors.IsNotFound(err) {
				return fmt.Errorf("deleting the agent's Secret in the member: %w", err)
			}
		}
		// The agent's Deployment, ServiceAccount and RBAC, when register
		// installed them.
		left, err := register.RemoveAgent(ctx, mc, o.ClusterName)
		for _, l := range left {
			fmt.Fprintf(out, "%s in namespace %s of the member was not made by karmadactl register for %s: left alone\n", l, register.AgentNamespace, o.ClusterName)
		}
		if err != nil {
			return err
		}
	}
	if cluster == nil {
		fmt.Fprintf(out, "cluster(%s) was not registered\n", o.ClusterName)
		return nil
	}
	fmt.Fprintf(out, "cluster(%s) is unregistered; stop its karmada-agent (its certificate no longer has any right)\n", o.ClusterName)
	return nil
}

// NewCommand returns `karmadactl unregister`.
func NewCommand(g *options.Global) *cobra.Command {
	o := Options{}
	var memberKubeconfig, memberContext string
	cmd := &cobra.Command{
		Use:   "unregister CLUSTER_NAME",
		Short: "Remove a pull-mode member cluster from the Karmada control plane",
		Long: `Remove a pull-mode member cluster registered with karmadactl register: delete
its Cluster (its execution namespace, Lease and the agent's rights go with it),
and, with --cluster-kubeconfig, the agent's kubeconfig Secret
karmada-system/karmada-kubeconfig in the member. Refuses while the cluster
still has Works of workloads (namespaces' own Works aside) unless --force
(the member then keeps what the agent applied).`,
		Example: `  karmadactl unregister member4 --kubeconfig ~/.kube/karmada.config --karmada-context karmada-apiserver \
    --cluster-kubeconfig member4.config`,
		Args: cli.OneName("the name of the cluster to unregister"),
		RunE: func(cmd *cobra.Command, args []string) error {
			o.ClusterName = args[0]
			karmada, err := g.KarmadaClient()
			if err != nil {
				return err
			}
			var member *rest.Config
			if memberKubeconfig != "" {
				if member, err = cli.LoadConfig(memberKubeconfig, memberContext); err != nil {
					return fmt.Errorf("loading the member's kubeconfig (--cluster-kubeconfig %s, --cluster-context %q): %w", memberKubeconfig, memberContext, err)
				}
			} else if memberContext != "" {
				return errors.New("--cluster-context needs --cluster-kubeconfig")
			}
			return Run(cmd.Context(), karmada, member, o, cmd.OutOrStdout())
		},
	}
	f := cmd.Flags()
	f.StringVar(&memberKubeconfig, "cluster-kubeconfig", "", "kubeconfig of the member cluster, to remove the agent's kubeconfig Secret there")
	f.StringVar(&memberContext, "cluster-context", "", "context of --cluster-kubeconfig")
	f.BoolVar(&o.Force, "force", false, "unregister even though the cluster still has Works")
	f.DurationVar(&o.Wait, "wait", 2*time.Minute, "how long to wait for the Cluster to be gone")
	return cmd
}
