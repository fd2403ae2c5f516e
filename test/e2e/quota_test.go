//go:build e2e

package e2e

import (
	"context"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	policyv1alpha1 "github.com/karmada-go/karmada/api/policy/v1alpha1"
	workv1alpha2 "github.com/karmada-go/karmada/api/work/v1alpha2"
	"github.com/karmada-go/karmada/internal/quota"
)

// A FederatedResourceQuota of 3 cpu overall, with a static assignment of 2
// cpu to member1: member1's namespace gets that ResourceQuota (and its
// status comes back); a Deployment whose placement asks 4 cpu is refused
// at admission (the binding says QuotaExceeded, naming the quota and the
// numbers); scaled to 3 it is placed, and overallUsed says 3.
func TestFederatedResourceQuota(t *testing.T) {
	ctx := context.Background()
	c := karmadaClient(t)
	const ns = "e2e-quota"
	if err := c.Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = c.Delete(context.Background(), &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}) })
	q := &policyv1alpha1.FederatedResourceQuota{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "team"},
		Spec: policyv1alpha1.FederatedResourceQuotaSpec{
			Overall:           corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("3")},
			StaticAssignments: []policyv1alpha1.StaticClusterAssignment{{ClusterName: "member1", Hard: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("2"), corev1.ResourcePods: resource.MustParse("10")}}},
		}}
	if err := c.Create(ctx, q); err != nil {
		t.Fatal(err)
	}
	// Refused with the field: a negative limit.
	bad := q.DeepCopy()
	bad.ResourceVersion, bad.Name = "", "bad"
	bad.Spec.Overall = corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("-1")}
	if err := c.Create(ctx, bad); err == nil || !strings.Contains(err.Error(), "spec.overall[cpu]") {
		t.Errorf("a negative overall limit: %v", err)
	}

	m1 := kube(t, "member1")
	err := wait.PollUntilContextTimeout(ctx, 500*time.Millisecond, time.Minute, true, func(ctx context.Context) (bool, error) {
		rq, err := m1.CoreV1().ResourceQuotas(ns).Get(ctx, "team", metav1.GetOptions{})
		if err != nil {
			return false, nil
		}
		h := rq.Spec.Hard[corev1.ResourceCPU]
		return h.String() == "2", nil
	})
	if err != nil {
		t.Fatal("member1 never got the static assignment's ResourceQuota")
	}
	if _, err := kube(t, "member2").CoreV1().ResourceQuotas(ns).Get(ctx, "team", metav1.GetOptions{}); err == nil {
		t.Error("member2, not assigned, got a ResourceQuota")
	}
	err = wait.PollUntilContextTimeout(ctx, 500*time.Millisecond, time.Minute, true, func(ctx context.Context) (bool, error) {
		if err := c.Get(ctx, client.ObjectKeyFromObject(q), q); err != nil {
			return false, nil
		}
		st := q.Status
		if len(st.AggregatedStatus) != 1 || st.AggregatedStatus[0].ClusterName != "member1" {
			return false, nil
		}
		h := st.AggregatedStatus[0].Hard[corev1.ResourceCPU]
		o := st.Overall[corev1.ResourceCPU]
		return h.String() == "2" && o.String() == "3", nil
	})
	if err != nil {
		t.Fatalf("status never showed overall 3 and member1's quota: %+v", q.Status)
	}

	d := withCPU(deploymentNamed("quota-web", 4), "1")
	d.Namespace = ns
	p := &policyv1alpha1.PropagationPolicy{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "quota-web"},
		Spec: policyv1alpha1.PropagationSpec{
			ResourceSelectors: []policyv1alpha1.ResourceSelector{{APIVersion: "apps/v1", Kind: "Deployment", Name: "quota-web"}},
			Placement: policyv1alpha1.Placement{ClusterAffinity: &policyv1alpha1.ClusterAffinity{ClusterNames: []string{"member1", "member2"}},
				ReplicaScheduling: dynamicDivision()},
		}}
	if err := c.Create(ctx, p); err != nil {
		t.Fatal(err)
	}
	if err := c.Create(ctx, d); err != nil {
		t.Fatal(err)
	}
	rb := &workv1alpha2.ResourceBinding{}
	var msg string
	err = wait.PollUntilContextTimeout(ctx, 500*time.Millisecond, time.Minute, true, func(ctx context.Context) (bool, error) {
		if err := c.Get(ctx, client.ObjectKey{Namespace: ns, Name: "quota-web-deployment"}, rb); err != nil {
			return false, nil
		}
		cond := meta.FindStatusCondition(rb.Status.Conditions, workv1alpha2.Scheduled)
		if cond == nil {
			return false, nil
		}
		msg = cond.Message
		return cond.Status == metav1.ConditionFalse && cond.Reason == quota.ReasonQuotaExceeded, nil
	})
	if err != nil {
		t.Fatalf("4 cpu against an overall 3: the binding was not refused as QuotaExceeded (%q, clusters %+v)", msg, rb.Spec.Clusters)
	}
	if !strings.Contains(msg, "FederatedResourceQuota("+ns+"/team) exceeded for resource cpu") || !strings.Contains(msg, "limit 3") || len(rb.Spec.Clusters) != 0 {
		t.Errorf("condition %q, clusters %+v: want the quota, the resource and the limit named, nothing placed", msg, rb.Spec.Clusters)
	}

	// Within the quota: placed, and counted.
	if err := c.Get(ctx, client.ObjectKeyFromObject(d), d); err != nil {
		t.Fatal(err)
	}
	d.Spec.Replicas = ptr.To(int32(3))
	if err := c.Update(ctx, d); err != nil {
		t.Fatal(err)
	}
	err = wait.PollUntilContextTimeout(ctx, 500*time.Millisecond, 90*time.Second, true, func(ctx context.Context) (bool, error) {
		if err := c.Get(ctx, client.ObjectKeyFromObject(q), q); err != nil {
			return false, nil
		}
		if err := c.Get(ctx, client.ObjectKey{Namespace: ns, Name: "quota-web-deployment"}, rb); err != nil {
			return false, nil
		}
		used := q.Status.OverallUsed[corev1.ResourceCPU]
		return meta.IsStatusConditionTrue(rb.Status.Conditions, workv1alpha2.Scheduled) && total(rb) == 3 && used.String() == "3", nil
	})
	if err != nil {
		t.Fatalf("3 cpu within 3: placement %+v, overallUsed %v", rb.Spec.Clusters, q.Status.OverallUsed)
	}
	_ = c.Delete(ctx, d)
	_ = c.Delete(ctx, p)
	_ = c.Delete(ctx, q)
	// The member's ResourceQuota, Karmada's, goes with its quota.
	err = wait.PollUntilContextTimeout(ctx, 500*time.Millisecond, time.Minute, true, func(ctx context.Context) (bool, error) {
		_, err := m1.CoreV1().ResourceQuotas(ns).Get(ctx, "team", metav1.GetOptions{})
		return err != nil, nil
	})
	if err != nil {
		t.Error("member1's ResourceQuota stayed after the FederatedResourceQuota was deleted")
	}
}
