// Package interpret is `karmadactl interpret`: check the scripts of
// ResourceInterpreterCustomizations, or run one interpreter operation on
// local files and print the result, with Karmada's flags, before applying a
// customization to a control plane.
package interpret

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"sort"
	"strings"
	"text/tabwriter"

	"github.com/spf13/cobra"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	utilyaml "k8s.io/apimachinery/pkg/util/yaml"
	"sigs.k8s.io/yaml"

	configv1alpha1 "github.com/karmada-go/karmada/api/config/v1alpha1"
	workv1alpha2 "github.com/karmada-go/karmada/api/work/v1alpha2"
	"github.com/karmada-go/karmada/internal/interpreter"
	"github.com/karmada-go/karmada/internal/interpreter/customization"
	"github.com/karmada-go/karmada/internal/interpreter/luavm"
	"github.com/karmada-go/karmada/internal/interpreter/thirdparty"
	"github.com/karmada-go/karmada/internal/karmadactl/options"
)

// Options are the command's flags, named as Karmada's.
type Options struct {
	Filenames      []string
	Check          bool
	Operation      string
	DesiredFile    string
	ObservedFile   string
	StatusFiles    []string
	DesiredReplica int32
}

// operations by the lower-case name the flag accepts (Karmada's names, any
// case).
var operations = map[string]interpreter.Operation{}

func init() {
	for _, op := range interpreter.Operations {
		if op != interpreter.OpPrune {
			operations[strings.ToLower(string(op))] = op
		}
	}
}

func operationNames() string {
	var names []string
	for _, op := range interpreter.Operations {
		if op != interpreter.OpPrune {
			names = append(names, string(op))
		}
	}
	return strings.Join(names, ", ")
}

// NewCommand is `karmadactl interpret`.
func NewCommand(g *options.Global) *cobra.Command {
	o := &Options{}
	cmd := &cobra.Command{
		Use:   "interpret (-f FILENAME) (--operation OPERATION) [--ARGS VALUE]...",
		Short: "Check a resource interpreter customization's scripts, or run one operation on local files",
		Long: `Check the Lua scripts of ResourceInterpreterCustomizations (--check), or run one
interpreter operation on objects in local files and print its result, as the
control plane would: the customizations in -f first, then the built-in
knowledge. Without -f, the customizations of the control plane --kubeconfig
reaches are used.

Operations: ` + operationNames() + `.
  InterpretReplica, InterpretComponent, InterpretDependency, ReviseReplica: the object of --desired-file (or --observed-file)
  Retain: --desired-file and --observed-file
  InterpretStatus, InterpretHealth: --observed-file
  AggregateStatus: --desired-file (or --observed-file) and one --status-file per cluster, each an
    AggregatedStatusItem (clusterName, status, applied, health) or a list of them`,
		Example: `  # Check the scripts of a customization
  karmadactl interpret -f customization.yaml --check

  # The replicas and requirements of a workload
  karmadactl interpret -f customization.yaml --operation InterpretReplica --observed-file deploy.yaml

  # Its copy for one cluster with 2 replicas
  karmadactl interpret -f customization.yaml --operation ReviseReplica --desired-file deploy.yaml --desired-replica 2

  # Aggregate two clusters' statuses into the template
  karmadactl interpret -f customization.yaml --operation AggregateStatus --desired-file deploy.yaml --status-file member1.yaml --status-file member2.yaml`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			rics, err := o.customizations(cmd, g)
			if err != nil {
				return err
			}
			if o.Check {
				return Check(cmd.OutOrStdout(), rics)
			}
			if o.Operation == "" {
				return errors.New("--operation or --check is required")
			}
			return o.Run(cmd.OutOrStdout(), rics)
		},
	}
	f := cmd.Flags()
	f.StringSliceVarP(&o.Filenames, "filename", "f", nil, "files holding ResourceInterpreterCustomizations (default: the control plane's)")
	f.BoolVar(&o.Check, "check", false, "check the customizations' scripts: each compiles and defines its function")
	f.StringVar(&o.Operation, "operation", "", "the operation to run: "+operationNames())
	f.StringVar(&o.DesiredFile, "desired-file", "", "file holding the desired object (the template)")
	f.StringVar(&o.ObservedFile, "observed-file", "", "file holding the observed object (a member's copy)")
	f.StringSliceVar(&o.StatusFiles, "status-file", nil, "files holding the statuses of the clusters, for AggregateStatus")
	f.Int32Var(&o.DesiredReplica, "desired-replica", 0, "the replicas, for ReviseReplica")
	return cmd
}

