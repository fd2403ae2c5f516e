package luavm

import (
	"math/bits"
	"strconv"
	"strings"

	lua "github.com/yuin/gopher-lua"
)

// Each call sees library tables of its own: string, table, math, os and kube
// (require("kube")) are copied from pristine sets of functions the first
// time a call reads them, _G is the call's own environment, and strings'
// methods ("x"):upper() come from the call's string table. What a script
// assigns into a library is gone at the next call: no customization can
// change another's functions, or its own next call's.

// libraries are the pristine functions of one interpreter, by library.
type libraries struct {
	base map[string]lua.LValue            // the base functions a script may use, and require
	libs map[string]map[string]lua.LValue // string, table, math, os, kube
}

// snapshot takes the functions of each library table of g, and the
// allowed base functions.
func snapshot(g *lua.LTable, kube *lua.LTable) *libraries {
	l := &libraries{base: map[string]lua.LValue{}, libs: map[string]map[string]lua.LValue{}}
	g.ForEach(func(k, v lua.LValue) {
		ks, ok := k.(lua.LString)
		if !ok {
			return
		}
		if t, isTable := v.(*lua.LTable); isTable {
			if ks == "string" || ks == "table" || ks == "math" || ks == "os" {
				l.libs[string(ks)] = fields(t)
			}
			return
		}
		l.base[string(ks)] = v
	})
	l.libs["kube"] = fields(kube)
	return l
}

func fields(t *lua.LTable) map[string]lua.LValue {
	m := map[string]lua.LValue{}
	t.ForEach(func(k, v lua.LValue) {
		if ks, ok := k.(lua.LString); ok {
			m[string(ks)] = v
		}
	})
	return m
}

// callLibs are the library tables of the running call, made on first use.
type callLibs struct {
	env  *lua.LTable
	made map[string]*lua.LTable
}

// lib returns the running call's copy of library name.
func (st *state) lib(L *lua.LState, name string) *lua.LTable {
	if t, ok := st.call.made[name]; ok {
		return t
	}
	src := st.libraries.libs[name]
	t := L.CreateTable(0, len(src))
	for k, v := range src {
		t.RawSetString(k, v)
	}
	if st.call.made == nil {
		st.call.made = make(map[string]*lua.LTable, 2)
	}
	st.call.made[name] = t
	return t
}

// globalIndex is the __index of a call's environment: the call's own
// library copies, _G (the environment itself) and the base functions.
func (st *state) globalIndex(L *lua.LState) int {
	env := L.CheckTable(1)
	name, ok := L.Get(2).(lua.LString)
	if !ok {
		L.Push(lua.LNil)
		return 1
	}
	switch name {
	case "_G":
		L.Push(env)
		return 1
	case "string", "table", "math", "os":
		t := st.lib(L, string(name))
		env.RawSetString(string(name), t)
		L.Push(t)
		return 1
	}
	if name == concatName {
		L.Push(st.concat)
		return 1
	}
	if v, ok := st.libraries.base[string(name)]; ok {
		L.Push(v)
		return 1
	}
	L.Push(lua.LNil)
	return 1
}

// stringIndex is the __index of strings: the running call's string
// library.
func (st *state) stringIndex(L *lua.LState) int {
	name := L.Get(2)
	L.Push(st.lib(L, "string").RawGet(name))
	return 1
}

// mulSize is a*b, or ok false when it overflows.
func mulSize(a, b uint64) (uint64, bool) {
	hi, lo := bits.Mul64(a, b)
	return lo, hi == 0
}

// overBudget raises an error when a built-in is about to allocate size
// bytes (ok false: more than fits in 64 bits) beyond the memory budget.
func (st *state) overBudget(L *lua.LState, what string, size uint64, ok bool) {
	if !ok || size > st.budget.limits.Memory {
		st.refused = true
		if !ok {
			L.RaiseError("%s would allocate more than 2^64 bytes, over the memory budget (%d bytes)", what, st.budget.limits.Memory)
		}
		L.RaiseError("%s of %d bytes exceeds the memory budget (%d bytes)", what, size, st.budget.limits.Memory)
	}
}

// boundedRep is string.rep that refuses a result larger than the memory
// budget (with checked arithmetic), which one call could otherwise
// allocate at once.
func (st *state) boundedRep(L *lua.LState) int {
	s := L.CheckString(1)
	n := L.CheckInt(2)
	sep := L.OptString(3, "")
	if n <= 0 {
		L.Push(lua.LString(""))
		return 1
	}
	size, ok := mulSize(uint64(len(s))+uint64(len(sep)), uint64(n))
	st.overBudget(L, "string.rep", size, ok)
	if sep == "" {
		L.Push(lua.LString(strings.Repeat(s, n)))
		return 1
	}
	var sb strings.Builder
	sb.Grow(int(size))
	for i := 0; i < n; i++ {
		if i > 0 {
			sb.WriteString(sep)
		}
		sb.WriteString(s)
	}
	L.Push(lua.LString(sb.String()))
	return 1
}

// boundedConcat is table.concat, refused before it allocates a result
// larger than the memory budget.
func (st *state) boundedConcat(orig lua.LValue) lua.LGFunction {
	return func(L *lua.LState) int {
		t := L.CheckTable(1)
		sep := L.OptString(2, "")
		n := t.Len()
		i, j := L.OptInt(3, 1), L.OptInt(4, n)
		var size uint64
		ok := true
		for k := max(i, 1); k <= min(j, n) && ok; k++ {
			var l int
			switch v := t.RawGetInt(k).(type) {
			case lua.LString:
				l = len(v)
			case lua.LNumber:
				l = 32
			}
			size, ok = addSize(size, uint64(l)+uint64(len(sep)))
		}
		st.overBudget(L, "table.concat", size, ok)
		return callOriginal(L, orig)
	}
}

func addSize(a, b uint64) (uint64, bool) {
	s, carry := bits.Add64(a, b, 0)
	return s, carry == 0
}

// boundedFormat is string.format, refused before it allocates a result
// larger than the memory budget: each directive's width and precision
// (Go's fmt allows up to a million) and argument counted.
func (st *state) boundedFormat(orig lua.LValue) lua.LGFunction {
	return func(L *lua.LState) int {
		f := L.CheckString(1)
		size, ok := uint64(len(f)), true
		add := func(n uint64) {
			if ok {
				size, ok = addSize(size, n)
			}
		}
		arg := 2
		for i := 0; i < len(f) && ok; i++ {
			if f[i] != '%' {
				continue
			}
			i++
			if i < len(f) && f[i] == '%' {
				continue
			}
			// flags, width, precision: every run of digits counted whole.
			for i < len(f) && strings.IndexByte("-+ #0.123456789", f[i]) >= 0 {
				if f[i] >= '0' && f[i] <= '9' {
					j := i
					for j < len(f) && f[j] >= '0' && f[j] <= '9' {
						j++
					}
					d, err := strconv.ParseUint(f[i:j], 10, 32)
					if err != nil {
						d = 1 << 32
					}
					add(d)
					i = j
					continue
				}
				i++
			}
			l := 64
			if v, isString := L.Get(arg).(lua.LString); isString {
				l = len(v)
			}
			arg++
			add(uint64(l) + 32)
		}
		st.overBudget(L, "string.format", size, ok)
		return callOriginal(L, orig)
	}
}

// callOriginal calls a library function with this call's arguments.
func callOriginal(L *lua.LState, fn lua.LValue) int {
	top := L.GetTop()
	L.Push(fn)
	for i := 1; i <= top; i++ {
		L.Push(L.Get(i))
	}
	L.Call(top, lua.MultRet)
	return L.GetTop() - top
}
