package metricsadapter

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/kubernetes/scheme"
	"k8s.io/client-go/rest"
	metricsv1beta1 "k8s.io/metrics/pkg/apis/metrics/v1beta1"

	autoscalingv1alpha1 "github.com/karmada-go/karmada/api/autoscaling/v1alpha1"
)

// fakeMember serves a member's metrics.k8s.io from its pods' CPU (in
// millicores) by namespace/name, and records the queries it got.
type fakeMember struct {
	pods  map[string]int64
	nodes map[string]int64
	// slow holds every answer this long.
	slow time.Duration

	mu      sync.Mutex
	queries []string
}

func (m *fakeMember) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	m.mu.Lock()
	m.queries = append(m.queries, r.URL.RequestURI())
	m.mu.Unlock()
	if m.slow > 0 {
		select {
		case <-time.After(m.slow):
		case <-r.Context().Done():
			return
		}
	}
	path := strings.TrimPrefix(r.URL.Path, "/apis/metrics.k8s.io/v1beta1/")
	parts := strings.Split(path, "/")
	w.Header().Set("Content-Type", "application/json")
	notFound := func(res, name string) {
		w.WriteHeader(http.StatusNotFound)
		_ = json.NewEncoder(w).Encode(apierrors.NewNotFound(schema.GroupResource{Group: "metrics.k8s.io", Resource: res}, name).ErrStatus)
	}
	pod := func(key string, cpu int64) metricsv1beta1.PodMetrics {
		ns, name, _ := strings.Cut(key, "/")
		return metricsv1beta1.PodMetrics{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name, ResourceVersion: "77"}, Window: metav1.Duration{Duration: 15 * time.Second},
			Containers: []metricsv1beta1.ContainerMetrics{{Name: "c", Usage: map[corev1.ResourceName]resource.Quantity{"cpu": *resource.NewMilliQuantity(cpu, resource.DecimalSI)}}}}
	}
	switch {
	case len(parts) == 1 && parts[0] == "nodes":
		list := metricsv1beta1.NodeMetricsList{}
		for name, cpu := range m.nodes {
			list.Items = append(list.Items, metricsv1beta1.NodeMetrics{ObjectMeta: metav1.ObjectMeta{Name: name}, Usage: map[corev1.ResourceName]resource.Quantity{"cpu": *resource.NewMilliQuantity(cpu, resource.DecimalSI)}})
		}
		_ = json.NewEncoder(w).Encode(list)
	case len(parts) == 2 && parts[0] == "nodes":
		cpu, ok := m.nodes[parts[1]]
		if !ok {
			notFound("nodes", parts[1])
			return
		}
		_ = json.NewEncoder(w).Encode(metricsv1beta1.NodeMetrics{ObjectMeta: metav1.ObjectMeta{Name: parts[1]}, Usage: map[corev1.ResourceName]resource.Quantity{"cpu": *resource.NewMilliQuantity(cpu, resource.DecimalSI)}})
	case len(parts) == 3 && parts[0] == "namespaces" && parts[2] == "pods":
		list := metricsv1beta1.PodMetricsList{}
		for key, cpu := range m.pods {
			if strings.HasPrefix(key, parts[1]+"/") {
				list.Items = append(list.Items, pod(key, cpu))
			}
		}
		_ = json.NewEncoder(w).Encode(list)
	case len(parts) == 4 && parts[0] == "namespaces" && parts[2] == "pods":
		key := parts[1] + "/" + parts[3]
		cpu, ok := m.pods[key]
		if !ok {
			notFound("pods", parts[3])
			return
		}
		_ = json.NewEncoder(w).Encode(pod(key, cpu))
	default:
		http.Error(w, "unexpected path "+r.URL.Path, http.StatusBadRequest)
	}
}

// fakeMembers reach a fake member per cluster; down ones fail to connect.
type fakeMembers struct {
	servers map[string]*httptest.Server
	ready   []string
}

func (f *fakeMembers) Ready(context.Context) ([]string, error) { return f.ready, nil }

func (f *fakeMembers) Client(_ context.Context, cluster string) (rest.Interface, error) {
	s, ok := f.servers[cluster]
	if !ok {
		return nil, fmt.Errorf("cluster %s: no credentials", cluster)
	}
	cfg := &rest.Config{Host: s.URL}
	cfg.GroupVersion = &schema.GroupVersion{Version: "v1"}
	cfg.APIPath = "/api"
	cfg.NegotiatedSerializer = scheme.Codecs.WithoutConversion()
	return rest.RESTClientFor(cfg)
}

func newFleet(t testing.TB, members map[string]*fakeMember, ready ...string) *Provider {
	t.Helper()
	f := &fakeMembers{servers: map[string]*httptest.Server{}, ready: ready}
	for name, m := range members {
		s := httptest.NewServer(m)
		t.Cleanup(s.Close)
		f.servers[name] = s
	}
	return &Provider{Members: f, Timeout: 2 * time.Second}
}

func describe(ms []metricsv1beta1.PodMetrics) string {
	var out []string
	for _, m := range ms {
		cpu := m.Containers[0].Usage["cpu"]
		out = append(out, fmt.Sprintf("%s/%s@%s=%s", m.Namespace, m.Name, m.Annotations[autoscalingv1alpha1.QueryFromClusterAnnotation], cpu.String()))
	}
	return strings.Join(out, ",")
}

