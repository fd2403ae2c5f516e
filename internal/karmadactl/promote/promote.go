// Package promote is `karmadactl promote`: take an object a member cluster
// already runs under Karmada's control without restarting it. The member's
// object becomes the resource template (stripped of what the member
// assigned), and a PropagationPolicy (ClusterPropagationPolicy for a
// cluster-scoped kind) places it on that member with conflictResolution
// Overwrite, so Karmada adopts the existing object instead of refusing it.
// Overwrite needs the `adopt` right on the policy (docs/security.md): a
// caller without it is refused by karmada-webhook and nothing is created.
package promote

import (
	"context"
	"fmt"
	"io"

	"github.com/spf13/cobra"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/cli-runtime/pkg/genericclioptions"
	"k8s.io/cli-runtime/pkg/printers"
	"k8s.io/cli-runtime/pkg/resource"
	"k8s.io/client-go/dynamic"
	"sigs.k8s.io/controller-runtime/pkg/client"

	policyv1alpha1 "github.com/karmada-go/karmada/api/policy/v1alpha1"
	workv1alpha1 "github.com/karmada-go/karmada/api/work/v1alpha1"
	"github.com/karmada-go/karmada/internal/interpreter"
	"github.com/karmada-go/karmada/internal/karmadactl/options"
	"github.com/karmada-go/karmada/internal/karmadactl/target"
	"github.com/karmada-go/karmada/internal/names"
)

// Options are the command's flags.
type Options struct {
	g     *options.Global
	flags *target.Flags

	Cluster           string
	ClusterKubeconfig string
	ClusterContext    string
	Dependencies      bool
	AutoCreatePolicy  bool
	PolicyName        string
	DryRun            bool
	Output            string

	Out io.Writer
}

// Validate checks the flags before anything is read.
func (o *Options) Validate(args []string) error {
	if len(args) != 2 {
		return fmt.Errorf("promote takes a type and a name, e.g. promote deployment nginx -n default -C member1 (got %d arguments)", len(args))
	}
	if o.Cluster == "" {
		return fmt.Errorf("--cluster (-C) is required: the member cluster whose object to promote")
	}
	if err := target.ValidateClusterName(o.Cluster); err != nil {
		return fmt.Errorf("--cluster: %w", err)
	}
	if o.Output != "" && o.Output != "yaml" && o.Output != "json" {
		return fmt.Errorf("--output=%q: must be yaml or json (printed, with --dry-run, instead of created)", o.Output)
	}
	if o.PolicyName != "" && !o.AutoCreatePolicy {
		return fmt.Errorf("--policy-name goes with --auto-create-policy=true")
	}
	return nil
}

