package compactobj

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

// FromMetadata turns an object's metadata, as metadata informers and
// metadata lists return it, into the unstructured form the rest of the code
// reads objects in: an object of kind gvk holding m's metadata and nothing
// else (no managedFields, owner references or finalizers).
func FromMetadata(m *metav1.PartialObjectMetadata, gvk schema.GroupVersionKind) *unstructured.Unstructured {
	u := &unstructured.Unstructured{}
	u.SetGroupVersionKind(gvk)
	u.SetNamespace(m.Namespace)
	u.SetName(m.Name)
	u.SetUID(m.UID)
	u.SetResourceVersion(m.ResourceVersion)
	u.SetGeneration(m.Generation)
	u.SetLabels(m.Labels)
	u.SetAnnotations(m.Annotations)
	u.SetDeletionTimestamp(m.DeletionTimestamp)
	return u
}
