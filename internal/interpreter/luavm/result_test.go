package luavm

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// Result reads what a script returns as Karmada does: an empty table is
// {} where a value the script was given has an empty object at that path,
// [] where it has an empty list, and left out anywhere else; functions
// inside tables are left out.
func TestResultFollowsKarmadasRules(t *testing.T) {
	obj := map[string]any{
		"metadata": map[string]any{"name": "a", "annotations": map[string]any{}},
		"spec": map[string]any{
			"selector": map[string]any{},
			"ports":    []any{},
			"rules":    []any{map[string]any{"hosts": []any{}, "match": map[string]any{}}},
			"items":    []any{"x"},
		},
		"status": map[string]any{"replicas": int64(1)},
	}
	for _, c := range []struct {
		name, src string
		refs      []any
		want      any
	}{
		{"an empty object stays {}", `function F(o) o.spec.selector = {} return o end`, []any{obj},
			map[string]any{"metadata": map[string]any{"name": "a", "annotations": map[string]any{}}, "spec": map[string]any{"selector": map[string]any{}, "ports": []any{},
				"rules": []any{map[string]any{"hosts": []any{}, "match": map[string]any{}}}, "items": []any{"x"}}, "status": map[string]any{"replicas": int64(1)}}},
		{"an empty table where the input had neither is left out", `function F(o) return {replicas = 1, conditions = {}} end`, []any{obj},
			map[string]any{"replicas": int64(1)}},
		{"where the input had an empty list, []", `function F(o) return {spec = {ports = {}, selector = {}}} end`, []any{obj},
			map[string]any{"spec": map[string]any{"ports": []any{}, "selector": map[string]any{}}}},
		{"paths ignore list positions", `function F(o) return {spec = {rules = {{hosts = {}, match = {}, other = {}}, {hosts = {}}}}} end`, []any{obj},
			map[string]any{"spec": map[string]any{"rules": []any{map[string]any{"hosts": []any{}, "match": map[string]any{}}, map[string]any{"hosts": []any{}}}}}},
		{"a list emptied by the script is left out (the input's was not empty)", `function F(o) o.spec.items = {} return o end`, []any{obj},
			map[string]any{"metadata": map[string]any{"name": "a", "annotations": map[string]any{}}, "spec": map[string]any{"selector": map[string]any{}, "ports": []any{},
				"rules": []any{map[string]any{"hosts": []any{}, "match": map[string]any{}}}}, "status": map[string]any{"replicas": int64(1)}}},
		{"paths start at the top of what is returned", `function F(o) return o.spec end`, []any{obj},
			map[string]any{"rules": []any{map[string]any{}}, "items": []any{"x"}}},
		{"empty list elements are left out", `function F(o) return {list = {{}, 1, {}}} end`, []any{obj},
			map[string]any{"list": []any{int64(1)}}},
		{"with no reference every inner empty table is left out", `function F() return {a = {}, b = {c = {}}, d = 1} end`, nil,
			map[string]any{"b": map[string]any{}, "d": int64(1)}},
		{"functions inside tables are left out", `function F() return {f = function() end, n = 2, l = {1, function() end, 3}} end`, nil,
			map[string]any{"n": int64(2), "l": []any{int64(1), int64(3)}}},
		{"an empty table at the top stays", `function F() return {} end`, nil, map[string]any{}},
		{"a second reference counts too", `function F(a, b) return {x = {}} end`, []any{obj, map[string]any{"x": []any{}}},
			map[string]any{"x": []any{}}},
	} {
		t.Run(c.name, func(t *testing.T) {
			args := append([]any(nil), c.refs...)
			out, err := Default.Call(compile(t, c.src, "F"), 1, args...)
			if err != nil {
				t.Fatal(err)
			}
			got, err := Result(out[0], c.refs...)
			if err != nil {
				t.Fatal(err)
			}
			if d := cmp.Diff(c.want, got); d != "" {
				t.Errorf("(-want,+got)\n%s", d)
			}
		})
	}
}

// The clock and date functions of os, as Karmada opens them.
func TestOsSubset(t *testing.T) {
	out, err := Default.Call(compile(t, `function F()
  local t = os.time({year = 2026, month = 11, day = 28, hour = 12})
  return os.date("!%Y-%m-%dT%H:%M:%SZ", 0), type(os.time()), os.difftime(t + 60, t), type(os.clock()), require("os").date("!%Y", 0)
end`, "F"), 5)
	if err != nil {
		t.Fatal(err)
	}
	got := []string{out[0].String(), out[1].String(), out[2].String(), out[3].String(), out[4].String()}
	want := []string{"1970-01-01T00:00:00Z", "number", "60", "number", "1970"}
	if d := cmp.Diff(want, got); d != "" {
		t.Errorf("(-want,+got)\n%s", d)
	}
}

// kube.getResourceQuantity: a quantity as a number, as Karmada's.
func TestGetResourceQuantity(t *testing.T) {
	for _, c := range []struct{ src, want, wantErr string }{
		{`return kube.getResourceQuantity("1500m")`, "1.5", ""},
		{`return kube.getResourceQuantity("2Gi")`, "2147483648", ""},
		{`return kube.getResourceQuantity(nil)`, "0", ""},
		{`return kube.getResourceQuantity("1", "2")`, "", "getResourceQuantity only accepts one argument"},
		{`return kube.getResourceQuantity("-1")`, "", "is negative"},
		{`return kube.getResourceQuantity("abc")`, "", "not a quantity"},
		{`return kube.getResourceQuantity({})`, "", "string expected"},
	} {
		out, err := Default.Call(compile(t, `local kube = require("kube")
function F() `+c.src+` end`, "F"), 1)
		if c.wantErr != "" {
			if err == nil || !strings.Contains(err.Error(), c.wantErr) {
				t.Errorf("%s: %v, want an error containing %q", c.src, err, c.wantErr)
			}
			continue
		}
		if err != nil || out[0].String() != c.want {
			t.Errorf("%s: %v %v, want %s", c.src, out, err, c.want)
		}
	}
}
