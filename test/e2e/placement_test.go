//go:build e2e

package e2e

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/wait"
	"sigs.k8s.io/controller-runtime/pkg/client"

	clusterv1alpha1 "github.com/karmada-go/karmada/api/cluster/v1alpha1"
	policyv1alpha1 "github.com/karmada-go/karmada/api/policy/v1alpha1"
	workv1alpha1 "github.com/karmada-go/karmada/api/work/v1alpha1"
	workv1alpha2 "github.com/karmada-go/karmada/api/work/v1alpha2"
	"github.com/karmada-go/karmada/internal/names"
)

// withCPU gives every replica a cpu request.
func withCPU(d *appsv1.Deployment, cpu string) *appsv1.Deployment {
	d.Spec.Template.Spec.Containers[0].Resources.Requests = corev1.ResourceList{corev1.ResourceCPU: resource.MustParse(cpu)}
	return d
}

func placementPolicy(name string, placement policyv1alpha1.Placement) *policyv1alpha1.PropagationPolicy {
	return &policyv1alpha1.PropagationPolicy{
		ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: name},
		Spec: policyv1alpha1.PropagationSpec{
			ResourceSelectors: []policyv1alpha1.ResourceSelector{{APIVersion: "apps/v1", Kind: "Deployment", Name: name}},
			Placement:         placement,
		},
	}
}

// propagate creates a Deployment and a policy of the same name, and removes
// both when the test ends.
func propagate(ctx context.Context, t *testing.T, d *appsv1.Deployment, placement policyv1alpha1.Placement) {
	t.Helper()
	c := karmadaClient(t)
	p := placementPolicy(d.Name, placement)
	if err := c.Create(ctx, p); err != nil {
		t.Fatal(err)
	}
	if err := c.Create(ctx, d); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = c.Delete(context.Background(), d)
		_ = c.Delete(context.Background(), p)
	})
}

// waitScheduled waits until the Deployment's binding is scheduled with all
// its replicas placed, and returns it.
func waitScheduled(ctx context.Context, t *testing.T, name string, replicas int32) *workv1alpha2.ResourceBinding {
	t.Helper()
	c := karmadaClient(t)
	rb := &workv1alpha2.ResourceBinding{}
	var last string
	err := wait.PollUntilContextTimeout(ctx, 200*time.Millisecond, 60*time.Second, true, func(ctx context.Context) (bool, error) {
		if err := c.Get(ctx, client.ObjectKey{Namespace: "default", Name: name + "-deployment"}, rb); err != nil {
			last = err.Error()
			return false, nil
		}
		cond := meta.FindStatusCondition(rb.Status.Conditions, workv1alpha2.Scheduled)
		if cond == nil || cond.Status != metav1.ConditionTrue || rb.Status.SchedulerObservedGeneration != rb.Generation {
			last = fmt.Sprintf("%+v", rb.Status.Conditions)
			return false, nil
		}
		var sum int32
		for _, tc := range rb.Spec.Clusters {
			sum += tc.Replicas
		}
		last = fmt.Sprintf("%+v", rb.Spec.Clusters)
		return sum == replicas || replicas == 0, nil
	})
	if err != nil {
		t.Fatalf("binding of %s never scheduled %d replicas: %s", name, replicas, last)
	}
	return rb
}

func placed(rb *workv1alpha2.ResourceBinding) map[string]int32 {
	out := map[string]int32{}
	for _, tc := range rb.Spec.Clusters {
		out[tc.Name] = tc.Replicas
	}
	return out
}

// testStaticWeights: Divided by static weights 1:2 puts 3 and 6 of 9.
func testStaticWeights(ctx context.Context, t *testing.T) {
	propagate(ctx, t, deploymentNamed("weighted", 9), policyv1alpha1.Placement{
		ClusterAffinity: &policyv1alpha1.ClusterAffinity{ClusterNames: []string{"member1", "member2"}},
		ReplicaScheduling: &policyv1alpha1.ReplicaSchedulingStrategy{
			ReplicaSchedulingType: policyv1alpha1.ReplicaSchedulingTypeDivided, ReplicaDivisionPreference: policyv1alpha1.ReplicaDivisionPreferenceWeighted,
			WeightPreference: &policyv1alpha1.ClusterPreferences{StaticWeightList: []policyv1alpha1.StaticClusterWeight{
				{TargetCluster: policyv1alpha1.ClusterAffinity{ClusterNames: []string{"member1"}}, Weight: 1},
				{TargetCluster: policyv1alpha1.ClusterAffinity{ClusterNames: []string{"member2"}}, Weight: 2},
			}},
		},
	})
	if got := placed(waitScheduled(ctx, t, "weighted", 9)); got["member1"] != 3 || got["member2"] != 6 || len(got) != 2 {
		t.Errorf("placement %v, want member1=3 member2=6", got)
	}
	waitMemberDeployment(ctx, t, "member1", "weighted", 3)
	waitMemberDeployment(ctx, t, "member2", "weighted", 6)
}

