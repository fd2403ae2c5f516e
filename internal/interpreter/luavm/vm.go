// Package luavm runs the Lua scripts of ResourceInterpreterCustomizations:
// compiled once, run from a pool of interpreters, each call in a sandbox
// (no io, file loading or package search: only base, string, table, math,
// the clock and date functions of os, and Karmada's kube library through
// require("kube")) with a budget
// of time and memory. A script that exceeds its budget is stopped between
// two instructions and its call fails; nothing else is affected.
package luavm

import (
	"errors"
	"fmt"
	"strings"
	"sync"
	"time"

	lua "github.com/yuin/gopher-lua"
	"github.com/yuin/gopher-lua/parse"
)

// Budget bounds one call.
type Budget struct {
	// Timeout is the longest a call may run.
	Timeout time.Duration
	// Memory is the most a call may allocate, in bytes. It is measured as
	// the process's allocations while the call runs, sampled every
	// millisecond or two, so a call is stopped within a sample of crossing
	// it; a long call in a busy process is charged for its neighbours too,
	// which is why the default is generous.
	Memory uint64
}

// DefaultBudget is the budget of a call unless the VM is given another:
// scripts that interpret an object take microseconds; a second or 256 MiB
// is a script gone wrong.
var DefaultBudget = Budget{Timeout: time.Second, Memory: 256 << 20}

// Script is a compiled chunk that defines a global function.
type Script struct {
	// Function is the name of the function the chunk defines.
	Function string
	proto    *lua.FunctionProto
}

// Compile parses and compiles source, which must define function. It does
// not run it: Check does.
func Compile(source, function string) (*Script, error) {
	chunk, err := parse.Parse(strings.NewReader(source), function)
	if err != nil {
		return nil, fmt.Errorf("parse: %s", strings.TrimSpace(err.Error()))
	}
	// `..` checks its result's size first (concat.go).
	guardConcat(chunk)
	proto, err := lua.Compile(chunk, function)
	if err != nil {
		return nil, fmt.Errorf("compile: %w", err)
	}
	// The chunk runs at every call (a fresh environment each time): without
	// this, gopher-lua builds Lua 5.0's implicit `arg` table for it each
	// time, though the main chunk has no such local.
	proto.IsVarArg &^= lua.VarArgNeedsArg
	return &Script{Function: function, proto: proto}, nil
}

// VM runs scripts. It is safe for concurrent use: each call takes an
// interpreter from a pool.
type VM struct {
	budget Budget
	pool   sync.Pool
}

// New returns a VM whose calls have budget b.
func New(b Budget) *VM {
	vm := &VM{budget: b}
	vm.pool.New = func() any { return newState(b) }
	return vm
}

// Default is a VM with DefaultBudget.
var Default = New(DefaultBudget)

// Error is a script's failure: a Lua error, a budget exceeded, a missing
// function or a result of the wrong shape.
type Error struct {
	Function string
	Err      error
}

func (e *Error) Error() string { return fmt.Sprintf("%s: %v", e.Function, e.Err) }

func (e *Error) Unwrap() error { return e.Err }

// ErrBudget is wrapped by the error of a call stopped by its budget.
var ErrBudget = errors.New("budget exceeded")

// Check runs the chunk of s (which only defines functions, as a
// customization's must) and reports whether it defines s.Function.
func (vm *VM) Check(s *Script) error {
	_, err := vm.call(s, 0, nil)
	return err
}

// Call runs s's function with args (Go values as JSON decodes them:
// map[string]any, []any, string, bool, int64, float64, nil; integers of
// other sizes are accepted) and returns nret results as Lua values read by
// the converters of this package (ToGo, ToGoLike), which must be called
// before the next Call.
func (vm *VM) Call(s *Script, nret int, args ...any) ([]lua.LValue, error) {
	return vm.call(s, nret, args)
}

