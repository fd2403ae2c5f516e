// Package cache is karmada-search's cache: for each member cluster and
// resource a ResourceRegistry selects, the member's objects, kept compactly
// — each object as its JSON (managedFields dropped, the
// resource.karmada.io/cached-from-cluster annotation added) beside the few
// fields selectors need, with repeated strings (namespaces, label keys and
// values) shared — so that what is cached costs little more than its
// serialized size, and a list is written by copying bytes.
package cache

import (
	"encoding/json"
	"fmt"
	"sort"
	"strings"
	"sync"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/tools/cache"

	searchv1alpha1 "github.com/karmada-go/karmada/api/search/v1alpha1"
	"github.com/karmada-go/karmada/internal/cache/intern"
)

// Entry is one cached object.
type Entry struct {
	Cluster, Namespace, Name string
	Labels                   labels.Set
	// Fields are the field selector values beside metadata.name and
	// metadata.namespace (FieldPaths of the resource).
	Fields map[string]string
	// Raw is the object's JSON as served.
	Raw []byte
}

// GetObjectKind: an Entry travels as a runtime.Object through the paged
// list (pagedlist) to the store.
func (e *Entry) GetObjectKind() schema.ObjectKind { return schema.EmptyObjectKind }

// DeepCopyObject copies the entry; its JSON and maps are never modified.
func (e *Entry) DeepCopyObject() runtime.Object { c := *e; return &c }

// FieldPaths are the field selectors the cache answers for a resource
// beside metadata.name and metadata.namespace: those kubectl users reach
// for.
var FieldPaths = map[schema.GroupResource][]string{
	{Resource: "pods"}:   {"spec.nodeName", "status.phase"},
	{Resource: "events"}: {"involvedObject.name", "involvedObject.kind", "reason", "type"},
}

// Store holds one cluster's objects of one resource. It is a client-go
// cache.Store, so a Reflector keeps it in sync with the member.
type Store struct {
	Cluster  string
	Resource schema.GroupVersionResource
	// Kind is the resource's kind (lists are <Kind>List).
	Kind   string
	fields []string

	mu     sync.RWMutex
	items  map[string]*Entry
	synced bool
}

var _ cache.Store = &Store{}

// NewStore returns an empty store.
func NewStore(cluster string, gvr schema.GroupVersionResource) *Store {
	return &Store{Cluster: cluster, Resource: gvr, fields: FieldPaths[gvr.GroupResource()], items: map[string]*Entry{}}
}

// Transform makes the compact form of an object: the list's transform
// (pagedlist), so that a page is made compact before the next is read.
func (s *Store) Transform(obj any) (any, error) { return s.entry(obj) }

// entry makes the compact form of an object (an Entry stays as it is).
func (s *Store) entry(obj any) (*Entry, error) {
	if e, ok := obj.(*Entry); ok {
		return e, nil
	}
	u, ok := obj.(*unstructured.Unstructured)
	if !ok {
		return nil, fmt.Errorf("cache: %T is not an object", obj)
	}
	u = u.DeepCopy()
	unstructured.RemoveNestedField(u.Object, "metadata", "managedFields")
	a := u.GetAnnotations()
	if a == nil {
		a = map[string]string{}
	}
	a[searchv1alpha1.CachedFromClusterAnnotation] = s.Cluster
	u.SetAnnotations(a)
	raw, err := json.Marshal(u.Object)
	if err != nil {
		return nil, err
	}
	e := &Entry{Cluster: s.Cluster, Namespace: intern.String(u.GetNamespace()), Name: u.GetName(), Raw: raw}
	if l := u.GetLabels(); len(l) > 0 {
		e.Labels = make(labels.Set, len(l))
		for k, v := range l {
			e.Labels[intern.String(k)] = intern.String(v)
		}
	}
	for _, f := range s.fields {
		v, _, _ := unstructured.NestedString(u.Object, strings.Split(f, ".")...)
		if v != "" {
			if e.Fields == nil {
				e.Fields = map[string]string{}
			}
			e.Fields[f] = intern.String(v)
		}
	}
	return e, nil
}

func key(namespace, name string) string {
	if namespace == "" {
		return name
	}
	return namespace + "/" + name
}

// Add and Update put an object in the store.
func (s *Store) Add(obj any) error {
	e, err := s.entry(obj)
	if err != nil {
		return err
	}
	s.mu.Lock()
	s.items[key(e.Namespace, e.Name)] = e
	s.mu.Unlock()
	return nil
}

