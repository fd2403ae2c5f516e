package luavm

import (
	"testing"

	lua "github.com/yuin/gopher-lua"
)

// BenchmarkCallFloor is the cost of one call of a script that does nothing
// with its object: the floor every operation pays.
func BenchmarkCallFloor(b *testing.B) {
	s, err := Compile("function F(obj) return true end", "F")
	if err != nil {
		b.Fatal(err)
	}
	obj := map[string]any{"metadata": map[string]any{"name": "a"}, "spec": map[string]any{"replicas": int64(1)}}
	b.ReportAllocs()
	for i := 0; i < b.N; i++ {
		if _, err := Default.Call(s, 1, obj); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkPatterns is the cost of the matching built-ins as scripts use
// them (a version, an image reference), each probed before gopher-lua's
// search runs: compare with BenchmarkPatternsUnprobed.
func BenchmarkPatterns(b *testing.B) {
	benchmarkPatterns(b, Default)
}

// BenchmarkPatternsUnprobed runs the same script in a plain gopher-lua
// state, without the probe: the floor of BenchmarkPatterns.
func BenchmarkPatternsUnprobed(b *testing.B) {
	L := lua.NewState()
	defer L.Close()
	if err := L.DoString(patternScript); err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	for i := 0; i < b.N; i++ {
		if err := L.CallByParam(lua.P{Fn: L.GetGlobal("F"), NRet: 1, Protect: true}, lua.LString("registry.example.com/team/app:v1.22.3")); err != nil {
			b.Fatal(err)
		}
		L.Pop(1)
	}
}

const patternScript = `function F(image)
  local repo, tag = string.match(image, "^(.-):([^:]+)$")
  local major, minor = string.match(tag, "^v(%d+)%.(%d+)")
  local host = image:find("/", 1, true)
  local safe = string.gsub(repo, "[/.]", "-")
  return safe .. major .. minor .. host
end`

func benchmarkPatterns(b *testing.B, vm *VM) {
	s, err := Compile(patternScript, "F")
	if err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	for i := 0; i < b.N; i++ {
		if _, err := vm.Call(s, 1, "registry.example.com/team/app:v1.22.3"); err != nil {
			b.Fatal(err)
		}
	}
}
