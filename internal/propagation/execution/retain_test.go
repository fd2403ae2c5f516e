package execution

import (
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

func TestRetainReplicas(t *testing.T) {
	deployment := func(replicas int64, labels map[string]any) *unstructured.Unstructured {
		return &unstructured.Unstructured{Object: map[string]any{"apiVersion": "apps/v1", "kind": "Deployment",
			"metadata": map[string]any{"name": "web", "labels": labels}, "spec": map[string]any{"replicas": replicas}}}
	}
	marked := map[string]any{"resourcetemplate.karmada.io/retain-replicas": "true"}
	for _, tc := range []struct {
		name     string
		obj, cur *unstructured.Unstructured
		want     int64
	}{
		{"marked: the member's replicas kept", deployment(2, marked), deployment(7, nil), 7},
		{"not marked: the template's", deployment(2, nil), deployment(7, nil), 2},
		{"marked, no copy yet: the template's", deployment(2, marked), nil, 2},
		{"marked as false: the template's", deployment(2, map[string]any{"resourcetemplate.karmada.io/retain-replicas": "false"}), deployment(7, nil), 2},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := retainReplicas(tc.obj, tc.cur)
			r, _, _ := unstructured.NestedInt64(got.Object, "spec", "replicas")
			if r != tc.want {
				t.Errorf("replicas %d, want %d", r, tc.want)
			}
			if orig, _, _ := unstructured.NestedInt64(tc.obj.Object, "spec", "replicas"); orig != 2 {
				t.Errorf("the manifest was changed in place: %d", orig)
			}
		})
	}
}
