// Package intern shares the memory of strings that informer caches hold
// thousands of copies of: label and annotation keys, namespaces,
// finalizers, owner kinds. Every object decoded from a watch brings its own
// copy of each; a controller manager caching tens of thousands of objects
// holds megabytes of the same few hundred strings.
//
// The table is bounded: once it holds MaxEntries strings, new strings are
// returned as they are (so a user making up label keys without end costs
// nothing more than before).
package intern

import (
	"sync"

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
