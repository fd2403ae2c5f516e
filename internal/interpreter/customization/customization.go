// Package customization turns ResourceInterpreterCustomizations into an
// interpreter layer: each script compiled once per version and run by the
// Lua VM, with Karmada's function names, arguments and results.
package customization

import (
	"crypto/sha256"
	"encoding/json"
	"fmt"
	"reflect"
	"slices"
	"sort"
	"sync"
	"sync/atomic"

	lua "github.com/yuin/gopher-lua"
	"k8s.io/apimachinery/pkg/api/equality"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"

	configv1alpha1 "github.com/karmada-go/karmada/api/config/v1alpha1"
	workv1alpha1 "github.com/karmada-go/karmada/api/work/v1alpha1"
	workv1alpha2 "github.com/karmada-go/karmada/api/work/v1alpha2"
	"github.com/karmada-go/karmada/internal/interpreter"
	"github.com/karmada-go/karmada/internal/interpreter/luavm"
)

// Script is one operation's script of a customization.
type Script struct {
	Operation interpreter.Operation
	// Field is the customization's field holding it (spec.customizations.<field>).
	Field string
	// Function is the function the script must define.
	Function string
	Source   string
}

// Scripts lists the scripts a customization defines, in Karmada's field
// order.
func Scripts(c *configv1alpha1.CustomizationRules) []Script {
	var out []Script
	add := func(op interpreter.Operation, field, fn, src string) {
		out = append(out, Script{Operation: op, Field: field, Function: fn, Source: src})
	}
	if r := c.Retention; r != nil {
		add(interpreter.OpRetain, "retention", "Retain", r.LuaScript)
	}
	if r := c.ReplicaResource; r != nil {
		add(interpreter.OpInterpretReplica, "replicaResource", "GetReplicas", r.LuaScript)
	}
	if r := c.ComponentResource; r != nil {
		add(interpreter.OpInterpretComponent, "componentResource", "GetComponents", r.LuaScript)
	}
	if r := c.ReplicaRevision; r != nil {
		add(interpreter.OpReviseReplica, "replicaRevision", "ReviseReplica", r.LuaScript)
	}
	if r := c.StatusReflection; r != nil {
		add(interpreter.OpInterpretStatus, "statusReflection", "ReflectStatus", r.LuaScript)
	}
	if r := c.StatusAggregation; r != nil {
		add(interpreter.OpAggregateStatus, "statusAggregation", "AggregateStatus", r.LuaScript)
	}
	if r := c.HealthInterpretation; r != nil {
		add(interpreter.OpInterpretHealth, "healthInterpretation", "InterpretHealth", r.LuaScript)
	}
	if r := c.DependencyInterpretation; r != nil {
		add(interpreter.OpInterpretDependency, "dependencyInterpretation", "GetDependencies", r.LuaScript)
	}
	return out
}

// Target is the GroupKind a customization interprets.
func Target(c *configv1alpha1.ResourceInterpreterCustomization) (schema.GroupKind, error) {
	gv, err := schema.ParseGroupVersion(c.Spec.Target.APIVersion)
	if err != nil {
		return schema.GroupKind{}, err
	}
	return schema.GroupKind{Group: gv.Group, Kind: c.Spec.Target.Kind}, nil
}

// Compiler compiles scripts, keeping each compiled script for as long as a
// customization uses its source: a change to one customization recompiles
// only its changed scripts.
type Compiler struct {
	VM    *luavm.VM
	mu    sync.Mutex
	cache map[[32]byte]*luavm.Script
}

// NewCompiler returns a compiler whose scripts run on vm.
func NewCompiler(vm *luavm.VM) *Compiler {
	return &Compiler{VM: vm, cache: map[[32]byte]*luavm.Script{}}
}

// Compile returns the compiled script, checking that its chunk runs and
// defines the function.
func (c *Compiler) Compile(s Script) (*luavm.Script, error) {
	key := sha256.Sum256([]byte(s.Function + "\x00" + s.Source))
	c.mu.Lock()
	got, ok := c.cache[key]
	c.mu.Unlock()
	if ok {
		return got, nil
	}
	compiled, err := luavm.Compile(s.Source, s.Function)
	if err != nil {
		return nil, err
	}
	if err := c.VM.Check(compiled); err != nil {
		return nil, err
	}
	c.mu.Lock()
	c.cache[key] = compiled
	c.mu.Unlock()
	return compiled, nil
}

