package explain

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"
	"time"

	"github.com/spf13/cobra"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	utilyaml "k8s.io/apimachinery/pkg/util/yaml"
	"sigs.k8s.io/controller-runtime/pkg/client"

	clusterv1alpha1 "github.com/karmada-go/karmada/api/cluster/v1alpha1"
	policyv1alpha1 "github.com/karmada-go/karmada/api/policy/v1alpha1"
	workv1alpha2 "github.com/karmada-go/karmada/api/work/v1alpha2"
	"github.com/karmada-go/karmada/internal/anybinding"
	"github.com/karmada-go/karmada/internal/interpreter"
	"github.com/karmada-go/karmada/internal/karmadactl/options"
	"github.com/karmada-go/karmada/internal/names"
	"github.com/karmada-go/karmada/internal/propagation/policymatch"
	"github.com/karmada-go/karmada/internal/scheduler/algorithm"
	"github.com/karmada-go/karmada/internal/scheduler/framework"
	"github.com/karmada-go/karmada/internal/scheduler/plugins"
)

// NewExplainCommand returns `karmadactl explain-placement`.
func NewExplainCommand(g *options.Global) *cobra.Command {
	namespace := "default"
	cmd := &cobra.Command{
		Use:   "explain-placement (rb|crb) NAME",
		Short: "Explain why a binding was placed where it is",
		Long: `Print, for the last scheduling cycle of a ResourceBinding (rb) or
ClusterResourceBinding (crb), every cluster the scheduler judged: whether it
passed the filters, the plugin and reason that ruled it out, each score
plugin's score, the replicas it could still take (general estimator) and the
replicas it was given.`,
		Example: `  # Why nginx went where it went
  karmadactl explain-placement rb nginx-deployment -n default

  # A cluster-scoped template's binding
  karmadactl explain-placement crb widgets.example.com-customresourcedefinition`,
		Args: func(_ *cobra.Command, args []string) error {
			if len(args) != 2 {
				return fmt.Errorf("expected the binding kind (rb or crb) and its name, got %d arguments", len(args))
			}
			return nil
		},
		RunE: func(cmd *cobra.Command, args []string) error {
			c, err := g.KarmadaClient()
			if err != nil {
				return err
			}
			return Explain(cmd.Context(), c, cmd.OutOrStdout(), args[0], namespace, args[1])
		},
	}
	cmd.Flags().StringVarP(&namespace, "namespace", "n", namespace, "namespace of the ResourceBinding")
	return cmd
}

// Explain prints the explanation recorded on one binding.
func Explain(ctx context.Context, c client.Client, w io.Writer, kind, namespace, name string) error {
	var status *workv1alpha2.ResourceBindingStatus
	var k anybinding.Kind
	switch strings.ToLower(kind) {
	case "rb", "resourcebinding", "resourcebindings":
		k = anybinding.Kinds[0]
	case "crb", "clusterresourcebinding", "clusterresourcebindings":
		k, namespace = anybinding.Kinds[1], ""
	default:
		return fmt.Errorf("unknown binding kind %q: use rb (ResourceBinding) or crb (ClusterResourceBinding)", kind)
	}
	key := client.ObjectKey{Namespace: namespace, Name: name}
	b, err := k.Get(ctx, c, key)
	if err != nil {
		return fmt.Errorf("%s %s: %w", strings.ToLower(k.Name), strings.TrimPrefix(key.String(), "/"), err)
	}
	spec, status := b.Spec, b.Status
	title := fmt.Sprintf("%s %s (%s %s)", k.Name, strings.TrimPrefix(key.String(), "/"), spec.Resource.Kind, spec.Resource.Name)
	if err := Render(w, title, spec.Clusters, status.PlacementExplanation); err != nil {
		return err
	}
	return RenderEvictions(w, spec, status, time.Now())
}

// NewPlanCommand returns `karmadactl plan`.
func NewPlanCommand(g *options.Global) *cobra.Command {
	var file, namespace string
	var pluginList []string
	cmd := &cobra.Command{
		Use:   "plan -f POLICY_FILE",
		Short: "Show where a propagation policy would place the templates it selects, without applying it",
		Long: `Read PropagationPolicies and ClusterPropagationPolicies from a file, find
the templates in the control plane that each selects, and run the scheduler's
filters, scores, spread constraints and replica division on the clusters as
they are now. Nothing is written: the output is what karmada-scheduler would
decide if the policy were applied. A template held by another policy that
would keep it is reported as such.`,
		Example: `  karmadactl plan -f examples/propagation-policy.yaml
  cat policy.yaml | karmadactl plan -f -`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if file == "" {
				return errors.New("--filename (-f) is required: the policy manifest to plan, or - for stdin")
			}
			var in io.Reader = cmd.InOrStdin()
			if file != "-" {
				f, err := os.Open(file)
				if err != nil {
					return err
				}
				defer f.Close()
				in = f
			}
			policies, err := ReadPolicies(in, namespace)
			if err != nil {
				return fmt.Errorf("%s: %w", file, err)
			}
			fw, err := framework.New(plugins.NewInTreeRegistry(), pluginList)
			if err != nil {
				return err
			}
			c, err := g.KarmadaClient()
			if err != nil {
				return err
			}
			return Plan(cmd.Context(), c, fw, cmd.OutOrStdout(), policies)
		},
	}
	cmd.Flags().StringVarP(&file, "filename", "f", "", "file with the policies to plan (- for stdin)")
	cmd.Flags().StringVarP(&namespace, "namespace", "n", "default", "namespace of PropagationPolicies that do not name one")
	cmd.Flags().StringSliceVar(&pluginList, "plugins", []string{"*"}, "scheduler plugins to run, as karmada-scheduler's --plugins")
	return cmd
}