// testDynamicWeights: with half of member1's cpu taken by a workload Karmada
// does not manage, dynamic weights give member2 (all free) more replicas.
func testDynamicWeights(ctx context.Context, t *testing.T) {
	m1 := kube(t, "member1")
	hog := withCPU(deploymentNamed("hog", 12), "1")
	if _, err := m1.AppsV1().Deployments("default").Create(ctx, hog, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = m1.AppsV1().Deployments("default").Delete(context.Background(), "hog", metav1.DeleteOptions{})
	})
	waitAvailable(ctx, t, m1, "hog", 12)
	// The cluster status controller sees the used cpu on its next round.
	c := karmadaClient(t)
	err := wait.PollUntilContextTimeout(ctx, time.Second, 60*time.Second, true, func(ctx context.Context) (bool, error) {
		cl := &clusterv1alpha1.Cluster{}
		if err := c.Get(ctx, client.ObjectKey{Name: "member1"}, cl); err != nil || cl.Status.ResourceSummary == nil {
			return false, nil
		}
		used := cl.Status.ResourceSummary.Allocated[corev1.ResourceCPU]
		return used.Cmp(resource.MustParse("12")) >= 0, nil
	})
	if err != nil {
		t.Fatal("member1's resource summary never showed the 12 cpu in use")
	}

	propagate(ctx, t, withCPU(deploymentNamed("dynamic", 9), "1"), policyv1alpha1.Placement{
		ClusterAffinity: &policyv1alpha1.ClusterAffinity{ClusterNames: []string{"member1", "member2"}},
		ReplicaScheduling: &policyv1alpha1.ReplicaSchedulingStrategy{
			ReplicaSchedulingType: policyv1alpha1.ReplicaSchedulingTypeDivided, ReplicaDivisionPreference: policyv1alpha1.ReplicaDivisionPreferenceWeighted,
			WeightPreference: &policyv1alpha1.ClusterPreferences{DynamicWeight: policyv1alpha1.DynamicWeightByAvailableReplicas},
		},
	})
	rb := waitScheduled(ctx, t, "dynamic", 9)
	got := placed(rb)
	if got["member1"] == 0 || got["member2"] <= got["member1"] {
		t.Errorf("placement %v: want both clusters used and member2 (more free cpu) given more", got)
	}
	avail := map[string]int32{}
	for _, e := range rb.Status.PlacementExplanation.Clusters {
		if e.AvailableReplicas != nil {
			avail[e.Name] = *e.AvailableReplicas
		}
	}
	if avail["member2"]-avail["member1"] < 10 {
		t.Errorf("estimated available replicas %v: member2 should have about 12 more than member1", avail)
	}
	waitMemberDeployment(ctx, t, "member1", "dynamic", got["member1"])
	waitMemberDeployment(ctx, t, "member2", "dynamic", got["member2"])
}

// testAffinityGroups: with member1 cordoned, a primary group of member1
// falls through to the backup group; explain-placement shows why.
func testAffinityGroups(ctx context.Context, t *testing.T) {
	if out, err := karmadactl("cordon", "member1"); err != nil {
		t.Fatalf("cordon: %v\n%s", err, out)
	}
	t.Cleanup(func() { _, _ = karmadactl("uncordon", "member1") })
	propagate(ctx, t, deploymentNamed("grouped", 2), policyv1alpha1.Placement{
		ClusterAffinities: []policyv1alpha1.ClusterAffinityTerm{
			{AffinityName: "primary", ClusterAffinity: policyv1alpha1.ClusterAffinity{ClusterNames: []string{"member1"}}},
			{AffinityName: "backup", ClusterAffinity: policyv1alpha1.ClusterAffinity{ClusterNames: []string{"member2"}}},
		},
	})
	rb := waitScheduled(ctx, t, "grouped", 2)
	if got := placed(rb); len(got) != 1 || got["member2"] != 2 || rb.Status.SchedulerObservingAffinityName != "backup" {
		t.Errorf("placement %v under affinity %q, want member2=2 under backup", got, rb.Status.SchedulerObservingAffinityName)
	}
	waitMemberDeployment(ctx, t, "member2", "grouped", 2)

	// A cordoned cluster is explained as filtered by TaintToleration.
	propagate(ctx, t, deploymentNamed("explained", 1), policyv1alpha1.Placement{
		ClusterAffinity: &policyv1alpha1.ClusterAffinity{ClusterNames: []string{"member1", "member2"}},
	})
	waitScheduled(ctx, t, "explained", 0)
	out, err := karmadactl("explain-placement", "rb", "explained-deployment", "-n", "default")
	if err != nil {
		t.Fatalf("explain-placement: %v\n%s", err, out)
	}
	if !lineHas(out, "member1", "TaintToleration") || !strings.Contains(out, "cluster.karmada.io/unschedulable") || !lineHas(out, "member2", "yes") {
		t.Errorf("explain-placement does not show member1 filtered by TaintToleration and member2 selected:\n%s", out)
	}
	if !lineHas(out, "member3", "ClusterAffinity") {
		t.Errorf("explain-placement does not show member3 filtered by ClusterAffinity:\n%s", out)
	}
}

