package luavm

import (
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	lua "github.com/yuin/gopher-lua"
)

func compile(t *testing.T, src, fn string) *Script {
	t.Helper()
	s, err := Compile(src, fn)
	if err != nil {
		t.Fatalf("compile: %v", err)
	}
	return s
}

func TestCallRoundTrip(t *testing.T) {
	s := compile(t, `function F(obj, n) obj.spec.replicas = n; obj.spec.list[#obj.spec.list+1] = "c"; return obj end`, "F")
	in := map[string]any{"spec": map[string]any{"replicas": int64(1), "list": []any{"a", "b"}, "empty": []any{}, "none": map[string]any{}, "ratio": 0.5, "on": true}}
	out, err := Default.Call(s, 1, in, int64(7))
	if err != nil {
		t.Fatal(err)
	}
	got, err := ToGoLike(out[0], in)
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]any{"spec": map[string]any{"replicas": int64(7), "list": []any{"a", "b", "c"}, "empty": []any{}, "none": map[string]any{}, "ratio": 0.5, "on": true}}
	if d := cmp.Diff(want, got); d != "" {
		t.Errorf("(-want,+got)\n%s", d)
	}
}

func TestEmptyTableFollowsTheObjectItReplaces(t *testing.T) {
	s := compile(t, `function F(obj) obj.status.conditions = {}; obj.status.extra = {}; return obj end`, "F")
	in := map[string]any{"status": map[string]any{"conditions": []any{map[string]any{"type": "Ready"}}}}
	out, err := Default.Call(s, 1, in)
	if err != nil {
		t.Fatal(err)
	}
	got, _ := ToGoLike(out[0], in)
	want := map[string]any{"status": map[string]any{"conditions": []any{}, "extra": map[string]any{}}}
	if d := cmp.Diff(want, got); d != "" {
		t.Errorf("(-want,+got)\n%s", d)
	}
}

func TestSandbox(t *testing.T) {
	for _, c := range []struct{ name, src, wantErr string }{
		{"no os.execute", `function F() return os.execute("true") end`, "attempt to call a non-function object"},
		{"no os.getenv", `function F() return os.getenv("HOME") end`, "attempt to call a non-function object"},
		{"no os.remove", `function F() return os.remove("/tmp/x") end`, "attempt to call a non-function object"},
		{"no os.exit", `function F() return os.exit(1) end`, "attempt to call a non-function object"},
		{"no io", `function F() return io.open("/etc/passwd") end`, "attempt to index a non-table object(nil)"},
		{"no dofile", `function F() return dofile("/etc/passwd") end`, "attempt to call a non-function object"},
		{"no load", `function F() return loadstring("return 1")() end`, "attempt to call a non-function object"},
		{"no require of other modules", `function F() return require("io") end`, `module "io" is not available`},
		{"no debug", `function F() return debug.getinfo(1) end`, "attempt to index a non-table object(nil)"},
		{"no random", `function F() return math.random() end`, "attempt to call a non-function object"},
		{"string.rep bounded", `function F() return string.rep("x", 1e12) end`, "exceeds the memory budget"},
	} {
		t.Run(c.name, func(t *testing.T) {
			_, err := Default.Call(compile(t, c.src, "F"), 1)
			if err == nil || !strings.Contains(err.Error(), c.wantErr) {
				t.Fatalf("err = %v, want one containing %q", err, c.wantErr)
			}
		})
	}
}

func TestKubeLibrary(t *testing.T) {
	s := compile(t, `
local kube = require("kube")
function F(tmpl)
  local req = kube.accuratePodRequirements(tmpl)
  local deps = kube.getPodDependencies(tmpl, "ns1")
  return kube.resourceAdd("100m", "0.5", nil), req, deps
end`, "F")
	tmpl := map[string]any{"spec": map[string]any{
		"nodeSelector":       map[string]any{"disk": "ssd"},
		"serviceAccountName": "runner",
		"containers": []any{map[string]any{"name": "a", "image": "x",
			"resources": map[string]any{"requests": map[string]any{"cpu": "250m", "memory": "64Mi"}},
			"envFrom":   []any{map[string]any{"configMapRef": map[string]any{"name": "settings"}}}}},
	}}
	out, err := Default.Call(s, 3, tmpl)
	if err != nil {
		t.Fatal(err)
	}
	if got := out[0].String(); got != "600m" {
		t.Errorf("resourceAdd = %s, want 600m", got)
	}
	req, _ := ToGo(out[1])
	wantReq := map[string]any{"nodeClaim": map[string]any{"nodeSelector": map[string]any{"disk": "ssd"}},
		"resourceRequest": map[string]any{"cpu": "250m", "memory": "64Mi"}}
	if d := cmp.Diff(wantReq, req); d != "" {
		t.Errorf("accuratePodRequirements (-want,+got)\n%s", d)
	}
	deps, _ := ToGo(out[2])
	wantDeps := []any{
		map[string]any{"apiVersion": "v1", "kind": "ConfigMap", "namespace": "ns1", "name": "settings"},
		map[string]any{"apiVersion": "v1", "kind": "ServiceAccount", "namespace": "ns1", "name": "runner"},
	}
	if d := cmp.Diff(wantDeps, deps); d != "" {
		t.Errorf("getPodDependencies (-want,+got)\n%s", d)
	}
}

