package execution

import (
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

func TestRetainReplicas(t *testing.T) {
	deployment := func(replicas int64, labels map[string]any) *unstructured.Unstructured {
		return &unstructured.Unstructured{Object: map[string]any{"apiVersion": "apps/v1", "kind": "Deployment",
			"metadata": map[string]any{"name": "web", "labels": labels, "resourceVersion": "41"}, "spec": map[string]any{"replicas": replicas}}}
	}
	marked := map[string]any{"resourcetemplate.karmada.io/retain-replicas": "true"}
	for _, tc := range []struct {
		name     string
		obj, cur *unstructured.Unstructured
		want     int64
		// wantVersion: the version of the copy the apply is made over
		// (kept replicas are applied only over the copy they came from).
		wantVersion string
	}{
		{"marked: the member's replicas kept", deployment(2, marked), deployment(7, nil), 7, "41"},
		{"not marked: the template's", deployment(2, nil), deployment(7, nil), 2, ""},
		{"marked, no copy yet: the template's", deployment(2, marked), nil, 2, ""},
		{"marked as false: the template's", deployment(2, map[string]any{"resourcetemplate.karmada.io/retain-replicas": "false"}), deployment(7, nil), 2, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			tc.obj.SetResourceVersion("")
			got := retainReplicas(tc.obj, tc.cur)
			if v := got.GetResourceVersion(); v != tc.wantVersion || keptFromCopy(got) != (tc.wantVersion != "") {
				t.Errorf("applied over version %q (kept %v), want %q", v, keptFromCopy(got), tc.wantVersion)
			}
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
