package webhook

import (
	"context"
	"errors"
	"fmt"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/util/validation/field"
	"sigs.k8s.io/controller-runtime/pkg/client"

	policyv1alpha1 "github.com/karmada-go/karmada/api/policy/v1alpha1"
	workv1alpha2 "github.com/karmada-go/karmada/api/work/v1alpha2"
	"github.com/karmada-go/karmada/internal/quota"
)

// validateFederatedResourceQuota refuses negative limits and static
// assignments without a cluster or named twice.
func validateFederatedResourceQuota(q *policyv1alpha1.FederatedResourceQuota) field.ErrorList {
	var errs field.ErrorList
	spec := field.NewPath("spec")
	nonNegative := func(path *field.Path, rl corev1.ResourceList) {
		for n, v := range rl {
			if v.Sign() < 0 {
				errs = append(errs, field.Invalid(path.Key(string(n)), v.String(), "must not be negative"))
			}
		}
	}
	if q.Spec.Overall == nil {
		errs = append(errs, field.Required(spec.Child("overall"), "the most the namespace's workloads may request across clusters, e.g. cpu: 10"))
	}
	nonNegative(spec.Child("overall"), q.Spec.Overall)
	seen := map[string]bool{}
	for i, a := range q.Spec.StaticAssignments {
		p := spec.Child("staticAssignments").Index(i)
		switch {
		case a.ClusterName == "":
			errs = append(errs, field.Required(p.Child("clusterName"), "the member cluster the ResourceQuota goes to"))
		case seen[a.ClusterName]:
			errs = append(errs, field.Duplicate(p.Child("clusterName"), a.ClusterName))
		}
		seen[a.ClusterName] = true
		if a.Hard == nil {
			errs = append(errs, field.Required(p.Child("hard"), "the ResourceQuota's hard limits"))
		}
		nonNegative(p.Child("hard"), a.Hard)
	}
	return errs
}

// quotaCheck refuses a binding's placement that would take its namespace
// past a FederatedResourceQuota's overall limit (a plain denial in
// Karmada's words), and records what an admitted one adds or gives back in
// each quota's status.overallUsed, as Karmada's webhook does (an
// optimistic update: two placements admitted at once cannot both count
// the same room; the enforcement controller recounts from the bindings
// when one is deleted and periodically).
func (o Options) quotaCheck(ctx context.Context, namespace string, spec, old *workv1alpha2.ResourceBindingSpec) (field.ErrorList, error) {
	if o.Quotas == nil {
		return nil, nil
	}
	before := &workv1alpha2.ResourceBindingSpec{}
	if old != nil {
		before = old
	}
	delta := quota.Sub(quota.Usage(spec), quota.Usage(before))
	if !changes(delta) {
		return nil, nil
	}
	list := &policyv1alpha1.FederatedResourceQuotaList{}
	var reader client.Reader = o.Quotas
	if o.QuotaReader != nil {
		reader = o.QuotaReader
	}
	if err := reader.List(ctx, list, client.InNamespace(namespace)); err != nil {
		return nil, fmt.Errorf("listing FederatedResourceQuotas of %s: %w", namespace, err)
	}
	for i := range list.Items {
		q := &list.Items[i]
		if !touches(delta, q.Spec.Overall) {
			continue
		}
		for attempt := 0; ; attempt++ {
			used := corev1.ResourceList{}
			for n, v := range q.Status.OverallUsed {
				used = quota.Add(used, corev1.ResourceList{quota.Requested(n): v})
			}
			var exceeded *quota.ExceededError
			if err := quota.Check(q, used, delta); errors.As(err, &exceeded) {
				return nil, &denial{message: err.Error()}
			}
			q.Status.Overall = q.Spec.Overall
			q.Status.OverallUsed = quota.UsedUnder(quota.Add(used, delta), q.Spec.Overall)
			err := o.Quotas.Status().Update(ctx, q)
			if err == nil {
				break
			}
			if !apierrors.IsConflict(err) || attempt == 4 {
				return nil, fmt.Errorf("recording the placement in FederatedResourceQuota %s/%s: %w", q.Namespace, q.Name, err)
			}
			if err := o.Quotas.Get(ctx, client.ObjectKeyFromObject(q), q); err != nil {
				return nil, err
			}
		}
	}
	return nil, nil
}

// changes says whether a delta changes anything.
func changes(delta corev1.ResourceList) bool {
	for _, q := range delta {
		if !q.IsZero() {
			return true
		}
	}
	return false
}

// touches says whether delta changes a resource overall limits.
func touches(delta, overall corev1.ResourceList) bool {
	for n := range overall {
		if d, ok := delta[quota.Requested(n)]; ok && !d.IsZero() {
			return true
		}
	}
	return false
}

// quotaEndpoints are the admission endpoints of FederatedResourceQuotas:
// validation.
func quotaEndpoints(k kindEnv) []Endpoint {
	dec := k.dec
	return []Endpoint{
		{Path: "/validate-federatedresourcequota", GVR: policyResource("federatedresourcequotas"), Kind: "FederatedResourceQuota", Namespaced: true,
			handler: &validating[*policyv1alpha1.FederatedResourceQuota]{dec: dec, new: func() *policyv1alpha1.FederatedResourceQuota { return &policyv1alpha1.FederatedResourceQuota{} },
				validate: func(q, _ *policyv1alpha1.FederatedResourceQuota) field.ErrorList {
					return validateFederatedResourceQuota(q)
				}}},
	}
}
