package customization

import (
	"testing"

	"k8s.io/apimachinery/pkg/runtime"

	configv1alpha1 "github.com/karmada-go/karmada/api/config/v1alpha1"
	workv1alpha2 "github.com/karmada-go/karmada/api/work/v1alpha2"
	"github.com/karmada-go/karmada/internal/interpreter"
	"github.com/karmada-go/karmada/internal/interpreter/luavm"
)

// BenchmarkOperations runs each operation on a Deployment with the
// built-in knowledge and with the Lua customization of testdata (the same
// answers, compiled once, run from the pool). docs/performance.md records
// the ratio; the target is Lua within 5x of built-in.
func BenchmarkOperations(b *testing.B) {
	ric := load(b, "testdata/deployment.yaml")
	reg, err := NewCompiler(luavm.Default).Build([]configv1alpha1.ResourceInterpreterCustomization{ric})
	if err != nil {
		b.Fatal(err)
	}
	layer := &Layer{}
	layer.Set(reg)
	for _, side := range []struct {
		name string
		in   *interpreter.Interpreter
	}{{"builtin", interpreter.Default}, {"lua", interpreter.New(layer)}} {
		deploy := parse(b, deployment)
		items := []workv1alpha2.AggregatedStatusItem{
			{ClusterName: "member1", Status: &runtime.RawExtension{Raw: []byte(`{"readyReplicas":1,"replicas":1,"observedGeneration":1}`)}, Applied: true},
			{ClusterName: "member2", Status: &runtime.RawExtension{Raw: []byte(`{"readyReplicas":2,"replicas":2,"observedGeneration":1}`)}, Applied: true},
		}
		ops := []struct {
			name string
			run  func() error
		}{
			{"InterpretReplica", func() error { _, _, err := side.in.Replicas(deploy); return err }},
			{"ReviseReplica", func() error { _, err := side.in.ReviseReplicas(deploy, 2); return err }},
			{"InterpretStatus", func() error { _, err := side.in.ReflectStatus(deploy); return err }},
			{"InterpretHealth", func() error { _, err := side.in.Health(deploy); return err }},
			{"AggregateStatus", func() error { _, err := side.in.AggregateStatus(deploy, items); return err }},
			{"InterpretDependency", func() error { _, err := side.in.Dependencies(deploy); return err }},
		}
		for _, op := range ops {
			b.Run(op.name+"/"+side.name, func(b *testing.B) {
				b.ReportAllocs()
				for i := 0; i < b.N; i++ {
					if err := op.run(); err != nil {
						b.Fatal(err)
					}
				}
			})
		}
	}
}

// BenchmarkCompile is what caching saves: parsing and compiling a script
// (Karmada issue #7597 measured 108,936 ns/op uncached against 1,827 ns/op
// cached).
func BenchmarkCompile(b *testing.B) {
	src := "function ReviseReplica(obj, desiredReplica)\n  obj.spec.replicas = desiredReplica\n  return obj\nend\n"
	b.ReportAllocs()
	for i := 0; i < b.N; i++ {
		if _, err := luavm.Compile(src, "ReviseReplica"); err != nil {
			b.Fatal(err)
		}
	}
}