// customizations reads -f, or the control plane's.
func (o *Options) customizations(cmd *cobra.Command, g *options.Global) ([]configv1alpha1.ResourceInterpreterCustomization, error) {
	if len(o.Filenames) == 0 {
		if o.Check {
			return nil, errors.New("--check needs the customizations to check: -f FILENAME")
		}
		c, err := g.KarmadaClient()
		if err != nil {
			return nil, err
		}
		list := &configv1alpha1.ResourceInterpreterCustomizationList{}
		if err := c.List(cmd.Context(), list); err != nil {
			return nil, fmt.Errorf("listing the control plane's customizations (or give them with -f): %w", err)
		}
		return list.Items, nil
	}
	var out []configv1alpha1.ResourceInterpreterCustomization
	for _, name := range o.Filenames {
		docs, err := readDocuments(name)
		if err != nil {
			return nil, err
		}
		for i, doc := range docs {
			var tm struct{ APIVersion, Kind string }
			_ = yaml.Unmarshal(doc, &tm)
			if tm.Kind != "ResourceInterpreterCustomization" {
				continue
			}
			var ric configv1alpha1.ResourceInterpreterCustomization
			if err := yaml.UnmarshalStrict(doc, &ric); err != nil {
				return nil, fmt.Errorf("%s, document %d: %w", name, i+1, err)
			}
			out = append(out, ric)
		}
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("no ResourceInterpreterCustomization in %s", strings.Join(o.Filenames, ", "))
	}
	return out, nil
}

// readDocuments splits a YAML (or JSON) file into its documents; "-" is
// standard input.
func readDocuments(name string) ([][]byte, error) {
	var r io.Reader
	if name == "-" {
		r = os.Stdin
	} else {
		f, err := os.Open(name)
		if err != nil {
			return nil, err
		}
		defer f.Close()
		r = f
	}
	reader := utilyaml.NewYAMLReader(bufio.NewReader(r))
	var docs [][]byte
	for {
		doc, err := reader.Read()
		if errors.Is(err, io.EOF) {
			return docs, nil
		}
		if err != nil {
			return nil, fmt.Errorf("%s: %w", name, err)
		}
		if len(bytes.TrimSpace(doc)) > 0 {
			docs = append(docs, doc)
		}
	}
}

// Check prints, for every customization and script, whether it compiles and
// defines its function; an error when one does not.
func Check(w io.Writer, rics []configv1alpha1.ResourceInterpreterCustomization) error {
	compiler := customization.NewCompiler(luavm.Default)
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "CUSTOMIZATION\tTARGET\tOPERATION\tRESULT")
	failed := 0
	for i := range rics {
		ric := &rics[i]
		target := ric.Spec.Target.APIVersion + " " + ric.Spec.Target.Kind
		if _, err := customization.Target(ric); err != nil || ric.Spec.Target.Kind == "" {
			fmt.Fprintf(tw, "%s\t%s\t-\tFAIL: spec.target needs an apiVersion and a kind\n", ric.Name, target)
			failed++
		}
		scripts := customization.Scripts(&ric.Spec.Customizations)
		if len(scripts) == 0 {
			fmt.Fprintf(tw, "%s\t%s\t-\tFAIL: no scripts\n", ric.Name, target)
			failed++
		}
		for _, s := range scripts {
			result := "PASS"
			if _, err := compiler.Compile(s); err != nil {
				result = "FAIL: " + oneLine(err.Error())
				failed++
			}
			fmt.Fprintf(tw, "%s\t%s\t%s\t%s\n", ric.Name, target, s.Operation, result)
		}
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	if failed > 0 {
		return fmt.Errorf("%d checks failed", failed)
	}
	return nil
}

func oneLine(s string) string { return strings.Join(strings.Fields(s), " ") }

