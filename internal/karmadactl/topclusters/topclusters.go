// Package topclusters is `karmadactl top clusters`: what each member
// cluster can hold and what is taken, as the control plane sees it (the
// Clusters' resource summaries, which the general estimator divides), and,
// for a replica's shape, how many more each can take by the general
// estimator and by its karmada-scheduler-estimator.
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
	workv1alpha2 "github.com/karmada-go/karmada/api/work/v1alpha2"
	"github.com/karmada-go/karmada/internal/estimator"
	estimatorclient "github.com/karmada-go/karmada/internal/estimator/client"
	"github.com/karmada-go/karmada/internal/estimator/pb"
	"github.com/karmada-go/karmada/internal/karmadactl/options"
)

// NewCommand returns `top clusters`.
func NewCommand(g *options.Global) *cobra.Command {
	var selector, fit string
	est := estimatorclient.Options{}
	cmd := &cobra.Command{
		Use:     "clusters [NAME...]",
		Aliases: []string{"cluster"},
		Short:   "Display the capacity of member clusters: allocatable, allocated and free",
		Long: `Display, for each member cluster, its allocatable cpu, memory and pods, what
the pods on it request (allocated, and allocating: pods not yet bound to a
node), and what is free, as its Cluster's resource summary reports it (what
the scheduler's general estimator divides).

With --fit (a replica's requests), also how many such replicas each cluster
can still take: FIT(GENERAL) by the resource summary, and, given the
estimators' CA and a client certificate of theirs (the flags the scheduler
uses), FIT(ESTIMATOR) by the member's karmada-scheduler-estimator, node by
node: less when the free room is spread over nodes none of which holds a
replica.`,
		Example: `  # Every member
  karmadactl top clusters
  # Two of them
  karmadactl top clusters member1 member2
  # By label
  karmadactl top clusters -l env=prod
  # How many replicas of 4 cpu and 8Gi each member can still take, by the
  # summaries and by the estimators (a local fleet's; karmada-local status
  # lists their ports)
  karmadactl top clusters --fit cpu=4,memory=8Gi \
    --scheduler-estimator-addresses member1=127.0.0.1:31206 \
    --scheduler-estimator-ca-file ~/.karmada-local/estimator/pki/ca.crt \
    --scheduler-estimator-cert-file ~/.karmada-local/estimator/pki/karmada-scheduler-client.crt \
    --scheduler-estimator-key-file ~/.karmada-local/estimator/pki/karmada-scheduler-client.key`,
		RunE: func(cmd *cobra.Command, args []string) error {
			var request corev1.ResourceList
			if fit != "" {
				var err error
				if request, err = ParseFit(fit); err != nil {
					return err
				}
			}
			var pool *estimatorclient.Pool
			if est.CAFile != "" || est.InsecureSkipVerify {
				if fit == "" {
					return fmt.Errorf("the estimators answer for a replica's shape: give --fit, e.g. --fit cpu=1,memory=2Gi")
				}
				if err := est.ValidateConnection("asking the estimators"); err != nil {
					return err
				}
				var err error
				if pool, err = estimatorclient.NewPool(est); err != nil {
					return err
				}
				defer pool.Close()
			}
			c, err := g.KarmadaClient()
			if err != nil {
				return err
			}
			rows, err := Rows(cmd.Context(), c, args, selector)
			if err != nil {
				return err
			}
			if request != nil {
				if err := Fits(cmd.Context(), rows, request, pool); err != nil {
					return err
				}
			}
			return Print(cmd.OutOrStdout(), rows)
		},
	}
	cmd.Flags().StringVarP(&selector, "selector", "l", "", "label selector of the clusters")
	cmd.Flags().StringVar(&fit, "fit", "", "a replica's requests, e.g. cpu=2,memory=4Gi: also show how many such replicas each cluster can still take")
	est.AddConnectionFlags(cmd.Flags())
	return cmd
}

// ParseFit reads --fit: name=quantity pairs, comma-separated.
func ParseFit(s string) (corev1.ResourceList, error) {
	rl, err := estimator.ParseResourceList(s)
	if err != nil {
		return nil, fmt.Errorf("--fit %q: %w", s, err)
	}
	return rl, nil
}

// Fits fills each reported row's FitGeneral and, with a pool, asks the
// clusters' estimators in parallel for FitEstimator.
func Fits(ctx context.Context, rows []Row, request corev1.ResourceList, pool *estimatorclient.Pool) error {
	req := &workv1alpha2.ReplicaRequirements{ResourceRequest: request}
	var names []string
	for i := range rows {
		r := &rows[i]
		r.FitAsked = true
		if r.cluster != nil && r.Reported {
			n := estimator.General(r.cluster, req)
			r.FitGeneral = &n
		}
		names = append(names, r.Name)
	}
	if pool == nil {
		return nil
	}
	msg, err := pb.NewReplicaRequirements(req)
	if err != nil {
		return err
	}
	answers := pool.MaxAvailableReplicas(ctx, names, msg, nil)
	for i := range rows {
		if a, ok := answers[rows[i].Name]; ok {
			rows[i].FitEstimator = &a
		}
	}
	return nil
}

// Row is one cluster's figures (nil summary: not reported yet).
type Row struct {
	Name                               string
	Ready                              bool
	Allocatable, Allocated, Allocating corev1.ResourceList
	Free                               corev1.ResourceList
	Reported                           bool
	// With --fit: replicas of that shape the cluster can still take, by
	// the general estimator (nil: no summary) and by its estimator (nil:
	// not asked).
	FitAsked     bool
	FitGeneral   *int32
	FitEstimator *estimatorclient.Answer

	cluster *clusterv1alpha1.Cluster
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
	found := map[string]bool{}
	for _, cl := range list.Items {
		if len(want) > 0 && !want[cl.Name] {
			continue
		}
		found[cl.Name] = true
		out = append(out, rowOf(cl.DeepCopy()))
	}
	for _, n := range names {
		if !found[n] {
			return nil, fmt.Errorf("cluster %q not found", n)
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out, nil
}

func rowOf(cl *clusterv1alpha1.Cluster) Row {
	r := Row{Name: cl.Name, cluster: cl}
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
// taken; with --fit, the replicas each cluster can still take.
func Print(w io.Writer, rows []Row) error {
	fits := false
	for _, r := range rows {
		fits = fits || r.FitAsked
	}
	tw := tabwriter.NewWriter(w, 0, 8, 3, ' ', 0)
	header := "NAME\tREADY\tCPU(FREE/ALLOCATABLE)\tCPU%\tMEMORY(FREE/ALLOCATABLE)\tMEMORY%\tPODS(FREE/ALLOCATABLE)\tPODS%"
	if fits {
		header += "\tFIT(GENERAL)\tFIT(ESTIMATOR)"
	}
	fmt.Fprintln(tw, header)
	for _, r := range rows {
		if !r.Reported {
			fmt.Fprintf(tw, "%s\t%t\t<unknown>\t\t<unknown>\t\t<unknown>\t", r.Name, r.Ready)
		} else {
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
		}
		if fits {
			general, est := "<unknown>", "-"
			if r.FitGeneral != nil {
				general = fmt.Sprint(*r.FitGeneral)
			}
			if a := r.FitEstimator; a != nil {
				if a.Err != nil {
					est = fmt.Sprintf("<%s: %v>", a.Reason, a.Err)
				} else {
					est = fmt.Sprint(a.Value)
				}
			}
			fmt.Fprintf(tw, "\t%s\t%s", general, est)
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
