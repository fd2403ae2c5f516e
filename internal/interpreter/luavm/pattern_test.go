package luavm

import (
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	lua "github.com/yuin/gopher-lua"
	"github.com/yuin/gopher-lua/pm"
)

// gopherFind is gopher-lua's own search: its match spans, or whether it
// failed (an error, or a panic of its own).
func gopherFind(pattern, src string, offset, limit int) (spans []int, failed bool) {
	defer func() {
		if r := recover(); r != nil {
			spans, failed = nil, true
		}
	}()
	mds, err := pm.Find(pattern, []byte(src), offset, limit)
	if err != nil {
		return nil, true
	}
	for _, m := range mds {
		spans = append(spans, m.Capture(0), m.Capture(1))
	}
	return spans, false
}

// The probe searches as gopher-lua does: the same matches, and an error
// where gopher-lua has one (else a search it passes could run unbounded,
// or one it refuses be judged wrongly).
func TestProbeSearchesAsGopherLua(t *testing.T) {
	subjects := []string{"", "a", "aaa", "hello world", "key=value; other = 2", "(a(b)c)[x]", "v1.2.3-rc.1", "a.b.c", "ab$", "x\x00y", "AbC dEf 123"}
	patterns := []string{"a", "a*", "a-", "a+", "a?", ".", ".-", "^a", "a$", "^$", "$", "%a+", "%d+", "%w+", "%s*", "%p", "[a-c]+", "[^a-c]", "[%a%d]+",
		"[]]", "[a-]", "[-a]", "[a--]", "[%a-z]", "(%w+)=(%w+)", "()a()", "%b()", "%b[]", "(a)%1", "(%a)%1", "^(v)(%d+)%.(%d+)", "%.", "%", "[", "(", ")", "(()",
		"%1", "%0", "a**", "*a", "$a", "a$b", "[^]]", "%z", "%Z+", "%A+", "%x+", "%l%u", "(a*(.)%w(%s*))", "%f[%a]"}
	for _, s := range subjects {
		for _, p := range patterns {
			want, wantFailed := gopherFind(p, s, 0, -1)
			var got []int
			_, err := probeSpans(p, s, 0, -1, newBudget(DefaultBudget), &got)
			if (err != nil) != wantFailed || !wantFailed && !cmp.Equal(want, got) {
				t.Errorf("pattern %q on %q: probe %v (err %v), gopher-lua %v (failed %t)", p, s, got, err, want, wantFailed)
			}
		}
	}
}

// FuzzProbeSearchesAsGopherLua: on any short pattern and subject, the
// probe finds gopher-lua's matches and fails where it fails.
func FuzzProbeSearchesAsGopherLua(f *testing.F) {
	for _, c := range [][2]string{{"(%w+)=(%w+)", "a=b c=d"}, {"[^%s]+", " x y "}, {"%b()", "(a(b))"}, {"^(.-)%.", "a.b"}, {"[a-]", "-"}, {"(a)%1", "aa"}} {
		f.Add(c[0], c[1], 0, -1)
	}
	f.Fuzz(func(t *testing.T, p, s string, offset, limit int) {
		if len(p) > 10 || len(s) > 16 || offset < 0 || offset > 20 {
			return // gopher-lua's own search is exponential: keep it small
		}
		want, wantFailed := gopherFind(p, s, offset, limit)
		var got []int
		_, err := probeSpans(p, s, offset, limit, newBudget(DefaultBudget), &got)
		if (err != nil) != wantFailed || !wantFailed && !cmp.Equal(want, got) {
			t.Fatalf("pattern %q on %q from %d (limit %d): probe %v (err %v), gopher-lua %v (failed %t)", p, s, offset, limit, got, err, want, wantFailed)
		}
	})
}

