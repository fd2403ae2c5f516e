package webhook

import (
	"context"
	"sort"
	"testing"
	"time"
)

// BenchmarkAdmission measures each endpoint in process (decode, default or
// validate, encode the answer) on its fixture, as an update (the larger
// request: two objects), and reports the 99th percentile. Target: p99
// under 2 ms (docs/performance.md).
func BenchmarkAdmission(b *testing.B) {
	for _, path := range []string{
		"/mutate-propagationpolicy", "/validate-propagationpolicy", "/validate-clusterpropagationpolicy",
		"/mutate-overridepolicy", "/validate-overridepolicy", "/validate-clusteroverridepolicy",
		"/mutate-resourcebinding", "/validate-resourcebinding", "/validate-clusterresourcebinding",
		"/validate-work", "/validate-cluster",
	} {
		e := endpoints[path]
		obj, old := fixtures[path](), fixtures[path]()
		req := request(b, e, obj, old)
		b.Run(path[1:], func(b *testing.B) {
			ctx := context.Background()
			took := make([]time.Duration, 0, b.N)
			b.ReportAllocs()
			for i := 0; i < b.N; i++ {
				start := time.Now()
				resp := e.Handler().Handle(ctx, req)
				took = append(took, time.Since(start))
				if !resp.Allowed {
					b.Fatalf("fixture denied: %+v", resp.Result)
				}
			}
			sort.Slice(took, func(i, j int) bool { return took[i] < took[j] })
			b.ReportMetric(float64(took[len(took)*99/100].Microseconds()), "p99-µs")
		})
	}
}
