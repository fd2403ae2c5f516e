package customization

import (
	"errors"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"sigs.k8s.io/yaml"

	configv1alpha1 "github.com/karmada-go/karmada/api/config/v1alpha1"
	workv1alpha1 "github.com/karmada-go/karmada/api/work/v1alpha1"
	workv1alpha2 "github.com/karmada-go/karmada/api/work/v1alpha2"
	"github.com/karmada-go/karmada/internal/interpreter"
	"github.com/karmada-go/karmada/internal/interpreter/luavm"
)

func load(t testing.TB, path string) configv1alpha1.ResourceInterpreterCustomization {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var ric configv1alpha1.ResourceInterpreterCustomization
	if err := yaml.UnmarshalStrict(data, &ric); err != nil {
		t.Fatal(err)
	}
	return ric
}

func parse(t testing.TB, y string) *unstructured.Unstructured {
	t.Helper()
	u := &unstructured.Unstructured{}
	if err := yaml.Unmarshal([]byte(y), &u.Object); err != nil {
		t.Fatal(err)
	}
	// As the API server gives it: whole numbers as int64.
	v, _ := luavm.JSONValue(u.Object)
	u.Object = v.(map[string]any)
	return u
}

const deployment = `
apiVersion: apps/v1
kind: Deployment
metadata: {name: web, namespace: shop}
spec:
  replicas: 3
  paused: false
  template:
    spec:
      serviceAccountName: web
      nodeSelector: {zone: a}
      containers:
      - name: web
        image: nginx
        resources: {requests: {cpu: 200m}}
        envFrom: [{secretRef: {name: tls}}]
status: {replicas: 3, readyReplicas: 2, availableReplicas: 2}
`

