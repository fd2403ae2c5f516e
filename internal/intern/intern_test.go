package intern

import (
	"fmt"
	"strings"
	"testing"
	"unsafe"

	appsv1 "k8s.io/api/apps/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// same tells whether two strings share their bytes.
func same(a, b string) bool { return unsafe.StringData(a) == unsafe.StringData(b) }

func TestStringShares(t *testing.T) {
	a := String(strings.Clone("karmada.io/test-key"))
	b := String(strings.Clone("karmada.io/test-key"))
	if a != b || !same(a, b) {
		t.Fatalf("equal strings not shared: %q %q", a, b)
	}
	if String("") != "" {
		t.Fatal("empty string changed")
	}
}

func TestMetaInternsRepeatedStringsOnly(t *testing.T) {
	mk := func() *appsv1.Deployment {
		return &appsv1.Deployment{ObjectMeta: metav1.ObjectMeta{
			Name: strings.Clone("web"), Namespace: strings.Clone("shop"),
			Labels:          map[string]string{strings.Clone("app.kubernetes.io/name"): strings.Clone("web")},
			Annotations:     map[string]string{strings.Clone("karmada.io/note"): strings.Clone("x")},
			Finalizers:      []string{strings.Clone("karmada.io/binding-controller")},
			OwnerReferences: []metav1.OwnerReference{{APIVersion: strings.Clone("apps/v1"), Kind: strings.Clone("Deployment"), Name: "o", UID: "u"}},
		}}
	}
	a, b := mk(), mk()
	Meta(a)
	Meta(b)
	if !same(a.Namespace, b.Namespace) || !same(a.Finalizers[0], b.Finalizers[0]) ||
		!same(a.OwnerReferences[0].Kind, b.OwnerReferences[0].Kind) || !same(a.OwnerReferences[0].APIVersion, b.OwnerReferences[0].APIVersion) {
		t.Fatal("namespace, finalizer or owner strings not shared")
	}
	for k := range a.Labels {
		for k2 := range b.Labels {
			if !same(k, k2) {
				t.Fatal("label keys not shared")
			}
		}
	}
	for k := range a.Annotations {
		for k2 := range b.Annotations {
			if !same(k, k2) {
				t.Fatal("annotation keys not shared")
			}
		}
	}
	if same(a.Name, b.Name) || same(a.Labels["app.kubernetes.io/name"], b.Labels["app.kubernetes.io/name"]) {
		t.Fatal("names or values interned: they are mostly distinct")
	}
	if a.Labels["app.kubernetes.io/name"] != "web" || a.Annotations["karmada.io/note"] != "x" || a.Namespace != "shop" {
		t.Fatalf("metadata changed: %+v", a.ObjectMeta)
	}
}

// The table stops growing at MaxEntries: later strings come back as they
// are, and those already in it are still shared.
func TestTableIsBounded(t *testing.T) {
	kept := String(strings.Clone("bounded/kept"))
	for i := range MaxEntries + 10 {
		String(fmt.Sprintf("bounded/%d", i))
	}
	mu.RLock()
	n := len(table)
	mu.RUnlock()
	if n > MaxEntries {
		t.Fatalf("table holds %d strings, bound %d", n, MaxEntries)
	}
	fresh := strings.Clone("bounded/never-seen")
	if got := String(fresh); !same(got, fresh) {
		t.Fatal("a string past the bound was replaced")
	}
	if got := String(strings.Clone("bounded/kept")); !same(got, kept) {
		t.Fatal("a string in the table is no longer shared")
	}
}
