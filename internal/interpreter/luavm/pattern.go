package luavm

import (
	"errors"
	"strconv"
	"strings"

	lua "github.com/yuin/gopher-lua"
	"github.com/yuin/gopher-lua/pm"
)

// Pattern matching under the budget. gopher-lua's matcher (its pm package,
// which Karmada's interpreter runs too) backtracks without bound inside one
// built-in call: a pattern of many repetitions against a long subject runs
// for hours, out of reach of the per-instruction budget check, and gsub
// and gmatch gather every match before the script sees one. Before a
// matching built-in runs, a probe runs the same search on a program of the
// same shape, counting its steps and watching the call's budget; only a
// search the probe finished within the budget is then done by gopher-lua
// itself, so what a script gets is exactly what Karmada's gives. gsub
// builds its result here (gopher-lua's copies the whole string once per
// match), with gopher-lua's matches and replacement rules.

// errTooComplex is gopher-lua's own error for a search too deep.
var errTooComplex = errors.New("pattern/input too complex")

// probe runs one search, counting its steps against the call's budget.
type probe struct {
	prog   []pinst
	src    string
	caps   []int // slot: position<<1 | 1 for a position capture
	steps  int
	budget *budget
}

// stop ends the probe when the call's budget is spent.
type stop struct{ err error }

func (p *probe) step() {
	p.steps++
	if p.steps%budgetCheckEvery == 0 {
		select {
		case <-p.budget.Done():
			panic(stop{p.budget.Err()})
		default:
		}
	}
}

func (p *probe) set(slot, v int) int {
	for slot >= len(p.caps) {
		p.caps = append(p.caps, 0)
	}
	old := p.caps[slot]
	p.caps[slot] = v
	return old
}

func (p *probe) run(pc, sp, depth int) (bool, int) {
	depth++
	if depth > maxPatternDepth {
		panic(stop{errTooComplex})
	}
	for {
		p.step()
		in := &p.prog[pc]
		switch in.op {
		case opClass:
			if sp >= len(p.src) || !in.cls.matches(int(p.src[sp])) {
				return false, sp
			}
			pc++
			sp++
		case opDone:
			return true, sp
		case opDoneAtEnd:
			return sp >= len(p.src), sp
		case opGoto:
			pc = in.a
		case opEither:
			if ok, end := p.run(in.a, sp, depth); ok {
				return true, end
			}
			pc = in.b
		case opMark:
			old := p.set(in.a, sp<<1)
			if ok, end := p.run(pc+1, sp, depth); ok {
				return true, end
			}
			p.caps[in.a] = old
			return false, sp
		case opPosition:
			p.set(in.a+1, 0)
			p.caps[in.a] = (sp+1)<<1 | 1
			p.caps[in.a+1] = (sp+1)<<1 | 1
			pc++
		case opBalanced:
			if sp >= len(p.src) || int(p.src[sp]) != in.a {
				return false, sp
			}
			depthB := 1
			matched := false
			for sp = sp + 1; sp < len(p.src); sp++ {
				p.step()
				if int(p.src[sp]) == in.b {
					depthB--
				}
				if depthB == 0 {
					matched = true
					break
				}
				if int(p.src[sp]) == in.a {
					depthB++
				}
			}
			if !matched {
				return false, sp
			}
			pc++
			sp++
		case opBackref:
			slot := in.a * 2
			if slot >= len(p.caps)-1 {
				panic(stop{errors.New("invalid capture index")})
			}
			from, to := p.caps[slot]>>1, p.caps[slot+1]>>1
			if from > to || to > len(p.src) {
				// An open or position capture: gopher-lua reads what the
				// slots hold; a slice it cannot take fails its search.
				panic(stop{errTooComplex})
			}
			for i := 0; i < to-from; i++ {
				p.step()
				if sp+i >= len(p.src) || p.src[from+i] != p.src[sp+i] {
					return false, sp
				}
			}
			pc++
			sp += to - from
		}
	}
}

// probeFind runs the search gopher-lua's Find(pattern, src, offset,
// limit) runs, step for step, under b; it returns how many matches it
// found, or the error that stopped it (the budget, a malformed pattern).
func probeFind(pattern, src string, offset, limit int, b *budget) (n int, err error) {
	return probeSpans(pattern, src, offset, limit, b, nil)
}