// Update is Add.
func (s *Store) Update(obj any) error { return s.Add(obj) }

// Delete removes an object.
func (s *Store) Delete(obj any) error {
	if t, ok := obj.(cache.DeletedFinalStateUnknown); ok {
		obj = t.Obj
	}
	var k string
	if e, ok := obj.(*Entry); ok {
		k = key(e.Namespace, e.Name)
	} else {
		var err error
		if k, err = cache.MetaNamespaceKeyFunc(obj); err != nil {
			return err
		}
	}
	s.mu.Lock()
	delete(s.items, k)
	s.mu.Unlock()
	return nil
}

// Replace sets the store to a full list (the reflector's list).
func (s *Store) Replace(list []any, _ string) error {
	items := make(map[string]*Entry, len(list))
	for _, obj := range list {
		e, err := s.entry(obj)
		if err != nil {
			return err
		}
		items[key(e.Namespace, e.Name)] = e
	}
	s.mu.Lock()
	s.items, s.synced = items, true
	s.mu.Unlock()
	return nil
}

// Resync does nothing: the store has no handlers.
func (s *Store) Resync() error { return nil }

// List returns the entries (the cache.Store interface).
func (s *Store) List() []any {
	s.mu.RLock()
	defer s.mu.RUnlock()
	out := make([]any, 0, len(s.items))
	for _, e := range s.items {
		out = append(out, e)
	}
	return out
}

// ListKeys returns the keys.
func (s *Store) ListKeys() []string {
	s.mu.RLock()
	defer s.mu.RUnlock()
	out := make([]string, 0, len(s.items))
	for k := range s.items {
		out = append(out, k)
	}
	return out
}

// Get returns the entry of an object's key.
func (s *Store) Get(obj any) (any, bool, error) {
	k, err := cache.DeletionHandlingMetaNamespaceKeyFunc(obj)
	if err != nil {
		return nil, false, err
	}
	return s.GetByKey(k)
}

// GetByKey returns the entry of a key.
func (s *Store) GetByKey(k string) (any, bool, error) {
	s.mu.RLock()
	defer s.mu.RUnlock()
	e, ok := s.items[k]
	return e, ok, nil
}

// Synced reports whether the first list arrived.
func (s *Store) Synced() bool {
	s.mu.RLock()
	defer s.mu.RUnlock()
	return s.synced
}

// Len is the number of objects.
func (s *Store) Len() int {
	s.mu.RLock()
	defer s.mu.RUnlock()
	return len(s.items)
}

// Size is the bytes of the objects' JSON.
func (s *Store) Size() int {
	s.mu.RLock()
	defer s.mu.RUnlock()
	n := 0
	for _, e := range s.items {
		n += len(e.Raw)
	}
	return n
}

// Query says what to select.
type Query struct {
	// Namespace, "" : every namespace.
	Namespace string
	// Name, "" : every name.
	Name   string
	Labels labels.Selector
	// Fields are required field values (metadata.name, metadata.namespace
	// or FieldPaths), and Not those that must differ.
	Fields, NotFields map[string]string
}

// Select returns the entries q selects, ordered by namespace and name.
func (s *Store) Select(q Query) []*Entry {
	s.mu.RLock()
	var out []*Entry
	if q.Name != "" {
		if e, ok := s.items[key(q.Namespace, q.Name)]; ok && q.matches(e) {
			out = append(out, e)
		}
	} else {
		for _, e := range s.items {
			if q.matches(e) {
				out = append(out, e)
			}
		}
	}
	s.mu.RUnlock()
	sort.Slice(out, func(i, j int) bool {
		if out[i].Namespace != out[j].Namespace {
			return out[i].Namespace < out[j].Namespace
		}
		return out[i].Name < out[j].Name
	})
	return out
}

func (q Query) matches(e *Entry) bool {
	if q.Namespace != "" && e.Namespace != q.Namespace {
		return false
	}
	if q.Labels != nil && !q.Labels.Empty() && !q.Labels.Matches(e.Labels) {
		return false
	}
	for f, v := range q.Fields {
		if e.field(f) != v {
			return false
		}
	}
	for f, v := range q.NotFields {
		if e.field(f) == v {
			return false
		}
	}
	return true
}

func (e *Entry) field(f string) string {
	switch f {
	case "metadata.name":
		return e.Name
	case "metadata.namespace":
		return e.Namespace
	}
	return e.Fields[f]
}
