package luavm

import (
	"fmt"
	"sync"
)

// The pattern compiler: a Lua pattern parsed into the program the probe
// (pattern.go) runs, with its character classes, and a bounded cache of
// compiled programs.

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