// probeSpans is probeFind that also appends each match's start and end to
// spans, when not nil (for the tests that hold it to gopher-lua's).
func probeSpans(pattern, src string, offset, limit int, b *budget, spans *[]int) (n int, err error) {
	cp, err := compiledPatterns.get(pattern)
	if err != nil {
		return 0, err
	}
	p := &probe{prog: cp.prog, src: src, budget: b}
	defer func() {
		if r := recover(); r != nil {
			s, ok := r.(stop)
			if !ok {
				panic(r)
			}
			err = s.err
		}
	}()
	for sp := offset; sp <= len(src); {
		p.caps = p.caps[:0]
		ok, end := p.run(0, sp, 0)
		sp++
		if ok {
			if spans != nil {
				*spans = append(*spans, p.caps[0]>>1, end)
			}
			if sp < end {
				sp = end
			}
			n++
		}
		if n == limit || cp.head {
			break
		}
	}
	return n, nil
}

// matchDataSize is about what gopher-lua keeps per match it gathers.
const matchDataSize = 96

// guardMatch runs the probe of a matching built-in before gopher-lua's:
// the search within the call's time budget, and its gathered matches
// within its memory budget.
func (st *state) guardMatch(L *lua.LState, what, pattern, src string, offset, limit int) {
	if offset > len(src) {
		return
	}
	n, err := probeFind(pattern, src, max(offset, 0), limit, st.budget)
	switch {
	case errors.Is(err, ErrBudget):
		st.refused = true
		L.RaiseError("%s: %v", what, err)
	case err != nil:
		// A malformed pattern or a search too deep: gopher-lua says so
		// itself.
		return
	}
	size, ok := mulSize(uint64(n), matchDataSize)
	st.overBudget(L, what+"'s matches", size, ok)
}

// boundedFind is string.find, probed first (not for a plain search).
func (st *state) boundedFind(orig lua.LValue) lua.LGFunction {
	return func(L *lua.LState) int {
		str, pat := L.CheckString(1), L.CheckString(2)
		plain := L.GetTop() == 4 && lua.LVAsBool(L.Get(4))
		if pat != "" && !plain {
			st.guardMatch(L, "string.find", pat, str, stringStart(str, L.OptInt(3, 1)), 1)
		}
		return callOriginal(L, orig)
	}
}

// boundedMatch is string.match, probed first.
func (st *state) boundedMatch(orig lua.LValue) lua.LGFunction {
	return func(L *lua.LState) int {
		str, pat := L.CheckString(1), L.CheckString(2)
		offset := L.OptInt(3, 1)
		if offset < 0 {
			offset = len(str) + offset + 1
		}
		st.guardMatch(L, "string.match", pat, str, max(offset-1, 0), 1)
		return callOriginal(L, orig)
	}
}

// boundedGmatch is string.gmatch, probed first: gopher-lua gathers every
// match before the first is returned.
func (st *state) boundedGmatch(orig lua.LValue) lua.LGFunction {
	return func(L *lua.LState) int {
		str, pat := L.CheckString(1), L.CheckString(2)
		st.guardMatch(L, "string.gmatch", pat, str, 0, -1)
		return callOriginal(L, orig)
	}
}

// stringStart is gopher-lua's start index of string.find's init.
func stringStart(s string, i int) int {
	if i != 0 {
		i--
	}
	if i < 0 {
		i = len(s) + i + 1
	}
	return max(i, 0)
}

