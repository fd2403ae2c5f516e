// Package get is `karmadactl get`: kubectl's get over the Karmada control
// plane and member clusters at once (--operation-scope karmada|members|all,
// -C/--clusters), in one table whose CLUSTER column says where each object
// is (Karmada: the control plane) and whose ADOPTION column says whether
// Karmada manages a member's object (Y), or not (N). Members are read
// through the control plane's cluster proxy, as the caller.
package get

import (
	"context"
	"errors"
	"fmt"
	"io"
	"slices"
	"sort"
	"strings"
	"sync"

	"github.com/spf13/cobra"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	metav1beta1 "k8s.io/apimachinery/pkg/apis/meta/v1beta1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/cli-runtime/pkg/genericclioptions"
	"k8s.io/cli-runtime/pkg/printers"
	"k8s.io/cli-runtime/pkg/resource"
	"k8s.io/client-go/rest"

	clusterv1alpha1 "github.com/karmada-go/karmada/api/cluster/v1alpha1"
	searchv1alpha1 "github.com/karmada-go/karmada/api/search/v1alpha1"
	workv1alpha1 "github.com/karmada-go/karmada/api/work/v1alpha1"
	"github.com/karmada-go/karmada/internal/karmadactl/options"
	"github.com/karmada-go/karmada/internal/karmadactl/target"
)

// ControlPlane is the CLUSTER column's value for the control plane's
// objects, as Karmada prints it.
const ControlPlane = "Karmada"

// Options are the command's flags.
type Options struct {
	flags *target.Flags
	g     *options.Global

	Scope          string
	Clusters       []string
	AllNamespaces  bool
	LabelSelector  string
	FieldSelector  string
	Output         string
	NoHeaders      bool
	ShowLabels     bool
	ShowKind       bool
	LabelColumns   []string
	IgnoreNotFound bool
	Watch          bool
	WatchOnly      bool

	args  []string
	print *genericclioptions.PrintFlags
	Out   io.Writer
	Err   io.Writer
}

// Validate checks the flags before anything is read.
func (o *Options) Validate(args []string) error {
	if len(args) == 0 {
		return fmt.Errorf("you must specify the type of resource to get, e.g. karmadactl get deployments")
	}
	switch o.Scope {
	case target.Karmada, target.Members, target.All:
	default:
		return fmt.Errorf("--operation-scope=%q: must be karmada, members or all", o.Scope)
	}
	if o.Scope == target.Karmada && len(o.Clusters) > 0 {
		return fmt.Errorf("--clusters goes with --operation-scope members or all")
	}
	for _, c := range o.Clusters {
		if err := target.ValidateClusterName(c); err != nil {
			return fmt.Errorf("--clusters: %w", err)
		}
	}
	if o.Output != "" && o.Output != "wide" && !slices.Contains(o.print.AllowedFormats(), o.Output) && !strings.Contains(o.Output, "=") {
		return fmt.Errorf("--output=%q: must be wide or one of %s", o.Output, strings.Join(o.print.AllowedFormats(), ", "))
	}
	return nil
}

