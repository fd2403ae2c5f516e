//go:build e2e

package e2e

import (
	"context"
	"strings"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/util/retry"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	policyv1alpha1 "github.com/karmada-go/karmada/api/policy/v1alpha1"
	workv1alpha2 "github.com/karmada-go/karmada/api/work/v1alpha2"
)

// A FederatedResourceQuota of 3 cpu overall, with a static assignment of 2
// cpu to member1: member1's namespace gets that ResourceQuota (and its
// status comes back); a Deployment whose placement asks 4 cpu is refused
// at admission (the binding says SchedulerError with karmada-webhook's
// denial, in Karmada's words); scaled to 3 it is placed, and overallUsed
// says 3. The quota carries Karmada's events.
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
		return cond.Status == metav1.ConditionFalse && cond.Reason == "SchedulerError", nil
	})
	if err != nil {
		t.Fatalf("4 cpu against an overall 3: the binding was not refused (%q, clusters %+v)", msg, rb.Spec.Clusters)
	}
	want := `admission webhook "resourcebinding.karmada.io" denied the request: FederatedResourceQuota(` + ns + `/team) exceeded for resource cpu: requested sum 4, limit 3.`
	if !strings.Contains(msg, want) || len(rb.Spec.Clusters) != 0 {
		t.Errorf("condition %q, clusters %+v: want %q, nothing placed", msg, rb.Spec.Clusters, want)
	}
	waitEventWith(ctx, t, "ResourceBinding", ns, "quota-web-deployment", "ScheduleBindingFailed", want)
	waitEventWith(ctx, t, "Deployment", ns, "quota-web", "ScheduleBindingFailed", want)
	// Karmada's events on the quota, from its three controllers.
	collected := "Collect status of FederatedResourceQuota(" + ns + "/team) succeed."
	waitEventWith(ctx, t, "FederatedResourceQuota", ns, "team", "SyncWorkSucceed", "Sync works for FederatedResourceQuota("+ns+"/team) succeed.")
	waitEventWith(ctx, t, "FederatedResourceQuota", ns, "team", "AggregateStatusSucceed", collected)
	waitEventWith(ctx, t, "FederatedResourceQuota", ns, "team", "CollectOverallStatusSucceed", collected)

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

// waitEventWith waits until the object carries an event of the reason
// whose message contains want.
func waitEventWith(ctx context.Context, t *testing.T, kind, namespace, name, reason, want string) {
	t.Helper()
	kc := kube(t, "karmada-apiserver")
	var seen []string
	err := wait.PollUntilContextTimeout(ctx, 250*time.Millisecond, 30*time.Second, true, func(ctx context.Context) (bool, error) {
		sel := fields.Set{"involvedObject.kind": kind, "involvedObject.name": name, "reason": reason}
		list, err := kc.CoreV1().Events(namespace).List(ctx, metav1.ListOptions{FieldSelector: sel.String()})
		if err != nil {
			return false, nil
		}
		seen = seen[:0]
		for _, e := range list.Items {
			if strings.Contains(e.Message, want) {
				return true, nil
			}
			seen = append(seen, e.Message)
		}
		return false, nil
	})
	if err != nil {
		t.Errorf("%s %s/%s: no %s event saying %q (seen %q)", kind, namespace, name, reason, want, seen)
	}
}