// Run runs the operation and prints each result as a YAML document headed
// by its name.
func (o *Options) Run(w io.Writer, rics []configv1alpha1.ResourceInterpreterCustomization) error {
	op, ok := operations[strings.ToLower(o.Operation)]
	if !ok {
		return fmt.Errorf("--operation %q: must be one of %s", o.Operation, operationNames())
	}
	reg, err := customization.NewCompiler(luavm.Default).Build(rics)
	if err != nil {
		return err
	}
	layer := &customization.Layer{}
	layer.Set(reg)
	in := interpreter.New(layer, thirdparty.Layer{})

	desired, err := readObject(o.DesiredFile, "--desired-file")
	if err != nil {
		return err
	}
	observed, err := readObject(o.ObservedFile, "--observed-file")
	if err != nil {
		return err
	}
	subject := desired
	if subject == nil {
		subject = observed
	}
	x := inputs{desired: desired, observed: observed, subject: subject, opts: o}
	r := runners[op]
	for _, n := range r.needs {
		if obj, flag := x.input(n); obj == nil {
			return fmt.Errorf("%s needs %s", op, flag)
		}
	}
	results, err := r.run(in, x)
	if err != nil {
		return err
	}
	if subject != nil {
		gk := subject.GroupVersionKind().GroupKind()
		if in.Answers(gk, op) == -1 {
			fmt.Fprintf(w, "# No customization or built-in rule defines %s for %s: the default answer.\n", op, describe(gk))
		}
	}
	return printResults(w, results)
}

// inputs are what an operation is run on: the objects of --desired-file
// and --observed-file, the subject (desired, else observed) and the flags.
type inputs struct {
	desired, observed, subject *unstructured.Unstructured
	opts                       *Options
}

// The objects an operation may need.
const (
	needSubject = iota
	needDesired
	needObserved
)

func (x inputs) input(n int) (*unstructured.Unstructured, string) {
	switch n {
	case needDesired:
		return x.desired, "--desired-file"
	case needObserved:
		return x.observed, "--observed-file"
	}
	return x.subject, "--desired-file or --observed-file"
}

// runner runs one operation once the objects it needs are given.
type runner struct {
	needs []int
	run   func(in *interpreter.Interpreter, x inputs) ([]result, error)
}

// runners are the operations --operation names, with what each prints.
var runners = map[interpreter.Operation]runner{
	interpreter.OpInterpretReplica: {[]int{needSubject}, func(in *interpreter.Interpreter, x inputs) ([]result, error) {
		n, req, err := in.Replicas(x.subject)
		return []result{{"replica", n}, {"requires", req}}, err
	}},
	interpreter.OpInterpretComponent: {[]int{needSubject}, func(in *interpreter.Interpreter, x inputs) ([]result, error) {
		comps, err := in.Components(x.subject)
		return []result{{"components", comps}}, err
	}},
	interpreter.OpReviseReplica: {[]int{needSubject}, func(in *interpreter.Interpreter, x inputs) ([]result, error) {
		out, err := in.ReviseReplicas(x.subject, x.opts.DesiredReplica)
		if err != nil {
			return nil, err
		}
		return []result{{"revised", out.Object}}, nil
	}},
	interpreter.OpRetain: {[]int{needDesired, needObserved}, func(in *interpreter.Interpreter, x inputs) ([]result, error) {
		out, err := in.Retain(x.desired, x.observed)
		if err != nil {
			return nil, err
		}
		return []result{{"retained", out.Object}}, nil
	}},
	interpreter.OpInterpretStatus: {[]int{needObserved}, func(in *interpreter.Interpreter, x inputs) ([]result, error) {
		raw, err := in.ReflectStatus(x.observed)
		if err != nil {
			return nil, err
		}
		var status any
		if raw != nil {
			if err := json.Unmarshal(raw.Raw, &status); err != nil {
				return nil, err
			}
		}
		return []result{{"status", status}}, nil
	}},
	interpreter.OpInterpretHealth: {[]int{needObserved}, func(in *interpreter.Interpreter, x inputs) ([]result, error) {
		h, err := in.Health(x.observed)
		return []result{{"healthy", h == "Healthy"}}, err
	}},
	interpreter.OpInterpretDependency: {[]int{needSubject}, func(in *interpreter.Interpreter, x inputs) ([]result, error) {
		deps, err := in.Dependencies(x.subject)
		if err != nil {
			return nil, err
		}
		refs := make([]configv1alpha1.DependentObjectReference, 0, len(deps))
		for _, d := range deps {
			refs = append(refs, configv1alpha1.DependentObjectReference{APIVersion: d.APIVersion, Kind: d.Kind, Namespace: d.Namespace, Name: d.Name, LabelSelector: d.LabelSelector})
		}
		return []result{{"dependencies", refs}}, nil
	}},
	interpreter.OpAggregateStatus: {[]int{needSubject}, func(in *interpreter.Interpreter, x inputs) ([]result, error) {
		items, err := readStatusItems(x.opts.StatusFiles)
		if err != nil {
			return nil, err
		}
		out, err := in.AggregateStatus(x.subject, items)
		if err != nil {
			return nil, err
		}
		return []result{{"aggregatedStatus", out.Object}}, nil
	}},
}

