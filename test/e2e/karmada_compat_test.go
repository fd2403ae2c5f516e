//go:build e2e

package e2e

import (
	"context"
	"fmt"
	"sort"
	"strings"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/kubernetes"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	policyv1alpha1 "github.com/karmada-go/karmada/api/policy/v1alpha1"
	workv1alpha1 "github.com/karmada-go/karmada/api/work/v1alpha1"
	workv1alpha2 "github.com/karmada-go/karmada/api/work/v1alpha2"
	"github.com/karmada-go/karmada/internal/names"
)

// eventReasons lists the reasons of the control plane's events on one
// object (by kind, namespace and name), with the message of each.
func eventReasons(ctx context.Context, kc kubernetes.Interface, kind, namespace, name string) (map[string]string, error) {
	sel := fields.Set{"involvedObject.kind": kind, "involvedObject.name": name}
	if namespace != "" {
		sel["involvedObject.namespace"] = namespace
	}
	list, err := kc.CoreV1().Events(namespace).List(ctx, metav1.ListOptions{FieldSelector: sel.String()})
	if err != nil {
		return nil, fmt.Errorf("listing events of %s %s: %w", kind, name, err)
	}
	out := map[string]string{}
	for _, e := range list.Items {
		out[e.Reason] = e.Message
	}
	return out, nil
}

// waitEvents waits until the object carries an event of every reason.
func waitEvents(ctx context.Context, t *testing.T, kind, namespace, name string, reasons ...string) map[string]string {
	t.Helper()
	kc := kube(t, "karmada-apiserver")
	got := map[string]string{}
	var lastErr error
	err := wait.PollUntilContextTimeout(ctx, 250*time.Millisecond, 30*time.Second, true, func(ctx context.Context) (bool, error) {
		now, err := eventReasons(ctx, kc, kind, namespace, name)
		if err != nil {
			lastErr = err
			return false, nil
		}
		got = now
		for _, r := range reasons {
			if _, ok := got[r]; !ok {
				return false, nil
			}
		}
		return true, nil
	})
	if err != nil {
		have := make([]string, 0, len(got))
		for r := range got {
			have = append(have, r)
		}
		sort.Strings(have)
		t.Errorf("%s %s/%s has events %v, want at least %v (last error: %v)", kind, namespace, name, have, reasons, lastErr)
	}
	return got
}

