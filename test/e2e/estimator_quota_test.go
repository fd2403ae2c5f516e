//go:build e2e

package e2e

import (
	"context"
	"fmt"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/util/wait"
	"sigs.k8s.io/controller-runtime/pkg/client"

	policyv1alpha1 "github.com/karmada-go/karmada/api/policy/v1alpha1"
	workv1alpha2 "github.com/karmada-go/karmada/api/work/v1alpha2"
)

// quotaInMember1 creates a namespace and a ResourceQuota of hard in it,
// propagated to member1 (as Karmada's tests propagate theirs), and waits
// until member1's quota controller has counted it.
func quotaInMember1(ctx context.Context, t *testing.T, c client.Client, ns string, hard corev1.ResourceList) {
	t.Helper()
	if err := c.Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = c.Delete(context.Background(), &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}) })
	rq := &corev1.ResourceQuota{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "rq"}, Spec: corev1.ResourceQuotaSpec{Hard: hard}}
	p := &policyv1alpha1.PropagationPolicy{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "rq"},
		Spec: policyv1alpha1.PropagationSpec{
			ResourceSelectors: []policyv1alpha1.ResourceSelector{{APIVersion: "v1", Kind: "ResourceQuota", Name: "rq"}},
			Placement:         policyv1alpha1.Placement{ClusterAffinity: &policyv1alpha1.ClusterAffinity{ClusterNames: []string{"member1"}}},
		}}
	if err := c.Create(ctx, p); err != nil {
		t.Fatal(err)
	}
	if err := c.Create(ctx, rq); err != nil {
		t.Fatal(err)
	}
	m1 := kube(t, "member1")
	if err := wait.PollUntilContextTimeout(ctx, 250*time.Millisecond, time.Minute, true, func(ctx context.Context) (bool, error) {
		got, err := m1.CoreV1().ResourceQuotas(ns).Get(ctx, "rq", metav1.GetOptions{})
		return err == nil && len(got.Status.Hard) > 0, nil
	}); err != nil {
		t.Fatal("member1 never counted the propagated ResourceQuota")
	}
}

// waitScheduledCondition waits for the binding's Scheduled condition to
// have the status (and, when given, the reason).
func waitScheduledCondition(ctx context.Context, t *testing.T, c client.Client, ns, name string, status metav1.ConditionStatus, reason string) *workv1alpha2.ResourceBinding {
	t.Helper()
	rb := &workv1alpha2.ResourceBinding{}
	var cond *metav1.Condition
	if err := wait.PollUntilContextTimeout(ctx, 250*time.Millisecond, time.Minute, true, func(ctx context.Context) (bool, error) {
		if err := c.Get(ctx, client.ObjectKey{Namespace: ns, Name: name}, rb); err != nil {
			return false, nil
		}
		cond = meta.FindStatusCondition(rb.Status.Conditions, workv1alpha2.Scheduled)
		return cond != nil && cond.Status == status && (reason == "" || cond.Reason == reason), nil
	}); err != nil {
		t.Fatalf("binding %s/%s: Scheduled %+v, want %s %s (placement %+v)", ns, name, cond, status, reason, rb.Spec.Clusters)
	}
	return rb
}

// Karmada's "Quota plugin" case: a member's ResourceQuota of 30m cpu
// requests holds 3 replicas of 10m; a Deployment of 5 dynamically divided
// to that member is not placed (Unschedulable, nothing in the member), one
// of 3 is placed and runs there. The binding's requirements name the
// namespace the estimator reads the quotas of.
func TestEstimatorHonoursMemberResourceQuota(t *testing.T) {
	ctx := context.Background()
	c := karmadaClient(t)
	const ns = "e2e-estimator-quota"
	quotaInMember1(ctx, t, c, ns, corev1.ResourceList{corev1.ResourceRequestsCPU: resource.MustParse("0.03")})
	placement := policyv1alpha1.Placement{
		ClusterAffinity:   &policyv1alpha1.ClusterAffinity{ClusterNames: []string{"member1"}},
		ReplicaScheduling: dynamicDivision(),
	}
	create := func(name string, replicas int32) {
		d := withCPU(deploymentNamed(name, replicas), "10m")
		d.Namespace = ns
		p := &policyv1alpha1.PropagationPolicy{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name},
			Spec: policyv1alpha1.PropagationSpec{
				ResourceSelectors: []policyv1alpha1.ResourceSelector{{APIVersion: "apps/v1", Kind: "Deployment", Name: name}},
				Placement:         placement,
			}}
		if err := c.Create(ctx, p); err != nil {
			t.Fatal(err)
		}
		if err := c.Create(ctx, d); err != nil {
			t.Fatal(err)
		}
	}
	m1 := kube(t, "member1")

	create("over", 5)
	rb := waitScheduledCondition(ctx, t, c, ns, "over-deployment", metav1.ConditionFalse, "Unschedulable")
	if len(rb.Spec.Clusters) != 0 || rb.Spec.ReplicaRequirements == nil || rb.Spec.ReplicaRequirements.Namespace != ns {
		t.Errorf("over the quota: placement %+v, requirements %+v", rb.Spec.Clusters, rb.Spec.ReplicaRequirements)
	}
	if _, err := m1.AppsV1().Deployments(ns).Get(ctx, "over", metav1.GetOptions{}); err == nil {
		t.Error("a Deployment over member1's ResourceQuota reached member1")
	}
	over := deploymentNamed("over", 5)
	over.Namespace = ns
	if err := c.Delete(ctx, over); err != nil {
		t.Fatal(err)
	}

	create("within", 3)
	rb = waitScheduledCondition(ctx, t, c, ns, "within-deployment", metav1.ConditionTrue, "")
	if total(rb) != 3 {
		t.Errorf("within the quota: placement %+v, want 3 in member1", rb.Spec.Clusters)
	}
	if err := wait.PollUntilContextTimeout(ctx, 250*time.Millisecond, time.Minute, true, func(ctx context.Context) (bool, error) {
		d, err := m1.AppsV1().Deployments(ns).Get(ctx, "within", metav1.GetOptions{})
		return err == nil && d.Status.ReadyReplicas == 3, nil
	}); err != nil {
		t.Error("the Deployment within member1's ResourceQuota never ran its 3 replicas there")
	}
}