// Every operation of a customization answers in place of the built-in
// knowledge, with Karmada's function names, arguments and results.
func TestEveryOperation(t *testing.T) {
	ric := load(t, "testdata/deployment.yaml")
	reg, err := NewCompiler(luavm.Default).Build([]configv1alpha1.ResourceInterpreterCustomization{ric})
	if err != nil {
		t.Fatal(err)
	}
	layer := &Layer{}
	layer.Set(reg)
	in := interpreter.New(layer)
	deploy := parse(t, deployment)
	gk := schema.GroupKind{Group: "apps", Kind: "Deployment"}
	for _, op := range []interpreter.Operation{interpreter.OpInterpretReplica, interpreter.OpReviseReplica, interpreter.OpRetain,
		interpreter.OpInterpretStatus, interpreter.OpAggregateStatus, interpreter.OpInterpretHealth, interpreter.OpInterpretDependency} {
		if got := in.Answers(gk, op); got != 0 {
			t.Errorf("%s answered by layer %d, want 0 (the customization)", op, got)
		}
	}

	t.Run("InterpretReplica", func(t *testing.T) {
		n, req, err := in.Replicas(deploy)
		if err != nil {
			t.Fatal(err)
		}
		want := &workv1alpha2.ReplicaRequirements{NodeClaim: &workv1alpha2.NodeClaim{NodeSelector: map[string]string{"zone": "a"}},
			ResourceRequest: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("200m")}}
		if n != 3 {
			t.Errorf("replicas %d, want 3", n)
		}
		if d := cmp.Diff(want, req); d != "" {
			t.Errorf("requirements (-want,+got)\n%s", d)
		}
	})
	t.Run("ReviseReplica", func(t *testing.T) {
		out, err := in.ReviseReplicas(deploy, 1)
		if err != nil {
			t.Fatal(err)
		}
		if got, _, _ := unstructured.NestedInt64(out.Object, "spec", "replicas"); got != 1 {
			t.Errorf("revised replicas %d, want 1", got)
		}
		if got, _, _ := unstructured.NestedInt64(deploy.Object, "spec", "replicas"); got != 3 {
			t.Errorf("the input changed: replicas %d", got)
		}
		if d := cmp.Diff(deploy.Object["spec"].(map[string]any)["template"], out.Object["spec"].(map[string]any)["template"]); d != "" {
			t.Errorf("the rest of the object changed (-in,+out)\n%s", d)
		}
	})
	t.Run("Retain", func(t *testing.T) {
		observed := deploy.DeepCopy()
		_ = unstructured.SetNestedField(observed.Object, true, "spec", "paused")
		out, err := in.Retain(deploy, observed)
		if err != nil {
			t.Fatal(err)
		}
		if p, _, _ := unstructured.NestedBool(out.Object, "spec", "paused"); !p {
			t.Error("the member's spec.paused was not retained")
		}
	})
	t.Run("InterpretStatus", func(t *testing.T) {
		raw, err := in.ReflectStatus(deploy)
		if err != nil {
			t.Fatal(err)
		}
		if got, want := string(raw.Raw), `{"readyReplicas":2,"replicas":3}`; got != want {
			t.Errorf("status %s, want %s", got, want)
		}
	})
	t.Run("AggregateStatus", func(t *testing.T) {
		items := []workv1alpha2.AggregatedStatusItem{
			{ClusterName: "member1", Status: raw(`{"readyReplicas":1,"replicas":1}`), Applied: true},
			{ClusterName: "member2", Status: raw(`{"readyReplicas":2,"replicas":2}`), Applied: true},
			{ClusterName: "member3", Applied: false},
		}
		out, err := in.AggregateStatus(deploy, items)
		if err != nil {
			t.Fatal(err)
		}
		if d := cmp.Diff(map[string]any{"readyReplicas": int64(3), "replicas": int64(3)}, out.Object["status"]); d != "" {
			t.Errorf("status (-want,+got)\n%s", d)
		}
	})
	t.Run("InterpretHealth", func(t *testing.T) {
		if h, err := in.Health(deploy); err != nil || h != workv1alpha1.ResourceUnhealthy {
			t.Errorf("health %s, %v; want Unhealthy (2 of 3 ready)", h, err)
		}
		ready := deploy.DeepCopy()
		_ = unstructured.SetNestedField(ready.Object, int64(3), "status", "readyReplicas")
		if h, err := in.Health(ready); err != nil || h != workv1alpha1.ResourceHealthy {
			t.Errorf("health %s, %v; want Healthy", h, err)
		}
	})
	t.Run("InterpretDependency", func(t *testing.T) {
		deps, err := in.Dependencies(deploy)
		if err != nil {
			t.Fatal(err)
		}
		want := []interpreter.DependentObject{
			{APIVersion: "v1", Kind: "Secret", Namespace: "shop", Name: "tls"},
			{APIVersion: "v1", Kind: "ServiceAccount", Namespace: "shop", Name: "web"},
		}
		if d := cmp.Diff(want, deps); d != "" {
			t.Errorf("dependencies (-want,+got)\n%s", d)
		}
	})
}

func raw(s string) *runtime.RawExtension { return &runtime.RawExtension{Raw: []byte(s)} }

// Components of a multi-component kind, and replicas and requirements of
// each.
func TestComponents(t *testing.T) {
	ric := configv1alpha1.ResourceInterpreterCustomization{}
	ric.Name = "flink"
	ric.Spec.Target = configv1alpha1.CustomizationTarget{APIVersion: "flink.apache.org/v1beta1", Kind: "FlinkDeployment"}
	ric.Spec.Customizations.ComponentResource = &configv1alpha1.ComponentResourceRequirement{LuaScript: `
local kube = require("kube")
function GetComponents(obj)
  local jm = {name = "jobmanager", replicas = obj.spec.jobManager.replicas, replicaRequirements = kube.accuratePodRequirements(obj.spec.jobManager.podTemplate)}
  local tm = {name = "taskmanager", replicas = obj.spec.taskManager.replicas}
  return {jm, tm}
end`}
	reg, err := NewCompiler(luavm.Default).Build([]configv1alpha1.ResourceInterpreterCustomization{ric})
	if err != nil {
		t.Fatal(err)
	}
	layer := &Layer{}
	layer.Set(reg)
	in := interpreter.New(layer)
	obj := parse(t, `
apiVersion: flink.apache.org/v1beta1
kind: FlinkDeployment
metadata: {name: f, namespace: ns}
spec:
  jobManager: {replicas: 1, podTemplate: {spec: {containers: [{name: jm, resources: {requests: {memory: 1Gi}}}]}}}
  taskManager: {replicas: 4}
`)
	if !in.HasComponents(obj.GroupVersionKind().GroupKind()) {
		t.Fatal("HasComponents = false")
	}
	got, err := in.Components(obj)
	if err != nil {
		t.Fatal(err)
	}
	want := []workv1alpha2.Component{
		{Name: "jobmanager", Replicas: 1, ReplicaRequirements: &workv1alpha2.ComponentReplicaRequirements{ResourceRequest: corev1.ResourceList{corev1.ResourceMemory: resource.MustParse("1Gi")}}},
		{Name: "taskmanager", Replicas: 4},
	}
	if d := cmp.Diff(want, got); d != "" {
		t.Errorf("components (-want,+got)\n%s", d)
	}
}

