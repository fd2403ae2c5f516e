package thirdparty

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"sort"
	"strings"
	"testing"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/yaml"

	configv1alpha1 "github.com/karmada-go/karmada/api/config/v1alpha1"
	workv1alpha2 "github.com/karmada-go/karmada/api/work/v1alpha2"
	"github.com/karmada-go/karmada/internal/interpreter"
	"github.com/karmada-go/karmada/internal/interpreter/customization"
	"github.com/karmada-go/karmada/internal/interpreter/luavm"
)

// fixture is one kind's table: a sample object and cases, each running one
// operation on the sample (changed by patch, a JSON merge patch) and
// checking the result holds want.
type fixture struct {
	Sample map[string]any `json:"sample"`
	Cases  []struct {
		Name        string                              `json:"name"`
		Operation   interpreter.Operation               `json:"operation"`
		Patch       map[string]any                      `json:"patch"`
		Observed    map[string]any                      `json:"observed"` // patch of the observed copy, for Retain
		Replicas    int32                               `json:"replicas"`
		StatusItems []workv1alpha2.AggregatedStatusItem `json:"statusItems"`
		Want        any                                 `json:"want"`
	} `json:"cases"`
}

func TestShippedCustomizationsCompile(t *testing.T) {
	if err := Err(); err != nil {
		t.Fatal(err)
	}
	want := []string{"ClusterPolicy.kyverno.io", "CloneSet.apps.kruise.io", "DaemonSet.apps.kruise.io", "FlinkDeployment.flink.apache.org",
		"HelmRelease.helm.toolkit.fluxcd.io", "Job.batch.volcano.sh", "Kustomization.kustomize.toolkit.fluxcd.io", "PyTorchJob.kubeflow.org",
		"RayCluster.ray.io", "RayJob.ray.io", "SparkApplication.sparkoperator.k8s.io", "StatefulSet.apps.kruise.io", "TFJob.kubeflow.org",
		"Policy.kyverno.io", "Workflow.argoproj.io"}
	var got []string
	for _, gk := range Kinds() {
		got = append(got, gk.String())
	}
	sort.Strings(want)
	sort.Strings(got)
	if !reflect.DeepEqual(want, got) {
		t.Errorf("kinds %v, want %v", got, want)
	}
}

// TestShippedCustomizations runs every fixture; every operation of every
// shipped customization has at least one case.
func TestShippedCustomizations(t *testing.T) {
	rics, err := Customizations()
	if err != nil {
		t.Fatal(err)
	}
	in := interpreter.New(Layer{})
	for _, ric := range rics {
		base := strings.TrimSuffix(ric.Name, "")
		t.Run(ric.Spec.Target.Kind+"."+ric.Spec.Target.APIVersion, func(t *testing.T) {
			path := filepath.Join("testdata", fixtureName(ric.Spec.Target.APIVersion, ric.Spec.Target.Kind))
			data, err := os.ReadFile(path)
			if err != nil {
				t.Fatalf("%s has no fixture: %v", base, err)
			}
			var fx fixture
			if err := yaml.UnmarshalStrict(data, &fx); err != nil {
				t.Fatalf("%s: %v", path, err)
			}
			covered := map[interpreter.Operation]bool{}
			for _, c := range fx.Cases {
				covered[c.Operation] = true
				name := string(c.Operation)
				if c.Name != "" {
					name += "/" + c.Name
				}
				t.Run(name, func(t *testing.T) {
					obj := merge(t, fx.Sample, c.Patch)
					got, err := run(in, c.Operation, obj, merge(t, obj.Object, c.Observed), c.Replicas, c.StatusItems)
					if err != nil {
						t.Fatal(err)
					}
					if diff := subset(c.Want, got, ""); diff != "" {
						js, _ := json.MarshalIndent(got, "", "  ")
						t.Errorf("%s\ngot %s", diff, js)
					}
				})
			}
			for _, s := range customization.Scripts(&ric.Spec.Customizations) {
				if !covered[s.Operation] {
					t.Errorf("no case for %s", s.Operation)
				}
			}
		})
	}
}

func fixtureName(apiVersion, kind string) string {
	group := strings.Split(apiVersion, "/")[0]
	return strings.ToLower(group + "-" + kind + ".yaml")
}