func TestGlobalsDoNotLeakBetweenCalls(t *testing.T) {
	s := compile(t, `function F() local before = counter; counter = 1; return before end`, "F")
	for i := 0; i < 3; i++ {
		out, err := Default.Call(s, 1)
		if err != nil {
			t.Fatal(err)
		}
		if out[0] != lua.LNil {
			t.Fatalf("call %d saw a global from an earlier call: %v", i, out[0])
		}
	}
}

func TestMissingFunction(t *testing.T) {
	err := Default.Check(compile(t, `function Other() end`, "GetReplicas"))
	if err == nil || !strings.Contains(err.Error(), "does not define function GetReplicas") {
		t.Fatalf("err = %v", err)
	}
	if _, err := Compile(`function GetReplicas(`, "GetReplicas"); err == nil {
		t.Fatal("a syntax error compiled")
	}
}

func TestBudgetStopsRunawayScripts(t *testing.T) {
	vm := New(Budget{Timeout: 200 * time.Millisecond, Memory: 64 << 20})
	for _, c := range []struct{ name, src string }{
		{"infinite loop", `function F() while true do end end`},
		{"infinite loop at load", `while true do end function F() end`},
		{"recursion", `function F() return 1 + F() end`},
		{"string doubling", `function F() local s = "xxxxxxxx" while true do s = s .. s end end`},
		{"table growth", `function F() local t = {} local i = 0 while true do i = i + 1; t[i] = {i, i, i} end end`},
	} {
		t.Run(c.name, func(t *testing.T) {
			start := time.Now()
			_, err := vm.Call(compile(t, c.src, "F"), 1)
			if err == nil {
				t.Fatal("the script was not stopped")
			}
			if c.name != "recursion" && !errors.Is(err, ErrBudget) {
				t.Fatalf("err = %v, want a budget error", err)
			}
			if took := time.Since(start); took > 5*time.Second {
				t.Fatalf("stopped after %s", took)
			}
			// The VM still works after a stopped call.
			out, err := vm.Call(compile(t, `function G() return 1 end`, "G"), 1)
			if err != nil || out[0] != lua.LNumber(1) {
				t.Fatalf("after a stopped call: %v, %v", out, err)
			}
		})
	}
}

func TestConversionRejectsWhatJSONCannotHold(t *testing.T) {
	for _, src := range []string{
		`function F() local t = {} t.self = t return t end`,
		`function F() return function() end end`,
		`function F() return 0/0 end`,
		`function F() return {[true] = 1} end`,
	} {
		out, err := Default.Call(compile(t, src, "F"), 1)
		if err != nil {
			t.Fatal(err)
		}
		if v, err := ToGo(out[0]); err == nil {
			t.Errorf("%s: converted to %v, want an error", src, v)
		}
	}
}

// TestLazyObjects: fields a script never reads come back as they were;
// deleting, writing and iterating a field it has not read behave as on a
// plain table.
func TestLazyObjects(t *testing.T) {
	in := map[string]any{"metadata": map[string]any{"name": "a", "labels": map[string]any{"x": "1", "y": "2"}},
		"spec":   map[string]any{"replicas": int64(2), "paused": true, "template": map[string]any{"spec": map[string]any{"containers": []any{map[string]any{"name": "c"}}}}},
		"status": map[string]any{"ready": int64(1)}}
	s := compile(t, `
function F(obj)
  obj.spec.paused = nil                 -- never read before: deleted
  obj.status.extra = "new"              -- written
  local keys = {}
  for k, _ in pairs(obj.metadata.labels) do table.insert(keys, k) end
  table.sort(keys)
  obj.metadata.annotations = {keys = table.concat(keys, ",")}
  local again = obj.spec.paused         -- still deleted
  return obj, again, rawget(obj.status, "ready"), next(obj.metadata.labels) ~= nil
end`, "F")
	out, err := Default.Call(s, 4, in)
	if err != nil {
		t.Fatal(err)
	}
	got, err := ToGoLike(out[0], in)
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]any{"metadata": map[string]any{"name": "a", "labels": map[string]any{"x": "1", "y": "2"}, "annotations": map[string]any{"keys": "x,y"}},
		"spec":   map[string]any{"replicas": int64(2), "template": map[string]any{"spec": map[string]any{"containers": []any{map[string]any{"name": "c"}}}}},
		"status": map[string]any{"ready": int64(1), "extra": "new"}}
	if d := cmp.Diff(want, got); d != "" {
		t.Errorf("(-want,+got)\n%s", d)
	}
	if out[1] != lua.LNil || out[2] != lua.LNumber(1) || out[3] != lua.LTrue {
		t.Errorf("deleted field %v, rawget %v, next %v", out[1], out[2], out[3])
	}
	// The input is untouched, and the output does not share its maps.
	if in["spec"].(map[string]any)["paused"] != true {
		t.Error("the input changed")
	}
	got.(map[string]any)["spec"].(map[string]any)["template"].(map[string]any)["x"] = 1
	if _, shared := in["spec"].(map[string]any)["template"].(map[string]any)["x"]; shared {
		t.Error("the output shares a map with the input")
	}
}

