package luavm

import (
	"errors"
	"fmt"
	"strconv"
	"strings"
	"sync"

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

// maxPatternDepth is the probe's recursion bound, gopher-lua's own (a
// deeper search fails there with "pattern/input too complex").
const maxPatternDepth = 1000000

// budgetCheckEvery is how many probe steps run between two looks at the
// call's budget.
const budgetCheckEvery = 1 << 12

// pclass is a character class of a pattern.
type pclass interface{ matches(c int) bool }

type anyClass struct{}

func (anyClass) matches(int) bool { return true }

type litClass int

func (l litClass) matches(c int) bool { return int(l) == c }

// escClass is %x: a letter class (upper case: its complement), or the
// character itself.
type escClass int

func (e escClass) matches(c int) bool {
	var in bool
	switch e | 0x20 {
	case 'a':
		in = 'A' <= c && c <= 'Z' || 'a' <= c && c <= 'z'
	case 'c':
		in = 0 <= c && c <= 0x1f || c == 0x7f
	case 'd':
		in = '0' <= c && c <= '9'
	case 'l':
		in = 'a' <= c && c <= 'z'
	case 'p':
		in = 0x21 <= c && c <= 0x2f || 0x3a <= c && c <= 0x40 || 0x5b <= c && c <= 0x60 || 0x7b <= c && c <= 0x7e
	case 's':
		in = c == ' ' || c == '\f' || c == '\n' || c == '\r' || c == '\t' || c == '\v'
	case 'u':
		in = 'A' <= c && c <= 'Z'
	case 'w':
		in = '0' <= c && c <= '9' || 'A' <= c && c <= 'Z' || 'a' <= c && c <= 'z'
	case 'x':
		in = '0' <= c && c <= '9' || 'a' <= c && c <= 'f' || 'A' <= c && c <= 'F'
	case 'z':
		in = c == 0
	default:
		return int(e) == c
	}
	if 'A' <= e && e <= 'Z' {
		return !in
	}
	return in
}

// setClass is [...]; a range is only between two plain characters.
type setClass struct {
	negated bool
	members []pclass
}

type rangeClass struct{ from, to pclass }

func (r rangeClass) matches(c int) bool {
	from, ok1 := r.from.(litClass)
	to, ok2 := r.to.(litClass)
	return ok1 && ok2 && int(from) <= c && c <= int(to)
}

func (s setClass) matches(c int) bool {
	for _, m := range s.members {
		if m.matches(c) {
			return !s.negated
		}
	}
	return s.negated
}

// The program's operations (one per step of the search).
const (
	opClass = iota
	opDone
	opDoneAtEnd
	opGoto
	opEither
	opMark
	opPosition
	opBalanced
	opBackref
)

type pinst struct {
	op   int
	cls  pclass
	a, b int
}

// patternError is a malformed pattern, worded as gopher-lua words it.
type patternError struct {
	pos int
	msg string
}

func (e *patternError) Error() string {
	if e.pos < 0 {
		return e.msg + " at EOS"
	}
	return fmt.Sprintf("%s at %d", e.msg, e.pos)
}

// eos is the end of the pattern.
const eos = -1

// patternParser reads a pattern as gopher-lua does (its quirks included:
// they decide whether a pattern is an error or what it matches).
type patternParser struct {
	p    string
	i    int // the next byte to read
	prog []pinst
	caps int // the next capture slot
	head bool
}

func (pp *patternParser) peek() int {
	if pp.i >= len(pp.p) {
		return eos
	}
	return int(pp.p[pp.i])
}

func (pp *patternParser) next() int {
	c := pp.peek()
	if c != eos {
		pp.i++
	}
	return c
}

// pos is where gopher-lua reports an error: the byte last read.
func (pp *patternParser) pos() int {
	if pp.i >= len(pp.p) {
		return eos
	}
	return max(pp.i-1, 0)
}

func (pp *patternParser) fail(msg string) { panic(&patternError{pos: pp.pos(), msg: msg}) }

// class reads one class; inSet: within [...], where . and [ are plain.
func (pp *patternParser) class(inSet bool) pclass {
	switch c := pp.next(); c {
	case '%':
		return escClass(pp.next())
	case '.':
		if !inSet {
			return anyClass{}
		}
		return litClass(c)
	case '[':
		if !inSet {
			return pp.set()
		}
		return litClass(c)
	case eos:
		pp.fail("unexpected EOS")
	default:
		return litClass(c)
	}
	return nil
}

func (pp *patternParser) set() pclass {
	s := setClass{}
	if pp.peek() == '^' {
		s.negated = true
		pp.next()
	}
	pendingRange := false
	for {
		c := pp.peek()
		if c == eos {
			pp.fail("unexpected EOS")
		}
		if c == ']' && len(s.members) > 0 {
			pp.next()
			break
		}
		if (c == ']' || c == '-') && len(s.members) > 0 {
			pp.next()
			pendingRange = true
			continue
		}
		s.members = append(s.members, pp.class(true))
		if pendingRange {
			n := len(s.members)
			s.members = append(s.members[:n-2], rangeClass{s.members[n-2], s.members[n-1]})
			pendingRange = false
		}
	}
	if pendingRange {
		s.members = append(s.members, litClass('-'))
	}
	return s
}

// item is one parsed element, before its program is written: a class
// that a repetition may follow, or something a repetition may not.
type item struct {
	cls   pclass
	inner []item // a capture's elements; nil with cls nil and not pos: see kind
	kind  int    // 0 class, 1 repetition, 2 position capture, 3 capture, 4 balanced, 5 back-reference
	rep   int    // the repetition's operator
	a, b  int
}

func (pp *patternParser) sequence(top bool) (items []item, tail bool) {
	if top && pp.peek() == '^' {
		pp.next()
		pp.head = true
	}
	for {
		switch c := pp.peek(); c {
		case '%':
			save := pp.i
			pp.next()
			switch d := pp.peek(); {
			case d == '0':
				pp.fail("invalid capture index")
			case d >= '1' && d <= '9':
				pp.next()
				items = append(items, item{kind: 5, a: d - '0'})
			case d == 'b':
				pp.next()
				b := pp.next()
				e := pp.next()
				items = append(items, item{kind: 4, a: b, b: e})
			default:
				pp.i = save
				items = append(items, item{cls: pp.class(false)})
			}
		case '.', '[', ']':
			items = append(items, item{cls: pp.class(false)})
		case ')':
			if top {
				pp.fail("invalid ')'")
			}
			return items, false
		case '(':
			pp.next()
			if pp.peek() == ')' {
				pp.next()
				items = append(items, item{kind: 2})
				continue
			}
			inner, _ := pp.sequence(false)
			if pp.peek() != ')' {
				pp.fail("unfinished capture")
			}
			pp.next()
			items = append(items, item{kind: 3, inner: inner})
		case '*', '+', '-', '?':
			pp.next()
			if n := len(items); n > 0 && items[n-1].kind == 0 {
				items[n-1].kind, items[n-1].rep = 1, c
				continue
			}
			items = append(items, item{cls: litClass(c)})
		case '$':
			pp.next()
			if top && pp.i == len(pp.p) {
				tail = true
			} else {
				items = append(items, item{cls: litClass('$')})
			}
		case eos:
			return items, tail
		default:
			pp.next()
			items = append(items, item{cls: litClass(c)})
		}
	}
}

func (pp *patternParser) emit(items []item) {
	for _, it := range items {
		at := len(pp.prog)
		switch it.kind {
		case 0:
			pp.prog = append(pp.prog, pinst{op: opClass, cls: it.cls})
		case 1:
			switch it.rep {
			case '*':
				pp.prog = append(pp.prog, pinst{op: opEither, a: at + 1, b: at + 3}, pinst{op: opClass, cls: it.cls}, pinst{op: opGoto, a: at})
			case '+':
				pp.prog = append(pp.prog, pinst{op: opClass, cls: it.cls}, pinst{op: opEither, a: at, b: at + 2})
			case '-':
				pp.prog = append(pp.prog, pinst{op: opEither, a: at + 3, b: at + 1}, pinst{op: opClass, cls: it.cls}, pinst{op: opGoto, a: at})
			case '?':
				pp.prog = append(pp.prog, pinst{op: opEither, a: at + 1, b: at + 2}, pinst{op: opClass, cls: it.cls})
			}
		case 2:
			pp.prog = append(pp.prog, pinst{op: opPosition, a: pp.caps})
			pp.caps += 2
		case 3:
			open := pp.caps
			pp.caps += 2
			pp.prog = append(pp.prog, pinst{op: opMark, a: open})
			pp.emit(it.inner)
			pp.prog = append(pp.prog, pinst{op: opMark, a: open + 1})
		case 4:
			pp.prog = append(pp.prog, pinst{op: opBalanced, a: it.a, b: it.b})
		case 5:
			pp.prog = append(pp.prog, pinst{op: opBackref, a: it.a})
		}
	}
}

// compiledPattern is a pattern's program.
type compiledPattern struct {
	prog []pinst
	head bool
}

func compilePattern(p string) (cp *compiledPattern, err error) {
	defer func() {
		if r := recover(); r != nil {
			pe, ok := r.(*patternError)
			if !ok {
				panic(r)
			}
			err = pe
		}
	}()
	pp := &patternParser{p: p, caps: 2}
	items, tail := pp.sequence(true)
	pp.prog = append(pp.prog, pinst{op: opMark, a: 0})
	pp.emit(items)
	if tail {
		pp.prog = append(pp.prog, pinst{op: opMark, a: 1}, pinst{op: opDoneAtEnd})
	}
	pp.prog = append(pp.prog, pinst{op: opMark, a: 1}, pinst{op: opDone})
	return &compiledPattern{prog: pp.prog, head: pp.head}, nil
}

// patternCache keeps the programs of the patterns scripts use (mostly
// constants of the script): compiled once, not at every call.
type patternCache struct {
	mu sync.Mutex
	m  map[string]*compiledPattern
}

// maxCachedPatterns bounds the cache; when full it starts again.
const maxCachedPatterns = 1024

var compiledPatterns = &patternCache{m: map[string]*compiledPattern{}}

func (c *patternCache) get(p string) (*compiledPattern, error) {
	c.mu.Lock()
	cp, ok := c.m[p]
	c.mu.Unlock()
	if ok {
		return cp, nil
	}
	cp, err := compilePattern(p)
	if err != nil {
		return nil, err
	}
	c.mu.Lock()
	if len(c.m) >= maxCachedPatterns {
		c.m = map[string]*compiledPattern{}
	}
	c.m[p] = cp
	c.mu.Unlock()
	return cp, nil
}

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
