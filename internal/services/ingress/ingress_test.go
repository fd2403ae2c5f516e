package ingress

import (
	"slices"
	"testing"

	networkingv1 "k8s.io/api/networking/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	clusterv1alpha1 "github.com/karmada-go/karmada/api/cluster/v1alpha1"
	networkingv1alpha1 "github.com/karmada-go/karmada/api/networking/v1alpha1"
)

func TestBackends(t *testing.T) {
	svc := func(name string) networkingv1.IngressBackend {
		return networkingv1.IngressBackend{Service: &networkingv1.IngressServiceBackend{Name: name}}
	}
	def := svc("default")
	spec := &networkingv1.IngressSpec{DefaultBackend: &def, Rules: []networkingv1.IngressRule{
		{IngressRuleValue: networkingv1.IngressRuleValue{HTTP: &networkingv1.HTTPIngressRuleValue{Paths: []networkingv1.HTTPIngressPath{{Backend: svc("web")}, {Backend: svc("cart")}, {Backend: svc("web")}}}}},
		{}, // no HTTP
		{IngressRuleValue: networkingv1.IngressRuleValue{HTTP: &networkingv1.HTTPIngressRuleValue{Paths: []networkingv1.HTTPIngressPath{{Backend: networkingv1.IngressBackend{Resource: nil}}}}}},
	}}
	if got, want := Backends(spec), []string{"cart", "default", "web"}; !slices.Equal(got, want) {
		t.Errorf("backends %q, want %q", got, want)
	}
}

func TestBlocked(t *testing.T) {
	cluster := func(name string, actions ...string) clusterv1alpha1.Cluster {
		return clusterv1alpha1.Cluster{ObjectMeta: metav1.ObjectMeta{Name: name}, Status: clusterv1alpha1.ClusterStatus{RemedyActions: actions}}
	}
	locations := []networkingv1alpha1.ServiceLocation{{Name: "web", Clusters: []string{"m1", "m3"}}, {Name: "cart", Clusters: []string{"m3", "m2"}}}
	clusters := []clusterv1alpha1.Cluster{cluster("m3", "TrafficControl"), cluster("m1", "TrafficControl"), cluster("m2"), cluster("m4", "TrafficControl")}
	if got, want := Blocked(locations, clusters), []string{"m1", "m3"}; !slices.Equal(got, want) {
		t.Errorf("blocked %q, want %q (m4 runs no backend, m2 is not controlled)", got, want)
	}
}
