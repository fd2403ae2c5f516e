package luavm

import (
	"encoding/json"
	"math"

	lua "github.com/yuin/gopher-lua"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/karmada-go/karmada/internal/interpreter"
)

// kubeLibrary is the module require("kube") returns, with Karmada's
// functions:
//
//	kube.resourceAdd(q1, q2, ...)                 the sum of quantities, as a string ("1500m")
//	kube.accuratePodRequirements(podTemplate)     what one pod of the template needs: ReplicaRequirements
//	kube.getPodDependencies(podTemplate, namespace) the ConfigMaps, Secrets, ServiceAccount and PVCs its pods use
//	kube.getResourceQuantity(q)                   a quantity as a number ("1500m" is 1.5; nil is 0)
func kubeLibrary(L *lua.LState) *lua.LTable {
	return L.SetFuncs(L.NewTable(), map[string]lua.LGFunction{
		"resourceAdd":             resourceAdd,
		"accuratePodRequirements": accuratePodRequirements,
		"getPodDependencies":      getPodDependencies,
		"getResourceQuantity":     getResourceQuantity,
	})
}

// getResourceQuantity is a quantity's value as a Lua number (an
// approximation for quantities a float64 cannot hold exactly), as
// Karmada's: one argument, a quantity string or nil (0); negative or
// infinite values are refused.
func getResourceQuantity(L *lua.LState) int {
	if L.GetTop() != 1 {
		L.RaiseError("getResourceQuantity only accepts one argument")
	}
	var q resource.Quantity
	switch v := L.Get(1).(type) {
	case *lua.LNilType:
	case lua.LString:
		var err error
		if q, err = resource.ParseQuantity(string(v)); err != nil {
			L.ArgError(1, "not a quantity: "+err.Error())
		}
	default:
		L.TypeError(1, lua.LTString)
	}
	f := q.AsApproximateFloat64()
	if f < 0 {
		L.RaiseError("getResourceQuantity: %s is negative", q.String())
	}
	if math.IsInf(f, 1) {
		L.RaiseError("getResourceQuantity: %s is too large", q.String())
	}
	L.Push(lua.LNumber(f))
	return 1
}

func resourceAdd(L *lua.LState) int {
	sum := resource.Quantity{}
	for i := 1; i <= L.GetTop(); i++ {
		switch v := L.Get(i).(type) {
		case *lua.LNilType:
		case lua.LString, lua.LNumber:
			q, err := resource.ParseQuantity(v.String())
			if err != nil {
				L.ArgError(i, "not a quantity: "+err.Error())
			}
			sum.Add(q)
		default:
			L.TypeError(i, lua.LTString)
		}
	}
	L.Push(lua.LString(sum.String()))
	return 1
}

// podTemplateArg reads argument n as a PodTemplateSpec.
func podTemplateArg(L *lua.LState, n int) *corev1.PodTemplateSpec {
	v, err := ToGo(L.CheckTable(n))
	if err != nil {
		L.ArgError(n, err.Error())
	}
	m, ok := v.(map[string]any)
	if !ok {
		m = map[string]any{}
	}
	tmpl := &corev1.PodTemplateSpec{}
	if err := runtime.DefaultUnstructuredConverter.FromUnstructured(m, tmpl); err != nil {
		L.ArgError(n, "not a pod template: "+err.Error())
	}
	return tmpl
}

// JSONValue is v as a JSON decoder gives it back, with whole numbers as
// int64 (as Kubernetes decodes them): the form Call takes.
func JSONValue(v any) (any, error) {
	data, err := json.Marshal(v)
	if err != nil {
		return nil, err
	}
	var generic any
	if err := json.Unmarshal(data, &generic); err != nil {
		return nil, err
	}
	return numbersAsInt(generic), nil
}

// pushJSON pushes v as the Lua value of its JSON form.
func pushJSON(L *lua.LState, v any) int {
	generic, err := JSONValue(v)
	if err != nil {
		L.RaiseError("%v", err)
	}
	lv, err := toLua(generic, 0)
	if err != nil {
		L.RaiseError("%v", err)
	}
	L.Push(lv)
	return 1
}

// numbersAsInt turns the float64s of decoded JSON into int64 where whole,
// as Kubernetes' decoder does.
func numbersAsInt(v any) any {
	switch x := v.(type) {
	case float64:
		if x == math.Trunc(x) && x >= math.MinInt64 && x < math.MaxInt64 {
			return int64(x)
		}
	case map[string]any:
		for k, e := range x {
			x[k] = numbersAsInt(e)
		}
	case []any:
		for i, e := range x {
			x[i] = numbersAsInt(e)
		}
	}
	return v
}

func accuratePodRequirements(L *lua.LState) int {
	if L.GetTop() != 1 {
		L.RaiseError("accuratePodRequirements takes one argument, a pod template")
	}
	tmpl := podTemplateArg(L, 1)
	return pushJSON(L, interpreter.RequirementsOf(&tmpl.Spec, tmpl.Namespace))
}

func getPodDependencies(L *lua.LState) int {
	if L.GetTop() != 2 {
		L.RaiseError("getPodDependencies takes two arguments, a pod template and a namespace")
	}
	tmpl := podTemplateArg(L, 1)
	namespace := L.OptString(2, "default")
	deps := interpreter.PodSpecDependencies(&tmpl.Spec, namespace)
	out := make([]any, 0, len(deps))
	for _, d := range deps {
		out = append(out, map[string]any{"apiVersion": d.APIVersion, "kind": d.Kind, "namespace": d.Namespace, "name": d.Name})
	}
	lv, err := toLua(out, 0)
	if err != nil {
		L.RaiseError("%v", err)
	}
	L.Push(lv)
	return 1
}
