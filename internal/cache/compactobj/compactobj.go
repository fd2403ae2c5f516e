// Package compactobj keeps objects in informer caches as compact JSON: the
// metadata indexes and event handlers use, and the whole object (without
// managedFields) as bytes, decoded again into a new unstructured object on
// every read.
//
// Held as an unstructured object, a small Deployment with its status takes
// about 9 KiB of maps, slices and strings; as an Object about 2 KiB
// (BenchmarkCached). The controller manager holds one per template and one
// per member copy of every template, so at K = 10,000 over 3 members the
// difference is hundreds of megabytes. A read costs a JSON decode (tens of
// microseconds) and needs no deep copy.
package compactobj

import (
	"encoding/json"
	"fmt"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/tools/cache"

	"github.com/karmada-go/karmada/internal/cache/intern"
)

// Object is how an informer transformed by Transform keeps an object.
type Object struct {
	metav1.TypeMeta
	// ObjectMeta holds name, namespace, uid, resourceVersion, generation,
	// labels, annotations and the deletion timestamp; managedFields are
	// dropped.
	metav1.ObjectMeta
	// raw is the object without managedFields; never modified once set.
	raw []byte
}

// DeepCopyObject copies the metadata; the JSON is shared, as it never
// changes.
func (s *Object) DeepCopyObject() runtime.Object {
	return &Object{TypeMeta: s.TypeMeta, ObjectMeta: *s.ObjectMeta.DeepCopy(), raw: s.raw}
}

// Decode returns the object as a new unstructured object, which the caller
// owns.
func (s *Object) Decode() (*unstructured.Unstructured, error) {
	u := &unstructured.Unstructured{}
	if err := u.UnmarshalJSON(s.raw); err != nil {
		return nil, fmt.Errorf("decoding the cached %s %s/%s: %w", s.Kind, s.Namespace, s.Name, err)
	}
	return u, nil
}

// Transform is an informer's transform (SetTransform): an unstructured
// object becomes an Object whose metadata keeps every label and annotation.
// Anything else (an Object already stored, which the informer may hand back
// on a relist, or a tombstone) is kept as it is.
func Transform(o any) (any, error) {
	return Metadata{Labels: true, AllAnnotations: true}.Transform(o)
}

// Metadata says which labels and annotations an Object keeps in its
// ObjectMeta, for event handlers and List's selector; its JSON, which reads
// decode, always holds all of them. Each kept label or annotation costs a
// map entry per cached object.
type Metadata struct {
	// Labels keeps every label (List selects on them).
	Labels bool
	// AllAnnotations keeps every annotation; else only Annotations.
	AllAnnotations bool
	Annotations    []string
}

// Transform is Transform keeping only what m says.
func (m Metadata) Transform(o any) (any, error) {
	u, ok := o.(*unstructured.Unstructured)
	if !ok {
		return o, nil
	}
	u.SetManagedFields(nil)
	raw, err := json.Marshal(u.Object)
	if err != nil {
		return nil, fmt.Errorf("encoding %s %s/%s for the cache: %w", u.GetKind(), u.GetNamespace(), u.GetName(), err)
	}
	s := &Object{
		TypeMeta: metav1.TypeMeta{APIVersion: intern.String(u.GetAPIVersion()), Kind: intern.String(u.GetKind())},
		ObjectMeta: metav1.ObjectMeta{
			Name: u.GetName(), Namespace: intern.String(u.GetNamespace()), UID: u.GetUID(),
			ResourceVersion: u.GetResourceVersion(), Generation: u.GetGeneration(),
			DeletionTimestamp: u.GetDeletionTimestamp(),
		},
		raw: raw,
	}
	if m.Labels {
		s.Labels = intern.Keys(u.GetLabels())
	}
	if m.AllAnnotations {
		s.Annotations = intern.Keys(u.GetAnnotations())
	} else if len(m.Annotations) > 0 {
		all := u.GetAnnotations()
		for _, k := range m.Annotations {
			if v, ok := all[k]; ok {
				if s.Annotations == nil {
					s.Annotations = make(map[string]string, len(m.Annotations))
				}
				s.Annotations[intern.String(k)] = v
			}
		}
	}
	return s, nil
}

// Lister reads Objects from a transformed informer's indexer and hands out
// decoded unstructured objects, as a dynamic informer's lister would. List
// with a namespace needs the indexer's cache.NamespaceIndex.
type Lister struct {
	Indexer   cache.Indexer
	Resource  schema.GroupResource
	Namespace string // "" for every namespace, or a cluster-scoped type
}

var _ cache.GenericLister = Lister{}

// List returns the objects whose labels selector matches.
func (l Lister) List(selector labels.Selector) ([]runtime.Object, error) {
	var items []any
	if l.Namespace == "" {
		items = l.Indexer.List()
	} else {
		var err error
		if items, err = l.Indexer.ByIndex(cache.NamespaceIndex, l.Namespace); err != nil {
			return nil, err
		}
	}
	var out []runtime.Object
	for _, it := range items {
		s, ok := it.(*Object)
		if !ok || !selector.Matches(labels.Set(s.Labels)) {
			continue
		}
		u, err := s.Decode()
		if err != nil {
			return nil, err
		}
		out = append(out, u)
	}
	return out, nil
}

// Get returns the object named name, or a NotFound error.
func (l Lister) Get(name string) (runtime.Object, error) {
	key := name
	if l.Namespace != "" {
		key = l.Namespace + "/" + name
	}
	it, exists, err := l.Indexer.GetByKey(key)
	if err != nil {
		return nil, err
	}
	s, ok := it.(*Object)
	if !exists || !ok {
		return nil, apierrors.NewNotFound(l.Resource, name)
	}
	return s.Decode()
}

// ByNamespace returns a Lister of one namespace.
func (l Lister) ByNamespace(namespace string) cache.GenericNamespaceLister {
	return Lister{Indexer: l.Indexer, Resource: l.Resource, Namespace: namespace}
}
