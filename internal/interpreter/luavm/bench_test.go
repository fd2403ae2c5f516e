package luavm

import "testing"

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