// A failing script's error names the customization and the operation; the
// operations it does not define still come from the built-in registry.
func TestFailuresNameTheCustomization(t *testing.T) {
	ric := configv1alpha1.ResourceInterpreterCustomization{}
	ric.Name = "broken"
	ric.Spec.Target = configv1alpha1.CustomizationTarget{APIVersion: "apps/v1", Kind: "Deployment"}
	ric.Spec.Customizations.StatusReflection = &configv1alpha1.StatusReflection{LuaScript: `function ReflectStatus(obj) return obj.status.missing.field end`}
	ric.Spec.Customizations.HealthInterpretation = &configv1alpha1.HealthInterpretation{LuaScript: `function InterpretHealth(obj) return "yes" end`}
	ric.Spec.Customizations.ReplicaResource = &configv1alpha1.ReplicaResourceRequirement{LuaScript: `function GetReplicas(obj) return -1 end`}
	ric.Spec.Customizations.ReplicaRevision = &configv1alpha1.ReplicaRevision{LuaScript: `function ReviseReplica(obj, n) return {apiVersion = "v1", kind = "Pod"} end`}
	vm := luavm.New(luavm.Budget{Timeout: 100 * time.Millisecond, Memory: 64 << 20})
	ric.Spec.Customizations.StatusAggregation = &configv1alpha1.StatusAggregation{LuaScript: `function AggregateStatus(obj, items) while true do end end`}
	reg, err := NewCompiler(vm).Build([]configv1alpha1.ResourceInterpreterCustomization{ric})
	if err != nil {
		t.Fatal(err)
	}
	layer := &Layer{}
	layer.Set(reg)
	in := interpreter.New(layer)
	deploy := parse(t, deployment)
	check := func(op interpreter.Operation, err error, want string) {
		t.Helper()
		var ie *interpreter.Error
		if !errors.As(err, &ie) {
			t.Fatalf("%s: err = %v, want an interpreter.Error", op, err)
		}
		if ie.Source != "ResourceInterpreterCustomization/broken" || ie.Operation != op || !strings.Contains(err.Error(), want) {
			t.Errorf("%s: err = %v (source %q), want it to name the customization, the operation and %q", op, err, ie.Source, want)
		}
	}
	_, err = in.ReflectStatus(deploy)
	check(interpreter.OpInterpretStatus, err, "attempt to index")
	_, err = in.Health(deploy)
	check(interpreter.OpInterpretHealth, err, "want a boolean")
	_, _, err = in.Replicas(deploy)
	check(interpreter.OpInterpretReplica, err, "not a replica count")
	_, err = in.ReviseReplicas(deploy, 2)
	check(interpreter.OpReviseReplica, err, "want the apps/v1 Deployment")
	_, err = in.AggregateStatus(deploy, nil)
	check(interpreter.OpAggregateStatus, err, "budget exceeded")
	if deps, err := in.Dependencies(deploy); err != nil || len(deps) != 2 {
		t.Errorf("dependencies %v, %v: the built-in rule should still answer", deps, err)
	}
}

