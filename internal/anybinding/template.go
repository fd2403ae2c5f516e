package anybinding

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	policyv1alpha1 "github.com/karmada-go/karmada/api/policy/v1alpha1"
	workv1alpha2 "github.com/karmada-go/karmada/api/work/v1alpha2"
)

// TemplateHash is the TemplateHashAnnotation of a binding of obj: a digest
// of the template without what moves when nothing a binding is made from
// does (status, resourceVersion, generation, managedFields).
func TemplateHash(obj *unstructured.Unstructured) (string, error) {
	c := make(map[string]any, len(obj.Object))
	for k, v := range obj.Object {
		if k != "status" {
			c[k] = v
		}
	}
	if m, ok := obj.Object["metadata"].(map[string]any); ok {
		md := make(map[string]any, len(m))
		for k, v := range m {
			switch k {
			case "resourceVersion", "generation", "managedFields":
			case "annotations":
				// The lazy activation mark records a digest: it is not
				// part of one.
				a, _ := v.(map[string]any)
				if _, ok := a[policyv1alpha1.LazyActivationAnnotation]; ok {
					kept := make(map[string]any, len(a))
					for ak, av := range a {
						if ak != policyv1alpha1.LazyActivationAnnotation {
							kept[ak] = av
						}
					}
					if len(kept) == 0 {
						continue
					}
					v = kept
				}
				md[k] = v
			default:
				md[k] = v
			}
		}
		c["metadata"] = md
	}
	b, err := json.Marshal(c)
	if err != nil {
		return "", fmt.Errorf("digesting %s %s: %w", obj.GetKind(), obj.GetName(), err)
	}
	sum := sha256.Sum256(b)
	return hex.EncodeToString(sum[:16]), nil
}

// MadeFrom reports whether template is the version of the template the
// binding (spec, annotations) was last written from, or differs from it in
// its status alone. A binding without TemplateHashAnnotation (not written
// by the detector) is made from any version. False means that a cache
// holding template is behind the binding, or the binding behind the
// template: either way, what is read now is not what the binding describes.
func MadeFrom(template *unstructured.Unstructured, spec *workv1alpha2.ResourceBindingSpec, annotations map[string]string) bool {
	want, ok := annotations[workv1alpha2.TemplateHashAnnotation]
	if !ok || template.GetResourceVersion() == spec.Resource.ResourceVersion {
		return true
	}
	got, err := TemplateHash(template)
	return err == nil && got == want
}