// NewCommand returns `karmadactl get`.
func NewCommand(g *options.Global, parent string) *cobra.Command {
	o := &Options{g: g, flags: target.NewFlags(g), Scope: target.Karmada, print: genericclioptions.NewPrintFlags("")}
	cmd := &cobra.Command{
		Use:   "get [(-o|--output=)json|yaml|name|wide|jsonpath=...] (TYPE[.VERSION][.GROUP] [NAME ...] | TYPE[.VERSION][.GROUP]/NAME ...) [flags]",
		Short: "Display one or many resources in the control plane and member clusters",
		Long: `Display one or many resources, from the Karmada control plane
(--operation-scope karmada, the default), from member clusters (members), or
from both (all). -C/--clusters limits the members (default: every Cluster).

One table lists them all: CLUSTER says where each object is (Karmada is the
control plane) and ADOPTION whether Karmada manages a member's object (Y: it
carries karmada.io/managed=true) or not (N). Members are read through the
control plane's cluster proxy (karmada-aggregated-apiserver) as you: what
you see in a member is what its RBAC lets you see. A member that cannot be
read is reported on stderr and the others are still listed. With -o
json|yaml|name|jsonpath|go-template, a member's objects carry the annotation
resource.karmada.io/cached-from-cluster naming it.`,
		Example: `  # Deployments of the control plane's current namespace
  ` + parent + ` get deployments

  # Where nginx runs: the template and every member's copy
  ` + parent + ` get deployment nginx --operation-scope all

  # Pods of member1 and member2, in every namespace, with node names
  ` + parent + ` get pods -A --operation-scope members -C member1,member2 -o wide`,
		RunE: func(cmd *cobra.Command, args []string) error {
			if err := o.Validate(args); err != nil {
				return err
			}
			o.Out, o.Err = cmd.OutOrStdout(), cmd.ErrOrStderr()
			return o.Run(cmd.Context(), args)
		},
	}
	f := cmd.Flags()
	o.flags.AddFlags(cmd)
	f.StringVar(&o.Scope, "operation-scope", o.Scope, "where to read: karmada (the control plane), members, or all")
	f.StringSliceVarP(&o.Clusters, "clusters", "C", nil, "member clusters to read, e.g. -C member1,member2 (default: all)")
	f.BoolVarP(&o.AllNamespaces, "all-namespaces", "A", false, "list the objects of every namespace")
	f.StringVarP(&o.LabelSelector, "selector", "l", "", "label selector, e.g. -l app=nginx")
	f.StringVar(&o.FieldSelector, "field-selector", "", "field selector, e.g. --field-selector metadata.name=nginx")
	f.StringVarP(&o.Output, "output", "o", "", "output format: wide, "+strings.Join(o.print.AllowedFormats(), ", "))
	f.BoolVar(&o.NoHeaders, "no-headers", false, "do not print the table's headers")
	f.BoolVar(&o.ShowLabels, "show-labels", false, "print every label as the last column")
	f.BoolVar(&o.ShowKind, "show-kind", false, "print the kind with each name")
	f.StringSliceVarP(&o.LabelColumns, "label-columns", "L", nil, "labels to print as columns")
	f.BoolVar(&o.IgnoreNotFound, "ignore-not-found", false, "exit 0 when a named object exists nowhere")
	f.BoolVarP(&o.Watch, "watch", "w", false, "after listing the requested objects, watch for changes in every cluster read")
	f.BoolVar(&o.WatchOnly, "watch-only", false, "watch for changes to the requested objects in every cluster read, without listing them first")
	f.StringVar(o.print.TemplatePrinterFlags.TemplateArgument, "template", "", "template of -o go-template or jsonpath")
	return cmd
}

// source is where objects were read: the control plane or a member.
type source struct {
	cluster string // "" : the control plane
	infos   []*resource.Info
	err     error
}

func (s source) name() string {
	if s.cluster == "" {
		return ControlPlane
	}
	return s.cluster
}

// Run reads every target and prints.
func (o *Options) Run(ctx context.Context, args []string) error {
	var clusters []string
	if o.Scope != target.Karmada {
		var err error
		if clusters, err = o.memberClusters(ctx); err != nil {
			return err
		}
	}
	var targets []string
	if o.Scope != target.Members {
		targets = append(targets, "")
	}
	targets = append(targets, clusters...)
	if o.Watch || o.WatchOnly {
		o.args = args
		return o.runWatch(ctx, targets)
	}
	table := o.Output == "" || o.Output == "wide"
	sources := make([]source, len(targets))
	var wg sync.WaitGroup
	for i, c := range targets {
		wg.Add(1)
		go func() {
			defer wg.Done()
			sources[i] = source{cluster: c}
			sources[i].infos, sources[i].err = o.read(c, args, table)
		}()
	}
	wg.Wait()

	found := false
	var notFound, failed []string
	for _, s := range sources {
		if len(s.infos) > 0 {
			found = true
		}
		if s.err == nil {
			continue
		}
		if isNotFound(s.err) {
			notFound = append(notFound, fmt.Sprintf("%s: %v", s.name(), s.err))
			continue
		}
		failed = append(failed, fmt.Sprintf("cluster %s: %v", s.name(), s.err))
	}
	var err error
	if table {
		err = o.printTables(sources)
	} else {
		err = o.printObjects(sources)
	}
	if err != nil {
		return err
	}
	for _, f := range failed {
		fmt.Fprintf(o.Err, "error: %s\n", f)
	}
	if !found && len(notFound) > 0 && !o.IgnoreNotFound {
		for _, n := range notFound {
			fmt.Fprintf(o.Err, "Error from server (NotFound): %s\n", n)
		}
		return errors.New("not found")
	}
	if len(failed) > 0 {
		return fmt.Errorf("%d of %d clusters could not be read", len(failed), len(targets))
	}
	if !found && len(notFound) == 0 && o.Output == "" {
		fmt.Fprintln(o.Err, "No resources found")
	}
	return nil
}

func isNotFound(err error) bool {
	var agg interface{ Errors() []error }
	if errors.As(err, &agg) {
		for _, e := range agg.Errors() {
			if !apierrors.IsNotFound(e) {
				return false
			}
		}
		return true
	}
	return apierrors.IsNotFound(err)
}