// NewCommand returns `karmadactl promote`.
func NewCommand(g *options.Global, parent string) *cobra.Command {
	o := &Options{g: g, flags: target.NewFlags(g), AutoCreatePolicy: true}
	cmd := &cobra.Command{
		Use:   "promote <RESOURCE_TYPE> <RESOURCE_NAME> -n <NAME_SPACE> -C <CLUSTER_NAME>",
		Short: "Promote a resource of a member cluster to Karmada's control, without restarting it",
		Long: `Promote an object a member cluster runs, which Karmada does not manage, to
Karmada's control: the object (read through the control plane's cluster proxy,
or with --cluster-kubeconfig directly) becomes the resource template in the
control plane, and a PropagationPolicy (a ClusterPropagationPolicy for a
cluster-scoped kind) named --policy-name places it on that member with
conflictResolution Overwrite. Karmada then adopts the member's object in
place: same UID, nothing restarted (the template equals it). With
--dependencies, the ConfigMaps, Secrets, ServiceAccounts and
PersistentVolumeClaims it uses are promoted with it (propagateDeps).

Overwrite takes over an object a member made: karmada-webhook lets only a
caller holding the adopt right on the policy write one (cluster
administrators hold it).`,
		Example: `  # Promote the Deployment nginx of member1's default namespace
  ` + parent + ` promote deployment nginx -n default -C member1

  # With the ConfigMaps, Secrets and ServiceAccount it uses
  ` + parent + ` promote deployment nginx -n default -C member1 --dependencies

  # A pull-mode member without a proxy: read it with its own kubeconfig
  ` + parent + ` promote deployment nginx -n default -C member3 --cluster-kubeconfig member3.config

  # Print the template and the policy instead of creating them
  ` + parent + ` promote deployment nginx -n default -C member1 --dry-run -o yaml`,
		RunE: func(cmd *cobra.Command, args []string) error {
			if err := o.Validate(args); err != nil {
				return err
			}
			o.Out = cmd.OutOrStdout()
			return o.Run(cmd.Context(), args[0], args[1])
		},
	}
	f := cmd.Flags()
	o.flags.AddFlags(cmd)
	f.StringVarP(&o.Cluster, "cluster", "C", "", "the member cluster whose object to promote (required)")
	f.StringVar(&o.ClusterKubeconfig, "cluster-kubeconfig", "", "kubeconfig of the member, to read it directly rather than through the control plane's cluster proxy (a Pull cluster without spec.proxyURL)")
	f.StringVar(&o.ClusterContext, "cluster-context", "", "context of --cluster-kubeconfig (default: its current context)")
	f.BoolVarP(&o.Dependencies, "dependencies", "d", false, "promote the ConfigMaps, Secrets, ServiceAccounts and PersistentVolumeClaims the workload uses too")
	f.BoolVar(&o.AutoCreatePolicy, "auto-create-policy", true, "create the policy that places the template on the member (false: write your own)")
	f.StringVar(&o.PolicyName, "policy-name", "", "name of the policy (default: <name>-<hash of its namespace and kind>, as Karmada names it)")
	f.BoolVar(&o.DryRun, "dry-run", false, "create nothing; print what would be created")
	f.StringVarP(&o.Output, "output", "o", "", "with --dry-run: print the objects as yaml or json")
	return cmd
}

// memberGetter reads the member: through the proxy, or its kubeconfig.
func (o *Options) memberGetter() genericclioptions.RESTClientGetter {
	if o.ClusterKubeconfig == "" {
		return o.flags.ForCluster(o.Cluster)
	}
	cf := genericclioptions.NewConfigFlags(true)
	cf.KubeConfig, cf.Context, cf.Namespace = &o.ClusterKubeconfig, &o.ClusterContext, &o.flags.Namespace
	return cf
}

// Run promotes the object.
func (o *Options) Run(ctx context.Context, kind, name string) error {
	p, err := o.read(ctx, kind, name)
	if err != nil {
		return err
	}
	var policy client.Object
	if o.AutoCreatePolicy {
		policy = o.policy(p.obj, p.namespaced)
	}
	if o.DryRun {
		return o.print(p.templates, policy)
	}
	return o.create(ctx, p.ns, p.templates, policy)
}

// promoted is what read found in the member: the object, its namespace
// (empty for a cluster-scoped kind), and the templates the control plane is
// to get, the object's first.
type promoted struct {
	obj        *unstructured.Unstructured
	ns         string
	namespaced bool
	templates  []*unstructured.Unstructured
}

// read reads the object (and with --dependencies what it depends on) from
// the member, refusing one Karmada manages already.
func (o *Options) read(ctx context.Context, kind, name string) (*promoted, error) {
	fail := func(err error) (*promoted, error) { return nil, err }
	member := o.memberGetter()
	ns, _, err := o.flags.ForCluster("").ToRawKubeConfigLoader().Namespace()
	if err != nil {
		return fail(err)
	}
	info, err := get(member, ns, kind+"/"+name)
	if err != nil {
		return fail(fmt.Errorf("reading %s %s in cluster %s: %w", kind, name, o.Cluster, err))
	}
	obj := info.Object.(*unstructured.Unstructured)
	if obj.GetLabels()[workv1alpha1.ManagedLabel] == "true" {
		return fail(fmt.Errorf("%s %s in cluster %s is managed by Karmada already (label %s=true)", info.Mapping.Resource.Resource, describe(obj), o.Cluster, workv1alpha1.ManagedLabel))
	}
	namespaced := info.Mapping.Scope.Name() == meta.RESTScopeNameNamespace
	if !namespaced {
		ns = ""
	}
	templates := []*unstructured.Unstructured{interpreter.Default.Prune(obj)}
	var deps []interpreter.DependentObject
	if o.Dependencies {
		if deps, err = interpreter.Default.Dependencies(obj); err != nil {
			return fail(fmt.Errorf("the dependencies of %s: %w", describe(obj), err))
		}
		for _, d := range deps {
			if d.Name == "" {
				return fail(fmt.Errorf("a dependency of %s selects %s by label: promote those one by one", describe(obj), d.Kind))
			}
			dep, err := getDependency(ctx, member, d)
			if err != nil {
				return fail(fmt.Errorf("reading dependency %s %s/%s in cluster %s: %w", d.Kind, d.Namespace, d.Name, o.Cluster, err))
			}
			templates = append(templates, interpreter.Default.Prune(dep))
		}
	}
	return &promoted{obj: obj, ns: ns, namespaced: namespaced, templates: templates}, nil
}

