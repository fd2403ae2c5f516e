package anybinding

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/validation"
	"sigs.k8s.io/controller-runtime/pkg/client"

	workv1alpha1 "github.com/karmada-go/karmada/api/work/v1alpha1"
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
		work := &workv1alpha1.Work{ObjectMeta: metav1.ObjectMeta{Labels: b.WorkLabels()}}
		if key, ok := k.OfWork(work); !ok || key.Name != c.obj.GetName() {
			t.Errorf("%s: OfWork = %v, %v", c.obj.GetName(), key, ok)
		}
		if _, ok := Kinds[1-c.kindIndex].OfWork(work); ok {
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

// A binding whose name is too long for a label value names itself on its
// Works by a shortened label and the whole name in annotations; the Work
// leads back to it, and its Works are found by the index.
func TestLongBindingNameOnWorks(t *testing.T) {
	name := strings.Repeat("n", 60) + "-deployment"
	for _, obj := range []client.Object{
		&workv1alpha2.ResourceBinding{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "shop"}},
		&workv1alpha2.ClusterResourceBinding{ObjectMeta: metav1.ObjectMeta{Name: name}},
	} {
		b := must(Of(obj))
		labels, annotations := b.WorkLabels(), b.WorkAnnotations()
		for k, v := range labels {
			if errs := validation.IsValidLabelValue(v); len(errs) > 0 {
				t.Errorf("label %s=%q: %v", k, v, errs)
			}
		}
		work := &workv1alpha1.Work{ObjectMeta: metav1.ObjectMeta{Labels: labels, Annotations: map[string]string{}}}
		for k, v := range annotations {
			if v != "" {
				work.Annotations[k] = v
			}
		}
		k := Kinds[0]
		if b.ClusterScoped() {
			k = Kinds[1]
		}
		if key, ok := k.OfWork(work); !ok || key.Name != name || key.Namespace != obj.GetNamespace() {
			t.Errorf("%T: the Work leads to %v, %v", obj, key, ok)
		}
		if indexKey(work.Labels) != indexKey(labels) || indexKey(labels) == "" {
			t.Errorf("%T: index keys differ", obj)
		}
	}
	// A short name needs no annotation.
	for k, v := range must(Of(&workv1alpha2.ResourceBinding{ObjectMeta: metav1.ObjectMeta{Name: "web-deployment", Namespace: "shop"}})).WorkAnnotations() {
		if v != "" {
			t.Errorf("a short name got annotation %s=%q", k, v)
		}
	}
}