// testSeedsExampleAsKarmada checks, after the seeds' example, what a user
// coming from Karmada looks at: events, the Work's name, and the member
// copy's metadata.
func testSeedsExampleAsKarmada(ctx context.Context, t *testing.T) {
	c := karmadaClient(t)
	waitEvents(ctx, t, "Deployment", "default", "nginx", "ApplyPolicySucceed", "GetReplicasSucceed", "ScheduleBindingSucceed", "SyncWorkSucceed", "AggregateStatusSucceed")
	waitEvents(ctx, t, "ResourceBinding", "default", "nginx-deployment", "ScheduleBindingSucceed", "SyncWorkSucceed", "AggregateStatusSucceed")

	waitEvents(ctx, t, "Cluster", "", "member1", "CreateExecutionSpaceSucceed")

	// The Work has Karmada's name, computed by hand from Karmada's rule.
	workName := names.WorkName("Deployment", "nginx", "default")
	if workName != "nginx-687f7fb96f" {
		t.Errorf("Karmada names the Work of Deployment default/nginx nginx-687f7fb96f; ours is %s", workName)
	}
	w := &workv1alpha1.Work{}
	if err := c.Get(ctx, client.ObjectKey{Namespace: "karmada-es-member1", Name: "nginx-687f7fb96f"}, w); err != nil {
		t.Fatalf("no Work karmada-es-member1/nginx-687f7fb96f: %v", err)
	}
	waitEvents(ctx, t, "Work", "karmada-es-member1", w.Name, "SyncSucceed", "ReflectStatusSucceed", "InterpretHealthSucceed")

	// The member's copy says which policy, binding and Work put it there.
	rb := &workv1alpha2.ResourceBinding{}
	if err := c.Get(ctx, client.ObjectKey{Namespace: "default", Name: "nginx-deployment"}, rb); err != nil {
		t.Fatal(err)
	}
	copy, err := kube(t, "member1").AppsV1().Deployments("default").Get(ctx, "nginx", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	a, l := copy.Annotations, copy.Labels
	for k, want := range map[string]string{
		"propagationpolicy.karmada.io/name":      "nginx-propagation",
		"propagationpolicy.karmada.io/namespace": "default",
		"resourcebinding.karmada.io/name":        "nginx-deployment",
		"resourcebinding.karmada.io/namespace":   "default",
		"work.karmada.io/name":                   w.Name,
		"work.karmada.io/namespace":              "karmada-es-member1",
	} {
		if a[k] != want {
			t.Errorf("member copy annotation %s = %q, want %q", k, a[k], want)
		}
	}
	id := rb.Labels["resourcebinding.karmada.io/permanent-id"]
	if id == "" || l["resourcebinding.karmada.io/permanent-id"] != id || w.Labels["resourcebinding.karmada.io/permanent-id"] != id {
		t.Errorf("binding permanent id %q; on the Work %q, on the copy %q", id, w.Labels["resourcebinding.karmada.io/permanent-id"], l["resourcebinding.karmada.io/permanent-id"])
	}
	if l["propagationpolicy.karmada.io/permanent-id"] == "" || l["karmada.io/managed"] != "true" {
		t.Errorf("member copy labels %v lack the policy's permanent id or karmada.io/managed", l)
	}
	// kubectl habits work: select the member's objects by policy id.
	list, err := kube(t, "member1").AppsV1().Deployments("default").List(ctx, metav1.ListOptions{LabelSelector: "propagationpolicy.karmada.io/permanent-id=" + l["propagationpolicy.karmada.io/permanent-id"]})
	if err != nil || len(list.Items) != 1 {
		t.Errorf("selecting member Deployments by the policy's permanent id found %d (%v), want 1", len(list.Items), err)
	}
}

// testColonNamedClusterRole propagates a ClusterRole named system:..., whose
// binding and Work names replace ':' by '.'.
func testColonNamedClusterRole(ctx context.Context, t *testing.T) {
	c := karmadaClient(t)
	const name = "system:e2e-colon-role"
	role := &rbacv1.ClusterRole{ObjectMeta: metav1.ObjectMeta{Name: name},
		Rules: []rbacv1.PolicyRule{{APIGroups: []string{""}, Resources: []string{"configmaps"}, Verbs: []string{"get"}}}}
	cpp := &policyv1alpha1.ClusterPropagationPolicy{
		ObjectMeta: metav1.ObjectMeta{Name: "e2e-colon-role"},
		Spec: policyv1alpha1.PropagationSpec{
			ResourceSelectors: []policyv1alpha1.ResourceSelector{{APIVersion: "rbac.authorization.k8s.io/v1", Kind: "ClusterRole", Name: name}},
			Placement:         policyv1alpha1.Placement{ClusterAffinity: &policyv1alpha1.ClusterAffinity{ClusterNames: []string{"member1"}}},
		},
	}
	t.Cleanup(func() { deleteAll(t, c, role, cpp) })
	if err := c.Create(ctx, cpp); err != nil {
		t.Fatal(err)
	}
	if err := c.Create(ctx, role); err != nil {
		t.Fatal(err)
	}
	kc := kube(t, "member1")
	err := wait.PollUntilContextTimeout(ctx, 250*time.Millisecond, 60*time.Second, true, func(ctx context.Context) (bool, error) {
		_, err := kc.RbacV1().ClusterRoles().Get(ctx, name, metav1.GetOptions{})
		return err == nil, nil
	})
	if err != nil {
		t.Fatalf("ClusterRole %s never reached member1", name)
	}
	if err := c.Get(ctx, client.ObjectKey{Name: "system.e2e-colon-role-clusterrole"}, &workv1alpha2.ClusterResourceBinding{}); err != nil {
		t.Errorf("no ClusterResourceBinding system.e2e-colon-role-clusterrole: %v", err)
	}
	if err := c.Get(ctx, client.ObjectKey{Namespace: "karmada-es-member1", Name: names.WorkName("ClusterRole", name, "")}, &workv1alpha1.Work{}); err != nil {
		t.Errorf("no Work %s: %v", names.WorkName("ClusterRole", name, ""), err)
	}
	if !strings.HasPrefix(names.WorkName("ClusterRole", name, ""), "system.e2e-colon-role-") {
		t.Errorf("Work name %s does not start with the name with '.' for ':'", names.WorkName("ClusterRole", name, ""))
	}
	// Deleting the template removes the copy it made.
	if err := c.Delete(ctx, role); err != nil {
		t.Fatal(err)
	}
	err = wait.PollUntilContextTimeout(ctx, 250*time.Millisecond, 60*time.Second, true, func(ctx context.Context) (bool, error) {
		_, err := kc.RbacV1().ClusterRoles().Get(ctx, name, metav1.GetOptions{})
		return apierrors.IsNotFound(err), nil
	})
	if err != nil {
		t.Errorf("ClusterRole %s stayed in member1 after the template was deleted", name)
	}
}

// testSuspendedWorkEvent: a policy that suspends dispatching gives its Works
// the WorkDispatching event saying so, and the member gets nothing.
func testSuspendedWorkEvent(ctx context.Context, t *testing.T) {
	c := karmadaClient(t)
	d := deploymentNamed("suspended", 1)
	pp := &policyv1alpha1.PropagationPolicy{
		ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: "suspended"},
		Spec: policyv1alpha1.PropagationSpec{
			ResourceSelectors: []policyv1alpha1.ResourceSelector{{APIVersion: "apps/v1", Kind: "Deployment", Name: "suspended"}},
			Placement:         policyv1alpha1.Placement{ClusterAffinity: &policyv1alpha1.ClusterAffinity{ClusterNames: []string{"member2"}}},
			Suspension:        &policyv1alpha1.Suspension{Dispatching: ptr.To(true)},
		},
	}
	t.Cleanup(func() { deleteAll(t, c, d, pp) })
	if err := c.Create(ctx, pp); err != nil {
		t.Fatal(err)
	}
	if err := c.Create(ctx, d); err != nil {
		t.Fatal(err)
	}
	work := names.WorkName("Deployment", "suspended", "default")
	got := waitEvents(ctx, t, "Work", "karmada-es-member2", work, "WorkDispatching")
	if m := got["WorkDispatching"]; !strings.Contains(m, "suspended") {
		t.Errorf("WorkDispatching message %q does not say dispatching is suspended", m)
	}
	if _, err := kube(t, "member2").AppsV1().Deployments("default").Get(ctx, "suspended", metav1.GetOptions{}); !apierrors.IsNotFound(err) {
		t.Errorf("a suspended Work reached member2 (err %v)", err)
	}
}