// create writes into the control plane, after checking that the object's
// template does not exist there: the namespace, then the policy (so that
// the template is claimed by it as it appears), then the templates.
func (o *Options) create(ctx context.Context, ns string, templates []*unstructured.Unstructured, policy client.Object) error {
	cp := o.flags.ForCluster("")
	cfg, err := cp.ToRESTConfig()
	if err != nil {
		return err
	}
	dyn, err := dynamic.NewForConfig(cfg)
	if err != nil {
		return err
	}
	mapper, err := cp.ToRESTMapper()
	if err != nil {
		return err
	}
	c, err := o.g.KarmadaClient()
	if err != nil {
		return err
	}
	// The templates must not exist yet: promote never rewrites a template.
	for _, t := range templates {
		m, err := mapper.RESTMapping(t.GroupVersionKind().GroupKind(), t.GroupVersionKind().Version)
		if err != nil {
			return fmt.Errorf("the control plane does not serve %s: %w", t.GroupVersionKind(), err)
		}
		_, err = dyn.Resource(m.Resource).Namespace(t.GetNamespace()).Get(ctx, t.GetName(), metav1.GetOptions{})
		if err == nil && t == templates[0] {
			return fmt.Errorf("%s %s exists in the control plane already: promote takes only what Karmada does not have", m.Resource.Resource, describe(t))
		}
		if err != nil && !apierrors.IsNotFound(err) {
			return err
		}
	}
	// The namespace (Karmada propagates it to every member, as any
	// namespace of the control plane), then the policy, so that the
	// template is claimed by it as it appears.
	if ns != "" {
		nsObj := &unstructured.Unstructured{Object: map[string]any{"apiVersion": "v1", "kind": "Namespace", "metadata": map[string]any{"name": ns}}}
		if err := c.Get(ctx, client.ObjectKey{Name: ns}, nsObj); apierrors.IsNotFound(err) {
			if err := c.Create(ctx, nsObj); err != nil && !apierrors.IsAlreadyExists(err) {
				return fmt.Errorf("creating namespace %s in the control plane: %w", ns, err)
			}
		}
	}
	policyKind := ""
	if policy != nil {
		policyKind = policy.GetObjectKind().GroupVersionKind().Kind
		if err := c.Create(ctx, policy); err != nil {
			if apierrors.IsAlreadyExists(err) {
				return fmt.Errorf("%s %s exists already: choose another --policy-name", policyKind, policy.GetName())
			}
			return fmt.Errorf("creating the policy: %w", err)
		}
	}
	for i, t := range templates {
		m, _ := mapper.RESTMapping(t.GroupVersionKind().GroupKind(), t.GroupVersionKind().Version)
		_, err := dyn.Resource(m.Resource).Namespace(t.GetNamespace()).Create(ctx, t, metav1.CreateOptions{FieldManager: "karmadactl-promote"})
		if err != nil {
			if i > 0 && apierrors.IsAlreadyExists(err) {
				// A dependency the control plane has already: kept.
				fmt.Fprintf(o.Out, "Dependency %s %s exists in the control plane already: kept as it is\n", m.Resource.Resource, describe(t))
				continue
			}
			return fmt.Errorf("creating %s %s in the control plane: %w", m.Resource.Resource, describe(t), err)
		}
		fmt.Fprintf(o.Out, "Resource %q(%s) is promoted successfully\n", m.Resource.String(), describe(t))
	}
	if policy != nil {
		fmt.Fprintf(o.Out, "%s %s places it on cluster %s (conflictResolution: Overwrite)\n", policyKind, describe(policy), o.Cluster)
	}
	return nil
}

