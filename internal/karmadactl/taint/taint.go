// Package taint implements `karmadactl taint clusters`: add, change and
// remove taints of Clusters, with kubectl's taint syntax.
package taint

import (
	"context"
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/spf13/cobra"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/client-go/util/retry"
	"sigs.k8s.io/controller-runtime/pkg/client"

	clusterv1alpha1 "github.com/karmada-go/karmada/api/cluster/v1alpha1"
	"github.com/karmada-go/karmada/internal/karmadactl/options"
)

// Change is a parsed set of taint arguments.
type Change struct {
	Add    []corev1.Taint
	Remove []corev1.Taint // Effect may be empty: every effect of the key
}

var effects = map[corev1.TaintEffect]bool{
	corev1.TaintEffectNoSchedule:       true,
	corev1.TaintEffectPreferNoSchedule: true,
	corev1.TaintEffectNoExecute:        true,
}

// Parse reads arguments like key=value:Effect (add), key:Effect (add, empty
// value), key=value:Effect- or key:Effect- or key- (remove).
func Parse(args []string) (Change, error) {
	var ch Change
	for _, arg := range args {
		remove := strings.HasSuffix(arg, "-")
		spec := strings.TrimSuffix(arg, "-")
		var t corev1.Taint
		keyValue, effect, hasEffect := strings.Cut(spec, ":")
		if hasEffect {
			t.Effect = corev1.TaintEffect(effect)
			if !effects[t.Effect] {
				return Change{}, fmt.Errorf("taint %q: effect %q is not one of NoSchedule, PreferNoSchedule, NoExecute", arg, effect)
			}
		} else if !remove {
			return Change{}, fmt.Errorf("taint %q has no effect: write key[=value]:Effect, such as dedicated=gpu:NoSchedule", arg)
		}
		t.Key, t.Value, _ = strings.Cut(keyValue, "=")
		if errs := validation.IsQualifiedName(t.Key); len(errs) > 0 {
			return Change{}, fmt.Errorf("taint %q: key %q is invalid: %s", arg, t.Key, errs[0])
		}
		if t.Value != "" {
			if errs := validation.IsValidLabelValue(t.Value); len(errs) > 0 {
				return Change{}, fmt.Errorf("taint %q: value %q is invalid: %s", arg, t.Value, errs[0])
			}
		}
		if remove {
			ch.Remove = append(ch.Remove, t)
		} else {
			ch.Add = append(ch.Add, t)
		}
	}
	for _, a := range ch.Add {
		for _, r := range ch.Remove {
			if a.Key == r.Key && (r.Effect == "" || r.Effect == a.Effect) {
				return Change{}, fmt.Errorf("taint %s:%s is both added and removed", a.Key, a.Effect)
			}
		}
	}
	return ch, nil
}

// Apply returns the taints after the change, and whether anything changed.
// Adding a taint whose key and effect exist with another value needs
// overwrite; removing a taint that is not there is an error, as in kubectl.
func Apply(current []corev1.Taint, ch Change, overwrite bool, now time.Time) ([]corev1.Taint, bool, error) {
	out := make([]corev1.Taint, 0, len(current)+len(ch.Add))
	changed := false
	for _, r := range ch.Remove {
		found := false
		for _, t := range current {
			if t.Key == r.Key && (r.Effect == "" || r.Effect == t.Effect) {
				found = true
			}
		}
		if !found {
			return nil, false, fmt.Errorf("taint %q not found", describe(r))
		}
	}
	for _, t := range current {
		removed := false
		for _, r := range ch.Remove {
			if t.Key == r.Key && (r.Effect == "" || r.Effect == t.Effect) {
				removed = true
			}
		}
		if removed {
			changed = true
			continue
		}
		out = append(out, t)
	}
	for _, a := range ch.Add {
		replaced := false
		for i := range out {
			if out[i].Key != a.Key || out[i].Effect != a.Effect {
				continue
			}
			replaced = true
			if out[i].Value == a.Value {
				break
			}
			if !overwrite {
				return nil, false, fmt.Errorf("taint %s:%s already exists with value %q; pass --overwrite to change it to %q", a.Key, a.Effect, out[i].Value, a.Value)
			}
			out[i].Value = a.Value
			changed = true
		}
		if !replaced {
			a.TimeAdded = &metav1.Time{Time: now.Truncate(time.Second)}
			out = append(out, a)
			changed = true
		}
	}
	return out, changed, nil
}

func describe(t corev1.Taint) string {
	s := t.Key
	if t.Effect != "" {
		s += ":" + string(t.Effect)
	}
	return s
}

// Update applies a change to one Cluster, retrying on conflicts, and says
// what happened.
func Update(ctx context.Context, c client.Client, name string, ch Change, overwrite bool, verb string, out io.Writer) error {
	changed := false
	err := retry.RetryOnConflict(retry.DefaultRetry, func() error {
		cluster := &clusterv1alpha1.Cluster{}
		if err := c.Get(ctx, client.ObjectKey{Name: name}, cluster); err != nil {
			return err
		}
		taints, ch, err := Apply(cluster.Spec.Taints, ch, overwrite, time.Now())
		if err != nil {
			return err
		}
		changed = ch
		if !ch {
			return nil
		}
		cluster.Spec.Taints = taints
		return c.Update(ctx, cluster)
	})
	if err != nil {
		return fmt.Errorf("cluster %s: %w", name, err)
	}
	if changed {
		fmt.Fprintf(out, "cluster/%s %s\n", name, verb)
	} else {
		fmt.Fprintf(out, "cluster/%s unchanged\n", name)
	}
	return nil
}

// NewCommand returns `karmadactl taint`.
func NewCommand(g *options.Global) *cobra.Command {
	var overwrite bool
	cmd := &cobra.Command{
		Use:   "taint clusters NAME KEY_1=VAL_1:TAINT_EFFECT_1 ... KEY_N=VAL_N:TAINT_EFFECT_N",
		Short: "Update the taints of a cluster",
		Long: `Add, change or remove taints of a Cluster. A taint is key=value:Effect, or
key:Effect with an empty value; Effect is NoSchedule, PreferNoSchedule or
NoExecute. A trailing dash removes: key=value:Effect-, key:Effect-, or key-
for every effect of the key.`,
		Example: `  karmadactl taint clusters member1 dedicated=special-user:NoSchedule
  karmadactl taint clusters member1 dedicated:NoSchedule-
  karmadactl taint clusters member1 dedicated-
  karmadactl taint clusters member1 dedicated=other:NoSchedule --overwrite`,
		Args: func(cmd *cobra.Command, args []string) error {
			if len(args) < 3 {
				return fmt.Errorf("expected: taint clusters NAME TAINT...; got %d arguments", len(args))
			}
			switch args[0] {
			case "cluster", "clusters", "cluster.cluster.karmada.io", "clusters.cluster.karmada.io":
			default:
				return fmt.Errorf("resource %q cannot be tainted: only clusters can", args[0])
			}
			return nil
		},
		RunE: func(cmd *cobra.Command, args []string) error {
			ch, err := Parse(args[2:])
			if err != nil {
				return err
			}
			c, err := g.KarmadaClient()
			if err != nil {
				return err
			}
			return Update(cmd.Context(), c, args[1], ch, overwrite, "tainted", cmd.OutOrStdout())
		},
	}
	cmd.Flags().BoolVar(&overwrite, "overwrite", false, "allow changing the value of an existing taint")
	return cmd
}