// boundedGsub is string.gsub: the search probed first, gopher-lua's
// matches, the result built once and kept within the memory budget.
func (st *state) boundedGsub(L *lua.LState) int {
	str, pat := L.CheckString(1), L.CheckString(2)
	L.CheckTypes(3, lua.LTString, lua.LTTable, lua.LTFunction)
	repl := L.CheckAny(3)
	limit := L.OptInt(4, -1)
	st.guardMatch(L, "string.gsub", pat, str, 0, limit)
	mds, err := pm.Find(pat, []byte(str), 0, limit)
	if err != nil {
		L.RaiseError("%s", err.Error())
	}
	if len(mds) == 0 {
		L.SetTop(1)
		L.Push(lua.LNumber(0))
		return 2
	}
	var out strings.Builder
	prev := 0
	grow := func(s string) {
		size, ok := addSize(uint64(out.Len()), uint64(len(s)))
		st.overBudget(L, "string.gsub", size, ok)
		out.WriteString(s)
	}
	for _, m := range mds {
		start, end := m.Capture(0), m.Capture(1)
		r, replace := st.gsubReplacement(L, str, repl, m)
		grow(str[prev:start])
		if replace {
			grow(r)
		} else {
			grow(str[start:end])
		}
		prev = max(prev, end)
	}
	grow(str[prev:])
	L.Push(lua.LString(out.String()))
	L.Push(lua.LNumber(len(mds)))
	return 2
}

// gsubReplacement is what gopher-lua puts in place of match m, and
// whether it replaces it (a table's or function's false or nil keeps it).
func (st *state) gsubReplacement(L *lua.LState, str string, repl lua.LValue, m *pm.MatchData) (string, bool) {
	switch r := repl.(type) {
	case lua.LString:
		return st.expandReplacement(L, str, string(r), m), true
	case *lua.LTable:
		idx := 0
		if m.CaptureLength() > 2 {
			idx = 2
		}
		var v lua.LValue
		if m.IsPosCapture(idx) {
			v = L.GetTable(r, lua.LNumber(m.Capture(idx)))
		} else {
			v = L.GetField(r, str[m.Capture(idx):m.Capture(idx+1)])
		}
		if lua.LVIsFalse(v) {
			return "", false
		}
		return lua.LVAsString(v), true
	case *lua.LFunction:
		L.Push(r)
		nargs := 0
		if m.CaptureLength() > 2 {
			for i := 2; i < m.CaptureLength(); i += 2 {
				if m.IsPosCapture(i) {
					L.Push(lua.LNumber(m.Capture(i)))
				} else {
					L.Push(lua.LString(captured(L, m, str, i)))
				}
				nargs++
			}
		} else {
			L.Push(lua.LString(captured(L, m, str, 0)))
			nargs++
		}
		L.Call(nargs, 1)
		v := L.Get(-1)
		L.Pop(1)
		if lua.LVIsFalse(v) {
			return "", false
		}
		return lua.LVAsString(v), true
	}
	return "", false
}

// captured is capture slot idx of m as gopher-lua gives it to gsub: %1
// without captures is the whole match, a position capture its number.
func captured(L *lua.LState, m *pm.MatchData, str string, idx int) string {
	if idx > 2 && idx >= m.CaptureLength() {
		L.RaiseError("invalid capture index")
	}
	if idx >= m.CaptureLength() && idx == 2 {
		idx = 0
	}
	if m.IsPosCapture(idx) {
		return strconv.Itoa(m.Capture(idx))
	}
	return str[m.Capture(idx):m.Capture(idx+1)]
}

// expandReplacement reads a gsub replacement string as gopher-lua does:
// %% is %, %0-%9 a capture, % before anything else stays with it, and a
// last lone % is kept. Its size is known before it is built.
func (st *state) expandReplacement(L *lua.LState, str, repl string, m *pm.MatchData) string {
	var size uint64
	ok := true
	st.eachReplacementPart(L, str, repl, m, func(part string) { size, ok = addSize(size, uint64(len(part))) })
	st.overBudget(L, "string.gsub", size, ok)
	var b strings.Builder
	b.Grow(int(size))
	st.eachReplacementPart(L, str, repl, m, func(part string) { b.WriteString(part) })
	return b.String()
}

func (st *state) eachReplacementPart(L *lua.LState, str, repl string, m *pm.MatchData, part func(string)) {
	for i := 0; i < len(repl); i++ {
		c := repl[i]
		if c != '%' || i == len(repl)-1 {
			part(repl[i : i+1])
			continue
		}
		i++
		d := repl[i]
		switch {
		case d == '%':
			part("%")
		case d >= '0' && d <= '9':
			part(captured(L, m, str, 2*int(d-'0')))
		default:
			part(repl[i-1 : i+1])
		}
	}
}
