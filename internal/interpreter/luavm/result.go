package luavm

import (
	"strings"

	lua "github.com/yuin/gopher-lua"
)

// Karmada reads what a script returns through JSON, and an empty Lua
// table has no JSON form of its own: it cannot be told from an empty list.
// Karmada decides from the objects the script was given (its references):
// an empty table where a reference holds an empty object at the same path
// is {}, where one holds an empty list it is [], and anywhere else the
// field (or list element) is left out. Paths ignore list positions
// ("spec.rules.ports", whichever rule). A function inside a returned table
// is left out too. Result reads a script's returned value that way, so
// that a customization gives here what it gives in Karmada.

// Result converts a script's returned value to its JSON-shaped Go value
// as Karmada reads it, refs being the values the script was given. An
// empty table at the top stays as it is ({} or [], the caller decides
// what it stands for).
func Result(v lua.LValue, refs ...any) (any, error) {
	g, err := toGo(v, nil, 0)
	if err != nil {
		return nil, err
	}
	if !holdsEmpty(g) {
		// Nothing to decide: the arguments are not walked.
		return g, nil
	}
	var e emptyPaths
	for _, r := range refs {
		e.collect(r, nil)
	}
	switch x := g.(type) {
	case map[string]any:
		return e.settleMap(x, nil), nil
	case []any:
		return e.settleList(x, nil), nil
	}
	return g, nil
}

// holdsEmpty: below its top, v holds an empty object or list (or a
// function-free value that is one).
func holdsEmpty(v any) bool {
	switch x := v.(type) {
	case map[string]any:
		for _, c := range x {
			if EmptyContainer(c) || holdsEmpty(c) {
				return true
			}
		}
	case []any:
		for _, c := range x {
			if EmptyContainer(c) || holdsEmpty(c) {
				return true
			}
		}
	}
	return false
}

// EmptyContainer: v is an empty object or list.
func EmptyContainer(v any) bool {
	switch x := v.(type) {
	case map[string]any:
		return len(x) == 0
	case []any:
		return len(x) == 0
	}
	return false
}

// emptyPaths are the paths at which the references hold an empty object
// or an empty list.
type emptyPaths struct {
	objects, lists map[string]bool
}

// pathSep joins path segments: no Kubernetes field name holds it.
const pathSep = "\x00"

func join(path []string) string { return strings.Join(path, pathSep) }

func (e *emptyPaths) collect(v any, path []string) {
	switch x := v.(type) {
	case map[string]any:
		if len(x) == 0 {
			if len(path) > 0 {
				e.add(&e.objects, path)
			}
			return
		}
		for k, c := range x {
			e.collect(c, append(path[:len(path):len(path)], k))
		}
	case []any:
		if len(x) == 0 {
			if len(path) > 0 {
				e.add(&e.lists, path)
			}
			return
		}
		for _, c := range x {
			e.collect(c, path)
		}
	case []map[string]any:
		if len(x) == 0 && len(path) > 0 {
			e.add(&e.lists, path)
		}
		for _, c := range x {
			e.collect(c, path)
		}
	}
}

func (e *emptyPaths) add(set *map[string]bool, path []string) {
	if *set == nil {
		*set = map[string]bool{}
	}
	(*set)[join(path)] = true
}

// empty: v is an empty object or list; then form is what it becomes at
// path (nil: left out).
func (e *emptyPaths) empty(v any, path []string) (isEmpty bool, form any) {
	if !EmptyContainer(v) {
		return false, nil
	}
	p := join(path)
	switch {
	case e.objects[p]:
		return true, map[string]any{}
	case e.lists[p]:
		return true, []any{}
	}
	return true, nil
}

func (e *emptyPaths) settle(v any, path []string) any {
	switch x := v.(type) {
	case map[string]any:
		return e.settleMap(x, path)
	case []any:
		return e.settleList(x, path)
	}
	return v
}

func (e *emptyPaths) settleMap(m map[string]any, path []string) map[string]any {
	for k, c := range m {
		p := append(path[:len(path):len(path)], k)
		if isEmpty, form := e.empty(c, p); isEmpty {
			if form == nil {
				delete(m, k)
			} else {
				m[k] = form
			}
			continue
		}
		m[k] = e.settle(c, p)
	}
	return m
}

func (e *emptyPaths) settleList(l []any, path []string) []any {
	out := l[:0]
	for _, c := range l {
		if isEmpty, form := e.empty(c, path); isEmpty {
			if form != nil {
				out = append(out, form)
			}
			continue
		}
		out = append(out, e.settle(c, path))
	}
	return out
}
