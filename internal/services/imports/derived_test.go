package imports

import (
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	mcsv1alpha1 "github.com/karmada-go/karmada/api/multicluster/v1alpha1"
)

func TestDerived(t *testing.T) {
	imp := &mcsv1alpha1.ServiceImport{ObjectMeta: metav1.ObjectMeta{Namespace: "shop", Name: "serve"},
		Spec: mcsv1alpha1.ServiceImportSpec{Type: mcsv1alpha1.ClusterSetIP, SessionAffinity: corev1.ServiceAffinityClientIP,
			Ports: []mcsv1alpha1.ServicePort{{Name: "http", Port: 80}, {Name: "dns", Port: 53, Protocol: corev1.ProtocolUDP}}}}
	svc := Derived(imp)
	if svc.Name != "derived-serve" || svc.Namespace != "shop" || svc.Spec.Type != corev1.ServiceTypeClusterIP || svc.Spec.ClusterIP != "" ||
		svc.Spec.SessionAffinity != corev1.ServiceAffinityClientIP {
		t.Errorf("derived %+v", svc)
	}
	if len(svc.Spec.Ports) != 2 || svc.Spec.Ports[0].Protocol != corev1.ProtocolTCP || svc.Spec.Ports[1].Protocol != corev1.ProtocolUDP || svc.Spec.Ports[1].Port != 53 {
		t.Errorf("ports %+v: want http 80/TCP (the default protocol) and dns 53/UDP", svc.Spec.Ports)
	}
	imp.Spec.Type = mcsv1alpha1.Headless
	if got := Derived(imp).Spec.ClusterIP; got != corev1.ClusterIPNone {
		t.Errorf("a headless import's derived clusterIP %q, want None", got)
	}
	// What a consumer gets: without the claim label (a policy-free
	// template in the control plane, an ordinary Service in the member).
	kind, raw, err := manifest(svc)
	if err != nil || kind != "Service" {
		t.Fatalf("manifest: %s, %v", kind, err)
	}
	if string(raw) == "" || strings.Contains(string(raw), "claimed-by") || !strings.Contains(string(raw), `"name":"derived-serve"`) {
		t.Errorf("manifest %s", raw)
	}
}
