package execution

import (
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	workv1alpha1 "github.com/karmada-go/karmada/api/work/v1alpha1"
)

func TestPreAdoptionRecord(t *testing.T) {
	cur := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "v1", "kind": "ConfigMap",
		"metadata": map[string]any{"name": "theirs", "namespace": "default", "uid": "u1", "resourceVersion": "7",
			"labels":        map[string]any{"team": "member"},
			"annotations":   map[string]any{"note": "mine", workv1alpha1.PreAdoptionAnnotation: "an earlier record"},
			"managedFields": []any{map[string]any{"manager": "kubectl"}}},
		"data":   map[string]any{"mine": "yes"},
		"status": map[string]any{"x": "y"},
	}}
	got, err := ReadPreAdoption(RecordPreAdoption(cur))
	if err != nil {
		t.Fatal(err)
	}
	if got.GetAPIVersion() != "v1" || got.GetKind() != "ConfigMap" || got.GetName() != "theirs" || got.GetNamespace() != "default" {
		t.Errorf("identity lost: %v", got.Object)
	}
	if d, _, _ := unstructured.NestedStringMap(got.Object, "data"); d["mine"] != "yes" {
		t.Errorf("data %v", d)
	}
	if got.GetLabels()["team"] != "member" || got.GetAnnotations()["note"] != "mine" {
		t.Errorf("labels %v annotations %v", got.GetLabels(), got.GetAnnotations())
	}
	if _, ok := got.GetAnnotations()[workv1alpha1.PreAdoptionAnnotation]; ok {
		t.Error("an earlier record was recorded again")
	}
	if got.GetUID() != "" || got.GetResourceVersion() != "" || got.Object["status"] != nil || got.GetManagedFields() != nil {
		t.Errorf("server-set fields recorded: %v", got.Object)
	}
	// Past 64 KiB encoded, only the size and a hash.
	big := cur.DeepCopy()
	_ = unstructured.SetNestedField(big.Object, randomish(300<<10), "data", "big")
	if rec := RecordPreAdoption(big); !strings.HasPrefix(rec, "omitted: ") || len(rec) > 200 {
		t.Errorf("a record past the bound: %.80s (%d bytes)", rec, len(rec))
	}
}

// randomish is n bytes gzip cannot shrink much.
func randomish(n int) string {
	const chars = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789"
	out := make([]byte, n)
	x := uint32(2463534242)
	for i := range out {
		x ^= x << 13
		x ^= x >> 17
		x ^= x << 5
		out[i] = chars[x%uint32(len(chars))]
	}
	return string(out)
}
