package webhook

import (
	"context"
	"fmt"

	admissionv1 "k8s.io/api/admission/v1"
	authenticationv1 "k8s.io/api/authentication/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/validation/field"

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

// bindingEndpoints are the admission endpoints of ResourceBindings and
// ClusterResourceBindings: the permanent id on create; validation, adoption
// and, for ResourceBindings, the namespace's FederatedResourceQuota.
func bindingEndpoints(k kindEnv) []Endpoint {
	dec, o := k.dec, k.o
	return []Endpoint{
		{Path: "/mutate-resourcebinding", Mutating: true, GVR: bindingResource("resourcebindings"), Kind: "ResourceBinding", Namespaced: true, Operations: onCreate,
			handler: &mutating[*workv1alpha2.ResourceBinding]{dec: dec, new: func() *workv1alpha2.ResourceBinding { return &workv1alpha2.ResourceBinding{} },
				mutate: func(b *workv1alpha2.ResourceBinding, _ admissionv1.Operation, _ string) {
					b.Labels = ensureLabel(b.Labels, workv1alpha2.ResourceBindingPermanentIDLabel)
				}}},
		{Path: "/mutate-clusterresourcebinding", Mutating: true, GVR: bindingResource("clusterresourcebindings"), Kind: "ClusterResourceBinding", Operations: onCreate,
			handler: &mutating[*workv1alpha2.ClusterResourceBinding]{dec: dec, new: func() *workv1alpha2.ClusterResourceBinding { return &workv1alpha2.ClusterResourceBinding{} },
				mutate: func(b *workv1alpha2.ClusterResourceBinding, _ admissionv1.Operation, _ string) {
					b.Labels = ensureLabel(b.Labels, workv1alpha2.ClusterResourceBindingPermanentIDLabel)
				}}},
		{Path: "/validate-resourcebinding", GVR: bindingResource("resourcebindings"), Kind: "ResourceBinding", Namespaced: true,
			handler: &validating[*workv1alpha2.ResourceBinding]{dec: dec, new: func() *workv1alpha2.ResourceBinding { return &workv1alpha2.ResourceBinding{} },
				validate: func(b, old *workv1alpha2.ResourceBinding) field.ErrorList {
					if old == nil {
						return validateBinding(&b.ObjectMeta, &b.Spec, b.Namespace, nil, nil, workv1alpha2.ResourceBindingPermanentIDLabel)
					}
					return validateBinding(&b.ObjectMeta, &b.Spec, b.Namespace, &old.ObjectMeta, &old.Spec, workv1alpha2.ResourceBindingPermanentIDLabel)
				},
				authorize: func(ctx context.Context, user authenticationv1.UserInfo, b, old *workv1alpha2.ResourceBinding) (field.ErrorList, error) {
					var before *workv1alpha2.ResourceBindingSpec
					if old != nil {
						before = &old.Spec
					}
					errs, err := o.bindingAdoption(ctx, user, "resourcebindings", b.Namespace, &b.Spec, before)
					if err != nil || len(errs) > 0 {
						return errs, err
					}
					return o.quotaCheck(ctx, b.Namespace, &b.Spec, before)
				}}},
		{Path: "/validate-clusterresourcebinding", GVR: bindingResource("clusterresourcebindings"), Kind: "ClusterResourceBinding",
			handler: &validating[*workv1alpha2.ClusterResourceBinding]{dec: dec, new: func() *workv1alpha2.ClusterResourceBinding { return &workv1alpha2.ClusterResourceBinding{} },
				validate: func(b, old *workv1alpha2.ClusterResourceBinding) field.ErrorList {
					if old == nil {
						return validateBinding(&b.ObjectMeta, &b.Spec, "", nil, nil, workv1alpha2.ClusterResourceBindingPermanentIDLabel)
					}
					return validateBinding(&b.ObjectMeta, &b.Spec, "", &old.ObjectMeta, &old.Spec, workv1alpha2.ClusterResourceBindingPermanentIDLabel)
				},
				authorize: func(ctx context.Context, user authenticationv1.UserInfo, b, old *workv1alpha2.ClusterResourceBinding) (field.ErrorList, error) {
					var before *workv1alpha2.ResourceBindingSpec
					if old != nil {
						before = &old.Spec
					}
					return o.bindingAdoption(ctx, user, "clusterresourcebindings", "", &b.Spec, before)
				}}},
	}
}