// Policy is a policy read from a file: exactly one of the two is set.
type Policy struct {
	PP  *policyv1alpha1.PropagationPolicy
	CPP *policyv1alpha1.ClusterPropagationPolicy
}

// ReadPolicies decodes every PropagationPolicy and ClusterPropagationPolicy
// in a YAML or JSON stream; other kinds are refused with their position.
func ReadPolicies(in io.Reader, namespace string) ([]Policy, error) {
	dec := utilyaml.NewYAMLOrJSONDecoder(in, 4096)
	var out []Policy
	for i := 0; ; i++ {
		u := &unstructured.Unstructured{}
		if err := dec.Decode(&u.Object); err != nil {
			if errors.Is(err, io.EOF) {
				break
			}
			return nil, fmt.Errorf("document %d: %w", i+1, err)
		}
		if len(u.Object) == 0 {
			continue
		}
		if u.GroupVersionKind().Group != policyv1alpha1.GroupName {
			return nil, fmt.Errorf("document %d is a %s %q: plan reads PropagationPolicies and ClusterPropagationPolicies", i+1, u.GetKind(), u.GetName())
		}
		switch u.GetKind() {
		case "PropagationPolicy":
			p := &policyv1alpha1.PropagationPolicy{}
			if err := runtime.DefaultUnstructuredConverter.FromUnstructured(u.Object, p); err != nil {
				return nil, fmt.Errorf("document %d: %w", i+1, err)
			}
			if p.Namespace == "" {
				p.Namespace = namespace
			}
			out = append(out, Policy{PP: p})
		case "ClusterPropagationPolicy":
			p := &policyv1alpha1.ClusterPropagationPolicy{}
			if err := runtime.DefaultUnstructuredConverter.FromUnstructured(u.Object, p); err != nil {
				return nil, fmt.Errorf("document %d: %w", i+1, err)
			}
			out = append(out, Policy{CPP: p})
		default:
			return nil, fmt.Errorf("document %d is a %s %q: plan reads PropagationPolicies and ClusterPropagationPolicies", i+1, u.GetKind(), u.GetName())
		}
	}
	if len(out) == 0 {
		return nil, errors.New("no PropagationPolicy or ClusterPropagationPolicy in the input")
	}
	return out, nil
}

// Plan prints, for each policy, where each template it selects would go.
func Plan(ctx context.Context, c client.Client, fw *framework.Framework, w io.Writer, policies []Policy) error {
	clusters := &clusterv1alpha1.ClusterList{}
	if err := c.List(ctx, clusters); err != nil {
		return fmt.Errorf("listing clusters: %w", err)
	}
	livePPs := &policyv1alpha1.PropagationPolicyList{}
	if err := c.List(ctx, livePPs); err != nil {
		return fmt.Errorf("listing propagation policies: %w", err)
	}
	liveCPPs := &policyv1alpha1.ClusterPropagationPolicyList{}
	if err := c.List(ctx, liveCPPs); err != nil {
		return fmt.Errorf("listing cluster propagation policies: %w", err)
	}
	for _, p := range policies {
		var spec *policyv1alpha1.PropagationSpec
		var ns, title string
		pps, cpps := livePPs.Items, liveCPPs.Items
		if p.PP != nil {
			spec, ns, title = &p.PP.Spec, p.PP.Namespace, fmt.Sprintf("PropagationPolicy %s/%s", p.PP.Namespace, p.PP.Name)
			pps = append(without(pps, func(o policyv1alpha1.PropagationPolicy) bool {
				return o.Namespace == p.PP.Namespace && o.Name == p.PP.Name
			}), *p.PP)
		} else {
			spec, title = &p.CPP.Spec, fmt.Sprintf("ClusterPropagationPolicy %s", p.CPP.Name)
			cpps = append(without(cpps, func(o policyv1alpha1.ClusterPropagationPolicy) bool { return o.Name == p.CPP.Name }), *p.CPP)
		}
		templates, err := selected(ctx, c, spec, ns)
		if err != nil {
			return fmt.Errorf("%s: %w", title, err)
		}
		fmt.Fprintf(w, "%s selects %d template(s)\n\n", title, len(templates))
		for _, t := range templates {
			name := t.GetName()
			if t.GetNamespace() != "" {
				name = t.GetNamespace() + "/" + name
			}
			heading := fmt.Sprintf("%s %s", t.GetKind(), name)
			current, claimed := policymatch.ClaimOf(t)
			// (As the controller manager decides with preemption on: a client
			// cannot see its feature gates.)
			chosen, ok := policymatch.Choose(current, claimed, policymatch.Candidates(t, pps, cpps), true)
			if ok && !samePolicy(chosen, p) {
				fmt.Fprintf(w, "%s\n  stays with policy %s (it wins over this one, see priority and preemption)\n\n", heading, chosen.Key())
				continue
			}
			bspec, err := bindingSpec(ctx, c, t, spec)
			if err != nil {
				return fmt.Errorf("%s: %w", heading, err)
			}
			res := algorithm.Schedule(ctx, fw, bspec, clusters.Items)
			if err := Render(w, heading, res.Targets, res.Explanation); err != nil {
				return err
			}
			fmt.Fprintln(w)
		}
	}
	return nil
}