// Build compiles customizations into a registry. Several customizations may
// target one kind with different operations; were two to define the same
// operation (the webhook refuses it), the first by name wins, but for
// dependencies, which every customization of the kind adds to (as in
// Karmada). A script that
// does not compile is left out (its operation falls to the next layer) and
// reported in the error.
func (c *Compiler) Build(items []configv1alpha1.ResourceInterpreterCustomization) (interpreter.Registry, error) {
	sorted := append([]configv1alpha1.ResourceInterpreterCustomization(nil), items...)
	sort.Slice(sorted, func(i, j int) bool { return sorted[i].Name < sorted[j].Name })
	reg := interpreter.Registry{}
	var errs []error
	keep := map[[32]byte]bool{}
	for i := range sorted {
		ric := &sorted[i]
		gk, err := Target(ric)
		if err != nil {
			errs = append(errs, fmt.Errorf("ResourceInterpreterCustomization %s: spec.target.apiVersion: %w", ric.Name, err))
			continue
		}
		k := reg[gk]
		if k == nil {
			k = &interpreter.Kind{}
			reg[gk] = k
		}
		source := "ResourceInterpreterCustomization/" + ric.Name
		for _, s := range Scripts(&ric.Spec.Customizations) {
			keep[sha256.Sum256([]byte(s.Function+"\x00"+s.Source))] = true
			// Dependencies may come from several customizations of one
			// kind (Karmada allows it): each one's are added, in name
			// order.
			if k.Defines(s.Operation) && s.Operation != interpreter.OpInterpretDependency {
				continue
			}
			compiled, err := c.Compile(s)
			if err != nil {
				errs = append(errs, fmt.Errorf("%s: spec.customizations.%s: %w", source, s.Field, err))
				continue
			}
			before := k.Dependencies
			bind(k, c.VM, compiled, s.Operation, source)
			if s.Operation == interpreter.OpInterpretDependency && before != nil {
				k.Dependencies = both(before, k.Dependencies)
			}
		}
	}
	c.mu.Lock()
	for key := range c.cache {
		if !keep[key] {
			delete(c.cache, key)
		}
	}
	c.mu.Unlock()
	if len(errs) > 0 {
		return reg, fmt.Errorf("%v", errs)
	}
	return reg, nil
}

// both is the dependencies of first, then of second (Karmada's order: the
// customizations' in turn); one named by both is kept once, where it first
// appears.
func both(first, second func(*unstructured.Unstructured) ([]interpreter.DependentObject, error)) func(*unstructured.Unstructured) ([]interpreter.DependentObject, error) {
	return func(obj *unstructured.Unstructured) ([]interpreter.DependentObject, error) {
		a, err := first(obj)
		if err != nil {
			return nil, err
		}
		b, err := second(obj)
		if err != nil {
			return nil, err
		}
		out := append([]interpreter.DependentObject(nil), a...)
		for _, d := range b {
			if !slices.ContainsFunc(out, func(o interpreter.DependentObject) bool { return equality.Semantic.DeepEqual(o, d) }) {
				out = append(out, d)
			}
		}
		return out, nil
	}
}

// script is a compiled script bound to one operation of a kind: run on
// the VM, its failures said as the customization's.
type script struct {
	vm   *luavm.VM
	s    *luavm.Script
	fail func(error) error
}

// binders set a kind's function for each operation a script may define.
var binders = map[interpreter.Operation]func(*interpreter.Kind, script){
	interpreter.OpInterpretReplica:    bindReplicas,
	interpreter.OpInterpretComponent:  bindComponents,
	interpreter.OpReviseReplica:       bindReviseReplica,
	interpreter.OpRetain:              bindRetain,
	interpreter.OpAggregateStatus:     bindAggregateStatus,
	interpreter.OpInterpretStatus:     bindReflectStatus,
	interpreter.OpInterpretHealth:     bindHealth,
	interpreter.OpInterpretDependency: bindDependencies,
}

// bind sets k's function for op to run s.
func bind(k *interpreter.Kind, vm *luavm.VM, s *luavm.Script, op interpreter.Operation, source string) {
	if b, ok := binders[op]; ok {
		b(k, script{vm: vm, s: s, fail: func(err error) error { return &interpreter.Error{Source: source, Operation: op, Err: err} }})
	}
}

