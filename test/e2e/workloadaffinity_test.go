//go:build e2e

package e2e

import (
	"context"
	"fmt"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	policyv1alpha1 "github.com/karmada-go/karmada/api/policy/v1alpha1"
	workv1alpha2 "github.com/karmada-go/karmada/api/work/v1alpha2"
	"github.com/karmada-go/karmada/internal/testenv"
)

// Workload affinity (WorkloadAffinity, on in the local fleet): one policy
// places each Deployment on one of member1 and member2; those with the same
// "pipeline" label go together, those with the same "replica-of" label
// apart. Each is created after the one before it is placed.
func TestWorkloadAffinityGroups(t *testing.T) {
	ctx := context.Background()
	c := karmadaClient(t)
	p := placementPolicy("affinity", policyv1alpha1.Placement{
		ClusterAffinity:   &policyv1alpha1.ClusterAffinity{ClusterNames: []string{"member1", "member2"}},
		SpreadConstraints: []policyv1alpha1.SpreadConstraint{{SpreadByField: policyv1alpha1.SpreadByFieldCluster, MaxGroups: 1, MinGroups: 1}},
		WorkloadAffinity: &policyv1alpha1.WorkloadAffinity{
			Affinity:     &policyv1alpha1.WorkloadAffinityTerm{GroupByLabelKey: "e2e.karmada.io/pipeline"},
			AntiAffinity: &policyv1alpha1.WorkloadAffinityTerm{GroupByLabelKey: "e2e.karmada.io/replica-of"},
		},
	})
	p.Spec.ResourceSelectors = []policyv1alpha1.ResourceSelector{{APIVersion: "apps/v1", Kind: "Deployment", LabelSelector: &metav1.LabelSelector{MatchLabels: map[string]string{"e2e.karmada.io/affinity-test": "yes"}}}}
	createUntilCleanup(ctx, t, c, p)
	placedOn := func(name string) string {
		t.Helper()
		var on string
		testenv.Eventually(t, 60*time.Second, name+" placed on one cluster", func(ctx context.Context) error {
			rb := &workv1alpha2.ResourceBinding{}
			if err := c.Get(ctx, client.ObjectKey{Namespace: "default", Name: name + "-deployment"}, rb); err != nil {
				return err
			}
			if len(rb.Spec.Clusters) != 1 || rb.Status.SchedulerObservedGeneration != rb.Generation {
				return fmt.Errorf("clusters %+v", rb.Spec.Clusters)
			}
			on = rb.Spec.Clusters[0].Name
			return nil
		})
		return on
	}
	deploy := func(name string, labels map[string]string) string {
		d := deploymentNamed(name, 1)
		d.Labels = map[string]string{"e2e.karmada.io/affinity-test": "yes"}
		for k, v := range labels {
			d.Labels[k] = v
		}
		createUntilCleanup(ctx, t, c, d)
		return placedOn(name)
	}
	// Together: the second and third of a pipeline go where the first went.
	first := deploy("ingest", map[string]string{"e2e.karmada.io/pipeline": "orders"})
	for _, name := range []string{"transform", "load"} {
		if on := deploy(name, map[string]string{"e2e.karmada.io/pipeline": "orders"}); on != first {
			t.Errorf("%s placed on %s, its pipeline runs on %s", name, on, first)
		}
	}
	// Apart: the copy goes where the primary is not.
	primary := deploy("primary", map[string]string{"e2e.karmada.io/replica-of": "db"})
	if standby := deploy("standby", map[string]string{"e2e.karmada.io/replica-of": "db"}); standby == primary {
		t.Errorf("standby placed on %s with primary", standby)
	}
	// The binding carries the groups.
	rb := &workv1alpha2.ResourceBinding{}
	if err := c.Get(ctx, client.ObjectKey{Namespace: "default", Name: "standby-deployment"}, rb); err != nil {
		t.Fatal(err)
	}
	if g := rb.Spec.WorkloadAffinityGroups; g == nil || g.AntiAffinityGroup != "db" || g.AffinityGroup != "" {
		t.Errorf("standby's workloadAffinityGroups %+v", g)
	}
}