func without[T any](in []T, drop func(T) bool) []T {
	out := make([]T, 0, len(in))
	for _, o := range in {
		if !drop(o) {
			out = append(out, o)
		}
	}
	return out
}

func samePolicy(c policymatch.Candidate, p Policy) bool {
	if p.PP != nil {
		return c.Namespaced && c.Namespace == p.PP.Namespace && c.Name == p.PP.Name
	}
	return !c.Namespaced && c.Name == p.CPP.Name
}

// bindingSpec is the binding the detector would make for the template under
// the policy, placed where its current binding is (so that steady division
// and ClusterLocality see what the scheduler would).
func bindingSpec(ctx context.Context, c client.Client, t *unstructured.Unstructured, spec *policyv1alpha1.PropagationSpec) (*workv1alpha2.ResourceBindingSpec, error) {
	replicas, req, err := interpreter.Default.Replicas(t)
	if err != nil {
		return nil, err
	}
	out := &workv1alpha2.ResourceBindingSpec{
		Resource: workv1alpha2.ObjectReference{APIVersion: t.GetAPIVersion(), Kind: t.GetKind(), Namespace: t.GetNamespace(), Name: t.GetName(), UID: t.GetUID()},
		Replicas: replicas, ReplicaRequirements: req,
	}
	policymatch.ApplyToBinding(out, spec)
	name := names.BindingName(t.GetKind(), t.GetName())
	current, err := anybinding.KindFor(t.GetNamespace()).Get(ctx, c, client.ObjectKey{Namespace: t.GetNamespace(), Name: name})
	if err != nil && !apierrors.IsNotFound(err) {
		return nil, err
	}
	out.Clusters = current.Spec.Clusters
	return out, nil
}

// selected lists the templates the policy's selectors pick.
func selected(ctx context.Context, c client.Client, spec *policyv1alpha1.PropagationSpec, namespace string) ([]*unstructured.Unstructured, error) {
	seen := map[string]bool{}
	var out []*unstructured.Unstructured
	for i, sel := range spec.ResourceSelectors {
		gv, err := schema.ParseGroupVersion(sel.APIVersion)
		if err != nil {
			return nil, fmt.Errorf("resourceSelectors[%d].apiVersion: %w", i, err)
		}
		mapping, err := c.RESTMapper().RESTMapping(gv.WithKind(sel.Kind).GroupKind(), gv.Version)
		if err != nil {
			return nil, fmt.Errorf("resourceSelectors[%d]: the control plane does not serve %s %s: %w", i, sel.APIVersion, sel.Kind, err)
		}
		list := &unstructured.UnstructuredList{}
		list.SetGroupVersionKind(gv.WithKind(sel.Kind + "List"))
		var opts []client.ListOption
		if mapping.Scope.Name() == meta.RESTScopeNameNamespace {
			ns := sel.Namespace
			if ns == "" {
				ns = namespace
			}
			if ns != "" {
				opts = append(opts, client.InNamespace(ns))
			}
		}
		if err := c.List(ctx, list, opts...); err != nil {
			return nil, fmt.Errorf("listing %s: %w", sel.Kind, err)
		}
		for j := range list.Items {
			t := &list.Items[j]
			if names.ReservedNamespace(t.GetNamespace()) || seen[string(t.GetUID())] {
				continue
			}
			if s, err := policymatch.SelectorMatches(sel, t, namespace); err != nil {
				return nil, fmt.Errorf("resourceSelectors[%d]: %w", i, err)
			} else if s != policymatch.NoMatch {
				seen[string(t.GetUID())] = true
				out = append(out, t)
			}
		}
	}
	return out, nil
}