// bindReplicas binds the replica count and requirements (InterpretReplica).
func bindReplicas(k *interpreter.Kind, c script) {
	k.GetReplicas = func(obj *unstructured.Unstructured) (int32, *workv1alpha2.ReplicaRequirements, error) {
		out, err := c.vm.Call(c.s, 2, obj.Object)
		if err != nil {
			return 0, nil, c.fail(err)
		}
		n, err := replicaCount(out[0])
		if err != nil {
			return 0, nil, c.fail(fmt.Errorf("replica: %w", err))
		}
		req := &workv1alpha2.ReplicaRequirements{}
		if found, err := decode(out[1], req, obj.Object); err != nil {
			return 0, nil, c.fail(fmt.Errorf("requirement: %w", err))
		} else if !found {
			req = nil
		}
		return n, req, nil
	}
}

// bindComponents binds the components (InterpretComponent).
func bindComponents(k *interpreter.Kind, c script) {
	k.GetComponents = func(obj *unstructured.Unstructured) ([]workv1alpha2.Component, error) {
		out, err := c.vm.Call(c.s, 1, obj.Object)
		if err != nil {
			return nil, c.fail(err)
		}
		var comps []workv1alpha2.Component
		if _, err := decode(out[0], &comps, obj.Object); err != nil {
			return nil, c.fail(fmt.Errorf("components: %w", err))
		}
		return comps, nil
	}
}

// bindReviseReplica binds the copy with revised replicas (ReviseReplica).
func bindReviseReplica(k *interpreter.Kind, c script) {
	k.ReviseReplica = func(obj *unstructured.Unstructured, replicas int32) (*unstructured.Unstructured, error) {
		out, err := c.vm.Call(c.s, 1, obj.Object, int64(replicas))
		if err != nil {
			return nil, c.fail(err)
		}
		return object(out[0], obj, c.fail, obj.Object)
	}
}

// bindRetain binds the desired copy keeping what the member changed (Retain).
func bindRetain(k *interpreter.Kind, c script) {
	k.Retain = func(desired, observed *unstructured.Unstructured) (*unstructured.Unstructured, error) {
		out, err := c.vm.Call(c.s, 1, desired.Object, observed.Object)
		if err != nil {
			return nil, c.fail(err)
		}
		return object(out[0], desired, c.fail, desired.Object, observed.Object)
	}
}

// bindAggregateStatus binds the template with the members' status aggregated (AggregateStatus).
func bindAggregateStatus(k *interpreter.Kind, c script) {
	k.AggregateStatus = func(template *unstructured.Unstructured, items []workv1alpha2.AggregatedStatusItem) (*unstructured.Unstructured, error) {
		generic, err := luavm.JSONValue(items)
		if err != nil {
			return nil, c.fail(err)
		}
		out, err := c.vm.Call(c.s, 1, template.Object, generic)
		if err != nil {
			return nil, c.fail(err)
		}
		return object(out[0], template, c.fail, template.Object, generic)
	}
}

// bindReflectStatus binds the status reflected from a member's copy (InterpretStatus).
func bindReflectStatus(k *interpreter.Kind, c script) {
	k.ReflectStatus = func(obj *unstructured.Unstructured) (*runtime.RawExtension, error) {
		out, err := c.vm.Call(c.s, 1, obj.Object)
		if err != nil {
			return nil, c.fail(err)
		}
		v, err := luavm.Result(out[0], obj.Object)
		if err != nil {
			return nil, c.fail(fmt.Errorf("status: %w", err))
		}
		if v == nil {
			return nil, nil
		}
		raw, err := json.Marshal(v)
		if err != nil {
			return nil, c.fail(err)
		}
		return &runtime.RawExtension{Raw: raw}, nil
	}
}

// bindHealth binds the health of a member's copy (InterpretHealth).
func bindHealth(k *interpreter.Kind, c script) {
	k.Health = func(obj *unstructured.Unstructured) (workv1alpha1.ResourceHealth, error) {
		out, err := c.vm.Call(c.s, 1, obj.Object)
		if err != nil {
			return workv1alpha1.ResourceUnknownHealth, c.fail(err)
		}
		b, ok := out[0].(lua.LBool)
		if !ok {
			return workv1alpha1.ResourceUnknownHealth, c.fail(fmt.Errorf("returned a %s, want a boolean", out[0].Type()))
		}
		if b {
			return workv1alpha1.ResourceHealthy, nil
		}
		return workv1alpha1.ResourceUnhealthy, nil
	}
}

