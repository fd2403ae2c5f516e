package policymatch

import (
	policyv1alpha1 "github.com/karmada-go/karmada/api/policy/v1alpha1"
	workv1alpha2 "github.com/karmada-go/karmada/api/work/v1alpha2"
)

// ApplyToBinding sets what a binding's spec takes from the policy that
// claims its template: placement, propagateDeps, conflictResolution,
// schedulerName, failover, preserveResourcesOnDeletion and suspension (a
// policy without suspension clears the policy's part of it and keeps what
// the binding's own users set: scheduling). The detector
// writes bindings with it and karmadactl plan computes them with it, so the
// two cannot disagree.
func ApplyToBinding(spec *workv1alpha2.ResourceBindingSpec, policy *policyv1alpha1.PropagationSpec) {
	p := policy.Placement
	spec.Placement = &p
	spec.PropagateDeps = policy.PropagateDeps
	spec.ConflictResolution = policy.ConflictResolution
	spec.SchedulerName = policy.SchedulerName
	spec.Failover = policy.Failover
	spec.PreserveResourcesOnDeletion = policy.PreserveResourcesOnDeletion
	if policy.Suspension != nil {
		spec.Suspension = &workv1alpha2.Suspension{Suspension: *policy.Suspension}
	} else if spec.Suspension != nil {
		spec.Suspension.Suspension = policyv1alpha1.Suspension{}
	}
}