func merge(t *testing.T, base, patch map[string]any) *unstructured.Unstructured {
	t.Helper()
	b, _ := json.Marshal(mergeValue(copyValue(base), patch))
	obj := &unstructured.Unstructured{}
	if err := obj.UnmarshalJSON(b); err != nil {
		t.Fatal(err)
	}
	return obj
}

// run runs op and returns its result as JSON values, in the shapes
// karmadactl interpret prints.
func run(in *interpreter.Interpreter, op interpreter.Operation, obj, observed *unstructured.Unstructured, replicas int32, items []workv1alpha2.AggregatedStatusItem) (any, error) {
	var out any
	switch op {
	case interpreter.OpInterpretReplica:
		n, req, err := in.Replicas(obj)
		if err != nil {
			return nil, err
		}
		out = map[string]any{"replicas": n, "requirements": req}
	case interpreter.OpInterpretComponent:
		comps, err := in.Components(obj)
		if err != nil {
			return nil, err
		}
		out = map[string]any{"components": comps}
	case interpreter.OpReviseReplica:
		o, err := in.ReviseReplicas(obj, replicas)
		if err != nil {
			return nil, err
		}
		out = o.Object
	case interpreter.OpRetain:
		o, err := in.Retain(obj, observed)
		if err != nil {
			return nil, err
		}
		out = o.Object
	case interpreter.OpAggregateStatus:
		o, err := in.AggregateStatus(obj, items)
		if err != nil {
			return nil, err
		}
		out = o.Object
	case interpreter.OpInterpretStatus:
		raw, err := in.ReflectStatus(obj)
		if err != nil {
			return nil, err
		}
		var status any
		if raw != nil {
			_ = json.Unmarshal(raw.Raw, &status)
		}
		out = map[string]any{"status": status}
	case interpreter.OpInterpretHealth:
		h, err := in.Health(obj)
		if err != nil {
			return nil, err
		}
		out = map[string]any{"healthy": h == "Healthy"}
	case interpreter.OpInterpretDependency:
		deps, err := in.Dependencies(obj)
		if err != nil {
			return nil, err
		}
		list := []any{}
		for _, d := range deps {
			list = append(list, map[string]any{"apiVersion": d.APIVersion, "kind": d.Kind, "namespace": d.Namespace, "name": d.Name})
		}
		out = map[string]any{"dependencies": list}
	default:
		return nil, fmt.Errorf("unknown operation %s", op)
	}
	return luavm.JSONValue(out)
}