func TestPodMetricsMergeTheReadyMembers(t *testing.T) {
	m1 := &fakeMember{pods: map[string]int64{"web/b": 200, "web/a": 100, "other/x": 5}}
	m2 := &fakeMember{pods: map[string]int64{"web/c": 300, "web/a": 150}}
	m3 := &fakeMember{pods: map[string]int64{"web/z": 900}} // not Ready: never asked
	p := newFleet(t, map[string]*fakeMember{"member1": m1, "member2": m2, "member3": m3}, "member1", "member2")
	got, err := p.PodMetrics(context.Background(), Query{Namespace: "web", LabelSelector: "app=web"})
	if err != nil {
		t.Fatal(err)
	}
	// Namespace, name, then cluster order; the members' resourceVersions
	// dropped.
	if want := "web/a@member1=100m,web/a@member2=150m,web/b@member1=200m,web/c@member2=300m"; describe(got) != want {
		t.Errorf("got %s, want %s", describe(got), want)
	}
	for _, m := range got {
		if m.ResourceVersion != "" {
			t.Errorf("%s keeps the member's resourceVersion %q", m.Name, m.ResourceVersion)
		}
	}
	if len(m3.queries) != 0 {
		t.Errorf("a member that is not Ready was asked: %v", m3.queries)
	}
	if len(m1.queries) != 1 || m1.queries[0] != "/apis/metrics.k8s.io/v1beta1/namespaces/web/pods?labelSelector=app%3Dweb" {
		t.Errorf("member1 was asked %v", m1.queries)
	}
}

func TestAMemberThatDoesNotAnswerIsLeftOut(t *testing.T) {
	m1 := &fakeMember{pods: map[string]int64{"web/a": 100}}
	slow := &fakeMember{pods: map[string]int64{"web/s": 1}, slow: 10 * time.Second}
	p := newFleet(t, map[string]*fakeMember{"member1": m1, "slow": slow}, "member1", "no-credentials", "slow")
	p.Timeout = 300 * time.Millisecond
	start := time.Now()
	got, err := p.PodMetrics(context.Background(), Query{Namespace: "web"})
	if err != nil {
		t.Fatal(err)
	}
	if describe(got) != "web/a@member1=100m" {
		t.Errorf("got %s, want member1's pod alone", describe(got))
	}
	if d := time.Since(start); d > 5*time.Second {
		t.Errorf("the answer waited %s for the slow member (timeout 300ms)", d)
	}
}

func TestGetOfANameInTwoMembersIsAConflict(t *testing.T) {
	m1 := &fakeMember{pods: map[string]int64{"web/a": 100, "web/only1": 7}, nodes: map[string]int64{"node-1": 500}}
	m2 := &fakeMember{pods: map[string]int64{"web/a": 150}, nodes: map[string]int64{"node-1": 600, "node-2": 50}}
	p := newFleet(t, map[string]*fakeMember{"member1": m1, "member2": m2}, "member1", "member2")
	ctx := context.Background()
	if _, err := p.PodMetric(ctx, "web", "a"); !apierrors.IsConflict(err) || !strings.Contains(err.Error(), "found in more than one clusters") {
		t.Errorf("web/a in both members: %v, want a conflict", err)
	}
	m, err := p.PodMetric(ctx, "web", "only1")
	if err != nil || m.Annotations[autoscalingv1alpha1.QueryFromClusterAnnotation] != "member1" {
		t.Errorf("web/only1: %v %v, want member1's", m, err)
	}
	if _, err := p.PodMetric(ctx, "web", "missing"); !apierrors.IsNotFound(err) {
		t.Errorf("web/missing: %v, want not found", err)
	}
	if _, err := p.NodeMetric(ctx, "node-1"); !apierrors.IsConflict(err) {
		t.Errorf("node-1 in both members: %v, want a conflict", err)
	}
	n, err := p.NodeMetric(ctx, "node-2")
	if err != nil || n.Annotations[autoscalingv1alpha1.QueryFromClusterAnnotation] != "member2" {
		t.Errorf("node-2: %v %v, want member2's", n, err)
	}
	nodes, err := p.NodeMetrics(ctx, Query{})
	if err != nil || len(nodes) != 3 || nodes[0].Name != "node-1" || nodes[2].Name != "node-2" {
		t.Errorf("nodes %v %v, want node-1 twice then node-2", nodes, err)
	}
}

// A namespace or name that is not a DNS label or subdomain never becomes
// part of the path a member is asked.
func TestOnlyValidNamesReachTheMembers(t *testing.T) {
	m1 := &fakeMember{pods: map[string]int64{"web/a": 100}}
	p := newFleet(t, map[string]*fakeMember{"member1": m1}, "member1")
	for _, q := range []Query{{Namespace: ".."}, {Namespace: "web/../../api"}, {Namespace: "web", Name: "../../secrets"}, {Namespace: "WEB"}} {
		var err error
		if q.Name != "" {
			_, err = p.PodMetric(context.Background(), q.Namespace, q.Name)
		} else {
			_, err = p.PodMetrics(context.Background(), q)
		}
		if !apierrors.IsBadRequest(err) {
			t.Errorf("%+v: %v, want a bad request", q, err)
		}
	}
	if len(m1.queries) != 0 {
		t.Errorf("the member was asked %v", m1.queries)
	}
}
