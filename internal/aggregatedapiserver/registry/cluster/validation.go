package cluster

import (
	apimachineryvalidation "k8s.io/apimachinery/pkg/api/validation"
	metav1validation "k8s.io/apimachinery/pkg/apis/meta/v1/validation"
	"k8s.io/apimachinery/pkg/util/validation/field"

	clusterv1alpha1 "github.com/karmada-go/karmada/api/cluster/v1alpha1"
	"github.com/karmada-go/karmada/internal/clusters/clustervalidation"
)

// Validate checks a Cluster as it is stored (old nil on create): its
// metadata, the field rules karmada-webhook applies too
// (clustervalidation), and well-formed conditions. karmada-webhook's other
// rules (a unique id, what an agent may change) apply through the admission
// webhook plugin.
func Validate(c, old *clusterv1alpha1.Cluster) field.ErrorList {
	errs := apimachineryvalidation.ValidateObjectMeta(&c.ObjectMeta, false, apimachineryvalidation.NameIsDNSSubdomain, field.NewPath("metadata"))
	errs = append(errs, clustervalidation.Validate(c, old)...)
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