// testPolicyUnselectReleasesClaim drops a template from a policy's
// resourceSelectors: the claim leaves the template and the binding, and
// the workload stays in the member.
func testPolicyUnselectReleasesClaim(ctx context.Context, t *testing.T) {
	c := karmadaClient(t)
	a, b := deploymentNamed("unselect-a", 1), deploymentNamed("unselect-b", 1)
	pp := &policyv1alpha1.PropagationPolicy{
		ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: "unselect"},
		Spec: policyv1alpha1.PropagationSpec{
			ResourceSelectors: []policyv1alpha1.ResourceSelector{
				{APIVersion: "apps/v1", Kind: "Deployment", Name: "unselect-a"},
				{APIVersion: "apps/v1", Kind: "Deployment", Name: "unselect-b"},
			},
			Placement: policyv1alpha1.Placement{ClusterAffinity: &policyv1alpha1.ClusterAffinity{ClusterNames: []string{"member1"}}},
		},
	}
	t.Cleanup(func() { deleteAll(t, c, a, b, pp) })
	for _, o := range []client.Object{pp, a, b} {
		if err := c.Create(ctx, o); err != nil {
			t.Fatal(err)
		}
	}
	waitMemberDeployment(ctx, t, "member1", "unselect-a", 1)
	if err := c.Get(ctx, client.ObjectKeyFromObject(pp), pp); err != nil {
		t.Fatal(err)
	}
	pp.Spec.ResourceSelectors = pp.Spec.ResourceSelectors[1:]
	if err := c.Update(ctx, pp); err != nil {
		t.Fatal(err)
	}
	claims := []string{"propagationpolicy.karmada.io/name", "propagationpolicy.karmada.io/namespace", "propagationpolicy.karmada.io/permanent-id"}
	var left []string
	err := wait.PollUntilContextTimeout(ctx, 250*time.Millisecond, 30*time.Second, true, func(ctx context.Context) (bool, error) {
		left = nil
		tmpl := &appsv1.Deployment{}
		rb := &workv1alpha2.ResourceBinding{}
		if err := c.Get(ctx, client.ObjectKey{Namespace: "default", Name: "unselect-a"}, tmpl); err != nil {
			return false, nil
		}
		if err := c.Get(ctx, client.ObjectKey{Namespace: "default", Name: "unselect-a-deployment"}, rb); err != nil {
			left = append(left, "binding: "+err.Error())
			return false, nil
		}
		for _, k := range claims {
			if _, ok := tmpl.Annotations[k]; ok {
				left = append(left, "template annotation "+k)
			}
			if _, ok := tmpl.Labels[k]; ok {
				left = append(left, "template label "+k)
			}
			if _, ok := rb.Annotations[k]; ok {
				left = append(left, "binding annotation "+k)
			}
			if _, ok := rb.Labels[k]; ok {
				left = append(left, "binding label "+k)
			}
		}
		return len(left) == 0, nil
	})
	if err != nil {
		t.Errorf("the claim stayed after the policy stopped selecting the template: %v", left)
	}
	// Still claimed: the template the policy still selects.
	tmpl := &appsv1.Deployment{}
	if err := c.Get(ctx, client.ObjectKeyFromObject(b), tmpl); err != nil || tmpl.Annotations["propagationpolicy.karmada.io/name"] != "unselect" {
		t.Errorf("unselect-b lost its claim (annotations %v, %v)", tmpl.Annotations, err)
	}
	if _, err := kube(t, "member1").AppsV1().Deployments("default").Get(ctx, "unselect-a", metav1.GetOptions{}); err != nil {
		t.Errorf("releasing the template removed its Deployment from member1: %v", err)
	}
}
