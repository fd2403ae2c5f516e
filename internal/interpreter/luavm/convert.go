package luavm

import (
	"fmt"
	"math"
	"sort"
	"strconv"

	lua "github.com/yuin/gopher-lua"
)

// maxDepth bounds the nesting of values crossing between Go and Lua: a
// Kubernetes object is a few levels deep; a table that contains itself is
// not an object.
const maxDepth = 64

// arrayMeta marks the tables made from Go slices, so that an empty one
// goes back to Go as [] rather than {}. Its __metatable hides and protects
// it: a script can neither read nor change it.
var arrayMeta = func() *lua.LTable {
	t := newTable(0, 1)
	t.RawSetString("__metatable", lua.LString("array"))
	return t
}()

// newTable makes a table; gopher-lua's constructor needs no state.
func newTable(acap, hcap int) *lua.LTable {
	var none *lua.LState
	return none.CreateTable(acap, hcap)
}

// toLua converts a JSON-shaped Go value to Lua, all of it at once.
func toLua(v any, depth int) (lua.LValue, error) { return toLuaWith(v, depth, false) }

// toLuaWith converts v; with lazy, the maps in it become lazy tables.
func toLuaWith(v any, depth int, lazy bool) (lua.LValue, error) {
	if lazy {
		if m, ok := v.(map[string]any); ok {
			return newLazy(m), nil
		}
	}
	if depth > maxDepth {
		return lua.LNil, fmt.Errorf("value nested deeper than %d levels", maxDepth)
	}
	switch x := v.(type) {
	case nil:
		return lua.LNil, nil
	case lua.LValue:
		return x, nil
	case bool:
		return lua.LBool(x), nil
	case string:
		return lua.LString(x), nil
	case int64:
		return lua.LNumber(x), nil
	case int32:
		return lua.LNumber(x), nil
	case int:
		return lua.LNumber(x), nil
	case float64:
		return lua.LNumber(x), nil
	case map[string]any:
		t := newTable(0, len(x))
		keys := make([]string, 0, len(x))
		for k := range x {
			keys = append(keys, k)
		}
		// Sorted: pairs() then visits keys in the same order every call.
		sort.Strings(keys)
		for _, k := range keys {
			e, err := toLuaWith(x[k], depth+1, lazy)
			if err != nil {
				return lua.LNil, err
			}
			t.RawSetString(k, e)
		}
		return t, nil
	case []any:
		t := newTable(len(x), 0)
		t.Metatable = arrayMeta
		for _, e := range x {
			lv, err := toLuaWith(e, depth+1, lazy)
			if err != nil {
				return lua.LNil, err
			}
			t.Append(lv)
		}
		return t, nil
	case []map[string]any:
		t := newTable(len(x), 0)
		t.Metatable = arrayMeta
		for _, e := range x {
			lv, err := toLuaWith(e, depth+1, lazy)
			if err != nil {
				return lua.LNil, err
			}
			t.Append(lv)
		}
		return t, nil
	}
	return lua.LNil, fmt.Errorf("cannot pass a %T to Lua", v)
}

// ToGo converts a Lua value to a JSON-shaped Go value: tables with keys 1..n
// become []any, other tables map[string]any, whole numbers int64. An empty
// table is [] when it was made from a Go slice, else {}.
func ToGo(v lua.LValue) (any, error) { return toGo(v, nil, 0) }

// ToGoLike is ToGo guided by like, the Go value the Lua value was made
// from (the object a script was given and returns changed): an empty table
// where like has a list is [].
func ToGoLike(v lua.LValue, like any) (any, error) { return toGo(v, like, 0) }

func toGo(v lua.LValue, like any, depth int) (any, error) {
	if depth > maxDepth {
		return nil, fmt.Errorf("value nested deeper than %d levels (does a table contain itself?)", maxDepth)
	}
	switch x := v.(type) {
	case *lua.LNilType:
		return nil, nil
	case lua.LBool:
		return bool(x), nil
	case lua.LString:
		return string(x), nil
	case lua.LNumber:
		f := float64(x)
		if math.IsNaN(f) || math.IsInf(f, 0) {
			return nil, fmt.Errorf("number %v has no JSON form", f)
		}
		if f == math.Trunc(f) && f >= math.MinInt64 && f < math.MaxInt64 {
			return int64(f), nil
		}
		return f, nil
	case *lua.LTable:
		return tableToGo(x, like, depth)
	}
	return nil, fmt.Errorf("a Lua %s has no JSON form", v.Type())
}

func tableToGo(t *lua.LTable, like any, depth int) (any, error) {
	if src := sourceOf(t); src != nil {
		return lazyToGo(t, src, like, depth)
	}
	n := t.Len()
	count := 0
	allInts := true
	t.ForEach(func(k, _ lua.LValue) {
		count++
		if f, ok := k.(lua.LNumber); !ok || float64(f) != math.Trunc(float64(f)) || f < 1 || int(f) > n {
			allInts = false
		}
	})
	if count == 0 {
		if t.Metatable == arrayMeta {
			return []any{}, nil
		}
		if _, ok := like.([]any); ok {
			return []any{}, nil
		}
		return map[string]any{}, nil
	}
	if allInts && count == n {
		likeList, _ := like.([]any)
		out := make([]any, 0, n)
		for i := 1; i <= n; i++ {
			var l any
			if i-1 < len(likeList) {
				l = likeList[i-1]
			}
			ev := t.RawGetInt(i)
			if _, isFunc := ev.(*lua.LFunction); isFunc {
				// Functions are left out (as Karmada leaves them out).
				continue
			}
			e, err := toGo(ev, l, depth+1)
			if err != nil {
				return nil, fmt.Errorf("[%d]: %w", i, err)
			}
			out = append(out, e)
		}
		return out, nil
	}
	likeMap, _ := like.(map[string]any)
	out := make(map[string]any, count)
	var err error
	t.ForEach(func(k, e lua.LValue) {
		if err != nil {
			return
		}
		var key string
		switch kk := k.(type) {
		case lua.LString:
			key = string(kk)
		case lua.LNumber:
			key = strconv.FormatFloat(float64(kk), 'f', -1, 64)
		default:
			err = fmt.Errorf("a table key of type %s has no JSON form", k.Type())
			return
		}
		if _, isFunc := e.(*lua.LFunction); isFunc {
			return
		}
		var ge any
		if ge, err = toGo(e, likeMap[key], depth+1); err != nil {
			err = fmt.Errorf(".%s: %w", key, err)
			return
		}
		out[key] = ge
	})
	if err != nil {
		return nil, err
	}
	return out, nil
}
