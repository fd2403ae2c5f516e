package integration

import (
	"context"
	"fmt"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	policyv1alpha1 "github.com/karmada-go/karmada/api/policy/v1alpha1"
	workv1alpha2 "github.com/karmada-go/karmada/api/work/v1alpha2"
	"github.com/karmada-go/karmada/internal/scheduler"
	"github.com/karmada-go/karmada/internal/testenv"
)

// Workload affinity groups of ClusterResourceBindings (as Karmada's: a
// scope of their own, apart from every namespace's): a cluster binding of
// an anti-affinity group goes where the group's other cluster binding is
// not, one of an affinity group where its group runs; a namespaced binding
// of the same group name is neither held apart nor drawn by them.
func TestWorkloadAffinityOfClusterBindings(t *testing.T) {
	t.Parallel()
	env, ctx := startSchedulerWith(t, func(s *scheduler.Scheduler) { s.WorkloadAffinity = true })
	c := env.Client
	for _, m := range []string{"member1", "member2", "member3"} {
		readyCluster(ctx, t, c, m)
	}
	oneOf := func(names ...string) *policyv1alpha1.Placement {
		return &policyv1alpha1.Placement{ClusterAffinity: &policyv1alpha1.ClusterAffinity{ClusterNames: names},
			SpreadConstraints: []policyv1alpha1.SpreadConstraint{{SpreadByField: policyv1alpha1.SpreadByFieldCluster, MaxGroups: 1, MinGroups: 1}}}
	}
	placed := func(obj client.Object, clusters func() []workv1alpha2.TargetCluster, status func() *workv1alpha2.ResourceBindingStatus) string {
		t.Helper()
		var on string
		testenv.Eventually(t, 20*time.Second, obj.GetName()+" scheduled on one cluster", func(ctx context.Context) error {
			if err := c.Get(ctx, client.ObjectKeyFromObject(obj), obj); err != nil {
				return err
			}
			cond := meta.FindStatusCondition(status().Conditions, workv1alpha2.Scheduled)
			if cond == nil || cond.Status != metav1.ConditionTrue || len(clusters()) != 1 || status().SchedulerObservedGeneration != obj.GetGeneration() {
				return fmt.Errorf("clusters %+v, condition %+v", clusters(), cond)
			}
			on = clusters()[0].Name
			return nil
		})
		return on
	}
	crb := func(name string, groups workv1alpha2.WorkloadAffinityGroups, p *policyv1alpha1.Placement) string {
		t.Helper()
		b := &workv1alpha2.ClusterResourceBinding{ObjectMeta: metav1.ObjectMeta{Name: name}, Spec: workv1alpha2.ResourceBindingSpec{
			// (A kind the clusters serve, as setReady records them.)
			Resource:  workv1alpha2.ObjectReference{APIVersion: "apps/v1", Kind: "Deployment", Name: name},
			Placement: p, WorkloadAffinityGroups: &groups}}
		if err := c.Create(ctx, b); err != nil {
			t.Fatal(err)
		}
		return placed(b, func() []workv1alpha2.TargetCluster { return b.Spec.Clusters }, func() *workv1alpha2.ResourceBindingStatus { return &b.Status })
	}
	everywhere := oneOf("member1", "member2", "member3")

	// Apart, one after the other: three of an anti-affinity group take the
	// three clusters.
	seen := map[string]string{}
	for _, name := range []string{"replica-a", "replica-b", "replica-c"} {
		on := crb(name, workv1alpha2.WorkloadAffinityGroups{AntiAffinityGroup: "db"}, everywhere)
		if other, ok := seen[on]; ok {
			t.Errorf("%s placed on %s with %s (anti-affinity group db)", name, on, other)
		}
		seen[on] = name
	}
	// Together: the second of an affinity group goes where the first went.
	first := crb("ingest", workv1alpha2.WorkloadAffinityGroups{AffinityGroup: "orders"}, everywhere)
	if on := crb("load", workv1alpha2.WorkloadAffinityGroups{AffinityGroup: "orders"}, everywhere); on != first {
		t.Errorf("load placed on %s, its group runs on %s", on, first)
	}
	// A namespaced binding of group db, allowed on member1 only (where a
	// cluster binding of group db runs): placed there all the same.
	rb := newBinding("namespaced-replica", 1, oneOf("member1"))
	rb.Spec.WorkloadAffinityGroups = &workv1alpha2.WorkloadAffinityGroups{AntiAffinityGroup: "db"}
	if err := c.Create(ctx, rb); err != nil {
		t.Fatal(err)
	}
	if got := placementOf(waitScheduled(ctx, t, c, "namespaced-replica", metav1.ConditionTrue)); got != "member1=1" {
		t.Errorf("the namespaced binding of group db placed %q, want member1 (cluster bindings' groups are their own)", got)
	}
}
