package policymatch

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	"k8s.io/utils/ptr"

	policyv1alpha1 "github.com/karmada-go/karmada/api/policy/v1alpha1"
	workv1alpha2 "github.com/karmada-go/karmada/api/work/v1alpha2"
)

// Every field a binding takes from its policy is set; a policy without
// suspension clears the policy's part and keeps the binding's own.
func TestApplyToBinding(t *testing.T) {
	policy := &policyv1alpha1.PropagationSpec{
		Placement:                   policyv1alpha1.Placement{ClusterAffinity: &policyv1alpha1.ClusterAffinity{ClusterNames: []string{"m1"}}},
		PropagateDeps:               true,
		ConflictResolution:          policyv1alpha1.ConflictOverwrite,
		SchedulerName:               "other-scheduler",
		Failover:                    &policyv1alpha1.FailoverBehavior{Application: &policyv1alpha1.ApplicationFailoverBehavior{}},
		PreserveResourcesOnDeletion: ptr.To(true),
		Suspension:                  &policyv1alpha1.Suspension{Dispatching: ptr.To(true)},
	}
	spec := &workv1alpha2.ResourceBindingSpec{Replicas: 3}
	ApplyToBinding(spec, policy)
	want := &workv1alpha2.ResourceBindingSpec{
		Replicas:                    3,
		Placement:                   &policy.Placement,
		PropagateDeps:               true,
		ConflictResolution:          policyv1alpha1.ConflictOverwrite,
		SchedulerName:               "other-scheduler",
		Failover:                    policy.Failover,
		PreserveResourcesOnDeletion: ptr.To(true),
		Suspension:                  &workv1alpha2.Suspension{Suspension: policyv1alpha1.Suspension{Dispatching: ptr.To(true)}},
	}
	if d := cmp.Diff(want, spec); d != "" {
		t.Errorf("binding spec (-want +got):\n%s", d)
	}
	if spec.Placement == &policy.Placement {
		t.Error("the binding shares the policy's placement: a change of one would change the other")
	}

	spec.Suspension.Scheduling = ptr.To(true) // the binding's own
	policy.Suspension = nil
	ApplyToBinding(spec, policy)
	if spec.Suspension == nil || spec.Suspension.Dispatching != nil || spec.Suspension.Scheduling == nil {
		t.Errorf("a policy without suspension: binding suspension %+v, want the policy's part cleared and the binding's own kept", spec.Suspension)
	}
}