// One call cannot change what another sees: library tables, _G, strings'
// methods and the kube library are the call's own.
func TestLibrariesAreEachCallsOwn(t *testing.T) {
	vm := New(DefaultBudget)
	tamper := compile(t, `
function F()
  string.upper = function() return "tampered" end
  rawset(string, "lower", nil)
  table.insert = nil
  math.floor = function() return -1 end
  _G.pairs = function() error("tampered") end
  _G.tostring = function() return "tampered" end
  require("kube").resourceAdd = nil
  local ok = pcall(function() getmetatable("").__index = {upper = function() return "tampered" end} end)
  return ("a"):upper(), pairs == _G.pairs and pairs ~= next, ok
end`, "F")
	out, err := vm.Call(tamper, 3)
	if err != nil {
		t.Fatal(err)
	}
	if out[0].String() != "tampered" || out[1] != lua.LTrue || out[2] != lua.LFalse {
		t.Errorf("within the call: upper %v, pairs %v, string metatable writable %v", out[0], out[1], out[2])
	}
	check := compile(t, `
function F()
  local t = {}
  table.insert(t, ("a"):upper())
  table.insert(t, string.lower("B"))
  table.insert(t, tostring(math.floor(2.5)))
  for k in pairs({x = 1}) do table.insert(t, k) end
  table.insert(t, require("kube").resourceAdd("1", "1"))
  return table.concat(t, ",")
end`, "F")
	// Every pooled interpreter: run more calls than the pool could hold idle.
	for i := 0; i < 8; i++ {
		if _, err := vm.Call(tamper, 3); err != nil {
			t.Fatal(err)
		}
		out, err := vm.Call(check, 1)
		if err != nil {
			t.Fatalf("after a call that changed its libraries: %v", err)
		}
		if got := out[0].String(); got != "A,b,2,x,2" {
			t.Fatalf("after a call that changed its libraries: %q, want %q", got, "A,b,2,x,2")
		}
	}
}

// Built-ins that allocate their result at once refuse one over the memory
// budget before allocating it, with checked arithmetic.
func TestBuiltinsBoundedByTheMemoryBudget(t *testing.T) {
	vm := New(Budget{Timeout: 5 * time.Second, Memory: 16 << 20})
	for _, c := range []struct{ name, src, wantErr string }{
		{"rep overflowing 64 bits", `function F() return string.rep("xxxx", 2^62) end`, "string.rep would allocate more than 2^64 bytes"},
		{"rep with a separator", `function F() return string.rep("x", 2^23, "yyy") end`, "string.rep of 33554432 bytes exceeds"},
		{"concat", `function F() local s = string.rep("x", 2^20) local t = {} for i = 1, 40 do t[i] = s end return table.concat(t) end`, "table.concat of"},
		{"concat with a separator", `function F() local sep = string.rep(",", 2^20) local t = {} for i = 1, 40 do t[i] = "a" end return table.concat(t, sep) end`, "table.concat of"},
		{"format widths", `function F() local f = string.rep("%999999d", 40) return string.format(f, 1,2,3,4,5,6,7,8,9,10,11,12,13,14,15,16,17,18,19,20,21,22,23,24,25,26,27,28,29,30,31,32,33,34,35,36,37,38,39,40) end`, "string.format of"},
		{"format of a large argument", `function F() local s = string.rep("x", 2^23) return string.format("%s%s%s", s, s, s) end`, "string.format of"},
	} {
		t.Run(c.name, func(t *testing.T) {
			_, err := vm.Call(compile(t, c.src, "F"), 1)
			if err == nil || !strings.Contains(err.Error(), c.wantErr) || !errors.Is(err, ErrBudget) {
				t.Fatalf("err = %v, want a budget error containing %q", err, c.wantErr)
			}
		})
	}
	// Within the budget they answer as before.
	out, err := vm.Call(compile(t, `function F() return string.rep("ab", 3, "-") .. table.concat({1, "x", 2.5}, ";") .. string.format("%5.1f|%-3s|%d", 2.25, "a", 7) end`, "F"), 1)
	if err != nil || out[0].String() != "ab-ab-ab1;x;2.5  2.2|a  |7" {
		t.Errorf("within the budget: %v %v", out, err)
	}
}