// memberClusters are -C's, or every Cluster the control plane can reach:
// a Pull cluster without spec.proxyURL cannot be (skipped with a note, or
// refused when -C names it).
func (o *Options) memberClusters(ctx context.Context) ([]string, error) {
	c, err := o.g.KarmadaClient()
	if err != nil {
		return nil, err
	}
	list := &clusterv1alpha1.ClusterList{}
	if err := c.List(ctx, list); err != nil {
		if apierrors.IsForbidden(err) && len(o.Clusters) > 0 {
			// A caller who may proxy to the clusters it names without
			// listing Clusters: the proxy checks them.
			return o.Clusters, nil
		}
		if apierrors.IsForbidden(err) {
			return nil, fmt.Errorf("listing member clusters: %w (name the clusters to read with -C)", err)
		}
		return nil, fmt.Errorf("listing member clusters: %w", err)
	}
	known := map[string]*clusterv1alpha1.Cluster{}
	for i := range list.Items {
		known[list.Items[i].Name] = &list.Items[i]
	}
	unreachable := func(cl *clusterv1alpha1.Cluster) bool {
		return cl.Spec.SyncMode == clusterv1alpha1.Pull && cl.Spec.ProxyURL == ""
	}
	var out []string
	if len(o.Clusters) > 0 {
		for _, name := range o.Clusters {
			cl := known[name]
			switch {
			case cl == nil:
				return nil, fmt.Errorf("--clusters: cluster %q is not a member of this control plane", name)
			case unreachable(cl):
				return nil, fmt.Errorf("--clusters: cluster %s is in Pull mode without spec.proxyURL: the control plane cannot reach it", name)
			}
			out = append(out, name)
		}
		return out, nil
	}
	for _, cl := range list.Items {
		if unreachable(&cl) {
			fmt.Fprintf(o.Err, "Skipping cluster %s: in Pull mode without spec.proxyURL, the control plane cannot reach it\n", cl.Name)
			continue
		}
		out = append(out, cl.Name)
	}
	sort.Strings(out)
	return out, nil
}

// builder reads what args name in one cluster, as server-side tables when
// printing a table.
func (o *Options) builder(cluster string, args []string, table bool) (*resource.Builder, error) {
	getter := o.flags.ForCluster(cluster)
	ns, _, err := getter.ToRawKubeConfigLoader().Namespace()
	if err != nil {
		return nil, err
	}
	b := resource.NewBuilder(getter).
		Unstructured().
		NamespaceParam(ns).DefaultNamespace().AllNamespaces(o.AllNamespaces).
		LabelSelectorParam(o.LabelSelector).
		FieldSelectorParam(o.FieldSelector).
		ResourceTypeOrNameArgs(true, args...).
		Latest()
	if table {
		b = b.TransformRequests(func(req *rest.Request) {
			req.SetHeader("Accept", strings.Join([]string{
				fmt.Sprintf("application/json;as=Table;v=%s;g=%s", metav1.SchemeGroupVersion.Version, metav1.GroupName),
				fmt.Sprintf("application/json;as=Table;v=%s;g=%s", metav1beta1.SchemeGroupVersion.Version, metav1beta1.GroupName),
				"application/json",
			}, ","))
		})
	}
	return b, nil
}

// read gets the objects args name from one cluster.
func (o *Options) read(cluster string, args []string, table bool) ([]*resource.Info, error) {
	b, err := o.builder(cluster, args, table)
	if err != nil {
		return nil, err
	}
	b = b.ContinueOnError().Flatten()
	r := b.Do()
	infos, err := r.Infos()
	if o.IgnoreNotFound {
		err = ignoreNotFound(err)
	}
	return infos, err
}

func ignoreNotFound(err error) error {
	if err == nil || isNotFound(err) {
		return nil
	}
	return err
}

// printObjects prints every object with -o's printer, a member's marked
// with the cluster it came from.
func (o *Options) printObjects(sources []source) error {
	p, err := o.objectPrinter()
	if err != nil {
		return err
	}
	var objs []runtime.Object
	for _, s := range sources {
		for _, info := range s.infos {
			obj := info.Object.DeepCopyObject()
			if u, ok := obj.(*unstructured.Unstructured); ok && s.cluster != "" {
				a := u.GetAnnotations()
				if a == nil {
					a = map[string]string{}
				}
				a[searchv1alpha1.CachedFromClusterAnnotation] = s.cluster
				u.SetAnnotations(a)
			}
			objs = append(objs, obj)
		}
	}
	if len(objs) == 1 {
		return p.PrintObj(objs[0], o.Out)
	}
	if o.Output == "name" {
		for _, obj := range objs {
			if err := p.PrintObj(obj, o.Out); err != nil {
				return err
			}
		}
		return nil
	}
	list := &unstructured.UnstructuredList{Object: map[string]any{"apiVersion": "v1", "kind": "List", "metadata": map[string]any{"resourceVersion": ""}}}
	for _, obj := range objs {
		u, err := runtime.DefaultUnstructuredConverter.ToUnstructured(obj)
		if err != nil {
			return err
		}
		list.Items = append(list.Items, unstructured.Unstructured{Object: u})
	}
	return p.PrintObj(list, o.Out)
}