func (vm *VM) call(s *Script, nret int, args []any) (out []lua.LValue, err error) {
	st := vm.pool.Get().(*state)
	defer func() {
		if r := recover(); r != nil {
			// A panic inside gopher-lua leaves the state unknown: drop it.
			err = &Error{Function: s.Function, Err: fmt.Errorf("interpreter panic: %v", r)}
			out = nil
			return
		}
		vm.pool.Put(st)
	}()
	L := st.L
	st.budget.start(vm.budget)
	defer func() {
		if over := st.budget.stop(); over != nil {
			err = &Error{Function: s.Function, Err: over}
			out = nil
		}
	}()

	// A fresh environment per call, with library tables of its own: what
	// a script assigns to globals or libraries is gone at the next call,
	// and no script sees another's.
	env := L.CreateTable(0, 4)
	env.Metatable = st.envMeta
	st.call = callLibs{env: env}
	st.refused = false
	chunk := L.NewFunctionFromProto(s.proto)
	chunk.Env = env
	L.Push(chunk)
	if err := L.PCall(0, 0, nil); err != nil {
		return nil, &Error{Function: s.Function, Err: st.scriptError(err)}
	}
	fn, ok := env.RawGetString(s.Function).(*lua.LFunction)
	if !ok {
		return nil, &Error{Function: s.Function, Err: fmt.Errorf("the script does not define function %s", s.Function)}
	}
	if args == nil && nret == 0 {
		return nil, nil
	}
	L.Push(fn)
	for _, a := range args {
		v, err := toLuaLazy(a, 0)
		if err != nil {
			return nil, &Error{Function: s.Function, Err: err}
		}
		L.Push(v)
	}
	if err := L.PCall(len(args), nret, nil); err != nil {
		return nil, &Error{Function: s.Function, Err: st.scriptError(err)}
	}
	out = make([]lua.LValue, nret)
	for i := nret - 1; i >= 0; i-- {
		out[i] = L.Get(-1)
		L.Pop(1)
	}
	return out, nil
}

// scriptError is scriptError, marked as the budget's when a built-in of
// this call refused to go over it (an error a script cannot tell apart
// from its own otherwise).
func (st *state) scriptError(err error) error {
	if st.refused {
		return fmt.Errorf("%w: %v", ErrBudget, scriptError(err))
	}
	return scriptError(err)
}

// scriptError keeps a Lua error's message and position, without the Go
// stack gopher-lua appends.
func scriptError(err error) error {
	var le *lua.ApiError
	if errors.As(err, &le) {
		msg := le.Object.String()
		if i := strings.Index(msg, "\nstack traceback:"); i >= 0 {
			msg = msg[:i]
		}
		return errors.New(msg)
	}
	return err
}

// state is one pooled interpreter.
type state struct {
	L       *lua.LState
	budget  *budget
	envMeta *lua.LTable // {__index = st.globalIndex}
	// libraries are the pristine functions every call's copies are made of.
	libraries *libraries
	// call holds the running call's library copies.
	call callLibs
	// concat is what a script's `..` calls.
	concat *lua.LFunction
	// refused: a built-in of the running call refused to go over the
	// budget.
	refused bool
}

// The base functions a script may use; anything else (dofile, load,
// loadfile, loadstring, module, collectgarbage, getfenv, setfenv, print,
// newproxy, _printregs) is removed.
var baseAllowed = map[string]bool{
	"assert": true, "error": true, "ipairs": true, "next": true, "pairs": true, "pcall": true,
	"rawequal": true, "rawget": true, "rawlen": true, "rawset": true, "select": true,
	"getmetatable": true, "setmetatable": true, "tonumber": true, "tostring": true,
	"type": true, "unpack": true, "xpcall": true, "_VERSION": true,
}

// safeOs are the functions of os a script has: Karmada's safe subset.
var safeOs = []string{"clock", "date", "difftime", "time"}

