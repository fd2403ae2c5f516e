package clusterclient

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
)

// storedCopy is how the informer of managed objects keeps a member's copy:
// the metadata its indexes and event handlers use, and the whole object as
// compact JSON, decoded again each time a controller reads it. Held as an
// unstructured object, a small Deployment takes about 8 KiB of maps and
// strings; as JSON under 2 KiB, and a controller manager holds one per
// member copy of every template.
type storedCopy struct {
	metav1.TypeMeta
	// ObjectMeta holds name, namespace, uid, resourceVersion, generation,
	// labels and annotations; managedFields are dropped.
	metav1.ObjectMeta
	// raw is the object without managedFields; never modified once set.
	raw []byte
}

// DeepCopyObject copies the metadata; raw is shared, as it never changes.
func (s *storedCopy) DeepCopyObject() runtime.Object {
	return &storedCopy{TypeMeta: s.TypeMeta, ObjectMeta: *s.ObjectMeta.DeepCopy(), raw: s.raw}
}

// object decodes the stored copy into a new unstructured object, which the
// caller owns.
func (s *storedCopy) object() (*unstructured.Unstructured, error) {
	u := &unstructured.Unstructured{}
	if err := u.UnmarshalJSON(s.raw); err != nil {
		return nil, fmt.Errorf("decoding the cached copy of %s/%s: %w", s.Namespace, s.Name, err)
	}
	return u, nil
}

// compactCopy is the informer's transform: an unstructured object becomes a
// storedCopy. Anything else (an object already stored, which the informer
// may hand back on a relist) is kept as it is.
func compactCopy(o any) (any, error) {
	u, ok := o.(*unstructured.Unstructured)
	if !ok {
		return o, nil
	}
	u.SetManagedFields(nil)
	raw, err := json.Marshal(u.Object)
	if err != nil {
		return nil, fmt.Errorf("encoding %s %s/%s for the cache: %w", u.GetKind(), u.GetNamespace(), u.GetName(), err)
	}
	return &storedCopy{
		TypeMeta: metav1.TypeMeta{APIVersion: u.GetAPIVersion(), Kind: u.GetKind()},
		ObjectMeta: metav1.ObjectMeta{
			Name: u.GetName(), Namespace: u.GetNamespace(), UID: u.GetUID(),
			ResourceVersion: u.GetResourceVersion(), Generation: u.GetGeneration(),
			Labels: u.GetLabels(), Annotations: u.GetAnnotations(),
			DeletionTimestamp: u.GetDeletionTimestamp(),
		},
		raw: raw,
	}, nil
}

// copyLister reads storedCopies from an informer's indexer and hands out
// decoded unstructured objects, as a dynamic informer's lister would.
type copyLister struct {
	indexer   cache.Indexer
	resource  schema.GroupResource
	namespace string // "" for every namespace, or a cluster-scoped type
}

var _ cache.GenericLister = copyLister{}

func (l copyLister) List(selector labels.Selector) ([]runtime.Object, error) {
	var items []any
	if l.namespace == "" {
		items = l.indexer.List()
	} else {
		var err error
		if items, err = l.indexer.ByIndex(cache.NamespaceIndex, l.namespace); err != nil {
			return nil, err
		}
	}
	var out []runtime.Object
	for _, it := range items {
		s, ok := it.(*storedCopy)
		if !ok || !selector.Matches(labels.Set(s.Labels)) {
			continue
		}
		u, err := s.object()
		if err != nil {
			return nil, err
		}
		out = append(out, u)
	}
	return out, nil
}

func (l copyLister) Get(name string) (runtime.Object, error) {
	key := name
	if l.namespace != "" {
		key = l.namespace + "/" + name
	}
	it, exists, err := l.indexer.GetByKey(key)
	if err != nil {
		return nil, err
	}
	s, ok := it.(*storedCopy)
	if !exists || !ok {
		return nil, apierrors.NewNotFound(l.resource, name)
	}
	return s.object()
}

func (l copyLister) ByNamespace(namespace string) cache.GenericNamespaceLister {
	return copyLister{indexer: l.indexer, resource: l.resource, namespace: namespace}
}
