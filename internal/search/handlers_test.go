package search

import (
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/karmada-go/karmada/internal/search/cache"
)

// Kubernetes paths below the search and proxy prefixes.
func TestParseTarget(t *testing.T) {
	for p, want := range map[string]target{
		"/api/v1/pods":                                {gvr: schema.GroupVersionResource{Version: "v1", Resource: "pods"}},
		"/api/v1/namespaces/shop/pods":                {gvr: schema.GroupVersionResource{Version: "v1", Resource: "pods"}, namespace: "shop"},
		"/api/v1/namespaces/shop/pods/web-1":          {gvr: schema.GroupVersionResource{Version: "v1", Resource: "pods"}, namespace: "shop", name: "web-1"},
		"/apis/apps/v1/deployments":                   {gvr: schema.GroupVersionResource{Group: "apps", Version: "v1", Resource: "deployments"}},
		"/apis/apps/v1/namespaces/shop/deployments/w": {gvr: schema.GroupVersionResource{Group: "apps", Version: "v1", Resource: "deployments"}, namespace: "shop", name: "w"},
		"/api/v1/nodes/member1-node1":                 {gvr: schema.GroupVersionResource{Version: "v1", Resource: "nodes"}, name: "member1-node1"},
		"/api/v1/namespaces/shop":                     {gvr: schema.GroupVersionResource{Version: "v1", Resource: "namespaces"}, name: "shop"},
	} {
		got, ok := parseTarget(p)
		if !ok || got != want {
			t.Errorf("%s: %+v %t, want %+v", p, got, ok, want)
		}
	}
	for _, p := range []string{"/", "/api", "/api/v1", "/apis/apps", "/apis/apps/v1", "/api/v1/namespaces/shop/pods/web/log", "/other/v1/pods"} {
		if got, ok := parseTarget(p); ok {
			t.Errorf("%s: %+v, want refused", p, got)
		}
	}
	for p, want := range map[string]bool{"/api": true, "/apis": true, "/api/v1": true, "/apis/apps": true, "/apis/apps/v1": true, "/version": true,
		"/openapi/v3": true, "/openapi/v2": true, "/openapi/v3/apis/apps/v1": true, "/openapi/v3/api/v1": true,
		"/api/v1/pods": false, "/apis/apps/v1/deployments": false,
		// Answered as karmada-search: nothing but these exact paths.
		"/openapi/../api/v1/namespaces/karmada-cluster/secrets": false, "/openapi/v3/../../api/v1/secrets": false,
		"/openapi/v2/x": false, "/openapi/v4": false, "/openapi/v3/apis/apps/v1/x": false, "/apis/../api/v1": false,
		"/apis/Apps": false, "/api/v1%2fsecrets": false, "/openapi": false} {
		if isDiscovery(p) != want {
			t.Errorf("isDiscovery(%s) = %t", p, !want)
		}
	}
}

// The field selectors the cache answers, and a clear refusal of others.
func TestFieldQuery(t *testing.T) {
	pods := schema.GroupResource{Resource: "pods"}
	q := cache.Query{}
	if err := fieldQuery(&q, "spec.nodeName=n1,status.phase!=Running,metadata.name==p", pods); err != nil {
		t.Fatal(err)
	}
	if q.Fields["spec.nodeName"] != "n1" || q.Fields["metadata.name"] != "p" || q.NotFields["status.phase"] != "Running" {
		t.Errorf("query %+v", q)
	}
	err := fieldQuery(&cache.Query{}, "spec.replicas=2", schema.GroupResource{Group: "apps", Resource: "deployments"})
	if err == nil || !strings.Contains(err.Error(), "answers only metadata.name, metadata.namespace") {
		t.Errorf("an unsupported field: %v", err)
	}
}
