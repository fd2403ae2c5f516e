package webhook

import (
	"encoding/json"
	"fmt"

	"k8s.io/apimachinery/pkg/api/equality"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/validation/field"

	workv1alpha1 "github.com/karmada-go/karmada/api/work/v1alpha1"
	workv1alpha2 "github.com/karmada-go/karmada/api/work/v1alpha2"
	"github.com/karmada-go/karmada/internal/names"
)

// validateBinding checks a ResourceBinding (ns: its namespace) or a
// ClusterResourceBinding (ns ""), and on update (old non-nil) what may not
// change. The placement and failover copied from the policy are not checked
// again: the policy's own admission did, and a policy admitted before this
// webhook existed must not stop its templates' propagation. A ResourceBinding binds a template of its own namespace only:
// otherwise whoever may create bindings in one namespace could copy any
// object of the control plane (member credentials included) to members.
func validateBinding(meta *metav1.ObjectMeta, spec *workv1alpha2.ResourceBindingSpec, ns string, old *metav1.ObjectMeta, oldSpec *workv1alpha2.ResourceBindingSpec, idLabel string) field.ErrorList {
	var errs field.ErrorList
	if old != nil {
		if was, now := old.Labels[idLabel], meta.Labels[idLabel]; was != "" && was != now {
			errs = append(errs, field.Invalid(field.NewPath("metadata", "labels").Key(idLabel), now, fmt.Sprintf("immutable: it was %q, given when the binding was created", was)))
		}
		// An update that leaves the spec alone (a finalizer removed, a
		// label) is not held to the spec's rules again.
		if equality.Semantic.DeepEqual(spec, oldSpec) {
			return errs
		}
	}
	path := field.NewPath("spec")
	r := spec.Resource
	rp := path.Child("resource")
	if r.APIVersion == "" {
		errs = append(errs, field.Required(rp.Child("apiVersion"), "the API version of the bound template"))
	} else if _, err := schema.ParseGroupVersion(r.APIVersion); err != nil {
		errs = append(errs, field.Invalid(rp.Child("apiVersion"), r.APIVersion, "must be <group>/<version> or <version>"))
	}
	if r.Kind == "" {
		errs = append(errs, field.Required(rp.Child("kind"), "the kind of the bound template"))
	}
	if r.Name == "" {
		errs = append(errs, field.Required(rp.Child("name"), "the name of the bound template"))
	}
	switch {
	case ns != "" && r.Namespace != ns:
		errs = append(errs, field.Invalid(rp.Child("namespace"), r.Namespace, fmt.Sprintf("must be %q: a ResourceBinding binds a template of its own namespace", ns)))
	case ns == "" && r.Namespace != "":
		errs = append(errs, field.Invalid(rp.Child("namespace"), r.Namespace, "must be empty: a ClusterResourceBinding binds a cluster-scoped template (a namespaced one has a ResourceBinding in its namespace)"))
	}
	if spec.Replicas < 0 {
		errs = append(errs, field.Invalid(path.Child("replicas"), spec.Replicas, "must be greater than or equal to 0"))
	}
	seen := map[string]int{}
	for i, c := range spec.Clusters {
		p := path.Child("clusters").Index(i)
		for _, msg := range names.ClusterNameErrors(c.Name) {
			errs = append(errs, field.Invalid(p.Child("name"), c.Name, msg))
		}
		if first, ok := seen[c.Name]; ok {
			errs = append(errs, field.Duplicate(p.Child("name"), fmt.Sprintf("%s (already in %s)", c.Name, path.Child("clusters").Index(first))))
		} else {
			seen[c.Name] = i
		}
		if c.Replicas < 0 {
			errs = append(errs, field.Invalid(p.Child("replicas"), c.Replicas, "must be greater than or equal to 0"))
		}
	}
	return errs
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