// The matching built-ins answer exactly as gopher-lua's (Karmada's
// interpreter), gsub included, which is built here.
func TestMatchingBuiltinsAnswerAsGopherLua(t *testing.T) {
	exprs := []string{
		`string.find("hello world", "o w")`, `string.find("hello world", "(o)%s(w)")`, `string.find("a.b", ".", 1, true)`,
		`string.find("abc", "b", -1)`, `string.find("abc", "", 10)`, `string.find("abc", "c", 0)`, `string.find("abcabc", "()b()", 3)`,
		`string.match("key=value", "(%w+)=(%w+)")`, `string.match("v1.22.3", "^v(%d+)%.(%d+)")`, `string.match("abc", "b", -2)`, `string.match("abc", "()")`,
		`string.gsub("hello world", "o", "0")`, `string.gsub("hello world", "(%w+)", "<%1>")`, `string.gsub("abc", "", "-")`,
		`string.gsub("abc", "%w", "%0%0", 2)`, `string.gsub("abc", "%w", "%%")`, `string.gsub("abc", "%w", "x%")`, `string.gsub("abc", "%w", "%q")`,
		`string.gsub("abc", "(b)", "%1%1")`, `string.gsub("abc", "b", "%1")`, `string.gsub("a=1, b=2", "(%w+)=(%w+)", "%2=%1")`,
		`string.gsub("$name is $age", "%$(%w+)", {name = "ana", age = 3})`, `string.gsub("abc", "%w", {a = false, b = "B"})`,
		`string.gsub("abc", "%w", function(c) if c == "b" then return nil end return c:upper() end)`,
		`string.gsub("abc", "()", function(p) return p end)`, `string.gsub("abc", "()b", {[2] = "x"})`, `string.gsub("aaa", "a", "b", 0)`,
		`(function() local t = {} for k, v in string.gmatch("a=1, b=2", "(%w+)=(%w+)") do t[#t+1] = k .. v end return table.concat(t, ",") end)()`,
		`(function() local t = {} for w in string.gmatch("one two  three", "%a+") do t[#t+1] = w end return table.concat(t, "|") end)()`,
		`("x-y-z"):gsub("-", "+")`, `("Hello"):match("%u(%l+)")`,
		`pcall(string.gsub, "abc", "(", "x")`, `pcall(string.find, "abc", "[a")`, `pcall(string.gsub, "abc", "b", "%2")`,
	}
	answersAsGopherLua(t, exprs, showExact)
}

// A search that backtracks without end is stopped by the call's budget
// (it ran for minutes in one built-in, past every budget); the
// interpreter stays usable.
func TestRunawayPatternsStopped(t *testing.T) {
	vm := New(Budget{Timeout: 300 * time.Millisecond, Memory: 64 << 20})
	for name, src := range map[string]string{
		"match":  `function F() return string.match(string.rep("a", 5000), string.rep("a*", 14) .. "b") end`,
		"find":   `function F() return ("x"):rep(3000):find(".-.-.-.-.-.-y") end`,
		"gsub":   `function F() return string.gsub(string.rep("a", 3000), string.rep("a-", 10) .. "b", "") end`,
		"gmatch": `function F() for w in string.gmatch(string.rep("ab", 2000), string.rep("[ab]*", 8) .. "c") do end end`,
	} {
		t.Run(name, func(t *testing.T) {
			start := time.Now()
			_, err := vm.Call(compile(t, src, "F"), 1)
			if !errors.Is(err, ErrBudget) {
				t.Fatalf("err = %v, want the budget's", err)
			}
			if took := time.Since(start); took > 3*time.Second {
				t.Fatalf("stopped after %s", took)
			}
			out, err := vm.Call(compile(t, `function G() return ("ab"):match("b") end`, "G"), 1)
			if err != nil || out[0].String() != "b" {
				t.Fatalf("after a stopped call: %v %v", out, err)
			}
		})
	}
}

// gsub builds its result once (gopher-lua copies the string once per
// match), and not past the memory budget; gmatch's gathered matches too.
func TestGsubLinearAndBounded(t *testing.T) {
	// A gsub copying its string once per match would take hours over a
	// MiB: the call's time budget stops it (no wall-clock assertion, which
	// a loaded machine could break).
	vm := New(Budget{Timeout: 30 * time.Second, Memory: 128 << 20})
	out, err := vm.Call(compile(t, `function F() local s, n = string.gsub(string.rep("x", 2^20), ".", "y") return #s, n, s:sub(1, 3) end`, "F"), 3)
	if err != nil {
		t.Fatal(err)
	}
	if out[0] != lua.LNumber(1<<20) || out[1] != lua.LNumber(1<<20) || out[2].String() != "yyy" {
		t.Errorf("gsub of a MiB: %v", out)
	}
	for name, src := range map[string]string{
		"gsub expanding":   `function F() return string.gsub(string.rep("x", 2^19), "x+", ("%0"):rep(300)) end`,
		"gmatch gathering": `function F() local s = string.rep("x", 2^21) for c in s:gmatch(".") do end end`,
	} {
		_, err := vm.Call(compile(t, src, "F"), 1)
		if err == nil || !strings.Contains(err.Error(), "exceeds the memory budget") {
			t.Errorf("%s: %v, want the memory budget's refusal", name, err)
		}
	}
}

