package intern

import (
	"fmt"
	"runtime"
	"strings"
	"sync/atomic"
	"testing"
	"time"
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

func sameBytes(a, b []byte) bool { return unsafe.SliceData(a) == unsafe.SliceData(b) }

// manifest is a slice of its own allocation, as a decoder makes it.
func manifest(i int) []byte {
	return fmt.Appendf(nil, `{"apiVersion":"apps/v1","kind":"Deployment","metadata":{"name":"web-%d","namespace":"shop"}}`, i)
}

// unseen is a number no earlier call of a test of this process used, so
// that a test run again (-count) does not find its own earlier bytes still
// in the table.
var unseen atomic.Int64

func TestBytesSharesEqualContent(t *testing.T) {
	n := int(unseen.Add(2))
	a, b, other := manifest(n), manifest(n), manifest(n+1)
	sa, sb, so := Bytes(a), Bytes(b), Bytes(other)
	if !sameBytes(sa, sb) || !sameBytes(sa, a) {
		t.Fatal("equal bytes not shared with the first slice")
	}
	if sameBytes(so, sa) || string(so) != string(manifest(n+1)) || string(sb) != string(manifest(n)) {
		t.Fatalf("content changed or different content shared: %q %q", sb, so)
	}
	if cap(sa) != len(sa) || cap(so) != len(so) {
		t.Fatalf("capacity %d/%d over length %d/%d: an append would write into shared bytes", cap(sa), cap(so), len(sa), len(so))
	}
	grown := append(sb, '!')
	if sameBytes(grown, sa) || string(sa) != string(manifest(n)) {
		t.Fatal("an append wrote into the shared bytes")
	}
	short := []byte("{}")
	if s := Bytes(short); !sameBytes(s, short) {
		t.Fatal("a short slice was replaced")
	}
	if Bytes(nil) != nil {
		t.Fatal("nil not kept")
	}
	runtime.KeepAlive(a)
}

// The table keeps nothing alive: once the slices are gone, the GC frees
// them and their entries go at a later sweep.
func TestBytesTableDropsFreedBytes(t *testing.T) {
	const n = 5000
	base := int(unseen.Add(n+1)) - n
	for i := range n {
		Bytes(manifest(base + i))
	}
	deadline := time.Now().Add(30 * time.Second)
	for {
		runtime.GC()
		bytesMu.Lock()
		sweepBytes()
		left := len(bytesTable)
		bytesMu.Unlock()
		if left < n/10 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("%d of %d entries left after their bytes became unreachable", left, n)
		}
	}
	// A content seen before, whose bytes were freed, is taken again.
	m := manifest(base + n - 1)
	if s := Bytes(m); !sameBytes(s, m) || !sameBytes(Bytes(manifest(base+n-1)), m) {
		t.Fatal("a content whose first bytes were freed is not shared again")
	}
	runtime.KeepAlive(m)
}

func TestBytesConcurrentCallersShare(t *testing.T) {
	n := int(unseen.Add(1))
	keep := manifest(n)
	first := Bytes(keep)
	out := make([][]byte, 8)
	done := make(chan int)
	for g := range out {
		go func() { out[g] = Bytes(manifest(n)); done <- g }()
	}
	for range out {
		<-done
	}
	for g, s := range out {
		if !sameBytes(s, first) {
			t.Fatalf("caller %d got its own bytes", g)
		}
	}
	runtime.KeepAlive(keep)
}
