package luavm

import (
	"reflect"
	"strings"

	lua "github.com/yuin/gopher-lua"
	"github.com/yuin/gopher-lua/ast"
)

// `..` under the memory budget. gopher-lua runs a chain a .. b .. c as one
// instruction that joins every operand at once: a chain of a few hundred
// copies of a large string asked for gigabytes in one step, beyond the
// per-instruction budget check. Scripts are compiled with every chain
// turned into a call of concatName, which joins the same operands with the
// same rules (numbers as strings, __concat, the same error) once the
// result's size is within the budget.

// concatName is the global a chain becomes a call of: no identifier of a
// script can name it.
const concatName = "\x00concat"

// guardConcat rewrites every `..` chain of a chunk into a call of
// concatName with the chain's operands, left to right, at the chain's line.
func guardConcat(chunk []ast.Stmt) {
	rewrite(reflect.ValueOf(chunk))
}

var exprType = reflect.TypeOf((*ast.Expr)(nil)).Elem()

// rewrite walks the syntax tree below v, replacing chains where an
// expression is held.
func rewrite(v reflect.Value) {
	switch v.Kind() {
	case reflect.Pointer, reflect.Interface:
		if !v.IsNil() {
			rewrite(v.Elem())
		}
	case reflect.Slice:
		for i := 0; i < v.Len(); i++ {
			replaceAt(v.Index(i))
		}
	case reflect.Struct:
		for i := 0; i < v.NumField(); i++ {
			if v.Type().Field(i).IsExported() {
				replaceAt(v.Field(i))
			}
		}
	}
}

// replaceAt rewrites what v holds, replacing it when it is an expression
// holding a chain.
func replaceAt(v reflect.Value) {
	if v.Type() == exprType && !v.IsNil() && v.CanSet() {
		if c, ok := v.Interface().(*ast.StringConcatOpExpr); ok {
			var operands []ast.Expr
			var flatten func(e ast.Expr)
			flatten = func(e ast.Expr) {
				if c, ok := e.(*ast.StringConcatOpExpr); ok {
					flatten(c.Lhs)
					flatten(c.Rhs)
					return
				}
				operands = append(operands, e)
			}
			flatten(c)
			for i := range operands {
				rewrite(reflect.ValueOf(&operands[i]))
			}
			fn := &ast.IdentExpr{Value: concatName}
			fn.SetLine(c.Line())
			fn.SetLastLine(c.LastLine())
			call := &ast.FuncCallExpr{Func: fn, Args: operands}
			call.SetLine(c.Line())
			call.SetLastLine(c.LastLine())
			v.Set(reflect.ValueOf(ast.Expr(call)))
			return
		}
	}
	rewrite(v)
}

// boundedConcatOp joins its arguments as `..` joins its operands: from the
// right, runs of strings and numbers joined at once (after their size is
// checked), __concat of either side otherwise, else gopher-lua's error.
func (st *state) boundedConcatOp(L *lua.LState) int {
	n := L.GetTop()
	if n == 0 {
		L.Push(lua.LString(""))
		return 1
	}
	rhs := L.Get(n)
	for i := n - 1; i >= 1; {
		lhs := L.Get(i)
		if !joinable(lhs) || !joinable(rhs) {
			op := L.GetMetaField(lhs, "__concat")
			if op == lua.LNil {
				op = L.GetMetaField(rhs, "__concat")
			}
			if op.Type() != lua.LTFunction {
				L.RaiseError("cannot perform concat operation between %v and %v", lhs.Type().String(), rhs.Type().String())
			}
			L.Push(op)
			L.Push(lhs)
			L.Push(rhs)
			L.Call(2, 1)
			rhs = L.Get(-1)
			L.Pop(1)
			i--
			continue
		}
		// Every joinable operand to the left joins rhs in one string.
		first := i
		for first > 1 && joinable(L.Get(first-1)) {
			first--
		}
		size, ok := uint64(len(lua.LVAsString(rhs))), true
		for k := first; k <= i && ok; k++ {
			size, ok = addSize(size, uint64(len(lua.LVAsString(L.Get(k)))))
		}
		st.overBudget(L, "..", size, ok)
		var b strings.Builder
		b.Grow(int(size))
		for k := first; k <= i; k++ {
			b.WriteString(lua.LVAsString(L.Get(k)))
		}
		b.WriteString(lua.LVAsString(rhs))
		rhs = lua.LString(b.String())
		i = first - 1
	}
	L.Push(rhs)
	return 1
}

func joinable(v lua.LValue) bool { return lua.LVCanConvToString(v) }