// Karmada's enforcement, as its own e2e suite checks it: overallUsed shows
// only what is requested; a change of requests past the quota is refused
// at the binding (ApplyPolicyFailed on the template, the binding's
// requirements unchanged); a scale-up past it is refused at the placement
// (ScheduleBindingFailed on the binding and the template, Scheduled False,
// the placement unchanged); a new workload past it is not placed at all.
func TestFederatedResourceQuotaEnforcedAsKarmada(t *testing.T) {
	ctx := context.Background()
	c := karmadaClient(t)
	const ns = "e2e-quota-enforce"
	if err := c.Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = c.Delete(context.Background(), &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}) })
	q := &policyv1alpha1.FederatedResourceQuota{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "frq"},
		Spec: policyv1alpha1.FederatedResourceQuotaSpec{Overall: corev1.ResourceList{
			corev1.ResourceCPU: resource.MustParse("2"), corev1.ResourceMemory: resource.MustParse("100Mi")}}}
	if err := c.Create(ctx, q); err != nil {
		t.Fatal(err)
	}
	err := wait.PollUntilContextTimeout(ctx, 250*time.Millisecond, time.Minute, true, func(ctx context.Context) (bool, error) {
		return c.Get(ctx, client.ObjectKeyFromObject(q), q) == nil && q.Status.Overall != nil, nil
	})
	if err != nil {
		t.Fatalf("status.overall never set: %+v", q.Status)
	}
	deploy := func(name string, replicas int32) *appsv1.Deployment {
		d := withCPU(deploymentNamed(name, replicas), "1")
		d.Namespace = ns
		p := &policyv1alpha1.PropagationPolicy{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name},
			Spec: policyv1alpha1.PropagationSpec{
				ResourceSelectors: []policyv1alpha1.ResourceSelector{{APIVersion: "apps/v1", Kind: "Deployment", Name: name}},
				Placement:         policyv1alpha1.Placement{ClusterAffinity: &policyv1alpha1.ClusterAffinity{ClusterNames: []string{"member1"}}},
			}}
		if err := c.Create(ctx, p); err != nil {
			t.Fatal(err)
		}
		if err := c.Create(ctx, d); err != nil {
			t.Fatal(err)
		}
		return d
	}
	m1 := kube(t, "member1")
	web := deploy("web", 1)
	err = wait.PollUntilContextTimeout(ctx, 250*time.Millisecond, time.Minute, true, func(ctx context.Context) (bool, error) {
		if _, err := m1.AppsV1().Deployments(ns).Get(ctx, "web", metav1.GetOptions{}); err != nil {
			return false, nil
		}
		return c.Get(ctx, client.ObjectKeyFromObject(q), q) == nil && equality.Semantic.DeepEqual(q.Status.OverallUsed, corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("1")}), nil
	})
	if err != nil {
		t.Fatalf("within the quota: want web in member1 and overallUsed exactly cpu 1 (memory not requested, not shown), got %v", q.Status.OverallUsed)
	}
	denied := `admission webhook "resourcebinding.karmada.io" denied the request: FederatedResourceQuota(` + ns + `/frq) exceeded for resource cpu: requested sum 3, limit 2.`

	// Requests raised past the quota: the binding keeps its requirements.
	// The template's status is written meanwhile: an update that lost
	// that race is made again on the fresh object.
	setCPU := func(cpu string) {
		t.Helper()
		if err := retry.RetryOnConflict(retry.DefaultRetry, func() error {
			if err := c.Get(ctx, client.ObjectKeyFromObject(web), web); err != nil {
				return err
			}
			web.Spec.Template.Spec.Containers[0].Resources.Requests = corev1.ResourceList{corev1.ResourceCPU: resource.MustParse(cpu)}
			return c.Update(ctx, web)
		}); err != nil {
			t.Fatal(err)
		}
	}
	setCPU("3")
	waitEventWith(ctx, t, "Deployment", ns, "web", "ApplyPolicyFailed", denied)
	rb := &workv1alpha2.ResourceBinding{}
	if err := c.Get(ctx, client.ObjectKey{Namespace: ns, Name: "web-deployment"}, rb); err != nil {
		t.Fatal(err)
	}
	if r := rb.Spec.ReplicaRequirements.ResourceRequest[corev1.ResourceCPU]; r.String() != "1" {
		t.Errorf("the binding's cpu request became %s: the update past the quota was admitted", r.String())
	}
	setCPU("1")

	// Scaled up past the quota: the placement stays.
	if err := retry.RetryOnConflict(retry.DefaultRetry, func() error {
		if err := c.Get(ctx, client.ObjectKeyFromObject(web), web); err != nil {
			return err
		}
		web.Spec.Replicas = ptr.To(int32(3))
		return c.Update(ctx, web)
	}); err != nil {
		t.Fatal(err)
	}
	waitEventWith(ctx, t, "ResourceBinding", ns, "web-deployment", "ScheduleBindingFailed", denied)
	waitEventWith(ctx, t, "Deployment", ns, "web", "ScheduleBindingFailed", denied)
	err = wait.PollUntilContextTimeout(ctx, 250*time.Millisecond, 30*time.Second, true, func(ctx context.Context) (bool, error) {
		return c.Get(ctx, client.ObjectKeyFromObject(rb), rb) == nil && meta.IsStatusConditionPresentAndEqual(rb.Status.Conditions, workv1alpha2.Scheduled, metav1.ConditionFalse), nil
	})
	if err != nil || total(rb) != 1 {
		t.Errorf("scale-up past the quota: Scheduled %+v, placement %+v; want False and 1 replica placed", meta.FindStatusCondition(rb.Status.Conditions, workv1alpha2.Scheduled), rb.Spec.Clusters)
	}
	if d, err := m1.AppsV1().Deployments(ns).Get(ctx, "web", metav1.GetOptions{}); err != nil || *d.Spec.Replicas != 1 {
		t.Errorf("member1's web: %v; want it kept at 1 replica", err)
	}

	// A new workload past the quota: not placed.
	deploy("api", 2)
	waitEventWith(ctx, t, "ResourceBinding", ns, "api-deployment", "ScheduleBindingFailed", denied)
	waitEventWith(ctx, t, "Deployment", ns, "api", "ScheduleBindingFailed", denied)
	api := &workv1alpha2.ResourceBinding{}
	if err := c.Get(ctx, client.ObjectKey{Namespace: ns, Name: "api-deployment"}, api); err != nil || len(api.Spec.Clusters) != 0 ||
		!meta.IsStatusConditionPresentAndEqual(api.Status.Conditions, workv1alpha2.Scheduled, metav1.ConditionFalse) {
		t.Errorf("api past the quota: placement %+v, conditions %+v (%v)", api.Spec.Clusters, api.Status.Conditions, err)
	}
	if _, err := m1.AppsV1().Deployments(ns).Get(ctx, "api", metav1.GetOptions{}); err == nil {
		t.Error("api, past the quota, reached member1")
	}
}
