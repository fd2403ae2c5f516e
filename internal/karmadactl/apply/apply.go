// Package apply is `karmadactl apply`: kubectl's apply to the Karmada
// control plane, which with --all-clusters or -C/--cluster also writes,
// for each object applied, a PropagationPolicy (a ClusterPropagationPolicy
// for a cluster-scoped kind) placing it on those clusters.
package apply

import (
	"context"
	"fmt"
	"io"
	"strings"

	"github.com/spf13/cobra"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/cli-runtime/pkg/resource"
	kubectlapply "k8s.io/kubectl/pkg/cmd/apply"
	cmdutil "k8s.io/kubectl/pkg/cmd/util"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller/controllerutil"

	policyv1alpha1 "github.com/karmada-go/karmada/api/policy/v1alpha1"
	"github.com/karmada-go/karmada/internal/karmadactl/kubectlcmds"
	"github.com/karmada-go/karmada/internal/karmadactl/options"
	"github.com/karmada-go/karmada/internal/karmadactl/target"
	"github.com/karmada-go/karmada/internal/names"
)

// Options are karmadactl's flags beside kubectl apply's.
type Options struct {
	AllClusters bool
	Clusters    []string
}

// Validate checks them.
func (o *Options) Validate() error {
	if o.AllClusters && len(o.Clusters) > 0 {
		return fmt.Errorf("--all-clusters and --cluster (-C) exclude each other: every cluster, or those named")
	}
	for _, c := range o.Clusters {
		if err := target.ValidateClusterName(c); err != nil {
			return fmt.Errorf("--cluster: %w", err)
		}
	}
	return nil
}

// propagates: the command writes policies.
func (o *Options) propagates() bool { return o.AllClusters || len(o.Clusters) > 0 }

// NewCommand returns `karmadactl apply`.
func NewCommand(g *options.Global, parent string) *cobra.Command {
	o := &Options{}
	flags := target.NewFlags(g)
	f := flags.Factory()
	streams := kubectlcmds.Streams()
	af := kubectlapply.NewApplyFlags(streams)
	cmd := &cobra.Command{
		Use:   "apply (-f FILENAME | -k DIRECTORY) [--all-clusters | -C member1,member2]",
		Short: "Apply a configuration to the control plane by file name or stdin, and propagate it",
		Long: `Apply a configuration to the Karmada control plane, as kubectl apply does.
With --all-clusters, or -C/--cluster naming member clusters, each object
applied is also propagated: a PropagationPolicy (a ClusterPropagationPolicy for
a cluster-scoped kind) named <name>-<kind> selects it and places it on every
cluster, or on those named. Namespaces (propagated to every member anyway) and
Karmada's own kinds get no policy.`,
		Example: `  # Apply the configuration in nginx.yaml to the control plane
  ` + parent + ` apply -f nginx.yaml

  # ... and propagate it to every member cluster
  ` + parent + ` apply -f nginx.yaml --all-clusters

  # ... or to member1 and member2
  ` + parent + ` apply -f nginx.yaml -C member1,member2`,
		RunE: func(cmd *cobra.Command, args []string) error {
			if err := o.Validate(); err != nil {
				return err
			}
			ao, err := af.ToOptions(f, cmd, parent, args)
			if err != nil {
				return err
			}
			if err := ao.Validate(); err != nil {
				return err
			}
			if err := ao.Run(); err != nil {
				return err
			}
			if !o.propagates() {
				return nil
			}
			infos, err := ao.GetObjects()
			if err != nil {
				return err
			}
			c, err := g.KarmadaClient()
			if err != nil {
				return err
			}
			dryRun := ao.DryRunStrategy != cmdutil.DryRunNone
			return o.propagate(cmd.Context(), c, infos, dryRun, cmd.OutOrStdout())
		},
	}
	flags.AddFlags(cmd)
	af.AddFlags(cmd)
	cmd.Flags().BoolVar(&o.AllClusters, "all-clusters", false, "propagate every object applied to every member cluster")
	cmd.Flags().StringSliceVarP(&o.Clusters, "cluster", "C", nil, "propagate every object applied to these member clusters, e.g. -C member1,member2")
	return cmd
}

// propagate writes a policy for each object.
func (o *Options) propagate(ctx context.Context, c client.Client, infos []*resource.Info, dryRun bool, out io.Writer) error {
	for _, info := range infos {
		gvk := info.Mapping.GroupVersionKind
		if gvk.Kind == "Namespace" && gvk.Group == "" || strings.HasSuffix(gvk.Group, "karmada.io") {
			continue
		}
		policy, spec := o.policy(info)
		if dryRun {
			fmt.Fprintf(out, "%s/%s created (dry run)\n", policyResource(policy), policy.GetName())
			continue
		}
		result, err := controllerutil.CreateOrUpdate(ctx, c, policy, func() error {
			have := specOf(policy)
			have.ResourceSelectors, have.Placement.ClusterAffinity = spec.ResourceSelectors, spec.Placement.ClusterAffinity
			return nil
		})
		if err != nil {
			return fmt.Errorf("propagating %s %s: %w", gvk.Kind, info.Name, err)
		}
		word := map[controllerutil.OperationResult]string{controllerutil.OperationResultCreated: "created", controllerutil.OperationResultUpdated: "configured"}[result]
		if word == "" {
			word = "unchanged"
		}
		fmt.Fprintf(out, "%s/%s %s\n", policyResource(policy), policy.GetName(), word)
	}
	return nil
}

// specOf is a policy's spec, to write in place.
func specOf(p client.Object) *policyv1alpha1.PropagationSpec {
	if cp, ok := p.(*policyv1alpha1.ClusterPropagationPolicy); ok {
		return &cp.Spec
	}
	return &p.(*policyv1alpha1.PropagationPolicy).Spec
}

func policyResource(p client.Object) string {
	if _, ok := p.(*policyv1alpha1.ClusterPropagationPolicy); ok {
		return "clusterpropagationpolicy.policy.karmada.io"
	}
	return "propagationpolicy.policy.karmada.io"
}

// policy is the (empty) object to write and the spec it must have.
func (o *Options) policy(info *resource.Info) (client.Object, policyv1alpha1.PropagationSpec) {
	gvk := info.Mapping.GroupVersionKind
	spec := policyv1alpha1.PropagationSpec{
		ResourceSelectors: []policyv1alpha1.ResourceSelector{{APIVersion: gvk.GroupVersion().String(), Kind: gvk.Kind, Name: info.Name, Namespace: info.Namespace}},
		Placement:         policyv1alpha1.Placement{ClusterAffinity: &policyv1alpha1.ClusterAffinity{ClusterNames: o.Clusters}},
	}
	// Named as Karmada names the binding it makes.
	name := names.BindingName(gvk.Kind, info.Name)
	if info.Mapping.Scope.Name() == meta.RESTScopeNameNamespace {
		return &policyv1alpha1.PropagationPolicy{ObjectMeta: metav1.ObjectMeta{Namespace: info.Namespace, Name: name}}, spec
	}
	return &policyv1alpha1.ClusterPropagationPolicy{ObjectMeta: metav1.ObjectMeta{Name: name}}, spec
}