func describe(gk schema.GroupKind) string {
	if gk.Group == "" {
		return gk.Kind
	}
	return gk.Kind + "." + gk.Group
}

type result struct {
	name  string
	value any
}

// printResults prints each result as Karmada does: a YAML document headed
// by its index and name.
func printResults(w io.Writer, results []result) error {
	for i, r := range results {
		data, err := yaml.Marshal(r.value)
		if err != nil {
			return err
		}
		fmt.Fprintf(w, "---\n# [%d/%d] %s:\n%s", i+1, len(results), r.name, data)
	}
	return nil
}

// readObject reads the object of a file; "" is none.
func readObject(name, flag string) (*unstructured.Unstructured, error) {
	if name == "" {
		return nil, nil
	}
	docs, err := readDocuments(name)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", flag, err)
	}
	if len(docs) != 1 {
		return nil, fmt.Errorf("%s %s: holds %d objects, want one", flag, name, len(docs))
	}
	obj := &unstructured.Unstructured{}
	js, err := yaml.YAMLToJSON(docs[0])
	if err != nil {
		return nil, fmt.Errorf("%s %s: %w", flag, name, err)
	}
	if err := obj.UnmarshalJSON(js); err != nil {
		return nil, fmt.Errorf("%s %s: %w", flag, name, err)
	}
	return obj, nil
}

// statusItemFile is an AggregatedStatusItem as a file holds it: with or
// without apiVersion and kind (Karmada's test data carries them).
type statusItemFile struct {
	APIVersion string `json:"apiVersion,omitempty"`
	Kind       string `json:"kind,omitempty"`
	workv1alpha2.AggregatedStatusItem
}

// readStatusItems reads AggregatedStatusItems: one per document, or lists.
func readStatusItems(names []string) ([]workv1alpha2.AggregatedStatusItem, error) {
	var items []workv1alpha2.AggregatedStatusItem
	for _, name := range names {
		docs, err := readDocuments(name)
		if err != nil {
			return nil, fmt.Errorf("--status-file: %w", err)
		}
		for _, doc := range docs {
			trimmed := bytes.TrimSpace(doc)
			isList := len(trimmed) > 0 && (trimmed[0] == '-' || trimmed[0] == '[')
			// The kinds first: another kind of object is named as such,
			// not by its first unknown field.
			var kinds []struct{ Kind string }
			if isList {
				_ = yaml.Unmarshal(doc, &kinds)
			} else {
				kinds = make([]struct{ Kind string }, 1)
				_ = yaml.Unmarshal(doc, &kinds[0])
			}
			for _, k := range kinds {
				if k.Kind != "" && k.Kind != "AggregatedStatusItem" {
					return nil, fmt.Errorf("--status-file %s: kind %q: want AggregatedStatusItem (or no kind)", name, k.Kind)
				}
			}
			var list []statusItemFile
			if isList {
				if err := yaml.UnmarshalStrict(doc, &list); err != nil {
					return nil, fmt.Errorf("--status-file %s: %w", name, err)
				}
			} else {
				var item statusItemFile
				if err := yaml.UnmarshalStrict(doc, &item); err != nil {
					return nil, fmt.Errorf("--status-file %s: %w", name, err)
				}
				list = append(list, item)
			}
			for _, item := range list {
				items = append(items, item.AggregatedStatusItem)
			}
		}
	}
	sort.SliceStable(items, func(i, j int) bool { return items[i].ClusterName < items[j].ClusterName })
	return items, nil
}
