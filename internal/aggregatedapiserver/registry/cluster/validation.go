package cluster

import (
	"net/url"

	apimachineryvalidation "k8s.io/apimachinery/pkg/api/validation"
	metav1validation "k8s.io/apimachinery/pkg/apis/meta/v1/validation"
	"k8s.io/apimachinery/pkg/util/validation/field"

	clusterv1alpha1 "github.com/karmada-go/karmada/api/cluster/v1alpha1"
)

// Validate checks what the Cluster CRD's schema checked: a well-formed
// name, a sync mode, complete secret references, taints and resource
// models, well-formed conditions. The rules of karmada-webhook (the
// endpoint, the credentials, a unique id, what an agent may change) apply
// too, through the admission webhook plugin.
func Validate(c *clusterv1alpha1.Cluster) field.ErrorList {
	errs := apimachineryvalidation.ValidateObjectMeta(&c.ObjectMeta, false, apimachineryvalidation.NameIsDNSSubdomain, field.NewPath("metadata"))
	spec := field.NewPath("spec")
	switch c.Spec.SyncMode {
	case clusterv1alpha1.Push, clusterv1alpha1.Pull:
	case "":
		errs = append(errs, field.Required(spec.Child("syncMode"), "Push or Pull"))
	default:
		errs = append(errs, field.NotSupported(spec.Child("syncMode"), c.Spec.SyncMode, []clusterv1alpha1.ClusterSyncMode{clusterv1alpha1.Push, clusterv1alpha1.Pull}))
	}
	for name, ref := range map[string]*clusterv1alpha1.LocalSecretReference{"secretRef": c.Spec.SecretRef, "impersonatorSecretRef": c.Spec.ImpersonatorSecretRef} {
		if ref == nil {
			continue
		}
		if ref.Namespace == "" {
			errs = append(errs, field.Required(spec.Child(name, "namespace"), "the Secret's namespace"))
		}
		if ref.Name == "" {
			errs = append(errs, field.Required(spec.Child(name, "name"), "the Secret's name"))
		}
	}
	if c.Spec.ProxyURL != "" {
		if u, err := url.Parse(c.Spec.ProxyURL); err != nil || u.Scheme == "" || u.Host == "" {
			errs = append(errs, field.Invalid(spec.Child("proxyURL"), c.Spec.ProxyURL, "must be an absolute URL, such as http://proxy.example.com:3128"))
		}
	}
	for i, t := range c.Spec.Taints {
		p := spec.Child("taints").Index(i)
		if t.Key == "" {
			errs = append(errs, field.Required(p.Child("key"), "a taint has a key"))
		}
		if t.Effect == "" {
			errs = append(errs, field.Required(p.Child("effect"), "NoSchedule, PreferNoSchedule or NoExecute"))
		}
	}
	for i, m := range c.Spec.ResourceModels {
		p := spec.Child("resourceModels").Index(i)
		if len(m.Ranges) == 0 {
			errs = append(errs, field.Required(p.Child("ranges"), "a model bounds at least one resource"))
		}
		for j, r := range m.Ranges {
			if r.Name == "" {
				errs = append(errs, field.Required(p.Child("ranges").Index(j).Child("name"), "the resource, such as cpu or memory"))
			}
		}
	}
	return append(errs, validateStatus(&c.Status, field.NewPath("status"))...)
}

// validateStatus checks the conditions as every Kubernetes API does.
func validateStatus(s *clusterv1alpha1.ClusterStatus, p *field.Path) field.ErrorList {
	errs := metav1validation.ValidateConditions(s.Conditions, p.Child("conditions"))
	for i, e := range s.APIEnablements {
		if e.GroupVersion == "" {
			errs = append(errs, field.Required(p.Child("apiEnablements").Index(i).Child("groupVersion"), "the group and version served"))
		}
	}
	return errs
}
