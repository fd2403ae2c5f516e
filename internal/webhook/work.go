package webhook

import (
	"encoding/json"

	"k8s.io/apimachinery/pkg/api/equality"
	"k8s.io/apimachinery/pkg/util/validation/field"

	workv1alpha1 "github.com/karmada-go/karmada/api/work/v1alpha1"
)

// workEndpoints are the admission endpoints of Works: their manifests
// validated when the spec changes.
func workEndpoints(k kindEnv) []Endpoint {
	dec := k.dec
	return []Endpoint{
		{Path: "/validate-work", GVR: workResource("works"), Kind: "Work", Namespaced: true,
			handler: &validating[*workv1alpha1.Work]{dec: dec, new: func() *workv1alpha1.Work { return &workv1alpha1.Work{} },
				validate: func(w, old *workv1alpha1.Work) field.ErrorList {
					if old != nil && equality.Semantic.DeepEqual(w.Spec, old.Spec) {
						return nil
					}
					return validateWork(w)
				}}},
	}
}

// validateWork checks that a Work's manifests are objects: each with an
// apiVersion, a kind and a name.
func validateWork(w *workv1alpha1.Work) field.ErrorList {
	var errs field.ErrorList
	path := field.NewPath("spec", "workload", "manifests")
	for i, m := range w.Spec.Workload.Manifests {
		p := path.Index(i)
		var obj struct {
			APIVersion string `json:"apiVersion"`
			Kind       string `json:"kind"`
			Metadata   struct {
				Name string `json:"name"`
			} `json:"metadata"`
		}
		if err := json.Unmarshal(m.Raw, &obj); err != nil {
			errs = append(errs, field.Invalid(p, string(m.Raw), "must be a JSON object: "+err.Error()))
			continue
		}
		if obj.APIVersion == "" {
			errs = append(errs, field.Required(p.Child("apiVersion"), "every manifest is an object with an apiVersion"))
		}
		if obj.Kind == "" {
			errs = append(errs, field.Required(p.Child("kind"), "every manifest is an object with a kind"))
		}
		if obj.Metadata.Name == "" {
			errs = append(errs, field.Required(p.Child("metadata", "name"), "every manifest is an object with a name"))
		}
	}
	return errs
}
