package metricsadapter

import (
	"context"
	"encoding/json"
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
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	custommetricsv1beta2 "k8s.io/metrics/pkg/apis/custom_metrics/v1beta2"
	"sigs.k8s.io/custom-metrics-apiserver/pkg/provider"
)

// customMember serves a member's custom.metrics.k8s.io/v1beta2 from
// values by "namespace/resource/name/metric", and records the URIs asked.
type customMember struct {
	values map[string]int64
	mu     sync.Mutex
	asked  []string
}

func (m *customMember) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	m.mu.Lock()
	m.asked = append(m.asked, r.URL.RequestURI())
	m.mu.Unlock()
	w.Header().Set("Content-Type", "application/json")
	path := strings.TrimPrefix(r.URL.Path, customPrefix)
	if path == "" {
		_ = json.NewEncoder(w).Encode(metav1.APIResourceList{GroupVersion: "custom.metrics.k8s.io/v1beta2", APIResources: []metav1.APIResource{
			{Name: "pods/requests", Namespaced: true}, {Name: "services/hits", Namespaced: true}}})
		return
	}
	parts := strings.Split(strings.TrimPrefix(path, "/"), "/")
	if len(parts) != 5 || parts[0] != "namespaces" {
		http.Error(w, "unexpected path "+r.URL.Path, http.StatusBadRequest)
		return
	}
	ns, res, name, metric := parts[1], parts[2], parts[3], parts[4]
	list := custommetricsv1beta2.MetricValueList{}
	for key, v := range m.values {
		k := strings.Split(key, "/")
		if k[0] == ns && k[1] == res && k[3] == metric && (name == "*" || k[2] == name) {
			list.Items = append(list.Items, custommetricsv1beta2.MetricValue{
				DescribedObject: corev1.ObjectReference{Kind: "Pod", Namespace: ns, Name: k[2]},
				Metric:          custommetricsv1beta2.MetricIdentifier{Name: metric},
				Timestamp:       metav1.NewTime(time.Unix(1000, 0)),
				Value:           *resource.NewMilliQuantity(v, resource.DecimalSI),
			})
		}
	}
	if len(list.Items) == 0 {
		w.WriteHeader(http.StatusNotFound)
		_ = json.NewEncoder(w).Encode(apierrors.NewNotFound(schema.GroupResource{Resource: res}, name).ErrStatus)
		return
	}
	_ = json.NewEncoder(w).Encode(list)
}

func newCustomFleet(t *testing.T, members map[string]*customMember, ready ...string) CustomProvider {
	t.Helper()
	f := &fakeMembers{servers: map[string]*httptest.Server{}, ready: ready}
	for name, m := range members {
		s := httptest.NewServer(m)
		t.Cleanup(s.Close)
		f.servers[name] = s
	}
	return CustomProvider{Provider: &Provider{Members: f, Timeout: 2 * time.Second}}
}

var podRequests = provider.CustomMetricInfo{GroupResource: schema.GroupResource{Resource: "pods"}, Namespaced: true, Metric: "requests"}

func TestCustomMetricsAreAddedUpByObjectAcrossMembers(t *testing.T) {
	m1 := &customMember{values: map[string]int64{"web/pods/a/requests": 1000, "web/pods/b/requests": 2000, "other/pods/x/requests": 7000}}
	m2 := &customMember{values: map[string]int64{"web/pods/a/requests": 500, "web/pods/c/requests": 300}}
	m3 := &customMember{values: map[string]int64{"web/pods/z/requests": 9000}} // not Ready: never asked
	p := newCustomFleet(t, map[string]*customMember{"member1": m1, "member2": m2, "member3": m3}, "member1", "member2")
	list, err := p.GetMetricBySelector(context.Background(), "web", labels.SelectorFromSet(labels.Set{"app": "web"}), podRequests, labels.Everything())
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, v := range list.Items {
		got = append(got, v.DescribedObject.Name+"="+v.Value.String())
	}
	// a is in both members: one item, 1 + 0.5; items in name order.
	if want := "a=1500m,b=2,c=300m"; strings.Join(got, ",") != want {
		t.Errorf("items %v, want %s", got, want)
	}
	if len(m3.asked) != 0 {
		t.Errorf("a member that is not Ready was asked: %v", m3.asked)
	}
	for _, uri := range m1.asked {
		if !strings.Contains(uri, "labelSelector=app%3Dweb") {
			t.Errorf("member1 was asked %s, without the label selector", uri)
		}
	}

	one, err := p.GetMetricByName(context.Background(), types.NamespacedName{Namespace: "web", Name: "a"}, podRequests, labels.Everything())
	if err != nil {
		t.Fatal(err)
	}
	if one.Value.MilliValue() != 1500 || one.DescribedObject.Name != "a" {
		t.Errorf("pod a: %s=%s, want a=1500m (the members' values added up)", one.DescribedObject.Name, one.Value.String())
	}

	_, err = p.GetMetricByName(context.Background(), types.NamespacedName{Namespace: "web", Name: "nope"}, podRequests, labels.Everything())
	if !apierrors.IsNotFound(err) || !strings.Contains(err.Error(), "the server could not find the metric requests for pods") {
		t.Errorf("a pod no member has: %v, want Karmada's not found", err)
	}
}

func TestCustomMetricsRefuseAPathThatLeavesTheirPlace(t *testing.T) {
	m1 := &customMember{values: map[string]int64{"web/pods/a/requests": 1000}}
	p := newCustomFleet(t, map[string]*customMember{"member1": m1}, "member1")
	bad := []struct {
		name types.NamespacedName
		info provider.CustomMetricInfo
	}{
		{types.NamespacedName{Namespace: "web", Name: "a"}, provider.CustomMetricInfo{GroupResource: schema.GroupResource{Resource: "pods"}, Namespaced: true, Metric: ".."}},
		{types.NamespacedName{Namespace: "web", Name: ".."}, podRequests},
		{types.NamespacedName{Namespace: "..", Name: "a"}, podRequests},
		{types.NamespacedName{Namespace: "web", Name: "a"}, provider.CustomMetricInfo{GroupResource: schema.GroupResource{Resource: "../secrets"}, Namespaced: true, Metric: "x"}},
		{types.NamespacedName{Namespace: "web", Name: "a"}, provider.CustomMetricInfo{GroupResource: schema.GroupResource{Resource: "pods"}, Namespaced: true, Metric: "a/../../b"}},
	}
	for _, b := range bad {
		_, err := p.GetMetricByName(context.Background(), b.name, b.info, labels.Everything())
		if !apierrors.IsBadRequest(err) {
			t.Errorf("%v %v: %v, want a bad request", b.name, b.info, err)
		}
	}
	if len(m1.asked) != 0 {
		t.Errorf("the member was asked %v", m1.asked)
	}
}

func TestCustomMetricsDiscoveryIsTheMembersUnion(t *testing.T) {
	m1 := &customMember{}
	m2 := &customMember{}
	p := newCustomFleet(t, map[string]*customMember{"member1": m1, "member2": m2}, "member1", "member2", "member9")
	var got []string
	for _, i := range p.ListAllMetrics() {
		got = append(got, i.String())
	}
	if want := "pods/requests(namespaced),services/hits(namespaced)"; strings.Join(got, ",") != want {
		t.Errorf("metrics %v, want %s (each once, member9 without credentials left out)", got, want)
	}
}