// `..` answers as gopher-lua's: numbers as strings, __concat on either
// side, nested chains, and the same error where it has one.
func TestConcatAnswersAsGopherLua(t *testing.T) {
	exprs := []string{
		`"a" .. 1 .. 2.5`, `1 .. 2`, `"x" .. ("y" .. "z") .. "w"`, `1e100 .. ""`, `(0/0) .. ""`, `-0 .. "|"`, `"" .. ""`,
		`(function() local mt = {__concat = function(a, b) return "M" end} local t = setmetatable({}, mt) return "a" .. t, t .. "b", "a" .. "b" .. t .. "c" end)()`,
		`(function() local mt = {__concat = function(a, b) return {} end} local t = setmetatable({}, mt) return type("a" .. t) end)()`,
		`pcall(function() return "a" .. nil end)`, `pcall(function() local x return "a" .. "b" .. x .. "c" end)`, `pcall(function() return {} .. "a" end)`,
		`(function() local t = {} for i = 1, 3 do t[i] = "k" .. i .. "=" .. i * 2 end return table.concat(t, ",") end)()`,
		`string.format("%s", "p" .. "q"), ("r" .. "s"):upper(), #("ab" .. "c")`,
	}
	answersAsGopherLua(t, exprs, showExact)
}

// showExact prints a result list whole, error positions included.
func showExact(v lua.LValue) string {
	t, ok := v.(*lua.LTable)
	if !ok {
		return v.String()
	}
	var parts []string
	for i := 1; i <= t.MaxN(); i++ {
		parts = append(parts, fmt.Sprintf("%s:%s", t.RawGetInt(i).Type(), t.RawGetInt(i).String()))
	}
	return "[" + strings.Join(parts, " ") + "]"
}

// A chain of `..` is refused before it joins more than the memory budget
// at once (one instruction asked for gigabytes).
func TestConcatBounded(t *testing.T) {
	vm := New(Budget{Timeout: 5 * time.Second, Memory: 16 << 20})
	chain := strings.TrimSuffix(strings.Repeat("s .. ", 150), " .. ")
	_, err := vm.Call(compile(t, `function F() local s = string.rep("x", 2^20) return `+chain+` end`, "F"), 1)
	if err == nil || !strings.Contains(err.Error(), ".. of 157286400 bytes exceeds the memory budget") {
		t.Fatalf("err = %v, want the memory budget's refusal", err)
	}
}

// answersAsGopherLua runs each expression in our VM and in a plain
// gopher-lua state (the interpreter Karmada runs), as a function F of a
// chunk named F, and compares the results as show prints them.
func answersAsGopherLua(t *testing.T, exprs []string, show func(lua.LValue) string) {
	t.Helper()
	vm := New(DefaultBudget)
	plain := lua.NewState()
	defer plain.Close()
	for _, e := range exprs {
		src := "function F()\n  return {" + e + "}\nend"
		out, err := vm.Call(compile(t, src, "F"), 1)
		if err != nil {
			t.Errorf("%s: %v", e, err)
			continue
		}
		chunk, err := plain.Load(strings.NewReader(src), "F")
		if err != nil {
			t.Fatal(err)
		}
		plain.Push(chunk)
		plain.Call(0, 0)
		if err := plain.CallByParam(lua.P{Fn: plain.GetGlobal("F"), NRet: 1, Protect: true}); err != nil {
			t.Fatalf("%s in gopher-lua: %v", e, err)
		}
		want := plain.Get(-1)
		plain.Pop(1)
		if a, b := show(out[0]), show(want); a != b {
			t.Errorf("%s = %s, gopher-lua gives %s", e, a, b)
		}
	}
}
