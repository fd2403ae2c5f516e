package bench

import (
	"bytes"
	"context"
	"fmt"
	"reflect"

	"github.com/prometheus/common/expfmt"
	"k8s.io/client-go/kubernetes"
)

// RequestCounts are an API server's request counters (apiserver_request_total).
type RequestCounts struct {
	// Total counts every request but watches.
	Total float64 `json:"total"`
	// Mutating counts creates, updates, patches, applies and deletes.
	Mutating float64 `json:"mutating"`
	// Conflicts counts the answers 409 Conflict.
	Conflicts float64 `json:"conflicts"`
}

// Sub returns c minus before.
func (c RequestCounts) Sub(before RequestCounts) RequestCounts {
	return RequestCounts{Total: c.Total - before.Total, Mutating: c.Mutating - before.Mutating, Conflicts: c.Conflicts - before.Conflicts}
}

// Add returns c plus o.
func (c RequestCounts) Add(o RequestCounts) RequestCounts {
	return RequestCounts{Total: c.Total + o.Total, Mutating: c.Mutating + o.Mutating, Conflicts: c.Conflicts + o.Conflicts}
}

var mutatingVerbs = map[string]bool{"POST": true, "PUT": true, "PATCH": true, "APPLY": true, "DELETE": true, "DELETECOLLECTION": true}

// ParseRequestCounts sums apiserver_request_total from a /metrics text.
// With resource set, only requests to that resource itself (no subresource)
// count.
func ParseRequestCounts(text []byte, resource string) (RequestCounts, error) {
	var p expfmt.TextParser
	families, err := p.TextToMetricFamilies(bytes.NewReader(text))
	if err != nil {
		return RequestCounts{}, fmt.Errorf("parsing /metrics: %w", err)
	}
	var c RequestCounts
	fam, ok := families["apiserver_request_total"]
	if !ok {
		return c, fmt.Errorf("/metrics has no apiserver_request_total")
	}
	for _, m := range fam.GetMetric() {
		labels := map[string]string{}
		for _, l := range m.GetLabel() {
			labels[l.GetName()] = l.GetValue()
		}
		verb := labels["verb"]
		if verb == "WATCH" || verb == "WATCHLIST" {
			continue
		}
		if resource != "" && (labels["resource"] != resource || labels["subresource"] != "") {
			continue
		}
		v := m.GetCounter().GetValue()
		c.Total += v
		if mutatingVerbs[verb] {
			c.Mutating += v
		}
		if labels["code"] == "409" {
			c.Conflicts += v
		}
	}
	return c, nil
}

// ScrapeRequests reads an API server's request counters.
func ScrapeRequests(ctx context.Context, kc kubernetes.Interface, resource string) (RequestCounts, error) {
	rc := kc.Discovery().RESTClient()
	if rc == nil || reflect.ValueOf(rc).IsNil() {
		return RequestCounts{}, fmt.Errorf("the client cannot read /metrics")
	}
	data, err := rc.Get().AbsPath("/metrics").DoRaw(ctx)
	if err != nil {
		return RequestCounts{}, fmt.Errorf("reading /metrics: %w", err)
	}
	return ParseRequestCounts(data, resource)
}
