package names

import (
	"testing"

	"k8s.io/apimachinery/pkg/types"

	workv1alpha1 "github.com/karmada-go/karmada/api/work/v1alpha1"
)

func TestWorkMark(t *testing.T) {
	w := types.NamespacedName{Namespace: "karmada-es-member1", Name: "web-687f7fb96f"}
	a := MarkWork(nil, w)
	if a[workv1alpha1.WorkNamespaceAnnotation] != w.Namespace || a[workv1alpha1.WorkNameAnnotation] != w.Name {
		t.Fatalf("MarkWork wrote %v", a)
	}
	if got, ok := WorkOf(a); !ok || got != w {
		t.Errorf("WorkOf = %v, %v; want %v", got, ok, w)
	}
	if !FromWork(a, w) || FromWork(a, types.NamespacedName{Namespace: w.Namespace, Name: "other"}) {
		t.Error("FromWork does not tell this Work from another")
	}
	for _, half := range []map[string]string{nil, {workv1alpha1.WorkNameAnnotation: "web"}, {workv1alpha1.WorkNamespaceAnnotation: "karmada-es-member1"}} {
		if _, ok := WorkOf(half); ok {
			t.Errorf("WorkOf(%v) names a Work", half)
		}
		if FromWork(half, types.NamespacedName{}) {
			t.Errorf("FromWork(%v, empty) is true", half)
		}
	}
}