// testImageOverride: an OverridePolicy gives member2 another registry while
// member1 keeps the original image.
func testImageOverride(ctx context.Context, t *testing.T) {
	c := karmadaClient(t)
	op := &policyv1alpha1.OverridePolicy{
		ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: "registry-member2"},
		Spec: policyv1alpha1.OverrideSpec{
			ResourceSelectors: []policyv1alpha1.ResourceSelector{{APIVersion: "apps/v1", Kind: "Deployment", Name: "imaged"}},
			OverrideRules: []policyv1alpha1.RuleWithCluster{{
				TargetCluster: &policyv1alpha1.ClusterAffinity{ClusterNames: []string{"member2"}},
				Overriders: policyv1alpha1.Overriders{ImageOverrider: []policyv1alpha1.ImageOverrider{
					{Component: policyv1alpha1.Registry, Operator: policyv1alpha1.OverriderOpReplace, Value: "registry.member2.example"}},
					LabelsOverrider: []policyv1alpha1.LabelAnnotationOverrider{{Operator: policyv1alpha1.OverriderOpAdd, Value: map[string]string{"site": "member2"}}}},
			}},
		},
	}
	if err := c.Create(ctx, op); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = c.Delete(context.Background(), op) })
	d := deploymentNamed("imaged", 1)
	d.Spec.Template.Spec.Containers[0].Image = "nginx:1.27"
	propagate(ctx, t, d, policyv1alpha1.Placement{ClusterAffinity: &policyv1alpha1.ClusterAffinity{ClusterNames: []string{"member1", "member2"}}})
	waitMemberDeployment(ctx, t, "member1", "imaged", 1)
	waitMemberDeployment(ctx, t, "member2", "imaged", 1)
	waitEvents(ctx, t, "Deployment", "default", "imaged", "ApplyOverridePolicySucceed")
	image := func(member string) (string, map[string]string) {
		got, err := kube(t, member).AppsV1().Deployments("default").Get(ctx, "imaged", metav1.GetOptions{})
		if err != nil {
			t.Fatal(err)
		}
		return got.Spec.Template.Spec.Containers[0].Image, got.Labels
	}
	if img, labels := image("member1"); img != "nginx:1.27" || labels["site"] != "" {
		t.Errorf("member1 runs %s with labels %v, want the original nginx:1.27 without the override's label", img, labels)
	}
	if img, labels := image("member2"); img != "registry.member2.example/nginx:1.27" || labels["site"] != "member2" {
		t.Errorf("member2 runs %s with labels %v, want registry.member2.example/nginx:1.27 and site=member2", img, labels)
	}
	works := &workv1alpha1.WorkList{}
	if err := c.List(ctx, works, client.InNamespace("karmada-es-member2")); err != nil {
		t.Fatal(err)
	}
	found := false
	for _, w := range works.Items {
		if w.Name == names.WorkName("Deployment", "imaged", "default") {
			found = strings.Contains(w.Annotations["policy.karmada.io/applied-overrides"], "default/registry-member2")
		}
	}
	if !found {
		t.Error("member2's Work does not record the applied OverridePolicy")
	}

	// A broken overrider is reported on the binding, naming policy and path.
	broken := &policyv1alpha1.OverridePolicy{
		ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: "broken"},
		Spec: policyv1alpha1.OverrideSpec{
			ResourceSelectors: []policyv1alpha1.ResourceSelector{{APIVersion: "apps/v1", Kind: "Deployment", Name: "imaged"}},
			OverrideRules: []policyv1alpha1.RuleWithCluster{{Overriders: policyv1alpha1.Overriders{Plaintext: []policyv1alpha1.PlaintextOverrider{
				{Path: "/spec/nothing/here", Operator: policyv1alpha1.OverriderOpReplace, Value: apiextensionsv1.JSON{Raw: []byte("1")}}}}}},
		},
	}
	if err := c.Create(ctx, broken); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = c.Delete(context.Background(), broken) })
	var last string
	err := wait.PollUntilContextTimeout(ctx, 200*time.Millisecond, 30*time.Second, true, func(ctx context.Context) (bool, error) {
		rb := &workv1alpha2.ResourceBinding{}
		if err := c.Get(ctx, client.ObjectKey{Namespace: "default", Name: "imaged-deployment"}, rb); err != nil {
			return false, nil
		}
		cond := meta.FindStatusCondition(rb.Status.Conditions, "OverridesApplied")
		if cond == nil {
			return false, nil
		}
		last = cond.Message
		return cond.Status == metav1.ConditionFalse && strings.Contains(cond.Message, "OverridePolicy default/broken") && strings.Contains(cond.Message, "/spec/nothing/here"), nil
	})
	if err != nil {
		t.Errorf("the binding never reported the broken override policy; last message %q", last)
	}
}

