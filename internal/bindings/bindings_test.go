package bindings

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	workv1alpha2 "github.com/karmada-go/karmada/api/work/v1alpha2"
)

func TestAdapter(t *testing.T) {
	rb := &workv1alpha2.ResourceBinding{ObjectMeta: metav1.ObjectMeta{Namespace: "shop", Name: "web-deployment"}}
	crb := &workv1alpha2.ClusterResourceBinding{ObjectMeta: metav1.ObjectMeta{Name: "admin-clusterrole"}}
	for _, c := range []struct {
		obj       interface{ GetName() string }
		binding   Binding
		cluster   bool
		labels    map[string]string
		indexKey  string
		kindIndex int
	}{
		{rb, must(Of(rb)), false, map[string]string{workv1alpha2.ResourceBindingNamespaceLabel: "shop", workv1alpha2.ResourceBindingNameLabel: "web-deployment"}, "rb:shop/web-deployment", 0},
		{crb, must(Of(crb)), true, map[string]string{workv1alpha2.ClusterResourceBindingLabel: "admin-clusterrole"}, "crb:admin-clusterrole", 1},
	} {
		b := c.binding
		if b.ClusterScoped() != c.cluster {
			t.Errorf("%s: ClusterScoped = %v", c.obj.GetName(), b.ClusterScoped())
		}
		if d := cmp.Diff(c.labels, b.WorkLabels()); d != "" {
			t.Errorf("%s: work labels (-want,+got):\n%s", c.obj.GetName(), d)
		}
		if got := indexKey(b.WorkLabels()); got != c.indexKey {
			t.Errorf("%s: index key %q, want %q", c.obj.GetName(), got, c.indexKey)
		}
		// A Work's labels lead back to its binding, and only for its kind.
		k := Kinds[c.kindIndex]
		if key, ok := k.OfWork(b.WorkLabels()); !ok || key.Name != c.obj.GetName() {
			t.Errorf("%s: OfWork = %v, %v", c.obj.GetName(), key, ok)
		}
		if _, ok := Kinds[1-c.kindIndex].OfWork(b.WorkLabels()); ok {
			t.Errorf("%s: the other kind claims its Work", c.obj.GetName())
		}
		if k.New().ClusterScoped() != c.cluster && c.cluster {
			t.Errorf("%s: New of its kind has the wrong scope", c.obj.GetName())
		}
		// Spec and status point into the object.
		b.Spec.Replicas = 7
		b.Status.SchedulerObservedGeneration = 3
	}
	if rb.Spec.Replicas != 7 || crb.Status.SchedulerObservedGeneration != 3 {
		t.Error("spec and status do not point into the object")
	}
	if _, err := Of(&corev1.Pod{}); err == nil {
		t.Error("a Pod was taken for a binding")
	}
	if indexKey(map[string]string{"app": "web"}) != "" {
		t.Error("a Work of no binding has an index key")
	}
}

func must(b Binding, err error) Binding {
	if err != nil {
		panic(err)
	}
	return b
}
