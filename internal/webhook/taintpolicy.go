package webhook

import (
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/validation/field"

	policyv1alpha1 "github.com/karmada-go/karmada/api/policy/v1alpha1"
	"github.com/karmada-go/karmada/internal/clusters/clustervalidation"
)

var (
	matchOperators = []string{string(policyv1alpha1.MatchConditionOpIn), string(policyv1alpha1.MatchConditionOpNotIn)}
	statusValues   = []string{string(metav1.ConditionTrue), string(metav1.ConditionFalse), string(metav1.ConditionUnknown)}
)

// validateClusterTaintPolicy checks a ClusterTaintPolicy. A NoExecute
// taint evicts every workload on the cluster that does not tolerate it, so
// it is refused unless the webhook runs with
// --allow-no-execute-taint-policy (as Karmada's).
func validateClusterTaintPolicy(p *policyv1alpha1.ClusterTaintPolicy, allowNoExecute bool) field.ErrorList {
	spec := field.NewPath("spec")
	var errs field.ErrorList
	if p.Spec.TargetClusters != nil {
		errs = append(errs, validateClusterAffinity(p.Spec.TargetClusters, spec.Child("targetClusters"))...)
	}
	if len(p.Spec.AddOnConditions) == 0 && len(p.Spec.RemoveOnConditions) == 0 {
		errs = append(errs, field.Required(spec.Child("addOnConditions"), "at least one of addOnConditions and removeOnConditions: without either the policy does nothing"))
	}
	errs = append(errs, validateMatchConditions(p.Spec.AddOnConditions, spec.Child("addOnConditions"))...)
	errs = append(errs, validateMatchConditions(p.Spec.RemoveOnConditions, spec.Child("removeOnConditions"))...)
	taints := spec.Child("taints")
	if len(p.Spec.Taints) == 0 {
		errs = append(errs, field.Required(taints, "at least one taint"))
	}
	refuse := ""
	if !allowNoExecute {
		refuse = "NoExecute evicts every workload on the cluster that does not tolerate it; karmada-webhook allows it only with --allow-no-execute-taint-policy"
	}
	asCluster := make([]corev1.Taint, len(p.Spec.Taints))
	for i, t := range p.Spec.Taints {
		asCluster[i] = corev1.Taint{Key: t.Key, Value: t.Value, Effect: t.Effect}
	}
	errs = append(errs, clustervalidation.ValidateTaints(asCluster, taints, refuse)...)
	return errs
}

func validateMatchConditions(conds []policyv1alpha1.MatchCondition, path *field.Path) field.ErrorList {
	var errs field.ErrorList
	for i, c := range conds {
		p := path.Index(i)
		if c.ConditionType == "" {
			errs = append(errs, field.Required(p.Child("conditionType"), "a Cluster status condition type, such as Ready"))
		}
		switch c.Operator {
		case policyv1alpha1.MatchConditionOpIn, policyv1alpha1.MatchConditionOpNotIn:
		default:
			errs = append(errs, field.NotSupported(p.Child("operator"), c.Operator, matchOperators))
		}
		if len(c.StatusValues) == 0 {
			errs = append(errs, field.Required(p.Child("statusValues"), "at least one of True, False, Unknown"))
		}
		for j, v := range c.StatusValues {
			switch v {
			case metav1.ConditionTrue, metav1.ConditionFalse, metav1.ConditionUnknown:
			default:
				errs = append(errs, field.NotSupported(p.Child("statusValues").Index(j), v, statusValues))
			}
		}
	}
	return errs
}

// taintPolicyEndpoints are the admission endpoints of ClusterTaintPolicies:
// validation.
func taintPolicyEndpoints(k kindEnv) []Endpoint {
	dec, o := k.dec, k.o
	return []Endpoint{
		{Path: "/validate-clustertaintpolicy", GVR: policyResource("clustertaintpolicies"), Kind: "ClusterTaintPolicy",
			handler: &validating[*policyv1alpha1.ClusterTaintPolicy]{dec: dec, new: func() *policyv1alpha1.ClusterTaintPolicy { return &policyv1alpha1.ClusterTaintPolicy{} },
				validate: func(p, _ *policyv1alpha1.ClusterTaintPolicy) field.ErrorList {
					return validateClusterTaintPolicy(p, o.AllowNoExecuteTaintPolicy)
				}}},
	}
}
