package luavm

import (
	"encoding/json"
	"math"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// FuzzBridge passes any JSON value through a script that returns it
// unchanged, and one that walks it: no panic, and what comes back is what
// went in (whole numbers as int64, as Kubernetes decodes them).
func FuzzBridge(f *testing.F) {
	for _, seed := range []string{`{}`, `[]`, `{"a":[1,2,{"b":null}],"c":"x","d":1.5,"e":true}`, `[[[]]]`, `{"1":"one"}`, `-0`, `1e300`} {
		f.Add(seed)
	}
	echo, err := Compile(`function F(v) return v end`, "F")
	if err != nil {
		f.Fatal(err)
	}
	walk, err := Compile(`
function F(v)
  local n = 0
  local function visit(x, d)
    if d > 80 then return end
    if type(x) == "table" then for k, e in pairs(x) do n = n + 1; visit(e, d + 1) end end
  end
  visit(v, 0)
  return n
end`, "F")
	if err != nil {
		f.Fatal(err)
	}
	f.Fuzz(func(t *testing.T, doc string) {
		var v any
		if json.Unmarshal([]byte(doc), &v) != nil {
			return
		}
		v = numbersAsInt(v)
		out, err := Default.Call(echo, 1, v)
		if err != nil {
			if depth(v) > maxDepth {
				return
			}
			t.Fatalf("echo: %v", err)
		}
		got, err := ToGoLike(out[0], v)
		if err != nil {
			t.Fatalf("back: %v", err)
		}
		if d := cmp.Diff(normal(v), got); d != "" && !hasNull(v) {
			t.Fatalf("echo changed the value (-in,+out)\n%s", d)
		}
		if _, err := Default.Call(walk, 1, v); err != nil && depth(v) <= maxDepth {
			t.Fatalf("walk: %v", err)
		}
	})
}

// normal is v as it comes back: maps and lists are kept, numbers whole
// where they can be.
func normal(v any) any {
	switch x := v.(type) {
	case float64:
		if x == math.Trunc(x) && x >= math.MinInt64 && x < math.MaxInt64 {
			return int64(x)
		}
	case map[string]any:
		for k, e := range x {
			x[k] = normal(e)
		}
	case []any:
		for i, e := range x {
			x[i] = normal(e)
		}
	}
	return v
}

// hasNull: Lua has no null inside tables (a nil field is no field), so a
// value holding one does not come back equal.
func hasNull(v any) bool {
	switch x := v.(type) {
	case nil:
		return true
	case map[string]any:
		for _, e := range x {
			if hasNull(e) {
				return true
			}
		}
	case []any:
		for _, e := range x {
			if hasNull(e) {
				return true
			}
		}
	}
	return false
}

func depth(v any) int {
	d := 0
	switch x := v.(type) {
	case map[string]any:
		for _, e := range x {
			d = max(d, depth(e))
		}
		return d + 1
	case []any:
		for _, e := range x {
			d = max(d, depth(e))
		}
		return d + 1
	}
	return 0
}