// A script that does not compile, or does not define its function, is
// reported and left out; the rest of the customization works.
func TestBuildReportsBadScripts(t *testing.T) {
	ric := configv1alpha1.ResourceInterpreterCustomization{}
	ric.Name = "half"
	ric.Spec.Target = configv1alpha1.CustomizationTarget{APIVersion: "apps/v1", Kind: "Deployment"}
	ric.Spec.Customizations.StatusReflection = &configv1alpha1.StatusReflection{LuaScript: `function ReflectStatus(obj`}
	ric.Spec.Customizations.HealthInterpretation = &configv1alpha1.HealthInterpretation{LuaScript: `function Healthy(obj) return true end`}
	ric.Spec.Customizations.ReplicaRevision = &configv1alpha1.ReplicaRevision{LuaScript: `function ReviseReplica(obj, n) obj.spec.replicas = n return obj end`}
	reg, err := NewCompiler(luavm.Default).Build([]configv1alpha1.ResourceInterpreterCustomization{ric})
	if err == nil || !strings.Contains(err.Error(), "spec.customizations.statusReflection") || !strings.Contains(err.Error(), "spec.customizations.healthInterpretation: InterpretHealth: the script does not define function InterpretHealth") {
		t.Fatalf("err = %v", err)
	}
	k := reg[schema.GroupKind{Group: "apps", Kind: "Deployment"}]
	if k == nil || k.ReviseReplica == nil || k.ReflectStatus != nil || k.Health != nil {
		t.Fatalf("kind %+v: want only ReviseReplica", k)
	}
}

// Two customizations of one kind may both interpret dependencies (Karmada
// allows it): the kind's dependencies are the first's, then the second's
// (customizations in name order), each once; any other operation is the
// first one's.
func TestDependenciesAddUpAcrossCustomizations(t *testing.T) {
	ric := func(name, deps, health string) configv1alpha1.ResourceInterpreterCustomization {
		r := configv1alpha1.ResourceInterpreterCustomization{}
		r.Name = name
		r.Spec.Target = configv1alpha1.CustomizationTarget{APIVersion: "apps/v1", Kind: "Deployment"}
		r.Spec.Customizations.DependencyInterpretation = &configv1alpha1.DependencyInterpretation{LuaScript: deps}
		r.Spec.Customizations.HealthInterpretation = &configv1alpha1.HealthInterpretation{LuaScript: health}
		return r
	}
	b := ric("b-deps", `function GetDependencies(obj)
  return {{apiVersion = "v1", kind = "Secret", namespace = obj.metadata.namespace, name = "tls"},
          {apiVersion = "v1", kind = "ConfigMap", namespace = obj.metadata.namespace, name = "from-b"}}
end`, `function InterpretHealth(obj) return false end`)
	a := ric("a-deps", `function GetDependencies(obj)
  return {{apiVersion = "v1", kind = "Secret", namespace = obj.metadata.namespace, name = "tls"}}
end`, `function InterpretHealth(obj) return true end`)
	reg, err := NewCompiler(luavm.Default).Build([]configv1alpha1.ResourceInterpreterCustomization{b, a})
	if err != nil {
		t.Fatal(err)
	}
	k := reg[schema.GroupKind{Group: "apps", Kind: "Deployment"}]
	got, err := k.Dependencies(parse(t, deployment))
	if err != nil {
		t.Fatal(err)
	}
	want := []interpreter.DependentObject{
		{APIVersion: "v1", Kind: "Secret", Namespace: "shop", Name: "tls"},
		{APIVersion: "v1", Kind: "ConfigMap", Namespace: "shop", Name: "from-b"},
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("dependencies (-want +got):\n%s", diff)
	}
	if h, err := k.Health(parse(t, deployment)); err != nil || h != workv1alpha1.ResourceHealthy {
		t.Errorf("health %v %v: want a-deps' (first by name)", h, err)
	}
}

// TestEveryScriptedOperationHasABinder: each operation a customization may
// script (all but Prune, which Karmada does not script) binds a function.
func TestEveryScriptedOperationHasABinder(t *testing.T) {
	for _, op := range interpreter.Operations {
		if _, ok := binders[op]; ok != (op != interpreter.OpPrune) {
			t.Errorf("operation %s: binder %v", op, ok)
		}
	}
}
