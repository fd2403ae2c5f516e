package webhook

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	networkingv1 "k8s.io/api/networking/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	mcsv1alpha1 "github.com/karmada-go/karmada/api/multicluster/v1alpha1"
	networkingv1alpha1 "github.com/karmada-go/karmada/api/networking/v1alpha1"
)

func validServiceImport() *mcsv1alpha1.ServiceImport {
	return &mcsv1alpha1.ServiceImport{ObjectMeta: metav1.ObjectMeta{Namespace: "shop", Name: "serve"},
		Spec: mcsv1alpha1.ServiceImportSpec{Type: mcsv1alpha1.ClusterSetIP, Ports: []mcsv1alpha1.ServicePort{{Port: 80, Protocol: "TCP"}}}}
}

func validMCS() *networkingv1alpha1.MultiClusterService {
	return &networkingv1alpha1.MultiClusterService{ObjectMeta: metav1.ObjectMeta{Namespace: "shop", Name: "serve"},
		Spec: networkingv1alpha1.MultiClusterServiceSpec{Types: []networkingv1alpha1.ExposureType{networkingv1alpha1.ExposureTypeCrossCluster},
			ProviderClusters: []networkingv1alpha1.ClusterSelector{{Name: "member1"}}, ConsumerClusters: []networkingv1alpha1.ClusterSelector{{Name: "member2"}}}}
}

func validMCI() *networkingv1alpha1.MultiClusterIngress {
	return &networkingv1alpha1.MultiClusterIngress{ObjectMeta: metav1.ObjectMeta{Namespace: "shop", Name: "web"},
		Spec: networkingv1.IngressSpec{DefaultBackend: &networkingv1.IngressBackend{Service: &networkingv1.IngressServiceBackend{Name: "serve", Port: networkingv1.ServiceBackendPort{Number: 80}}}}}
}

// TestServiceRules: the rules of ServiceImport, MultiClusterService and
// MultiClusterIngress, with the exact causes.
func TestServiceRules(t *testing.T) {
	imp := func(mutate func(*mcsv1alpha1.ServiceImport)) *mcsv1alpha1.ServiceImport {
		i := validServiceImport()
		mutate(i)
		return i
	}
	mcs := func(mutate func(*networkingv1alpha1.MultiClusterService)) *networkingv1alpha1.MultiClusterService {
		m := validMCS()
		mutate(m)
		return m
	}
	const si, ms, mi = "/validate-serviceimport", "/validate-multiclusterservice", "/validate-multiclusteringress"
	for _, tc := range []ruleCase{
		{name: "a valid import", path: si, obj: validServiceImport()},
		{name: "a headless import without ports", path: si, obj: imp(func(i *mcsv1alpha1.ServiceImport) { i.Spec.Type, i.Spec.Ports = mcsv1alpha1.Headless, nil })},
		{name: "an unknown type", path: si, obj: imp(func(i *mcsv1alpha1.ServiceImport) { i.Spec.Type = "NodePort" }),
			want: []string{`spec.type: Unsupported value: "NodePort": supported values: "ClusterSetIP", "Headless"`}},
		{name: "no ports", path: si, obj: imp(func(i *mcsv1alpha1.ServiceImport) { i.Spec.Ports = nil }),
			want: []string{"spec.ports: Required value: a ClusterSetIP import needs at least one port"}},
		{name: "bad ports", path: si, obj: imp(func(i *mcsv1alpha1.ServiceImport) {
			i.Spec.Ports = []mcsv1alpha1.ServicePort{{Name: "http", Port: 0, Protocol: "HTTP"}, {Port: 443}, {Name: "http", Port: 8080}}
		}), want: []string{
			"spec.ports[0].port: Invalid value: 0: must be between 1 and 65535, inclusive",
			`spec.ports[0].protocol: Unsupported value: "HTTP": supported values: "TCP", "UDP", "SCTP"`,
			"spec.ports[1].name: Required value: every port of an import with several ports is named",
			`spec.ports[2].name: Duplicate value: "http"`,
		}},
		{name: "a bad IP", path: si, obj: imp(func(i *mcsv1alpha1.ServiceImport) { i.Spec.IPs = []string{"10.0.0.300"} }),
			want: []string{`spec.ips[0]: Invalid value: "10.0.0.300": must be an IPv4 or IPv6 address`}},
		{name: "a name too long for its derived Service", path: si, obj: imp(func(i *mcsv1alpha1.ServiceImport) { i.Name = strings.Repeat("a", 60) }),
			want: []string{`metadata.name: Invalid value: "` + strings.Repeat("a", 60) + `": the derived Service "derived-` + strings.Repeat("a", 60) +
				`" must be a DNS-1035 label (lower-case letters, digits and '-', at most 63 characters): the name may have at most 55 characters`}},
		{name: "a valid MultiClusterService", path: ms, obj: validMCS()},
		{name: "no types", path: ms, obj: mcs(func(m *networkingv1alpha1.MultiClusterService) { m.Spec.Types = nil }),
			want: []string{"spec.types: Required value: at least one of CrossCluster and LoadBalancer"}},
		{name: "an unknown and a repeated type", path: ms, obj: mcs(func(m *networkingv1alpha1.MultiClusterService) {
			m.Spec.Types = []networkingv1alpha1.ExposureType{"CrossCluster", "Mesh", "CrossCluster"}
		}), want: []string{
			`spec.types[1]: Unsupported value: "Mesh": supported values: "CrossCluster", "LoadBalancer"`,
			`spec.types[2]: Duplicate value: "CrossCluster"`,
		}},
		{name: "a bad cluster name", path: ms, obj: mcs(func(m *networkingv1alpha1.MultiClusterService) { m.Spec.ConsumerClusters[0].Name = "" }),
			want: []string{`spec.consumerClusters[0].name: Invalid value: "": must not be empty`}},
		{name: "a valid MultiClusterIngress", path: mi, obj: validMCI()},
		{name: "a backend of a bad Service name", path: mi, obj: func() *networkingv1alpha1.MultiClusterIngress {
			m := validMCI()
			m.Spec.DefaultBackend.Service.Name = "Serve"
			return m
		}(), want: []string{`spec.defaultBackend.service.name: Invalid value: "Serve": a DNS-1035 label must consist of lower case alphanumeric characters or '-', start with an alphabetic character, and end with an alphanumeric character (e.g. 'my-name',  or 'abc-123', regex used for validation is '[a-z]([-a-z0-9]*[a-z0-9])?')`}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if diff := cmp.Diff(tc.want, admit(t, tc.path, tc.obj, tc.old)); diff != "" {
				t.Errorf("causes (-want +got):\n%s", diff)
			}
		})
	}
}
