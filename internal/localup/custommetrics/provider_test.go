package custommetrics

import (
	"context"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	apimeta "k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	dynamicfake "k8s.io/client-go/dynamic/fake"
	corelisters "k8s.io/client-go/listers/core/v1"
	"k8s.io/client-go/tools/cache"
	"sigs.k8s.io/custom-metrics-apiserver/pkg/provider"

	autoscalingv1alpha1 "github.com/karmada-go/karmada/api/autoscaling/v1alpha1"
)

func pod(name string, lbls map[string]string, metrics map[string]string) *corev1.Pod {
	a := map[string]string{}
	for k, v := range metrics {
		a[autoscalingv1alpha1.LocalCustomMetricAnnotationPrefix+k] = v
	}
	return &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: "web", Name: name, Labels: lbls, Annotations: a}}
}

func newProvider(t *testing.T, objects ...runtime.Object) *Provider {
	t.Helper()
	idx := cache.NewIndexer(cache.MetaNamespaceKeyFunc, cache.Indexers{cache.NamespaceIndex: cache.MetaNamespaceIndexFunc})
	for _, p := range []*corev1.Pod{
		pod("b", map[string]string{"app": "web"}, map[string]string{"rps": "20"}),
		pod("a", map[string]string{"app": "web"}, map[string]string{"rps": "1500m", "queue": "3"}),
		pod("c", map[string]string{"app": "web"}, nil),
		pod("d", map[string]string{"app": "db"}, map[string]string{"rps": "7"}),
		pod("bad", map[string]string{"app": "bad"}, map[string]string{"rps": "lots"}),
	} {
		if err := idx.Add(p); err != nil {
			t.Fatal(err)
		}
	}
	mapper := apimeta.NewDefaultRESTMapper(nil)
	mapper.Add(corev1.SchemeGroupVersion.WithKind("Service"), apimeta.RESTScopeNamespace)
	scheme := runtime.NewScheme()
	_ = corev1.AddToScheme(scheme)
	return &Provider{Pods: corelisters.NewPodLister(idx), Dynamic: dynamicfake.NewSimpleDynamicClient(scheme, objects...), Mapper: mapper,
		Now: func() time.Time { return time.Unix(1000, 0) }}
}

var rps = provider.CustomMetricInfo{GroupResource: schema.GroupResource{Resource: "pods"}, Namespaced: true, Metric: "rps"}

func TestPodsServeTheirAnnotatedValues(t *testing.T) {
	p := newProvider(t)
	list, err := p.GetMetricBySelector(context.Background(), "web", labels.SelectorFromSet(labels.Set{"app": "web"}), rps, labels.Everything())
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, v := range list.Items {
		got = append(got, v.DescribedObject.Kind+"/"+v.DescribedObject.Name+"="+v.Value.String())
	}
	// c carries no value, d is not selected; name order.
	if want := "Pod/a=1500m,Pod/b=20"; strings.Join(got, ",") != want {
		t.Errorf("items %v, want %s", got, want)
	}
	one, err := p.GetMetricByName(context.Background(), types.NamespacedName{Namespace: "web", Name: "b"}, rps, labels.Everything())
	if err != nil || one.Value.String() != "20" || !one.Timestamp.Time.Equal(time.Unix(1000, 0)) {
		t.Errorf("pod b: %+v, %v", one, err)
	}
	for _, name := range []string{"c", "nope"} {
		if _, err := p.GetMetricByName(context.Background(), types.NamespacedName{Namespace: "web", Name: name}, rps, labels.Everything()); !apierrors.IsNotFound(err) {
			t.Errorf("pod %s: %v, want not found", name, err)
		}
	}
	if _, err := p.GetMetricByName(context.Background(), types.NamespacedName{Namespace: "web", Name: "bad"}, rps, labels.Everything()); err == nil || !strings.Contains(err.Error(), `"lots"`) {
		t.Errorf("a value that is no quantity: %v, want an error naming it", err)
	}
	// Emulated metrics have no labels: a metric selector needing one selects nothing.
	sel := labels.SelectorFromSet(labels.Set{"verb": "GET"})
	if list, err := p.GetMetricBySelector(context.Background(), "web", labels.Everything(), rps, sel); err != nil || len(list.Items) != 0 {
		t.Errorf("with a metric selector: %+v, %v", list, err)
	}
	var names []string
	for _, i := range p.ListAllMetrics() {
		names = append(names, i.String())
	}
	if want := "pods/queue(namespaced),pods/rps(namespaced)"; strings.Join(names, ",") != want {
		t.Errorf("metrics %v, want %s", names, want)
	}
}

func TestOtherObjectsServeTheirAnnotatedValues(t *testing.T) {
	svc := &corev1.Service{ObjectMeta: metav1.ObjectMeta{Namespace: "web", Name: "front",
		Annotations: map[string]string{autoscalingv1alpha1.LocalCustomMetricAnnotationPrefix + "hits": "250"}}}
	p := newProvider(t, svc)
	hits := provider.CustomMetricInfo{GroupResource: schema.GroupResource{Resource: "services"}, Namespaced: true, Metric: "hits"}
	v, err := p.GetMetricByName(context.Background(), types.NamespacedName{Namespace: "web", Name: "front"}, hits, labels.Everything())
	if err != nil || v.Value.String() != "250" || v.DescribedObject.Kind != "Service" || v.DescribedObject.APIVersion != "v1" {
		t.Fatalf("service front: %+v, %v", v, err)
	}
	if _, err := p.GetMetricByName(context.Background(), types.NamespacedName{Namespace: "web", Name: "back"}, hits, labels.Everything()); !apierrors.IsNotFound(err) {
		t.Errorf("a service that does not exist: %v, want not found", err)
	}
	unknown := provider.CustomMetricInfo{GroupResource: schema.GroupResource{Resource: "widgets", Group: "example.com"}, Namespaced: true, Metric: "hits"}
	if _, err := p.GetMetricByName(context.Background(), types.NamespacedName{Namespace: "web", Name: "front"}, unknown, labels.Everything()); !apierrors.IsBadRequest(err) {
		t.Errorf("an unknown resource: %v, want a bad request", err)
	}
}
