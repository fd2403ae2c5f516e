package execution

import (
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/types"

	workv1alpha1 "github.com/karmada-go/karmada/api/work/v1alpha1"
)

func TestAppliedAtGeneration(t *testing.T) {
	work := &workv1alpha1.Work{ObjectMeta: metav1.ObjectMeta{Generation: 4}}
	if appliedAtGeneration(work) {
		t.Error("a Work without an Applied condition counts as applied")
	}
	work.Status.Conditions = []metav1.Condition{{Type: workv1alpha1.WorkApplied, Status: metav1.ConditionTrue, ObservedGeneration: 3}}
	if appliedAtGeneration(work) {
		t.Error("a Work applied at an older generation counts as applied")
	}
	work.Status.Conditions[0].ObservedGeneration = 4
	if !appliedAtGeneration(work) {
		t.Error("a Work applied at its generation does not count as applied")
	}
	work.Status.Conditions[0].Status = metav1.ConditionFalse
	if appliedAtGeneration(work) {
		t.Error("a failed apply counts as applied")
	}
}

// holds decides, from the cache or from a read of the member, whether a
// copy needs applying again.
func TestHolds(t *testing.T) {
	work := &workv1alpha1.Work{ObjectMeta: metav1.ObjectMeta{Namespace: "karmada-es-member1", Name: "web-deployment-1"}}
	other := &workv1alpha1.Work{ObjectMeta: metav1.ObjectMeta{Namespace: "karmada-es-member1", Name: "other-deployment-1"}}
	manifest := func() *unstructured.Unstructured {
		u := &unstructured.Unstructured{Object: map[string]any{
			"apiVersion": "apps/v1", "kind": "Deployment",
			"metadata": map[string]any{"name": "web", "namespace": "default", "annotations": map[string]any{"touch": "1"}},
			"spec":     map[string]any{"replicas": int64(2)},
		}}
		markFromWork(u, work)
		return u
	}
	// The member's copy: the manifest plus what the member added.
	copyOf := func(w *workv1alpha1.Work, edit func(*unstructured.Unstructured)) *unstructured.Unstructured {
		u := manifest()
		markFromWork(u, w)
		u.Object["status"] = map[string]any{"replicas": int64(2)}
		u.SetResourceVersion("42")
		if edit != nil {
			edit(u)
		}
		return u
	}
	older := work.DeepCopy()
	older.Generation--
	cases := []struct {
		name    string
		cur     *unstructured.Unstructured
		applied bool
		want    bool
	}{
		{"same copy, generation applied before", copyOf(work, nil), true, true},
		{"same copy, this generation's stamp: applied before, though not recorded", copyOf(work, nil), false, true},
		{"copy of an older generation, new generation not applied yet", copyOf(older, nil), false, false},
		{"no copy", nil, true, false},
		{"copy of another Work", copyOf(other, nil), true, false},
		{"copy lacks the change", copyOf(work, func(u *unstructured.Unstructured) {
			u.SetAnnotations(map[string]string{workv1alpha1.WorkNamespaceAnnotation: work.Namespace, workv1alpha1.WorkNameAnnotation: work.Name})
		}), true, false},
		{"copy changed by someone else", copyOf(work, func(u *unstructured.Unstructured) {
			_ = unstructured.SetNestedField(u.Object, int64(5), "spec", "replicas")
		}), true, false},
	}
	for _, c := range cases {
		if got := holds(c.cur, manifest(), work, c.applied); got != c.want {
			t.Errorf("%s: holds = %v, want %v", c.name, got, c.want)
		}
	}
}

func TestAppliedGenerations(t *testing.T) {
	var a appliedGenerations
	w := &workv1alpha1.Work{ObjectMeta: metav1.ObjectMeta{Namespace: "karmada-es-m1", Name: "w", UID: "u1", Generation: 2}}
	if a.has(w) {
		t.Fatal("nothing recorded yet")
	}
	a.record(w)
	if !a.has(w) {
		t.Fatal("the generation recorded must be known")
	}
	next := w.DeepCopy()
	next.Generation = 3
	if a.has(next) {
		t.Error("a later generation was not applied")
	}
	again := w.DeepCopy()
	again.UID = "u2"
	if a.has(again) {
		t.Error("a Work created again under the same name is another Work")
	}
	a.forget(types.NamespacedName{Namespace: w.Namespace, Name: w.Name})
	if a.has(w) {
		t.Error("a forgotten Work must be applied afresh")
	}
}
