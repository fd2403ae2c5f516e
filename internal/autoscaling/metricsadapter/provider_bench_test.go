package metricsadapter

import (
	"context"
	"fmt"
	"net/http/httptest"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/labels"
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

// BenchmarkCustomMetrics3000 lists one custom metric of 3,000 pods over
// three loopback members of 1,000 (100 names in two members, whose values
// are added up), as a FederatedHPA's Pods metric asks for it.
func BenchmarkCustomMetrics3000(b *testing.B) {
	members := map[string]*customMember{}
	var ready []string
	for m := range 3 {
		name := fmt.Sprintf("member%d", m+1)
		cm := &customMember{values: map[string]int64{}}
		for i := range 1000 {
			pod := fmt.Sprintf("web-%d-%d", m, i)
			if m > 0 && i < 100 {
				pod = fmt.Sprintf("web-shared-%d", i) // also in member2 or member3
			}
			cm.values["web/pods/"+pod+"/requests"] = int64(i % 500)
		}
		members[name] = cm
		ready = append(ready, name)
	}
	f := &fakeMembers{servers: map[string]*httptest.Server{}, ready: ready}
	for name, m := range members {
		s := httptest.NewServer(m)
		b.Cleanup(s.Close)
		f.servers[name] = s
	}
	p := CustomProvider{Provider: &Provider{Members: f, Timeout: 10 * time.Second}}
	ctx := context.Background()
	b.ReportAllocs()
	b.ResetTimer()
	for b.Loop() {
		got, err := p.GetMetricBySelector(ctx, "web", labels.Everything(), podRequests, labels.Everything())
		if err != nil || len(got.Items) != 2900 {
			b.Fatalf("%d items, %v", len(got.Items), err)
		}
	}
}
