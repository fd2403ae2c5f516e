// Package explain implements `karmadactl explain-placement` (why a binding
// was placed where it is) and `karmadactl plan` (where a policy would place
// the templates it selects, before it is applied).
package explain

import (
	"fmt"
	"io"
	"strconv"
	"strings"
	"text/tabwriter"
	"time"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/duration"

	workv1alpha2 "github.com/karmada-go/karmada/api/work/v1alpha2"
)

// Render prints a placement explanation as a table: one row per cluster
// with whether it is feasible, which plugin or step ruled it out and why,
// each score plugin's score, the estimated available replicas and the
// replicas assigned.
func Render(w io.Writer, title string, targets []workv1alpha2.TargetCluster, ex *workv1alpha2.PlacementExplanation) error {
	fmt.Fprintln(w, title)
	if ex == nil {
		_, err := fmt.Fprintln(w, "  no explanation recorded: the binding has not been scheduled by a scheduler that records one")
		return err
	}
	if ex.AffinityName != "" {
		fmt.Fprintf(w, "  cluster affinity term: %s\n", ex.AffinityName)
	}
	fmt.Fprintf(w, "  result: %s\n", ex.Message)
	if len(targets) > 0 {
		parts := make([]string, 0, len(targets))
		for _, t := range targets {
			parts = append(parts, fmt.Sprintf("%s=%d", t.Name, t.Replicas))
		}
		fmt.Fprintf(w, "  placement: %s\n", strings.Join(parts, ", "))
	}
	fmt.Fprintln(w)

	// Score plugins, in the order of the first feasible cluster.
	var plugins []string
	for _, c := range ex.Clusters {
		if len(c.Scores) > 0 {
			for _, s := range c.Scores {
				plugins = append(plugins, s.Plugin)
			}
			break
		}
	}
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	header := []string{"CLUSTER", "FEASIBLE", "SELECTED", "REPLICAS", "AVAILABLE", "SCORE"}
	for _, p := range plugins {
		header = append(header, strings.ToUpper(p))
	}
	header = append(header, "RULED OUT BY", "REASON")
	fmt.Fprintln(tw, strings.Join(header, "\t"))
	for _, c := range ex.Clusters {
		row := []string{c.Name, yesNo(c.Feasible), yesNo(c.Selected), strconv.Itoa(int(c.Replicas)), available(c.AvailableReplicas)}
		if c.Feasible {
			row = append(row, strconv.FormatInt(c.Score, 10))
		} else {
			row = append(row, "-")
		}
		for _, p := range plugins {
			v := "-"
			for _, s := range c.Scores {
				if s.Plugin == p {
					v = strconv.FormatInt(s.Score, 10)
				}
			}
			row = append(row, v)
		}
		row = append(row, dash(c.Plugin), dash(c.Reason))
		fmt.Fprintln(tw, strings.Join(row, "\t"))
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	if ex.Omitted > 0 {
		fmt.Fprintf(w, "  (%d more clusters not recorded)\n", ex.Omitted)
	}
	return nil
}

func yesNo(b bool) string {
	if b {
		return "yes"
	}
	return "no"
}

func dash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}

func available(n *int32) string {
	switch {
	case n == nil:
		return "-"
	case *n == 2147483647:
		return "unlimited"
	}
	return strconv.Itoa(int(*n))
}

// RenderEvictions prints the binding's graceful eviction tasks (the copies
// kept while the workload moves) and, when one is held, the EvictionBlocked
// condition saying why. Nothing when there is neither.
func RenderEvictions(w io.Writer, spec *workv1alpha2.ResourceBindingSpec, status *workv1alpha2.ResourceBindingStatus, now time.Time) error {
	blocked := meta.FindStatusCondition(status.Conditions, workv1alpha2.EvictionBlocked)
	if len(spec.GracefulEvictionTasks) == 0 && blocked == nil {
		return nil
	}
	fmt.Fprintln(w)
	fmt.Fprintln(w, "  evictions:")
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "  FROM\tREASON\tPRODUCER\tPURGE MODE\tREPLICAS\tAGE\tMESSAGE")
	for _, t := range spec.GracefulEvictionTasks {
		mode := string(t.PurgeMode)
		if mode == "" {
			mode = "Gracefully"
		}
		if t.SuppressDeletion != nil && *t.SuppressDeletion {
			mode += " (deletion suppressed)"
		}
		replicas, age := "-", "-"
		if t.Replicas != nil {
			replicas = strconv.Itoa(int(*t.Replicas))
		}
		if t.CreationTimestamp != nil {
			age = duration.HumanDuration(now.Sub(t.CreationTimestamp.Time))
		}
		fmt.Fprintf(tw, "  %s\t%s\t%s\t%s\t%s\t%s\t%s\n", t.FromCluster, t.Reason, t.Producer, mode, replicas, age, dash(t.Message))
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	if blocked != nil && blocked.Status == metav1.ConditionTrue {
		_, err := fmt.Fprintf(w, "  eviction blocked (%s): %s\n", blocked.Reason, blocked.Message)
		return err
	}
	return nil
}
