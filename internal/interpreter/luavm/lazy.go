package luavm

import (
	"fmt"

	lua "github.com/yuin/gopher-lua"
)

// The objects a script is given are converted to Lua lazily: a map becomes
// a table that fills itself field by field as the script reads it (its
// __index), so a script that reads three fields of a Deployment pays for
// those, not for the whole object. Writes go to the table (its __newindex
// marks the field as the script's); pairs, next and rawget, and the
// conversion back to Go, fill the rest first. Lists are converted at once
// (# and ipairs need every element), their maps lazily.

// lazySrc is what a lazy table has not converted yet.
type lazySrc struct {
	m map[string]any
	// done: fields the script wrote (set or deleted): the table decides
	// them, whether or not it holds them. A field read is in the table.
	done map[string]bool
}

// mark records that the script wrote field k (done is made at the first:
// most objects a script is given are only read).
func (s *lazySrc) mark(k string) {
	if s.done == nil {
		s.done = make(map[string]bool, 4)
	}
	s.done[k] = true
}

// own reports whether t, lazy with s, decides field k itself: the script
// read it (t holds it) or wrote it.
func (s *lazySrc) own(t *lua.LTable, k string) bool {
	return s.done[k] || t.RawGetString(k) != lua.LNil
}

// srcKey holds a lazy table's lazySrc, in the table itself (a key no
// script writes; pairs and next fill the table, which removes it, first).
const srcKey = "\x00src"

// lazyMeta is every lazy table's metatable.
var lazyMeta *lua.LTable

func init() {
	L := lua.NewState(lua.Options{SkipOpenLibs: true})
	lazyIndex := L.NewFunction(func(L *lua.LState) int {
		t := L.CheckTable(1)
		k, ok := L.Get(2).(lua.LString)
		src := sourceOf(t)
		if !ok || src == nil || src.done[string(k)] {
			L.Push(lua.LNil)
			return 1
		}
		v, found := src.m[string(k)]
		if !found {
			L.Push(lua.LNil)
			return 1
		}
		lv, err := toLuaLazy(v, 0)
		if err != nil {
			L.RaiseError("%v", err)
		}
		t.RawSetString(string(k), lv)
		L.Push(lv)
		return 1
	})
	lazyNewIndex := L.NewFunction(func(L *lua.LState) int {
		t := L.CheckTable(1)
		k := L.Get(2)
		if ks, ok := k.(lua.LString); ok {
			if src := sourceOf(t); src != nil {
				src.mark(string(ks))
			}
		}
		t.RawSet(k, L.Get(3))
		return 0
	})
	lazyMeta = newTable(0, 3)
	lazyMeta.RawSetString("__index", lazyIndex)
	lazyMeta.RawSetString("__newindex", lazyNewIndex)
	lazyMeta.RawSetString("__metatable", lua.LString("object"))
}

// newLazy makes the lazy table of m.
func newLazy(m map[string]any) *lua.LTable {
	t := newTable(0, min(len(m)+1, 4))
	t.RawSetString(srcKey, &lua.LUserData{Value: &lazySrc{m: m}, Metatable: lua.LNil})
	t.Metatable = lazyMeta
	return t
}

// sourceOf is t's lazySrc, or nil for a table that is not (or no longer)
// lazy.
func sourceOf(t *lua.LTable) *lazySrc {
	if t.Metatable != lazyMeta {
		return nil
	}
	ud, ok := t.RawGetString(srcKey).(*lua.LUserData)
	if !ok {
		return nil
	}
	src, _ := ud.Value.(*lazySrc)
	return src
}

// fill converts every field a lazy table has not yet, and makes it a plain
// table.
func fill(t *lua.LTable) error {
	src := sourceOf(t)
	if src == nil {
		return nil
	}
	for k, v := range src.m {
		if src.own(t, k) {
			continue
		}
		lv, err := toLuaLazy(v, 0)
		if err != nil {
			return err
		}
		t.RawSetString(k, lv)
	}
	t.RawSetString(srcKey, lua.LNil)
	t.Metatable = lua.LNil
	return nil
}

// toLuaLazy is toLua with maps lazy.
func toLuaLazy(v any, depth int) (lua.LValue, error) {
	if m, ok := v.(map[string]any); ok {
		return newLazy(m), nil
	}
	return toLuaWith(v, depth, true)
}

// lazyToGo converts a lazy table back without converting what the script
// never read: those fields are copied from the source.
func lazyToGo(t *lua.LTable, src *lazySrc, like any, depth int) (any, error) {
	likeMap, _ := like.(map[string]any)
	out := make(map[string]any, len(src.m))
	for k, v := range src.m {
		if !src.own(t, k) {
			out[k] = deepCopy(v)
		}
	}
	var err error
	t.ForEach(func(k, e lua.LValue) {
		if err != nil {
			return
		}
		ks, ok := k.(lua.LString)
		if ok && ks == srcKey {
			return
		}
		if !ok {
			err = fmt.Errorf("a table key of type %s has no JSON form", k.Type())
			return
		}
		if _, isFunc := e.(*lua.LFunction); isFunc {
			delete(out, string(ks))
			return
		}
		var ge any
		if ge, err = toGo(e, likeMap[string(ks)], depth+1); err == nil {
			out[string(ks)] = ge
		}
	})
	return out, err
}

// deepCopy copies a value of the shapes toLua accepts, integers as int64.
func deepCopy(v any) any {
	switch x := v.(type) {
	case int:
		return int64(x)
	case int32:
		return int64(x)
	case map[string]any:
		out := make(map[string]any, len(x))
		for k, e := range x {
			out[k] = deepCopy(e)
		}
		return out
	case []any:
		out := make([]any, len(x))
		for i, e := range x {
			out[i] = deepCopy(e)
		}
		return out
	case []map[string]any:
		out := make([]any, len(x))
		for i, e := range x {
			out[i] = deepCopy(e)
		}
		return out
	}
	return v
}
