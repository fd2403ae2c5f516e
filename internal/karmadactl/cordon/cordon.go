// Package cordon implements `karmadactl cordon` and `uncordon`: mark a
// cluster unschedulable with the cluster.karmada.io/unschedulable taint.
package cordon

import (
	"fmt"

	"github.com/spf13/cobra"
	corev1 "k8s.io/api/core/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	clusterv1alpha1 "github.com/karmada-go/karmada/api/cluster/v1alpha1"
	"github.com/karmada-go/karmada/internal/cli"
	"github.com/karmada-go/karmada/internal/karmadactl/options"
	"github.com/karmada-go/karmada/internal/karmadactl/taint"
)

// UnschedulableTaintKey keeps new workloads off a cordoned cluster.
const UnschedulableTaintKey = clusterv1alpha1.TaintClusterUnschedulable

var unschedulable = corev1.Taint{Key: UnschedulableTaintKey, Effect: corev1.TaintEffectNoSchedule}

// NewCordonCommand returns `karmadactl cordon`.
func NewCordonCommand(g *options.Global) *cobra.Command {
	return &cobra.Command{
		Use:     "cordon CLUSTER_NAME",
		Short:   "Mark a cluster unschedulable",
		Long:    "Add the taint " + UnschedulableTaintKey + ":NoSchedule so that no new workload is scheduled to the cluster. Workloads already there stay.",
		Example: "  karmadactl cordon member1",
		Args:    cli.OneName("the name of the cluster to cordon"),
		RunE: func(cmd *cobra.Command, args []string) error {
			c, err := g.KarmadaClient()
			if err != nil {
				return err
			}
			ch := taint.Change{Add: []corev1.Taint{unschedulable}}
			return taint.Update(cmd.Context(), c, args[0], ch, false, "cordoned", cmd.OutOrStdout())
		},
	}
}

// NewUncordonCommand returns `karmadactl uncordon`.
func NewUncordonCommand(g *options.Global) *cobra.Command {
	return &cobra.Command{
		Use:     "uncordon CLUSTER_NAME",
		Short:   "Mark a cluster schedulable again",
		Long:    "Remove the taint " + UnschedulableTaintKey + ":NoSchedule. Uncordoning a cluster that is not cordoned changes nothing.",
		Example: "  karmadactl uncordon member1",
		Args:    cli.OneName("the name of the cluster to uncordon"),
		RunE: func(cmd *cobra.Command, args []string) error {
			c, err := g.KarmadaClient()
			if err != nil {
				return err
			}
			// Removing an absent taint is an error for taint, not for uncordon.
			cl, err := getTaints(cmd, c, args[0])
			if err != nil {
				return err
			}
			if !hasTaint(cl, unschedulable) {
				fmt.Fprintf(cmd.OutOrStdout(), "cluster/%s already uncordoned\n", args[0])
				return nil
			}
			ch := taint.Change{Remove: []corev1.Taint{unschedulable}}
			return taint.Update(cmd.Context(), c, args[0], ch, false, "uncordoned", cmd.OutOrStdout())
		},
	}
}

func getTaints(cmd *cobra.Command, c client.Client, name string) ([]corev1.Taint, error) {
	cluster := &clusterv1alpha1.Cluster{}
	if err := c.Get(cmd.Context(), client.ObjectKey{Name: name}, cluster); err != nil {
		return nil, fmt.Errorf("cluster %s: %w", name, err)
	}
	return cluster.Spec.Taints, nil
}

func hasTaint(taints []corev1.Taint, want corev1.Taint) bool {
	for _, t := range taints {
		if t.Key == want.Key && t.Effect == want.Effect {
			return true
		}
	}
	return false
}
