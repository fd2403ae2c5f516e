package compactobj

import (
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

func TestFromMetadataKeepsMetadata(t *testing.T) {
	now := metav1.NewTime(time.Unix(1700000000, 0)) // whole seconds: unstructured keeps RFC 3339
	m := &metav1.PartialObjectMetadata{ObjectMeta: metav1.ObjectMeta{
		Namespace: "ns", Name: "web", UID: "u1", ResourceVersion: "7", Generation: 3,
		Labels: map[string]string{"a": "1"}, Annotations: map[string]string{"b": "2"}, DeletionTimestamp: &now,
	}}
	gvk := schema.GroupVersionKind{Group: "apps", Version: "v1", Kind: "Deployment"}
	u := FromMetadata(m, gvk)
	if u.GroupVersionKind() != gvk || u.GetNamespace() != "ns" || u.GetName() != "web" || u.GetUID() != "u1" ||
		u.GetResourceVersion() != "7" || u.GetGeneration() != 3 || u.GetLabels()["a"] != "1" || u.GetAnnotations()["b"] != "2" ||
		u.GetDeletionTimestamp() == nil || !u.GetDeletionTimestamp().Equal(&now) {
		t.Fatalf("metadata lost: %v", u.Object)
	}
	if _, ok := u.Object["spec"]; ok {
		t.Fatal("spec appeared")
	}
}
