package anybinding

import (
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	policyv1alpha1 "github.com/karmada-go/karmada/api/policy/v1alpha1"
	workv1alpha2 "github.com/karmada-go/karmada/api/work/v1alpha2"
)

func deploymentAt(rv, image string) *unstructured.Unstructured {
	return &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "apps/v1", "kind": "Deployment",
		"metadata": map[string]any{"namespace": "shop", "name": "web", "resourceVersion": rv},
		"spec":     map[string]any{"template": map[string]any{"spec": map[string]any{"containers": []any{map[string]any{"name": "c", "image": image}}}}},
	}}
}

// The digest ignores what moves without the template changing (status,
// resourceVersion, generation, managedFields) and follows everything else.
func TestTemplateHash(t *testing.T) {
	base := deploymentAt("7", "web:1")
	h0, err := TemplateHash(base)
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name string
		edit func(u *unstructured.Unstructured)
		same bool
	}{
		{"status", func(u *unstructured.Unstructured) { u.Object["status"] = map[string]any{"replicas": int64(3)} }, true},
		{"resourceVersion", func(u *unstructured.Unstructured) { u.SetResourceVersion("8") }, true},
		{"generation", func(u *unstructured.Unstructured) { u.SetGeneration(4) }, true},
		{"managedFields", func(u *unstructured.Unstructured) {
			u.SetManagedFields([]metav1.ManagedFieldsEntry{{Manager: "kubectl", Operation: metav1.ManagedFieldsOperationUpdate}})
		}, true},
		{"spec", func(u *unstructured.Unstructured) {
			_ = unstructured.SetNestedField(u.Object, int64(2), "spec", "replicas")
		}, false},
		{"an annotation", func(u *unstructured.Unstructured) { u.SetAnnotations(map[string]string{"note": "x"}) }, false},
		{"a label", func(u *unstructured.Unstructured) { u.SetLabels(map[string]string{"app": "web"}) }, false},
		{"the lazy activation mark", func(u *unstructured.Unstructured) {
			u.SetAnnotations(map[string]string{policyv1alpha1.LazyActivationAnnotation: "0123"})
		}, true},
		{"another annotation beside the lazy activation mark", func(u *unstructured.Unstructured) {
			u.SetAnnotations(map[string]string{policyv1alpha1.LazyActivationAnnotation: "0123", "note": "x"})
		}, false},
	} {
		u := base.DeepCopy()
		tc.edit(u)
		h, err := TemplateHash(u)
		if err != nil {
			t.Fatal(err)
		}
		if (h == h0) != tc.same {
			t.Errorf("%s changed: digest %s, was %s; want the same: %v", tc.name, h, h0, tc.same)
		}
	}
	if again, _ := TemplateHash(base.DeepCopy()); again != h0 {
		t.Errorf("the same template digests to %s, then %s", h0, again)
	}
}

// A binding is made from the version of its template it names, or one that
// differs in status alone; a cached template whose spec is older or newer
// than the binding's is not what the binding describes.
func TestMadeFrom(t *testing.T) {
	written := deploymentAt("7", "web:1")
	hash, err := TemplateHash(written)
	if err != nil {
		t.Fatal(err)
	}
	spec := &workv1alpha2.ResourceBindingSpec{Resource: workv1alpha2.ObjectReference{ResourceVersion: "7"}}
	annotations := map[string]string{workv1alpha2.TemplateHashAnnotation: hash}
	statusOnly := deploymentAt("9", "web:1")
	statusOnly.Object["status"] = map[string]any{"readyReplicas": int64(1)}
	for _, tc := range []struct {
		name        string
		template    *unstructured.Unstructured
		annotations map[string]string
		want        bool
	}{
		{"the version written from", written, annotations, true},
		{"a later status", statusOnly, annotations, true},
		{"an older spec (a cache behind)", deploymentAt("5", "web:0"), annotations, false},
		{"a newer spec (a binding behind)", deploymentAt("11", "web:2"), annotations, false},
		{"no hash on the binding", deploymentAt("11", "web:2"), nil, true},
	} {
		if got := MadeFrom(tc.template, spec, tc.annotations); got != tc.want {
			t.Errorf("%s: MadeFrom = %v, want %v", tc.name, got, tc.want)
		}
	}
}

// A namespaced template's binding is a ResourceBinding, a cluster-scoped
// one's a ClusterResourceBinding.
func TestKindFor(t *testing.T) {
	if k := KindFor("shop"); k.ClusterScoped || k.Name != "ResourceBinding" {
		t.Errorf("KindFor(shop) = %+v", k)
	}
	if k := KindFor(""); !k.ClusterScoped || k.Name != "ClusterResourceBinding" {
		t.Errorf("KindFor(\"\") = %+v", k)
	}
	if _, ok := KindFor("").New().Object.(*workv1alpha2.ClusterResourceBinding); !ok {
		t.Error("KindFor(\"\").New() is not a ClusterResourceBinding")
	}
}