// group is the rows of one resource type, from every cluster.
type group struct {
	gk      schema.GroupKind
	columns []metav1.TableColumnDefinition
	rows    []metav1.TableRow
}

// printTables prints one table per resource type with the CLUSTER and
// ADOPTION columns.
func (o *Options) printTables(sources []source) error {
	var groups []*group
	byGK := map[schema.GroupKind]*group{}
	for _, s := range sources {
		for _, info := range s.infos {
			t, err := decodeTable(info.Object)
			if err != nil {
				return fmt.Errorf("cluster %s: %w", s.name(), err)
			}
			gk := info.Mapping.GroupVersionKind.GroupKind()
			g := byGK[gk]
			if g == nil {
				g = &group{gk: gk, columns: withClusterColumns(t.ColumnDefinitions)}
				byGK[gk] = g
				groups = append(groups, g)
			}
			for _, row := range t.Rows {
				g.rows = append(g.rows, withClusterCells(row, s.cluster, len(t.ColumnDefinitions)))
			}
		}
	}
	for i, g := range groups {
		if i > 0 {
			fmt.Fprintln(o.Out)
		}
		p := printers.NewTablePrinter(printers.PrintOptions{
			NoHeaders:     o.NoHeaders,
			WithNamespace: o.AllNamespaces,
			WithKind:      o.ShowKind || len(groups) > 1,
			Kind:          g.gk,
			Wide:          o.Output == "wide",
			ShowLabels:    o.ShowLabels,
			ColumnLabels:  o.LabelColumns,
		})
		if err := p.PrintObj(&metav1.Table{ColumnDefinitions: g.columns, Rows: g.rows}, o.Out); err != nil {
			return err
		}
	}
	return nil
}

// decodeTable reads a server-side Table (and its rows' objects).
func decodeTable(obj runtime.Object) (*metav1.Table, error) {
	u, ok := obj.(*unstructured.Unstructured)
	if !ok || u.GetKind() != "Table" {
		return nil, fmt.Errorf("the server answered %s, not a Table", obj.GetObjectKind().GroupVersionKind())
	}
	t := &metav1.Table{}
	if err := runtime.DefaultUnstructuredConverter.FromUnstructured(u.Object, t); err != nil {
		return nil, err
	}
	for i := range t.Rows {
		row := &t.Rows[i]
		if row.Object.Raw == nil || row.Object.Object != nil {
			continue
		}
		o, err := runtime.Decode(unstructured.UnstructuredJSONScheme, row.Object.Raw)
		if err != nil {
			return nil, err
		}
		row.Object.Object = o
	}
	return t, nil
}

// withClusterColumns puts CLUSTER after the name and ADOPTION last.
func withClusterColumns(cols []metav1.TableColumnDefinition) []metav1.TableColumnDefinition {
	out := make([]metav1.TableColumnDefinition, 0, len(cols)+2)
	if len(cols) > 0 {
		out = append(out, cols[0])
	}
	out = append(out, metav1.TableColumnDefinition{Name: "Cluster", Type: "string", Description: "where the object is: Karmada (the control plane) or a member cluster"})
	if len(cols) > 1 {
		out = append(out, cols[1:]...)
	}
	return append(out, metav1.TableColumnDefinition{Name: "Adoption", Type: "string", Description: "whether Karmada manages the member's object (Y) or not (N); - in the control plane"})
}

// withClusterCells fills a row's CLUSTER and ADOPTION cells.
func withClusterCells(row metav1.TableRow, cluster string, n int) metav1.TableRow {
	cells := make([]any, 0, n+2)
	for len(row.Cells) < n {
		row.Cells = append(row.Cells, "")
	}
	name, adoption := ControlPlane, "-"
	if cluster != "" {
		name, adoption = cluster, "N"
		if m, err := meta.Accessor(row.Object.Object); err == nil && m.GetLabels()[workv1alpha1.ManagedLabel] == "true" {
			adoption = "Y"
		}
	}
	if n > 0 {
		cells = append(cells, row.Cells[0])
	}
	cells = append(cells, name)
	if n > 1 {
		cells = append(cells, row.Cells[1:n]...)
	}
	row.Cells = append(cells, adoption)
	return row
}

// objectPrinter is -o's printer (json, yaml, name, jsonpath=…,
// go-template=…).
func (o *Options) objectPrinter() (printers.ResourcePrinter, error) {
	if strings.Contains(o.Output, "=") {
		format, tmpl, _ := strings.Cut(o.Output, "=")
		o.print.OutputFormat = &format
		*o.print.TemplatePrinterFlags.TemplateArgument = tmpl
	} else {
		o.print.OutputFormat = &o.Output
	}
	return o.print.ToPrinter()
}
