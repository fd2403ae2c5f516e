package metricsadapter

import (
	"context"
	"fmt"
	"testing"
)

// BenchmarkPodMetrics3000 lists 3,000 pods' metrics spread over three
// members (each a loopback HTTP server answering its 1,000): the adapter's
// own cost per list (asking, decoding, annotating, merging, sorting), the
// members' encoding of their answers included (they share the CPUs). docs/performance.md has its figures.
func BenchmarkPodMetrics3000(b *testing.B) {
	members := map[string]*fakeMember{}
	var ready []string
	for m := range 3 {
		name := fmt.Sprintf("member%d", m+1)
		fm := &fakeMember{pods: map[string]int64{}}
		for i := range 1000 {
			fm.pods[fmt.Sprintf("web/web-%d-%d", m, i)] = int64(i % 500)
		}
		members[name] = fm
		ready = append(ready, name)
	}
	p := newFleet(b, members, ready...)
	ctx := context.Background()
	b.ReportAllocs()
	b.ResetTimer()
	for b.Loop() {
		got, err := p.PodMetrics(ctx, Query{Namespace: "web"})
		if err != nil || len(got) != 3000 {
			b.Fatalf("%d items, %v", len(got), err)
		}
	}
}