// get reads one object.
func get(g genericclioptions.RESTClientGetter, ns, arg string) (*resource.Info, error) {
	r := resource.NewBuilder(g).Unstructured().NamespaceParam(ns).DefaultNamespace().
		ResourceTypeOrNameArgs(false, arg).SingleResourceType().Flatten().Do()
	infos, err := r.Infos()
	if err != nil {
		return nil, err
	}
	if len(infos) != 1 {
		return nil, fmt.Errorf("%s names %d objects, want one", arg, len(infos))
	}
	return infos[0], nil
}

// policy places the template on the member, taking its object over.
func (o *Options) policy(obj *unstructured.Unstructured, namespaced bool) client.Object {
	name := o.PolicyName
	if name == "" {
		// Named as Karmada's promote names it: the object's name and a
		// hash of its namespace and kind.
		name = names.PolicyName(obj.GetNamespace(), obj.GetName(), obj.GroupVersionKind())
	}
	spec := policyv1alpha1.PropagationSpec{
		ResourceSelectors:  []policyv1alpha1.ResourceSelector{{APIVersion: obj.GetAPIVersion(), Kind: obj.GetKind(), Name: obj.GetName(), Namespace: obj.GetNamespace()}},
		Placement:          policyv1alpha1.Placement{ClusterAffinity: &policyv1alpha1.ClusterAffinity{ClusterNames: []string{o.Cluster}}},
		ConflictResolution: policyv1alpha1.ConflictOverwrite,
		PropagateDeps:      o.Dependencies,
	}
	if namespaced {
		p := &policyv1alpha1.PropagationPolicy{ObjectMeta: metav1.ObjectMeta{Namespace: obj.GetNamespace(), Name: name}, Spec: spec}
		p.SetGroupVersionKind(policyv1alpha1.SchemeGroupVersion.WithKind("PropagationPolicy"))
		return p
	}
	p := &policyv1alpha1.ClusterPropagationPolicy{ObjectMeta: metav1.ObjectMeta{Name: name}, Spec: spec}
	p.SetGroupVersionKind(policyv1alpha1.SchemeGroupVersion.WithKind("ClusterPropagationPolicy"))
	return p
}

// print writes what would be created.
func (o *Options) print(templates []*unstructured.Unstructured, policy client.Object) error {
	var p printers.ResourcePrinter = &printers.YAMLPrinter{}
	if o.Output == "json" {
		p = &printers.JSONPrinter{}
	}
	for _, t := range templates {
		if err := p.PrintObj(t, o.Out); err != nil {
			return err
		}
	}
	if policy == nil {
		return nil
	}
	return p.PrintObj(policy, o.Out)
}

// getDependency reads a dependency by its kind and name.
func getDependency(ctx context.Context, g genericclioptions.RESTClientGetter, d interpreter.DependentObject) (*unstructured.Unstructured, error) {
	gv, err := schema.ParseGroupVersion(d.APIVersion)
	if err != nil {
		return nil, err
	}
	mapper, err := g.ToRESTMapper()
	if err != nil {
		return nil, err
	}
	m, err := mapper.RESTMapping(gv.WithKind(d.Kind).GroupKind(), gv.Version)
	if err != nil {
		return nil, err
	}
	cfg, err := g.ToRESTConfig()
	if err != nil {
		return nil, err
	}
	dyn, err := dynamic.NewForConfig(cfg)
	if err != nil {
		return nil, err
	}
	return dyn.Resource(m.Resource).Namespace(d.Namespace).Get(ctx, d.Name, metav1.GetOptions{})
}

func describe(o metav1.Object) string {
	if o.GetNamespace() == "" {
		return o.GetName()
	}
	return o.GetNamespace() + "/" + o.GetName()
}
