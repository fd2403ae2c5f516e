package mcs

import (
	"strings"
	"testing"

	discoveryv1 "k8s.io/api/discovery/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
)

func TestCollected(t *testing.T) {
	for _, tc := range []struct {
		labels map[string]string
		want   bool
	}{
		{map[string]string{"endpointslice.karmada.io/namespace": "shop", "endpointslice.karmada.io/name": "serve", "endpointslice.karmada.io/managed-by": "ServiceExport"}, true},
		// Karmada joins the collecting controllers with '.'.
		{map[string]string{"endpointslice.karmada.io/namespace": "shop", "endpointslice.karmada.io/name": "serve", "endpointslice.karmada.io/managed-by": "MultiClusterService.ServiceExport"}, true},
		{map[string]string{"endpointslice.karmada.io/namespace": "shop", "endpointslice.karmada.io/name": "serve", "endpointslice.karmada.io/managed-by": "ServiceImport"}, false},
		{map[string]string{"endpointslice.karmada.io/namespace": "shop", "endpointslice.karmada.io/name": "serve", "endpointslice.karmada.io/managed-by": "ServiceExporter"}, false},
		{map[string]string{"endpointslice.karmada.io/name": "serve", "endpointslice.karmada.io/managed-by": "ServiceExport"}, false},
		{nil, false},
	} {
		if got := Collected(tc.labels); got != tc.want {
			t.Errorf("Collected(%v) = %t, want %t", tc.labels, got, tc.want)
		}
	}
}

// The manifest keeps the endpoints, ports and labels, and leaves out what
// changes without the endpoints changing (resourceVersion, owners, the
// member's annotations), so that the Work is written only when they do.
func TestManifestKeepsOnlyWhatConsumersNeed(t *testing.T) {
	s := &discoveryv1.EndpointSlice{ObjectMeta: metav1.ObjectMeta{Namespace: "shop", Name: "serve-x", ResourceVersion: "42", UID: "u",
		Labels: map[string]string{discoveryv1.LabelServiceName: "serve"}, Annotations: map[string]string{"endpoints.kubernetes.io/last-change-trigger-time": "t"},
		OwnerReferences: []metav1.OwnerReference{{Kind: "Service", Name: "serve"}}},
		AddressType: discoveryv1.AddressTypeIPv4, Endpoints: []discoveryv1.Endpoint{{Addresses: []string{"10.0.0.1"}}}, Ports: []discoveryv1.EndpointPort{{Port: ptr.To[int32](80)}}}
	raw, err := Manifest(s)
	if err != nil {
		t.Fatal(err)
	}
	got := string(raw)
	for _, want := range []string{`"apiVersion":"discovery.k8s.io/v1"`, `"kind":"EndpointSlice"`, `"name":"serve-x"`, `"kubernetes.io/service-name":"serve"`, `"10.0.0.1"`, `"port":80`} {
		if !strings.Contains(got, want) {
			t.Errorf("manifest %s lacks %s", got, want)
		}
	}
	for _, not := range []string{"resourceVersion", "ownerReferences", "last-change-trigger-time", `"uid"`} {
		if strings.Contains(got, not) {
			t.Errorf("manifest %s carries %s", got, not)
		}
	}
	s.ResourceVersion = "43"
	again, _ := Manifest(s)
	if string(again) != got {
		t.Errorf("a new resourceVersion changed the manifest")
	}
}

// A manifest read back from the API server has its keys sorted: the same
// object, not a change.
func TestSameManifest(t *testing.T) {
	written := []byte(`{"apiVersion":"discovery.k8s.io/v1","kind":"EndpointSlice","metadata":{"name":"s"},"addressType":"IPv4","endpoints":[{"addresses":["10.0.0.1"]}]}`)
	stored := []byte(`{"addressType":"IPv4","apiVersion":"discovery.k8s.io/v1","endpoints":[{"addresses":["10.0.0.1"]}],"kind":"EndpointSlice","metadata":{"name":"s"}}`)
	if !SameManifest(stored, written) {
		t.Error("the stored form of the same manifest taken for a change")
	}
	changed := []byte(`{"addressType":"IPv4","apiVersion":"discovery.k8s.io/v1","endpoints":[{"addresses":["10.0.0.2"]}],"kind":"EndpointSlice","metadata":{"name":"s"}}`)
	if SameManifest(changed, written) {
		t.Error("another address taken for the same manifest")
	}
}