// Karmada's "EstimatorAssumption" case: member1's ResourceQuota of 1 cpu,
// no pod running (a FlinkDeployment makes none without its operator), so
// the quota's used stays 0: six FlinkDeployments of 150m each are placed
// one after the other, each assumed by the estimator; the seventh (1050m)
// is not, and neither is a Deployment of 200m after them.
func TestEstimatorAssumesWhatItPlacedAgainstQuota(t *testing.T) {
	ctx := context.Background()
	c := karmadaClient(t)
	const ns = "e2e-estimator-assume"
	installCRD(ctx, t, c, "flink.apache.org-flinkdeployment.yaml", "member1")
	quotaInMember1(ctx, t, c, ns, corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("1")})
	placement := policyv1alpha1.Placement{
		ClusterAffinity:   &policyv1alpha1.ClusterAffinity{ClusterNames: []string{"member1"}},
		SpreadConstraints: []policyv1alpha1.SpreadConstraint{{SpreadByField: policyv1alpha1.SpreadByFieldCluster, MaxGroups: 1, MinGroups: 1}},
		ReplicaScheduling: &policyv1alpha1.ReplicaSchedulingStrategy{ReplicaSchedulingType: policyv1alpha1.ReplicaSchedulingTypeDivided,
			ReplicaDivisionPreference: policyv1alpha1.ReplicaDivisionPreferenceAggregated},
	}
	policy := func(name, apiVersion, kind string) {
		p := &policyv1alpha1.PropagationPolicy{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name},
			Spec: policyv1alpha1.PropagationSpec{
				ResourceSelectors: []policyv1alpha1.ResourceSelector{{APIVersion: apiVersion, Kind: kind, Name: name}},
				Placement:         placement,
			}}
		if err := c.Create(ctx, p); err != nil {
			t.Fatal(err)
		}
	}
	flink := func(i int) string {
		name := fmt.Sprintf("flink-%d", i)
		policy(name, "flink.apache.org/v1beta1", "FlinkDeployment")
		createUntilServed(ctx, t, c, &unstructured.Unstructured{Object: map[string]any{
			"apiVersion": "flink.apache.org/v1beta1", "kind": "FlinkDeployment",
			"metadata": map[string]any{"name": name, "namespace": ns},
			"spec": map[string]any{
				"jobManager":  map[string]any{"replicas": int64(1), "resource": map[string]any{"cpu": "50m", "memory": "64Mi"}},
				"taskManager": map[string]any{"replicas": int64(1), "resource": map[string]any{"cpu": "100m", "memory": "64Mi"}},
			},
		}})
		return name + "-flinkdeployment"
	}
	for i := 1; i <= 6; i++ {
		waitScheduledCondition(ctx, t, c, ns, flink(i), metav1.ConditionTrue, "")
	}
	rb := waitScheduledCondition(ctx, t, c, ns, flink(7), metav1.ConditionFalse, "")
	if len(rb.Spec.Clusters) != 0 {
		t.Errorf("the seventh FlinkDeployment (1050m of 1 cpu) was placed: %+v", rb.Spec.Clusters)
	}
	d := withCPU(deploymentNamed("single", 1), "200m")
	d.Namespace = ns
	policy("single", "apps/v1", "Deployment")
	if err := c.Create(ctx, d); err != nil {
		t.Fatal(err)
	}
	rb = waitScheduledCondition(ctx, t, c, ns, "single-deployment", metav1.ConditionFalse, "")
	if len(rb.Spec.Clusters) != 0 {
		t.Errorf("a Deployment of 200m after 900m assumed of 1 cpu was placed: %+v", rb.Spec.Clusters)
	}
}
