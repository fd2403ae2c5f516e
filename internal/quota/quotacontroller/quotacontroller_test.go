package quotacontroller

import (
	"context"
	"encoding/json"
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"

	policyv1alpha1 "github.com/karmada-go/karmada/api/policy/v1alpha1"
	workv1alpha1 "github.com/karmada-go/karmada/api/work/v1alpha1"
	workv1alpha2 "github.com/karmada-go/karmada/api/work/v1alpha2"
	"github.com/karmada-go/karmada/internal/scheme"
)

func TestSyncAndStatus(t *testing.T) {
	ctx := context.Background()
	q := &policyv1alpha1.FederatedResourceQuota{ObjectMeta: metav1.ObjectMeta{Namespace: "shop", Name: "team"},
		Spec: policyv1alpha1.FederatedResourceQuotaSpec{
			Overall: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("10"), "requests.memory": resource.MustParse("8Gi")},
			StaticAssignments: []policyv1alpha1.StaticClusterAssignment{
				{ClusterName: "member1", Hard: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("4")}},
				{ClusterName: "member2", Hard: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("6")}},
			}}}
	rb := &workv1alpha2.ResourceBinding{ObjectMeta: metav1.ObjectMeta{Namespace: "shop", Name: "web-deployment"},
		Spec: workv1alpha2.ResourceBindingSpec{
			ReplicaRequirements: &workv1alpha2.ReplicaRequirements{ResourceRequest: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("500m"), corev1.ResourceMemory: resource.MustParse("1Gi")}},
			Clusters:            []workv1alpha2.TargetCluster{{Name: "member1", Replicas: 2}, {Name: "member2", Replicas: 3}}}}
	other := rb.DeepCopy()
	other.Namespace = "elsewhere"
	c := fake.NewClientBuilder().WithScheme(scheme.Scheme).WithObjects(q, rb, other).WithStatusSubresource(q, &workv1alpha1.Work{}).Build()
	req := ctrl.Request{NamespacedName: client.ObjectKeyFromObject(q)}
	if _, err := (&Sync{Client: c}).Reconcile(ctx, req); err != nil {
		t.Fatal(err)
	}
	works := &workv1alpha1.WorkList{}
	if err := c.List(ctx, works, client.MatchingLabels{policyv1alpha1.FederatedResourceQuotaNamespaceLabel: "shop", policyv1alpha1.FederatedResourceQuotaNameLabel: "team"}); err != nil || len(works.Items) != 2 {
		t.Fatalf("works %d (%v), want one per assignment", len(works.Items), err)
	}
	for _, w := range works.Items {
		var rq corev1.ResourceQuota
		if err := json.Unmarshal(w.Spec.Workload.Manifests[0].Raw, &rq); err != nil {
			t.Fatal(err)
		}
		want := map[string]string{"karmada-es-member1": "4", "karmada-es-member2": "6"}[w.Namespace]
		if h := rq.Spec.Hard[corev1.ResourceCPU]; rq.Name != "team" || rq.Namespace != "shop" || h.String() != want {
			t.Errorf("work %s/%s carries %s/%s cpu %s, want shop/team cpu %s", w.Namespace, w.Name, rq.Namespace, rq.Name, h.String(), want)
		}
		// The member reports its quota.
		status, _ := json.Marshal(corev1.ResourceQuotaStatus{Hard: rq.Spec.Hard, Used: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("1")}})
		w.Status.ManifestStatuses = []workv1alpha1.ManifestStatus{{Status: &runtime.RawExtension{Raw: status}}}
		if w.Namespace == "karmada-es-member1" {
			// Applied: member1 counts; member2's Work, not applied yet,
			// is left out as Karmada leaves it.
			w.Status.Conditions = []metav1.Condition{{Type: workv1alpha1.WorkApplied, Status: metav1.ConditionTrue, Reason: "AppliedSuccessful", LastTransitionTime: metav1.Now()}}
		}
		if err := c.Status().Update(ctx, &w); err != nil {
			t.Fatal(err)
		}
	}
	// Without FederatedQuotaEnforcement: overallUsed is what the members'
	// quotas use.
	if _, err := (&Status{Client: c}).Reconcile(ctx, req); err != nil {
		t.Fatal(err)
	}
	got := &policyv1alpha1.FederatedResourceQuota{}
	if err := c.Get(ctx, req.NamespacedName, got); err != nil {
		t.Fatal(err)
	}
	st := got.Status
	if u := st.OverallUsed[corev1.ResourceCPU]; u.String() != "1" || len(st.OverallUsed) != 1 {
		t.Errorf("overallUsed %v, want cpu 1 (member1's quota's, the one applied)", st.OverallUsed)
	}
	if o := st.Overall[corev1.ResourceCPU]; o.String() != "10" || len(st.AggregatedStatus) != 1 || st.AggregatedStatus[0].ClusterName != "member1" {
		t.Errorf("status %+v", st)
	} else if u := st.AggregatedStatus[0].Used[corev1.ResourceCPU]; u.String() != "1" {
		t.Errorf("member1 used %s, want 1", u.String())
	}
	// With it: the enforcement controller counts the placements of this
	// namespace's bindings, under the overall's names; the status
	// controller keeps to aggregatedStatus.
	if res, err := (&Enforcement{Client: c}).Reconcile(ctx, req); err != nil || res.RequeueAfter != EnforcementResync {
		t.Fatalf("%+v %v: want a resync after %s", res, err, EnforcementResync)
	}
	if _, err := (&Status{Client: c, Enforcement: true}).Reconcile(ctx, req); err != nil {
		t.Fatal(err)
	}
	if err := c.Get(ctx, req.NamespacedName, got); err != nil {
		t.Fatal(err)
	}
	st = got.Status
	if u, m := st.OverallUsed[corev1.ResourceCPU], st.OverallUsed["requests.memory"]; u.String() != "2500m" || m.String() != "5Gi" || len(st.OverallUsed) != 2 {
		t.Errorf("overallUsed %v, want cpu 2500m and requests.memory 5Gi (this namespace's binding only)", st.OverallUsed)
	}
	if len(st.AggregatedStatus) != 1 {
		t.Errorf("aggregatedStatus %+v", st.AggregatedStatus)
	}

	// One assignment dropped: its Work goes; the quota deleted: all go.
	got.Spec.StaticAssignments = got.Spec.StaticAssignments[:1]
	if err := c.Update(ctx, got); err != nil {
		t.Fatal(err)
	}
	if _, err := (&Sync{Client: c}).Reconcile(ctx, req); err != nil {
		t.Fatal(err)
	}
	if err := c.List(ctx, works, client.MatchingLabels{policyv1alpha1.FederatedResourceQuotaNameLabel: "team"}); err != nil || len(works.Items) != 1 || works.Items[0].Namespace != "karmada-es-member1" {
		t.Fatalf("after dropping member2: %+v %v", works.Items, err)
	}
	if err := c.Delete(ctx, got); err != nil {
		t.Fatal(err)
	}
	if _, err := (&Sync{Client: c}).Reconcile(ctx, req); err != nil {
		t.Fatal(err)
	}
	if err := c.List(ctx, works, client.MatchingLabels{policyv1alpha1.FederatedResourceQuotaNameLabel: "team"}); err != nil || len(works.Items) != 0 {
		t.Fatalf("after deleting the quota: %d works", len(works.Items))
	}
}
