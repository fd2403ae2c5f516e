//go:build e2e

package e2e

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	appsv1alpha1 "github.com/karmada-go/karmada/api/apps/v1alpha1"
	clusterv1alpha1 "github.com/karmada-go/karmada/api/cluster/v1alpha1"
	policyv1alpha1 "github.com/karmada-go/karmada/api/policy/v1alpha1"
	workv1alpha2 "github.com/karmada-go/karmada/api/work/v1alpha2"
)

// A Divided workload placed while member2 was cordoned stays on member1
// when member2 is uncordoned (a divided placement is steady); a
// WorkloadRebalancer places it afresh over both, reports it Successful,
// and is deleted after its TTL.
func TestWorkloadRebalancerSpreadsADividedWorkload(t *testing.T) {
	ctx := context.Background()
	c := karmadaClient(t)
	if out, err := karmadactl("cordon", "member2"); err != nil {
		t.Fatalf("cordon: %v\n%s", err, out)
	}
	t.Cleanup(func() { _, _ = karmadactl("uncordon", "member2") })
	d := deploymentNamed("rebalanced", 4)
	propagate(ctx, t, d, policyv1alpha1.Placement{
		ClusterAffinity: &policyv1alpha1.ClusterAffinity{ClusterNames: []string{"member1", "member2"}},
		ReplicaScheduling: &policyv1alpha1.ReplicaSchedulingStrategy{ReplicaSchedulingType: policyv1alpha1.ReplicaSchedulingTypeDivided,
			ReplicaDivisionPreference: policyv1alpha1.ReplicaDivisionPreferenceWeighted,
			WeightPreference:          &policyv1alpha1.ClusterPreferences{DynamicWeight: policyv1alpha1.DynamicWeightByAvailableReplicas}},
	})
	rb := waitScheduled(ctx, t, "rebalanced", 4)
	if got := placementOf(rb); got != "member1=4" {
		t.Fatalf("with member2 cordoned: %s, want member1=4", got)
	}
	if out, err := karmadactl("uncordon", "member2"); err != nil {
		t.Fatalf("uncordon: %v\n%s", err, out)
	}
	waitMemberDeployment(ctx, t, "member1", "rebalanced", 4)
	if err := c.Get(ctx, client.ObjectKeyFromObject(rb), rb); err != nil {
		t.Fatal(err)
	}
	if got := placementOf(rb); got != "member1=4" {
		t.Fatalf("uncordoning member2 moved the divided workload by itself: %s", got)
	}
	// The rebalance uses the clusters' state when it runs: member2 must
	// have reported its free capacity (a controller manager just restarted
	// may not have yet).
	err := wait.PollUntilContextTimeout(ctx, 200*time.Millisecond, 60*time.Second, true, func(ctx context.Context) (bool, error) {
		for _, m := range []string{"member1", "member2"} {
			cl := getCluster(ctx, t, c, m)
			rs := cl.Status.ResourceSummary
			if rs == nil || rs.Allocatable.Pods().IsZero() || len(cl.Spec.Taints) > 0 || !meta.IsStatusConditionTrue(cl.Status.Conditions, clusterv1alpha1.ClusterConditionReady) {
				return false, nil
			}
		}
		return true, nil
	})
	if err != nil {
		t.Fatal("member1 and member2 never both Ready, untainted and with a resource summary")
	}
	wr := &appsv1alpha1.WorkloadRebalancer{
		ObjectMeta: metav1.ObjectMeta{Name: "e2e-rebalance"},
		Spec: appsv1alpha1.WorkloadRebalancerSpec{
			Workloads:               []appsv1alpha1.ObjectReference{{APIVersion: "apps/v1", Kind: "Deployment", Namespace: "default", Name: "rebalanced"}},
			TTLSecondsAfterFinished: ptr.To(int32(5)),
		},
	}
	if err := c.Create(ctx, wr); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = c.Delete(context.Background(), wr) })
	var last string
	err = wait.PollUntilContextTimeout(ctx, 200*time.Millisecond, 60*time.Second, true, func(ctx context.Context) (bool, error) {
		if err := c.Get(ctx, client.ObjectKeyFromObject(rb), rb); err != nil {
			return false, nil
		}
		last = placementOf(rb)
		return strings.Contains(last, "member1=") && strings.Contains(last, "member2=") && total(rb) == 4, nil
	})
	if err != nil {
		got := &appsv1alpha1.WorkloadRebalancer{}
		_ = c.Get(ctx, client.ObjectKeyFromObject(wr), got)
		t.Fatalf("after the WorkloadRebalancer: placement %s, want both members sharing 4 replicas (rescheduleTriggeredAt %v, lastScheduledTime %v, scheduled %+v; rebalancer %+v)",
			last, rb.Spec.RescheduleTriggeredAt, rb.Status.LastScheduledTime, meta.FindStatusCondition(rb.Status.Conditions, workv1alpha2.Scheduled), got.Status)
	}
	t.Logf("rebalanced: %s", last)
	for _, m := range []string{"member1", "member2"} {
		want := int32(0)
		for _, tc := range rb.Spec.Clusters {
			if tc.Name == m {
				want = tc.Replicas
			}
		}
		waitMemberDeployment(ctx, t, m, "rebalanced", want)
	}
	got := &appsv1alpha1.WorkloadRebalancer{}
	if err := c.Get(ctx, client.ObjectKeyFromObject(wr), got); err == nil {
		if len(got.Status.ObservedWorkloads) != 1 || got.Status.ObservedWorkloads[0].Result != appsv1alpha1.RebalanceSuccessful || got.Status.FinishTime == nil {
			t.Errorf("rebalancer status %+v, want the workload Successful and a finish time", got.Status)
		}
	}
	err = wait.PollUntilContextTimeout(ctx, 500*time.Millisecond, 30*time.Second, true, func(ctx context.Context) (bool, error) {
		return apierrors.IsNotFound(c.Get(ctx, client.ObjectKeyFromObject(wr), &appsv1alpha1.WorkloadRebalancer{})), nil
	})
	if err != nil {
		t.Errorf("the finished WorkloadRebalancer was not deleted after its 5s TTL")
	}
}

func placementOf(rb *workv1alpha2.ResourceBinding) string {
	var out []string
	for _, tc := range rb.Spec.Clusters {
		out = append(out, fmt.Sprintf("%s=%d", tc.Name, tc.Replicas))
	}
	return strings.Join(out, ",")
}

func total(rb *workv1alpha2.ResourceBinding) int32 {
	var n int32
	for _, tc := range rb.Spec.Clusters {
		n += tc.Replicas
	}
	return n
}
