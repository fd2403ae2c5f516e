// Package intern shares the memory of strings that informer caches hold
// thousands of copies of: label and annotation keys, namespaces,
// finalizers, owner kinds. Every object decoded from a watch brings its own
// copy of each; a controller manager caching tens of thousands of objects
// holds megabytes of the same few hundred strings. Bytes does the same for
// larger byte slices, such as the equal manifests of a binding's Works.
//
// The strings' table is bounded: once it holds MaxEntries strings, new
// strings are returned as they are (so a user making up label keys without
// end costs nothing more than before). The table of Bytes holds only weak
// pointers, and drops them once the GC has freed their bytes.
package intern

import (
	"bytes"
	"hash/maphash"
	"sync"
	"unsafe"
	"weak"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// MaxEntries bounds the table.
const MaxEntries = 8192

var (
	mu    sync.RWMutex
	table = map[string]string{}
)

// String returns the table's copy of s, adding s when there is room.
func String(s string) string {
	if s == "" {
		return s
	}
	mu.RLock()
	c, ok := table[s]
	mu.RUnlock()
	if ok {
		return c
	}
	mu.Lock()
	defer mu.Unlock()
	if c, ok := table[s]; ok {
		return c
	}
	if len(table) >= MaxEntries {
		return s
	}
	table[s] = s
	return s
}

// Keys returns m with its keys interned (values kept), in place when
// possible; nil for nil.
func Keys(m map[string]string) map[string]string {
	if m == nil {
		return nil
	}
	out := make(map[string]string, len(m))
	for k, v := range m {
		out[String(k)] = v
	}
	return out
}

// Meta interns, in place, the strings of a typed object's metadata that repeat
// across objects: namespace, label and annotation keys, finalizers and the
// owners' API versions and kinds. Names, UIDs and values are left alone:
// they are mostly distinct.
func Meta(m metav1.Object) {
	m.SetNamespace(String(m.GetNamespace()))
	if l := m.GetLabels(); l != nil {
		m.SetLabels(Keys(l))
	}
	if a := m.GetAnnotations(); a != nil {
		m.SetAnnotations(Keys(a))
	}
	if f := m.GetFinalizers(); len(f) > 0 {
		for i := range f {
			f[i] = String(f[i])
		}
	}
	if refs := m.GetOwnerReferences(); len(refs) > 0 {
		for i := range refs {
			refs[i].APIVersion, refs[i].Kind = String(refs[i].APIVersion), String(refs[i].Kind)
		}
	}
}

// MinSharedBytes is the length under which Bytes returns a slice as it is:
// sharing a short slice saves less than its table entry costs.
const MinSharedBytes = 64

// The table of Bytes: the hash of a slice's content to a weak pointer to the
// first byte of the slice first seen with that content. Weak, so that the
// table never keeps bytes alive: once no cached object holds them, the GC
// frees them and the entry goes at the next sweep.
type bytesEntry struct {
	first weak.Pointer[byte]
	n     int
}

var (
	bytesMu        sync.Mutex
	bytesSeed      = maphash.MakeSeed()
	bytesTable     = map[uint64]bytesEntry{}
	bytesNextSweep = minBytesSweep
)

// minBytesSweep is the table size under which dead entries are left alone.
const minBytesSweep = 1024

// Bytes returns a slice with b's content that shares its memory with the
// other slices of that content passed to Bytes and still alive: b itself the
// first time. Equal manifests that an informer decodes separately (the
// Works of one binding for each of its clusters) are then held once.
//
// The returned bytes are shared and must never be written to; the slice's
// capacity is its length, so an append copies them.
func Bytes(b []byte) []byte {
	if len(b) < MinSharedBytes {
		return b
	}
	h := maphash.Bytes(bytesSeed, b)
	bytesMu.Lock()
	defer bytesMu.Unlock()
	if e, ok := bytesTable[h]; ok {
		if p := e.first.Value(); p != nil {
			if c := unsafe.Slice(p, e.n); bytes.Equal(c, b) {
				return c
			}
			// Another content with the same hash: b stays as it is.
			return b[:len(b):len(b)]
		}
	}
	if len(bytesTable) >= bytesNextSweep {
		sweepBytes()
	}
	b = b[:len(b):len(b)]
	bytesTable[h] = bytesEntry{first: weak.Make(&b[0]), n: len(b)}
	return b
}

// sweepBytes drops the entries whose bytes the GC has freed and sets the
// size of the next sweep to twice what is left, so that sweeping costs a
// constant time per call of Bytes. bytesMu is held.
func sweepBytes() {
	for h, e := range bytesTable {
		if e.first.Value() == nil {
			delete(bytesTable, h)
		}
	}
	bytesNextSweep = max(minBytesSweep, 2*len(bytesTable))
}
