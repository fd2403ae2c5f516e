// Package topclusters is `karmadactl top clusters`: what each member
// cluster can hold and what is taken, as the control plane sees it (the
// Clusters' resource summaries, which the general estimator divides).
package topclusters

import (
	"context"
	"fmt"
	"io"
	"sort"
	"text/tabwriter"

	"github.com/spf13/cobra"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	"k8s.io/apimachinery/pkg/labels"
	"sigs.k8s.io/controller-runtime/pkg/client"

	clusterv1alpha1 "github.com/karmada-go/karmada/api/cluster/v1alpha1"
	"github.com/karmada-go/karmada/internal/karmadactl/options"
)

// NewCommand returns `top clusters`.
func NewCommand(g *options.Global) *cobra.Command {
	var selector string
	cmd := &cobra.Command{
		Use:     "clusters [NAME...]",
		Aliases: []string{"cluster"},
		Short:   "Display the capacity of member clusters: allocatable, allocated and free",
		Long: `Display, for each member cluster, its allocatable cpu, memory and pods, what
the pods on it request (allocated, and allocating: pods not yet bound to a
node), and what is free, as its Cluster's resource summary reports it (what
the scheduler's general estimator divides; a member's
karmada-scheduler-estimator looks node by node and can find less room).`,
		Example: `  # Every member
  karmadactl top clusters
  # Two of them
  karmadactl top clusters member1 member2
  # By label
  karmadactl top clusters -l env=prod`,
		RunE: func(cmd *cobra.Command, args []string) error {
			c, err := g.KarmadaClient()
			if err != nil {
				return err
			}
			rows, err := Rows(cmd.Context(), c, args, selector)
			if err != nil {
				return err
			}
			return Print(cmd.OutOrStdout(), rows)
		},
	}
	cmd.Flags().StringVarP(&selector, "selector", "l", "", "label selector of the clusters")
	return cmd
}

// Row is one cluster's figures (nil summary: not reported yet).
type Row struct {
	Name                               string
	Ready                              bool
	Allocatable, Allocated, Allocating corev1.ResourceList
	Free                               corev1.ResourceList
	Reported                           bool
}

// Rows reads the named clusters (every one when none is named).
func Rows(ctx context.Context, c client.Client, names []string, selector string) ([]Row, error) {
	var list clusterv1alpha1.ClusterList
	opts := []client.ListOption{}
	if selector != "" {
		sel, err := labels.Parse(selector)
		if err != nil {
			return nil, fmt.Errorf("--selector %q: %w", selector, err)
		}
		opts = append(opts, client.MatchingLabelsSelector{Selector: sel})
	}
	if err := c.List(ctx, &list, opts...); err != nil {
		return nil, err
	}
	want := map[string]bool{}
	for _, n := range names {
		want[n] = true
	}
	var out []Row
	for _, cl := range list.Items {
		if len(want) > 0 && !want[cl.Name] {
			continue
		}
		delete(want, cl.Name)
		out = append(out, rowOf(&cl))
	}
	for n := range want {
		return nil, fmt.Errorf("cluster %q not found", n)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out, nil
}

func rowOf(cl *clusterv1alpha1.Cluster) Row {
	r := Row{Name: cl.Name}
	for _, c := range cl.Status.Conditions {
		if c.Type == clusterv1alpha1.ClusterConditionReady {
			r.Ready = c.Status == "True"
		}
	}
	rs := cl.Status.ResourceSummary
	if rs == nil {
		return r
	}
	r.Reported = true
	r.Allocatable, r.Allocated, r.Allocating = rs.Allocatable, rs.Allocated, rs.Allocating
	r.Free = corev1.ResourceList{}
	for n, a := range rs.Allocatable {
		f := a.DeepCopy()
		if q, ok := rs.Allocated[n]; ok {
			f.Sub(q)
		}
		if q, ok := rs.Allocating[n]; ok {
			f.Sub(q)
		}
		if f.Sign() < 0 {
			f = resource.Quantity{}
		}
		r.Free[n] = f
	}
	return r
}

// Print writes the table: per resource, free/allocatable and the share
// taken.
func Print(w io.Writer, rows []Row) error {
	tw := tabwriter.NewWriter(w, 0, 8, 3, ' ', 0)
	fmt.Fprintln(tw, "NAME\tREADY\tCPU(FREE/ALLOCATABLE)\tCPU%\tMEMORY(FREE/ALLOCATABLE)\tMEMORY%\tPODS(FREE/ALLOCATABLE)\tPODS%")
	for _, r := range rows {
		if !r.Reported {
			fmt.Fprintf(tw, "%s\t%t\t<unknown>\t\t<unknown>\t\t<unknown>\t\n", r.Name, r.Ready)
			continue
		}
		fmt.Fprintf(tw, "%s\t%t", r.Name, r.Ready)
		for _, n := range []corev1.ResourceName{corev1.ResourceCPU, corev1.ResourceMemory, corev1.ResourcePods} {
			a, ok := r.Allocatable[n]
			if !ok {
				fmt.Fprint(tw, "\t-\t-")
				continue
			}
			f := r.Free[n]
			fmt.Fprintf(tw, "\t%s/%s\t%d%%", format(n, f), format(n, a), used(a, f))
		}
		fmt.Fprintln(tw)
	}
	return tw.Flush()
}

// used is the share of allocatable that is not free, in percent.
func used(allocatable, free resource.Quantity) int64 {
	a := allocatable.MilliValue()
	if a <= 0 {
		return 0
	}
	return (a - free.MilliValue()) * 100 / a
}

// format prints cpu in cores (with millicores when fractional), memory in
// Gi or Mi, pods as a count.
func format(n corev1.ResourceName, q resource.Quantity) string {
	switch n {
	case corev1.ResourceCPU:
		if q.MilliValue()%1000 == 0 {
			return fmt.Sprint(q.Value())
		}
		return fmt.Sprintf("%dm", q.MilliValue())
	case corev1.ResourceMemory:
		if v := q.Value(); v >= 1<<30 && v%(1<<30) == 0 {
			return fmt.Sprintf("%dGi", v>>30)
		}
		return fmt.Sprintf("%dMi", q.Value()>>20)
	}
	return fmt.Sprint(q.Value())
}
