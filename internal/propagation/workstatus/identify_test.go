package workstatus

import (
	"testing"

	"k8s.io/apimachinery/pkg/runtime/schema"
)

func TestIdentifyReadsKindNameAndNamespace(t *testing.T) {
	id, err := identify([]byte(`{"apiVersion":"apps/v1","kind":"Deployment","metadata":{"name":"web","namespace":"shop","labels":{"a":"b"}},"spec":{"replicas":3}}`))
	if err != nil {
		t.Fatal(err)
	}
	if id.GroupVersionKind() != (schema.GroupVersionKind{Group: "apps", Version: "v1", Kind: "Deployment"}) || id.GetName() != "web" || id.GetNamespace() != "shop" {
		t.Fatalf("got %v %s/%s", id.GroupVersionKind(), id.GetNamespace(), id.GetName())
	}
	cs, err := identify([]byte(`{"apiVersion":"v1","kind":"Namespace","metadata":{"name":"shop"}}`))
	if err != nil || cs.GetNamespace() != "" || cs.GroupVersionKind().Kind != "Namespace" {
		t.Fatalf("cluster-scoped: %+v, %v", cs, err)
	}
	for _, bad := range []string{`{"metadata":{"name":"x"}}`, `not json`} {
		if _, err := identify([]byte(bad)); err == nil {
			t.Errorf("identify(%s) gave no error", bad)
		}
	}
}