// subset reports where got does not hold want: maps may have more keys,
// lists must have as many items.
func subset(want, got any, path string) string {
	want, _ = luavm.JSONValue(want)
	switch w := want.(type) {
	case map[string]any:
		g, ok := got.(map[string]any)
		if !ok {
			return fmt.Sprintf("%s: got %v, want a map", path, got)
		}
		keys := make([]string, 0, len(w))
		for k := range w {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		for _, k := range keys {
			if w[k] == nil {
				if g[k] != nil {
					return fmt.Sprintf("%s.%s: got %v, want none", path, k, g[k])
				}
				continue
			}
			if d := subset(w[k], g[k], path+"."+k); d != "" {
				return d
			}
		}
		return ""
	case []any:
		g, ok := got.([]any)
		if !ok || len(g) != len(w) {
			return fmt.Sprintf("%s: got %v, want %d items", path, got, len(w))
		}
		for i := range w {
			if d := subset(w[i], g[i], fmt.Sprintf("%s[%d]", path, i)); d != "" {
				return d
			}
		}
		return ""
	}
	if !reflect.DeepEqual(want, got) {
		return fmt.Sprintf("%s: got %v (%T), want %v (%T)", path, got, got, want, want)
	}
	return ""
}

// mergeValue applies a JSON merge patch (RFC 7386): maps merge, null
// deletes, anything else replaces.
func mergeValue(base any, patch any) any {
	p, ok := patch.(map[string]any)
	if !ok {
		if patch == nil {
			return base
		}
		return patch
	}
	b, ok := base.(map[string]any)
	if !ok {
		b = map[string]any{}
	}
	for k, v := range p {
		if v == nil {
			delete(b, k)
			continue
		}
		b[k] = mergeValue(b[k], v)
	}
	return b
}

func copyValue(v map[string]any) any {
	data, _ := json.Marshal(v)
	var out any
	_ = json.Unmarshal(data, &out)
	return out
}

// TestCRDFixtures: every shipped kind has a CRD fixture (the e2e tests
// install them), and its table's sample is of that kind.
func TestCRDFixtures(t *testing.T) {
	rics, err := Customizations()
	if err != nil {
		t.Fatal(err)
	}
	for _, ric := range rics {
		target := ric.Spec.Target
		group, version, _ := strings.Cut(target.APIVersion, "/")
		data, err := os.ReadFile(filepath.Join("testdata", "crds", strings.ToLower(group+"-"+target.Kind+".yaml")))
		if err != nil {
			t.Errorf("%s %s: no CRD fixture: %v", target.APIVersion, target.Kind, err)
			continue
		}
		crd := &apiextensionsv1.CustomResourceDefinition{}
		if err := yaml.UnmarshalStrict(data, crd); err != nil {
			t.Errorf("%s: %v", target.Kind, err)
			continue
		}
		if crd.Spec.Group != group || crd.Spec.Names.Kind != target.Kind || len(crd.Spec.Versions) != 1 || crd.Spec.Versions[0].Name != version ||
			crd.Spec.Versions[0].Subresources == nil || crd.Spec.Versions[0].Subresources.Status == nil {
			t.Errorf("%s: CRD %s does not serve %s with a status subresource", target.Kind, crd.Name, target.APIVersion)
		}
		fx, _ := os.ReadFile(filepath.Join("testdata", fixtureName(target.APIVersion, target.Kind)))
		var f fixture
		_ = yaml.Unmarshal(fx, &f)
		if f.Sample["apiVersion"] != target.APIVersion || f.Sample["kind"] != target.Kind {
			t.Errorf("%s: the table's sample is a %v %v", target.Kind, f.Sample["apiVersion"], f.Sample["kind"])
		}
	}
}

// TestUserCustomizationOverrides: a user's customization of a shipped kind
// answers the operations it defines; the shipped one answers the rest.
func TestUserCustomizationOverrides(t *testing.T) {
	var user configv1alpha1.ResourceInterpreterCustomization
	user.Name = "my-cloneset-health"
	user.Spec.Target = configv1alpha1.CustomizationTarget{APIVersion: "apps.kruise.io/v1alpha1", Kind: "CloneSet"}
	user.Spec.Customizations.HealthInterpretation = &configv1alpha1.HealthInterpretation{LuaScript: "function InterpretHealth(obj) return false end"}
	reg, err := customization.NewCompiler(luavm.Default).Build([]configv1alpha1.ResourceInterpreterCustomization{user})
	if err != nil {
		t.Fatal(err)
	}
	layer := &customization.Layer{}
	layer.Set(reg)
	in := interpreter.New(layer, Layer{})
	data, _ := os.ReadFile("testdata/apps.kruise.io-cloneset.yaml")
	var fx fixture
	if err := yaml.Unmarshal(data, &fx); err != nil {
		t.Fatal(err)
	}
	obj := merge(t, fx.Sample, nil)
	if h, _ := in.Health(obj); h != "Unhealthy" {
		t.Errorf("health %s: the user's script should answer", h)
	}
	if n, _, err := in.Replicas(obj); err != nil || n != 4 {
		t.Errorf("replicas %d, %v: the shipped script should still answer", n, err)
	}
	gk := obj.GroupVersionKind().GroupKind()
	if in.Answers(gk, interpreter.OpInterpretHealth) != 0 || in.Answers(gk, interpreter.OpInterpretReplica) != 1 {
		t.Errorf("answered by layers %d and %d, want 0 and 1", in.Answers(gk, interpreter.OpInterpretHealth), in.Answers(gk, interpreter.OpInterpretReplica))
	}
}

// TestResourcesNameEveryKind: Resources has each shipped kind's resource,
// as its CRD fixture names it.
func TestResourcesNameEveryKind(t *testing.T) {
	var want []string
	files, _ := filepath.Glob("testdata/crds/*.yaml")
	for _, f := range files {
		data, _ := os.ReadFile(f)
		crd := &apiextensionsv1.CustomResourceDefinition{}
		if err := yaml.Unmarshal(data, crd); err != nil {
			t.Fatal(err)
		}
		want = append(want, crd.Spec.Names.Plural+"."+crd.Spec.Group)
	}
	got := append([]string(nil), Resources...)
	sort.Strings(want)
	sort.Strings(got)
	if !reflect.DeepEqual(want, got) {
		t.Errorf("Resources %v, want %v", got, want)
	}
}