func newState(b Budget) *state {
	L := lua.NewState(lua.Options{SkipOpenLibs: true, CallStackSize: 256, RegistryMaxSize: 1 << 20})
	for _, lib := range []struct {
		name string
		open lua.LGFunction
	}{{lua.BaseLibName, lua.OpenBase}, {lua.TabLibName, lua.OpenTable}, {lua.StringLibName, lua.OpenString}, {lua.MathLibName, lua.OpenMath}, {lua.OsLibName, lua.OpenOs}} {
		L.Push(L.NewFunction(lib.open))
		L.Push(lua.LString(lib.name))
		L.Call(1, 0)
	}
	g := L.G.Global
	// Of os, the part Karmada opens: reading the clock and formatting
	// times (no files, processes or environment).
	if full, ok := g.RawGetString("os").(*lua.LTable); ok {
		safe := L.CreateTable(0, len(safeOs))
		for _, name := range safeOs {
			safe.RawSetString(name, full.RawGetString(name))
		}
		g.RawSetString("os", safe)
	}
	var remove []string
	g.ForEach(func(k, v lua.LValue) {
		if _, isTable := v.(*lua.LTable); isTable {
			return
		}
		if ks, ok := k.(lua.LString); ok && !baseAllowed[string(ks)] {
			remove = append(remove, string(ks))
		}
	})
	for _, k := range remove {
		g.RawSetString(k, lua.LNil)
	}
	// math.random is seeded per process: a script's answer must not vary.
	if m, ok := g.RawGetString("math").(*lua.LTable); ok {
		m.RawSetString("random", lua.LNil)
		m.RawSetString("randomseed", lua.LNil)
	}
	st := &state{L: L, budget: newBudget(b)}
	// Built-ins that allocate a result at once check its size first.
	if s, ok := g.RawGetString("string").(*lua.LTable); ok {
		s.RawSetString("rep", L.NewFunction(st.boundedRep))
		s.RawSetString("format", L.NewFunction(st.boundedFormat(s.RawGetString("format"))))
		s.RawSetString("find", L.NewFunction(st.boundedFind(s.RawGetString("find"))))
		s.RawSetString("match", L.NewFunction(st.boundedMatch(s.RawGetString("match"))))
		s.RawSetString("gmatch", L.NewFunction(st.boundedGmatch(s.RawGetString("gmatch"))))
		s.RawSetString("gsub", L.NewFunction(st.boundedGsub))
	}
	if t, ok := g.RawGetString("table").(*lua.LTable); ok {
		t.RawSetString("concat", L.NewFunction(st.boundedConcat(t.RawGetString("concat"))))
	}
	// pairs, next and rawget see a lazy table whole.
	for _, name := range []string{"pairs", "next", "rawget"} {
		orig, ok := g.RawGetString(name).(*lua.LFunction)
		if !ok {
			continue
		}
		g.RawSetString(name, L.NewFunction(func(L *lua.LState) int {
			if t, ok := L.Get(1).(*lua.LTable); ok {
				if err := fill(t); err != nil {
					L.RaiseError("%v", err)
				}
			}
			return callOriginal(L, orig)
		}))
	}
	kube := kubeLibrary(L)
	g.RawSetString("require", L.NewFunction(func(L *lua.LState) int {
		name := L.CheckString(1)
		if name != "kube" && name != "os" {
			L.RaiseError("module %q is not available: only \"kube\" and \"os\" are", name)
		}
		L.Push(st.lib(L, name))
		return 1
	}))
	st.libraries = snapshot(g, kube)
	st.concat = L.NewFunction(st.boundedConcatOp)
	st.envMeta = L.CreateTable(0, 2)
	st.envMeta.RawSetString("__index", L.NewFunction(st.globalIndex))
	st.envMeta.RawSetString("__metatable", lua.LString("environment"))
	// Strings' methods are the running call's string library; the
	// metatable itself is not handed out.
	strMeta := L.CreateTable(0, 2)
	strMeta.RawSetString("__index", L.NewFunction(st.stringIndex))
	strMeta.RawSetString("__metatable", lua.LString("string"))
	L.SetMetatable(lua.LString(""), strMeta)
	L.SetContext(st.budget)
	return st
}
