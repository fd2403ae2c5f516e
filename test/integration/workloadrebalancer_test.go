package integration

import (
	"context"
	"fmt"
	"testing"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/manager"

	appsv1alpha1 "github.com/karmada-go/karmada/api/apps/v1alpha1"
	workv1alpha2 "github.com/karmada-go/karmada/api/work/v1alpha2"
	"github.com/karmada-go/karmada/internal/failover/workloadrebalancer"
	"github.com/karmada-go/karmada/internal/testenv"
)

// A WorkloadRebalancer against a real API server: the listed workload's
// binding gets rescheduleTriggeredAt (which has the scheduler place it
// afresh), a workload without a binding
// is reported Failed, the finish time is set once both have a result, and
// with ttlSecondsAfterFinished the rebalancer is deleted after it.
func TestWorkloadRebalancer(t *testing.T) {
	t.Parallel()
	env := testenv.Start(t)
	ctx := context.Background()
	c := env.Client
	env.RunManager(t, func(ctx context.Context, mgr manager.Manager) error {
		return (&workloadrebalancer.Reconciler{Client: mgr.GetClient()}).SetupWithManager(mgr)
	})
	rb := &workv1alpha2.ResourceBinding{
		ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: "web-deployment"},
		Spec: workv1alpha2.ResourceBindingSpec{Resource: workv1alpha2.ObjectReference{APIVersion: "apps/v1", Kind: "Deployment", Namespace: "default", Name: "web"}, Replicas: 2,
			Clusters: []workv1alpha2.TargetCluster{{Name: "member1", Replicas: 2}}},
	}
	if err := c.Create(ctx, rb); err != nil {
		t.Fatal(err)
	}
	wr := &appsv1alpha1.WorkloadRebalancer{
		ObjectMeta: metav1.ObjectMeta{Name: "rebalance-web"},
		Spec: appsv1alpha1.WorkloadRebalancerSpec{
			Workloads: []appsv1alpha1.ObjectReference{
				{APIVersion: "apps/v1", Kind: "Deployment", Namespace: "default", Name: "web"},
				{APIVersion: "apps/v1", Kind: "Deployment", Namespace: "default", Name: "missing"},
			},
			TTLSecondsAfterFinished: ptr.To(int32(3)),
		},
	}
	if err := c.Create(ctx, wr); err != nil {
		t.Fatal(err)
	}
	var finished *metav1.Time
	testenv.Eventually(t, 20*time.Second, "both workloads with a result and the rebalancer finished", func(ctx context.Context) error {
		got := &appsv1alpha1.WorkloadRebalancer{}
		if err := c.Get(ctx, client.ObjectKeyFromObject(wr), got); err != nil {
			return err
		}
		ws := got.Status.ObservedWorkloads
		// Karmada's order (apiVersion, kind, namespace, name), not the spec's.
		if len(ws) != 2 || ws[0].Workload.Name != "missing" || ws[1].Workload.Name != "web" {
			return fmt.Errorf("workloads %+v, want missing then web", ws)
		}
		if ws[1].Result != appsv1alpha1.RebalanceSuccessful || ws[0].Result != appsv1alpha1.RebalanceFailed ||
			ws[0].Reason != appsv1alpha1.RebalanceObjectNotFound || got.Status.FinishTime == nil || got.Status.ObservedGeneration != got.Generation {
			return fmt.Errorf("status %+v", got.Status)
		}
		finished = got.Status.FinishTime
		wr = got
		return nil
	})
	got := &workv1alpha2.ResourceBinding{}
	if err := c.Get(ctx, client.ObjectKeyFromObject(rb), got); err != nil {
		t.Fatal(err)
	}
	if got.Spec.RescheduleTriggeredAt == nil || got.Spec.RescheduleTriggeredAt.Before(&wr.CreationTimestamp) || got.Spec.RescheduleTriggeredAt.After(finished.Time) {
		t.Errorf("binding's rescheduleTriggeredAt %v, want between the rebalancer's creation %v and its finish %v", got.Spec.RescheduleTriggeredAt, wr.CreationTimestamp, finished)
	}
	testenv.Eventually(t, 20*time.Second, "the finished rebalancer deleted after its TTL", func(ctx context.Context) error {
		err := c.Get(ctx, client.ObjectKeyFromObject(wr), &appsv1alpha1.WorkloadRebalancer{})
		if !apierrors.IsNotFound(err) {
			return fmt.Errorf("still there (%v)", err)
		}
		return nil
	})
	if gone := time.Now(); gone.Sub(finished.Time) < 2*time.Second {
		t.Errorf("deleted %s after it finished, before its 3s TTL", gone.Sub(finished.Time))
	}
}
