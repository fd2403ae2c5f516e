package get

import (
	"bytes"
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/cli-runtime/pkg/genericclioptions"
	"k8s.io/cli-runtime/pkg/resource"

	searchv1alpha1 "github.com/karmada-go/karmada/api/search/v1alpha1"
)

// serverTable is a Deployment table as an API server answers it.
func serverTable(t *testing.T, rows ...[]any) *unstructured.Unstructured {
	t.Helper()
	tbl := &metav1.Table{
		TypeMeta: metav1.TypeMeta{APIVersion: "meta.k8s.io/v1", Kind: "Table"},
		ColumnDefinitions: []metav1.TableColumnDefinition{
			{Name: "Name", Type: "string"}, {Name: "Ready", Type: "string"}, {Name: "Images", Type: "string", Priority: 1},
		},
	}
	for _, r := range rows {
		labels := map[string]any{}
		if r[2] == "managed" {
			labels["karmada.io/managed"] = "true"
		}
		obj := map[string]any{"apiVersion": "meta.k8s.io/v1", "kind": "PartialObjectMetadata", "metadata": map[string]any{"name": r[0], "namespace": "default", "labels": labels}}
		raw, err := (&unstructured.Unstructured{Object: obj}).MarshalJSON()
		if err != nil {
			t.Fatal(err)
		}
		tbl.Rows = append(tbl.Rows, metav1.TableRow{Cells: []any{r[0], r[1], "nginx"}, Object: runtime.RawExtension{Raw: raw}})
	}
	u, err := runtime.DefaultUnstructuredConverter.ToUnstructured(tbl)
	if err != nil {
		t.Fatal(err)
	}
	return &unstructured.Unstructured{Object: u}
}

func info(obj runtime.Object) *resource.Info {
	return &resource.Info{Object: obj, Mapping: &meta.RESTMapping{
		Resource:         schema.GroupVersionResource{Group: "apps", Version: "v1", Resource: "deployments"},
		GroupVersionKind: schema.GroupVersionKind{Group: "apps", Version: "v1", Kind: "Deployment"},
		Scope:            meta.RESTScopeNamespace,
	}}
}

// One table for the control plane and the members: CLUSTER after the name,
// ADOPTION last (- in the control plane, Y for what Karmada manages, N
// otherwise); -o wide keeps the server's wide columns.
func TestPrintTables(t *testing.T) {
	sources := []source{
		{cluster: "", infos: []*resource.Info{info(serverTable(t, []any{"web", "2/2", ""}))}},
		{cluster: "member1", infos: []*resource.Info{info(serverTable(t, []any{"web", "1/1", "managed"}, []any{"own", "1/1", ""}))}},
	}
	for _, tc := range []struct {
		output string
		want   []string
	}{
		{"", []string{
			"NAME   CLUSTER   READY   ADOPTION",
			"web    Karmada   2/2     -",
			"web    member1   1/1     Y",
			"own    member1   1/1     N",
		}},
		{"wide", []string{
			"NAME   CLUSTER   READY   IMAGES   ADOPTION",
			"web    Karmada   2/2     nginx    -",
			"web    member1   1/1     nginx    Y",
			"own    member1   1/1     nginx    N",
		}},
	} {
		var out bytes.Buffer
		o := &Options{Output: tc.output, Out: &out, print: genericclioptions.NewPrintFlags("")}
		if err := o.printTables(sources); err != nil {
			t.Fatal(err)
		}
		if got := strings.Split(strings.TrimSpace(out.String()), "\n"); strings.Join(got, "\n") != strings.Join(tc.want, "\n") {
			t.Errorf("-o %q:\n%s\nwant:\n%s", tc.output, out.String(), strings.Join(tc.want, "\n"))
		}
	}
}

// -o yaml: a member's object names its cluster; the control plane's does
// not.
func TestPrintObjectsMarksTheCluster(t *testing.T) {
	obj := func(name string) *unstructured.Unstructured {
		return &unstructured.Unstructured{Object: map[string]any{"apiVersion": "apps/v1", "kind": "Deployment", "metadata": map[string]any{"name": name, "namespace": "default"}}}
	}
	var out bytes.Buffer
	o := &Options{Output: "yaml", Out: &out, print: genericclioptions.NewPrintFlags("")}
	err := o.printObjects([]source{{cluster: "", infos: []*resource.Info{info(obj("web"))}}, {cluster: "member2", infos: []*resource.Info{info(obj("web"))}}})
	if err != nil {
		t.Fatal(err)
	}
	if s := out.String(); strings.Count(s, searchv1alpha1.CachedFromClusterAnnotation+": member2") != 1 || strings.Count(s, searchv1alpha1.CachedFromClusterAnnotation) != 1 || !strings.Contains(s, "kind: List") {
		t.Errorf("-o yaml:\n%s", s)
	}
}

// Bad flags are refused before anything is read.
func TestValidate(t *testing.T) {
	for _, tc := range []struct {
		o    Options
		args []string
		want string
	}{
		{Options{Scope: "karmada"}, nil, "specify the type"},
		{Options{Scope: "everywhere"}, []string{"pods"}, `--operation-scope="everywhere"`},
		{Options{Scope: "karmada", Clusters: []string{"member1"}}, []string{"pods"}, "--clusters goes with"},
		{Options{Scope: "members", Clusters: []string{"Bad_Name"}}, []string{"pods"}, "DNS label"},
		{Options{Scope: "all", Output: "xml"}, []string{"pods"}, `--output="xml"`},
	} {
		tc.o.print = genericclioptions.NewPrintFlags("")
		if err := tc.o.Validate(tc.args); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%+v %v: %v, want %q", tc.o, tc.args, err, tc.want)
		}
	}
	ok := Options{Scope: "all", Output: "jsonpath={.metadata.name}", print: genericclioptions.NewPrintFlags("")}
	if err := ok.Validate([]string{"pods"}); err != nil {
		t.Errorf("jsonpath: %v", err)
	}
}