// bindDependencies binds the objects a workload depends on (InterpretDependency).
func bindDependencies(k *interpreter.Kind, c script) {
	k.Dependencies = func(obj *unstructured.Unstructured) ([]interpreter.DependentObject, error) {
		out, err := c.vm.Call(c.s, 1, obj.Object)
		if err != nil {
			return nil, c.fail(err)
		}
		var refs []configv1alpha1.DependentObjectReference
		if _, err := decode(out[0], &refs, obj.Object); err != nil {
			return nil, c.fail(fmt.Errorf("dependencies: %w", err))
		}
		deps := make([]interpreter.DependentObject, 0, len(refs))
		for i, r := range refs {
			if r.APIVersion == "" || r.Kind == "" || (r.Name == "" && r.LabelSelector == nil) {
				return nil, c.fail(fmt.Errorf("dependencies[%d]: apiVersion, kind and name (or labelSelector) are required, got %+v", i+1, r))
			}
			deps = append(deps, interpreter.DependentObject{APIVersion: r.APIVersion, Kind: r.Kind, Namespace: r.Namespace, Name: r.Name, LabelSelector: r.LabelSelector})
		}
		return deps, nil
	}
}

// replicaCount reads a script's replica count: a whole number, or nil (0).
func replicaCount(v lua.LValue) (int32, error) {
	switch n := v.(type) {
	case *lua.LNilType:
		return 0, nil
	case lua.LNumber:
		if float64(n) != float64(int32(n)) || n < 0 {
			return 0, fmt.Errorf("%v is not a replica count (a whole number from 0 to 2147483647)", float64(n))
		}
		return int32(n), nil
	}
	return 0, fmt.Errorf("returned a %s, want a number", v.Type())
}

// decode reads a Lua value into out through its JSON form, as Karmada
// reads it (luavm.Result, refs being what the script was given); nil is
// not found. An empty table is an empty list or object, as out is.
func decode(v lua.LValue, out any, refs ...any) (bool, error) {
	g, err := luavm.Result(v, refs...)
	if err != nil {
		return false, err
	}
	if g == nil {
		return false, nil
	}
	if luavm.EmptyContainer(g) {
		if reflect.TypeOf(out).Elem().Kind() == reflect.Slice {
			g = []any{}
		} else {
			g = map[string]any{}
		}
	}
	data, err := json.Marshal(g)
	if err != nil {
		return false, err
	}
	return true, json.Unmarshal(data, out)
}

// object reads a script's returned object (as Karmada does, refs being
// what the script was given); it must keep the kind.
func object(v lua.LValue, like *unstructured.Unstructured, fail func(error) error, refs ...any) (*unstructured.Unstructured, error) {
	g, err := luavm.Result(v, refs...)
	if err != nil {
		return nil, fail(fmt.Errorf("returned object: %w", err))
	}
	if luavm.EmptyContainer(g) {
		g = map[string]any{}
	}
	m, ok := g.(map[string]any)
	if !ok {
		return nil, fail(fmt.Errorf("returned a %T, want the object", g))
	}
	out := &unstructured.Unstructured{Object: m}
	if out.GetAPIVersion() != like.GetAPIVersion() || out.GetKind() != like.GetKind() {
		return nil, fail(fmt.Errorf("returned a %s %s, want the %s %s it was given", out.GetAPIVersion(), out.GetKind(), like.GetAPIVersion(), like.GetKind()))
	}
	return out, nil
}

// Layer is an interpreter layer whose content is replaced whole when the
// customizations change; lookups never wait for a rebuild.
type Layer struct {
	reg atomic.Pointer[interpreter.Registry]
}

// Lookup implements interpreter.Layer.
func (l *Layer) Lookup(gk schema.GroupKind) *interpreter.Kind {
	if r := l.reg.Load(); r != nil {
		return (*r)[gk]
	}
	return nil
}

// Set replaces the layer's content.
func (l *Layer) Set(r interpreter.Registry) { l.reg.Store(&r) }
