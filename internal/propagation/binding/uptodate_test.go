package binding

import (
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"

	workv1alpha1 "github.com/karmada-go/karmada/api/work/v1alpha1"
)

func TestUpToDateComparesWithoutTouchingTheListedWork(t *testing.T) {
	listed := func() []workv1alpha1.Work {
		return []workv1alpha1.Work{{
			ObjectMeta: metav1.ObjectMeta{Namespace: "karmada-es-member1", Name: "web", Labels: map[string]string{"a": "1"},
				Annotations: map[string]string{"b": "2"}, Finalizers: []string{workv1alpha1.ExecutionFinalizer}},
			Spec: workv1alpha1.WorkSpec{Workload: workv1alpha1.WorkloadTemplate{Manifests: []workv1alpha1.Manifest{{RawExtension: runtime.RawExtension{Raw: []byte(`{"kind":"Deployment"}`)}}}}},
		}}
	}
	desired := func(labels map[string]string, raw string) func(*workv1alpha1.Work) {
		return func(w *workv1alpha1.Work) {
			for k, v := range labels {
				w.Labels[k] = v
			}
			w.Annotations["b"] = "2"
			w.Spec.Workload.Manifests = []workv1alpha1.Manifest{{RawExtension: runtime.RawExtension{Raw: []byte(raw)}}}
		}
	}
	works := listed()
	if !upToDate(works, "karmada-es-member1", "web", desired(map[string]string{"a": "1"}, `{"kind":"Deployment"}`)) {
		t.Error("the same labels, annotations and manifest: want up to date")
	}
	if upToDate(works, "karmada-es-member1", "web", desired(map[string]string{"a": "1", "c": "3"}, `{"kind":"Deployment"}`)) {
		t.Error("a new label: want a write")
	}
	if _, ok := works[0].Labels["c"]; ok {
		t.Error("the comparison wrote into the listed Work's labels")
	}
	if upToDate(works, "karmada-es-member1", "web", desired(map[string]string{"a": "1"}, `{"kind":"Deployment","spec":{}}`)) {
		t.Error("a new manifest: want a write")
	}
	if string(works[0].Spec.Workload.Manifests[0].Raw) != `{"kind":"Deployment"}` {
		t.Error("the comparison changed the listed Work's manifest")
	}
	if upToDate(works, "karmada-es-member2", "web", desired(map[string]string{"a": "1"}, `{"kind":"Deployment"}`)) {
		t.Error("no Work in that namespace: want a create")
	}
}
