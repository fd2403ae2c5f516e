package binding

import (
	"fmt"
	"sort"
	"strings"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	policyv1alpha1 "github.com/karmada-go/karmada/api/policy/v1alpha1"
	workv1alpha2 "github.com/karmada-go/karmada/api/work/v1alpha2"
	"github.com/karmada-go/karmada/internal/interpreter"
	"github.com/karmada-go/karmada/internal/quota"
)

// A FederatedResourceQuota counts what a binding declares: each cluster's
// replicas times the binding's replica requirements. What runs is the
// copy's final manifest, after overrides, and the binding's declarations
// are whatever whoever wrote it said. In a namespace with a quota, a copy
// that would run more than its binding declares for its cluster (an
// override raising replicas or requests, a binding written with fewer
// replicas or requirements than its template has) is refused: the Work
// keeps its last good manifest and the binding says why, as for an
// override that cannot be applied.

// beyondQuota says why the copy for target, whose final manifest is obj,
// runs more of a resource that one of quotas limits than the binding
// declares there; nil when it does not (or when no quota applies).
func beyondQuota(in *interpreter.Interpreter, obj *unstructured.Unstructured, spec *workv1alpha2.ResourceBindingSpec, target workv1alpha2.TargetCluster, quotas []policyv1alpha1.FederatedResourceQuota) error {
	if len(quotas) == 0 {
		return nil
	}
	gk := obj.GroupVersionKind().GroupKind()
	var runs, declared corev1.ResourceList
	switch {
	case in.HasComponents(gk):
		// A workload of several components runs, in its cluster, each
		// component's replicas with that component's needs.
		components, err := in.Components(obj)
		if err != nil {
			return err
		}
		run := workv1alpha2.TargetCluster{Name: target.Name}
		for _, c := range components {
			run.Components = append(run.Components, workv1alpha2.ComponentReplicas{Name: c.Name, Replicas: c.Replicas})
		}
		runs = quota.Usage(&workv1alpha2.ResourceBindingSpec{Clusters: []workv1alpha2.TargetCluster{run}, Components: components})
		declared = quota.Usage(&workv1alpha2.ResourceBindingSpec{Clusters: []workv1alpha2.TargetCluster{target}, Components: spec.Components, ReplicaRequirements: spec.ReplicaRequirements})
	case in.HasReplicas(gk):
		replicas, requirements, err := in.Replicas(obj)
		if err != nil {
			return err
		}
		runs = quota.Usage(&workv1alpha2.ResourceBindingSpec{Clusters: []workv1alpha2.TargetCluster{{Name: target.Name, Replicas: replicas}}, ReplicaRequirements: requirements})
		declared = quota.Usage(&workv1alpha2.ResourceBindingSpec{Clusters: []workv1alpha2.TargetCluster{target}, ReplicaRequirements: spec.ReplicaRequirements})
	default:
		return nil
	}
	exceeds := func(r corev1.ResourceName) bool {
		run, decl := runs[r], declared[r]
		return run.Cmp(decl) > 0
	}
	over := map[corev1.ResourceName]string{}
	var by []string
	for _, q := range quotas {
		limits := false
		for n := range q.Spec.Overall {
			if r := quota.Requested(n); exceeds(r) {
				run, decl := runs[r], declared[r]
				over[r] = fmt.Sprintf("%s %s (the binding declares %s)", r, run.String(), decl.String())
				limits = true
			}
		}
		if limits {
			by = append(by, q.Namespace+"/"+q.Name)
		}
	}
	if len(over) == 0 {
		return nil
	}
	what := make([]string, 0, len(over))
	for _, o := range over {
		what = append(what, o)
	}
	sort.Strings(what)
	sort.Strings(by)
	return fmt.Errorf("%w: the copy for cluster %s would run %s: more than FederatedResourceQuota %s counts; an override may not raise replicas or requests, nor a binding declare less than its template",
		errOverride, target.Name, strings.Join(what, ", "), strings.Join(by, ", "))
}
