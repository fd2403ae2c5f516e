package bench

import "testing"

const sampleMetrics = `# HELP apiserver_request_total [STABLE] Counter of apiserver requests
# TYPE apiserver_request_total counter
apiserver_request_total{code="200",component="apiserver",dry_run="",group="apps",resource="deployments",scope="resource",subresource="",verb="APPLY",version="v1"} 10
apiserver_request_total{code="201",component="apiserver",dry_run="",group="apps",resource="deployments",scope="resource",subresource="",verb="APPLY",version="v1"} 5
apiserver_request_total{code="200",component="apiserver",dry_run="",group="apps",resource="deployments",scope="resource",subresource="",verb="GET",version="v1"} 7
apiserver_request_total{code="409",component="apiserver",dry_run="",group="apps",resource="deployments",scope="resource",subresource="status",verb="PUT",version="v1"} 3
apiserver_request_total{code="200",component="apiserver",dry_run="",group="apps",resource="deployments",scope="namespace",subresource="",verb="WATCH",version="v1"} 100
apiserver_request_total{code="409",component="apiserver",dry_run="",group="",resource="namespaces",scope="resource",subresource="",verb="POST",version="v1"} 2
# HELP other_total x
# TYPE other_total counter
other_total 4
`

func TestParseRequestCounts(t *testing.T) {
	all, err := ParseRequestCounts([]byte(sampleMetrics), "")
	if err != nil {
		t.Fatal(err)
	}
	if all != (RequestCounts{Total: 27, Mutating: 20, Conflicts: 5}) {
		t.Errorf("all resources: %+v", all)
	}
	d, err := ParseRequestCounts([]byte(sampleMetrics), "deployments")
	if err != nil {
		t.Fatal(err)
	}
	// The status subresource and watches do not count.
	if d != (RequestCounts{Total: 22, Mutating: 15}) {
		t.Errorf("deployments: %+v", d)
	}
	if got := all.Sub(d); got != (RequestCounts{Total: 5, Mutating: 5, Conflicts: 5}) {
		t.Errorf("Sub = %+v", got)
	}
	if _, err := ParseRequestCounts([]byte("other_total 1\n"), ""); err == nil {
		t.Error("no error without apiserver_request_total")
	}
}