// testSpreadRegions: a spread constraint of exactly two regions places the
// replicas in two clusters of different regions.
func testSpreadRegions(ctx context.Context, t *testing.T) {
	propagate(ctx, t, deploymentNamed("spread", 4), policyv1alpha1.Placement{
		// Karmada requires a cluster constraint beside a region one.
		SpreadConstraints: []policyv1alpha1.SpreadConstraint{
			{SpreadByField: policyv1alpha1.SpreadByFieldCluster, MinGroups: 2, MaxGroups: 2},
			{SpreadByField: policyv1alpha1.SpreadByFieldRegion, MinGroups: 2, MaxGroups: 2},
		},
		ReplicaScheduling: &policyv1alpha1.ReplicaSchedulingStrategy{ReplicaSchedulingType: policyv1alpha1.ReplicaSchedulingTypeDivided},
	})
	got := placed(waitScheduled(ctx, t, "spread", 4))
	c := karmadaClient(t)
	regions := map[string]bool{}
	for name, n := range got {
		cl := &clusterv1alpha1.Cluster{}
		if err := c.Get(ctx, client.ObjectKey{Name: name}, cl); err != nil {
			t.Fatal(err)
		}
		if n == 0 || cl.Spec.Region == "" {
			t.Errorf("cluster %s: %d replicas, region %q", name, n, cl.Spec.Region)
		}
		regions[cl.Spec.Region] = true
	}
	if len(got) != 2 || len(regions) != 2 {
		t.Errorf("placement %v over regions %v, want two clusters in two regions", got, regions)
	}
}

// testPlan: `karmadactl plan` shows where a policy would place a template
// without creating anything.
func testPlan(ctx context.Context, t *testing.T) {
	c := karmadaClient(t)
	if err := c.Create(ctx, deploymentNamed("planned", 3)); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = c.Delete(context.Background(), deploymentNamed("planned", 3)) })
	file := filepath.Join(t.TempDir(), "policy.yaml")
	policy := `apiVersion: policy.karmada.io/v1alpha1
kind: PropagationPolicy
metadata:
  name: planned
  namespace: default
spec:
  resourceSelectors:
    - apiVersion: apps/v1
      kind: Deployment
      name: planned
  placement:
    clusterAffinity:
      clusterNames: [member3]
`
	if err := os.WriteFile(file, []byte(policy), 0o644); err != nil {
		t.Fatal(err)
	}
	out, err := karmadactl("plan", "-f", file)
	if err != nil {
		t.Fatalf("plan: %v\n%s", err, out)
	}
	if !strings.Contains(out, "selects 1 template") || !strings.Contains(out, "placement: member3=3") || !lineHas(out, "member1", "ClusterAffinity") {
		t.Errorf("plan output:\n%s", out)
	}
	// Nothing was written.
	if err := c.Get(ctx, client.ObjectKey{Namespace: "default", Name: "planned"}, &policyv1alpha1.PropagationPolicy{}); err == nil {
		t.Error("plan created the policy")
	}
	if err := c.Get(ctx, client.ObjectKey{Namespace: "default", Name: "planned-deployment"}, &workv1alpha2.ResourceBinding{}); err == nil {
		t.Error("plan created a binding")
	}
}
