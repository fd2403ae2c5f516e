//go:build e2e

package e2e

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/kubernetes"
	"sigs.k8s.io/controller-runtime/pkg/client"

	policyv1alpha1 "github.com/karmada-go/karmada/api/policy/v1alpha1"
	workv1alpha1 "github.com/karmada-go/karmada/api/work/v1alpha1"
	workv1alpha2 "github.com/karmada-go/karmada/api/work/v1alpha2"
	"github.com/karmada-go/karmada/internal/testenv"
)

// kubectlApply applies a file of examples/ to the control plane with the
// project's kubectl, as the README tells users to.
func kubectlApply(t *testing.T, args ...string) {
	t.Helper()
	cmd := exec.Command(filepath.Join(filepath.Dir(fleet.Bin), "kubectl"), append([]string{"--kubeconfig", fleet.Kubeconfig, "--context", "karmada-apiserver"}, args...)...)
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("kubectl %v: %v\n%s", args, err, out)
	}
}

// waitMemberDeployment waits until the member has the Deployment with the
// given available replicas, or (want < 0) has none.
func waitMemberDeployment(ctx context.Context, t *testing.T, member, name string, want int32) {
	t.Helper()
	kc := kube(t, member)
	var last string
	err := wait.PollUntilContextTimeout(ctx, 200*time.Millisecond, 60*time.Second, true, func(ctx context.Context) (bool, error) {
		d, err := kc.AppsV1().Deployments("default").Get(ctx, name, metav1.GetOptions{})
		if want < 0 {
			last = "still there"
			return apierrors.IsNotFound(err), nil
		}
		if err != nil {
			last = err.Error()
			return false, nil
		}
		last = d.Status.String()
		return *d.Spec.Replicas == want && d.Status.AvailableReplicas == want, nil
	})
	if err != nil {
		t.Fatalf("deployment %s in %s never had %d available replicas: %s", name, member, want, last)
	}
}

func testSeedsExample(ctx context.Context, t *testing.T) {
	c := karmadaClient(t)
	t.Cleanup(func() {
		deleteAll(t, c, &appsv1.Deployment{ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: "nginx"}},
			&policyv1alpha1.PropagationPolicy{ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: "nginx-propagation"}},
			&policyv1alpha1.PropagationPolicy{ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: "config"}},
			&corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: "nginx-conf"}},
			&corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: "unrelated"}})
	})
	examples := filepath.Join(testenv.RepoRoot(), "examples")
	kubectlApply(t, "apply", "-f", filepath.Join(examples, "nginx-deployment.yaml"))
	kubectlApply(t, "apply", "-f", filepath.Join(examples, "propagation-policy.yaml"))

	rb := &workv1alpha2.ResourceBinding{}
	err := wait.PollUntilContextTimeout(ctx, 200*time.Millisecond, 30*time.Second, true, func(ctx context.Context) (bool, error) {
		if err := c.Get(ctx, client.ObjectKey{Namespace: "default", Name: "nginx-deployment"}, rb); err != nil {
			return false, nil
		}
		return meta.IsStatusConditionTrue(rb.Status.Conditions, workv1alpha2.Scheduled), nil
	})
	if err != nil {
		t.Fatalf("binding nginx-deployment was not created and scheduled: %+v", rb.Status)
	}
	if rb.Spec.Resource.Kind != "Deployment" || rb.Spec.Resource.Name != "nginx" || rb.Spec.Replicas != 1 || len(rb.OwnerReferences) != 1 {
		t.Errorf("binding spec %+v owners %v, want the nginx Deployment with 1 replica as owner", rb.Spec.Resource, rb.OwnerReferences)
	}
	for _, m := range []string{"member1", "member2"} {
		waitMemberDeployment(ctx, t, m, "nginx", 1)
		works := &workv1alpha1.WorkList{}
		if err := c.List(ctx, works, client.InNamespace("karmada-es-"+m), client.MatchingLabels{"resourcebinding.karmada.io/name": "nginx-deployment"}); err != nil || len(works.Items) != 1 {
			t.Errorf("karmada-es-%s holds %d works of the binding (%v), want 1", m, len(works.Items), err)
		}
	}
	if _, err := kube(t, "member3").AppsV1().Deployments("default").Get(ctx, "nginx", metav1.GetOptions{}); !apierrors.IsNotFound(err) {
		t.Errorf("nginx reached member3, which the policy does not name (err %v)", err)
	}

	// The status comes back: per cluster on the binding, and summed on the
	// template itself, with observedGeneration following the template.
	err = wait.PollUntilContextTimeout(ctx, 200*time.Millisecond, 60*time.Second, true, func(ctx context.Context) (bool, error) {
		if err := c.Get(ctx, client.ObjectKey{Namespace: "default", Name: "nginx-deployment"}, rb); err != nil {
			return false, nil
		}
		if !meta.IsStatusConditionTrue(rb.Status.Conditions, workv1alpha2.FullyApplied) || len(rb.Status.AggregatedStatus) != 2 {
			return false, nil
		}
		for _, it := range rb.Status.AggregatedStatus {
			if !it.Applied || it.Health != workv1alpha1.ResourceHealthy {
				return false, nil
			}
		}
		return true, nil
	})
	if err != nil {
		t.Fatalf("binding never FullyApplied with two healthy clusters: %+v", rb.Status)
	}
	tmpl := &appsv1.Deployment{}
	err = wait.PollUntilContextTimeout(ctx, 200*time.Millisecond, 30*time.Second, true, func(ctx context.Context) (bool, error) {
		if err := c.Get(ctx, client.ObjectKey{Namespace: "default", Name: "nginx"}, tmpl); err != nil {
			return false, nil
		}
		s := tmpl.Status
		return s.Replicas == 2 && s.AvailableReplicas == 2 && s.ReadyReplicas == 2 && s.UpdatedReplicas == 2 && s.ObservedGeneration == tmpl.Generation, nil
	})
	if err != nil {
		t.Errorf("the template's status is %+v (generation %d), want 2 replicas available in all and observedGeneration = generation", tmpl.Status, tmpl.Generation)
	}

	t.Run("events, Work name and member metadata are Karmada's", func(t *testing.T) { testSeedsExampleAsKarmada(ctx, t) })

	t.Run("scaling the template updates the members", func(t *testing.T) {
		kubectlApply(t, "scale", "deployment", "nginx", "--replicas=3")
		for _, m := range []string{"member1", "member2"} {
			waitMemberDeployment(ctx, t, m, "nginx", 3)
		}
		tmpl := &appsv1.Deployment{}
		err := wait.PollUntilContextTimeout(ctx, 200*time.Millisecond, 30*time.Second, true, func(ctx context.Context) (bool, error) {
			if err := c.Get(ctx, client.ObjectKey{Namespace: "default", Name: "nginx"}, tmpl); err != nil {
				return false, nil
			}
			return tmpl.Status.AvailableReplicas == 6 && tmpl.Status.ObservedGeneration == tmpl.Generation, nil
		})
		if err != nil {
			t.Errorf("after scaling, template status %+v (generation %d), want 6 available and observedGeneration = generation", tmpl.Status, tmpl.Generation)
		}
	})

	t.Run("narrowing the policy removes the workload from the dropped cluster", func(t *testing.T) {
		pp := &policyv1alpha1.PropagationPolicy{}
		if err := c.Get(ctx, client.ObjectKey{Namespace: "default", Name: "nginx-propagation"}, pp); err != nil {
			t.Fatal(err)
		}
		pp.Spec.Placement.ClusterAffinity.ClusterNames = []string{"member2"}
		if err := c.Update(ctx, pp); err != nil {
			t.Fatal(err)
		}
		waitMemberDeployment(ctx, t, "member1", "nginx", -1)
		waitMemberDeployment(ctx, t, "member2", "nginx", 3)
	})

	t.Run("a ConfigMap selected by labels propagates too", func(t *testing.T) {
		pp := &policyv1alpha1.PropagationPolicy{
			ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: "config"},
			Spec: policyv1alpha1.PropagationSpec{
				ResourceSelectors: []policyv1alpha1.ResourceSelector{{APIVersion: "v1", Kind: "ConfigMap", LabelSelector: &metav1.LabelSelector{MatchLabels: map[string]string{"app": "nginx"}}}},
				Placement:         policyv1alpha1.Placement{ClusterAffinity: &policyv1alpha1.ClusterAffinity{ClusterNames: []string{"member1", "member3"}}},
			},
		}
		if err := c.Create(ctx, pp); err != nil {
			t.Fatal(err)
		}
		for _, cm := range []*corev1.ConfigMap{
			{ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: "nginx-conf", Labels: map[string]string{"app": "nginx"}}, Data: map[string]string{"port": "80"}},
			{ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: "unrelated", Labels: map[string]string{"app": "other"}}},
		} {
			if err := c.Create(ctx, cm); err != nil {
				t.Fatal(err)
			}
		}
		for _, m := range []string{"member1", "member3"} {
			kc := kube(t, m)
			err := wait.PollUntilContextTimeout(ctx, 200*time.Millisecond, 30*time.Second, true, func(ctx context.Context) (bool, error) {
				got, err := kc.CoreV1().ConfigMaps("default").Get(ctx, "nginx-conf", metav1.GetOptions{})
				return err == nil && got.Data["port"] == "80", nil
			})
			if err != nil {
				t.Errorf("ConfigMap nginx-conf did not reach %s", m)
			}
			if _, err := kc.CoreV1().ConfigMaps("default").Get(ctx, "unrelated", metav1.GetOptions{}); !apierrors.IsNotFound(err) {
				t.Errorf("a ConfigMap the selector does not match reached %s (err %v)", m, err)
			}
		}
	})

	t.Run("deleting the template cleans every member", func(t *testing.T) {
		kubectlApply(t, "delete", "deployment", "nginx")
		for _, m := range []string{"member1", "member2", "member3"} {
			waitMemberDeployment(ctx, t, m, "nginx", -1)
		}
		err := wait.PollUntilContextTimeout(ctx, 200*time.Millisecond, 30*time.Second, true, func(ctx context.Context) (bool, error) {
			works := &workv1alpha1.WorkList{}
			if err := c.List(ctx, works, client.MatchingLabels{"resourcebinding.karmada.io/name": "nginx-deployment"}); err != nil {
				return false, nil
			}
			err := c.Get(ctx, client.ObjectKey{Namespace: "default", Name: "nginx-deployment"}, &workv1alpha2.ResourceBinding{})
			return len(works.Items) == 0 && apierrors.IsNotFound(err), nil
		})
		if err != nil {
			t.Errorf("the binding or its works outlived the template")
		}
	})
}

func testConflictAbort(ctx context.Context, t *testing.T) {
	c := karmadaClient(t)
	kc := kube(t, "member1")
	t.Cleanup(func() {
		deleteAll(t, c, deploymentNamed("theirs", 5), &policyv1alpha1.PropagationPolicy{ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: "theirs"}})
		if err := kc.AppsV1().Deployments("default").Delete(context.Background(), "theirs", metav1.DeleteOptions{}); client.IgnoreNotFound(err) != nil {
			t.Errorf("deleting member1's own Deployment: %v", err)
		}
	})
	// The member already runs a Deployment of its own with the template's name.
	mine := deploymentNamed("theirs", 2)
	if _, err := kc.AppsV1().Deployments("default").Create(ctx, mine, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	if err := c.Create(ctx, deploymentNamed("theirs", 5)); err != nil {
		t.Fatal(err)
	}
	pp := &policyv1alpha1.PropagationPolicy{
		ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: "theirs"},
		Spec: policyv1alpha1.PropagationSpec{
			ResourceSelectors: []policyv1alpha1.ResourceSelector{{APIVersion: "apps/v1", Kind: "Deployment", Name: "theirs"}},
			Placement:         policyv1alpha1.Placement{ClusterAffinity: &policyv1alpha1.ClusterAffinity{ClusterNames: []string{"member1"}}},
		},
	}
	if err := c.Create(ctx, pp); err != nil {
		t.Fatal(err)
	}
	var msg string
	err := wait.PollUntilContextTimeout(ctx, 200*time.Millisecond, 30*time.Second, true, func(ctx context.Context) (bool, error) {
		works := &workv1alpha1.WorkList{}
		if err := c.List(ctx, works, client.InNamespace("karmada-es-member1"), client.MatchingLabels{"resourcebinding.karmada.io/name": "theirs-deployment"}); err != nil || len(works.Items) != 1 {
			return false, nil
		}
		cond := meta.FindStatusCondition(works.Items[0].Status.Conditions, workv1alpha1.WorkApplied)
		if cond == nil || cond.Status != metav1.ConditionFalse {
			return false, nil
		}
		msg = cond.Message
		return true, nil
	})
	if err != nil {
		t.Fatalf("the work was never reported as not applied")
	}
	if !strings.Contains(msg, "not created by Karmada") || !strings.Contains(msg, "conflictResolution: Overwrite") {
		t.Errorf("Applied message %q does not explain the conflict and the way out", msg)
	}
	got, err := kc.AppsV1().Deployments("default").Get(ctx, "theirs", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if *got.Spec.Replicas != 2 || got.Annotations[workv1alpha1.WorkNameAnnotation] != "" {
		t.Errorf("the member's own Deployment was changed: replicas %d, annotations %v", *got.Spec.Replicas, got.Annotations)
	}
	// Deleting the template must not delete what Karmada never owned.
	if err := c.Delete(ctx, deploymentNamed("theirs", 5)); err != nil {
		t.Fatal(err)
	}
	err = wait.PollUntilContextTimeout(ctx, 200*time.Millisecond, 30*time.Second, true, func(ctx context.Context) (bool, error) {
		works := &workv1alpha1.WorkList{}
		err := c.List(ctx, works, client.MatchingLabels{"resourcebinding.karmada.io/name": "theirs-deployment"})
		return err == nil && len(works.Items) == 0, nil
	})
	if err != nil {
		t.Fatal("the template's works were not removed")
	}
	if _, err := kc.AppsV1().Deployments("default").Get(ctx, "theirs", metav1.GetOptions{}); err != nil {
		t.Errorf("the member's own Deployment was deleted with the template: %v", err)
	}
}

func deploymentNamed(name string, replicas int32) *appsv1.Deployment {
	return &appsv1.Deployment{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "default"},
		Spec: appsv1.DeploymentSpec{
			Replicas: &replicas,
			Selector: &metav1.LabelSelector{MatchLabels: map[string]string{"app": name}},
			Template: corev1.PodTemplateSpec{
				ObjectMeta: metav1.ObjectMeta{Labels: map[string]string{"app": name}},
				Spec:       corev1.PodSpec{Containers: []corev1.Container{{Name: "c", Image: "nginx"}}},
			},
		},
	}
}

// testRestartMidPropagation kills karmada-controller-manager while 50
// Deployments are being propagated, lets `karmada-local up` restart it, and
// checks that every one ends up correct in both members with exactly one Work
// per cluster.
func testRestartMidPropagation(ctx context.Context, t *testing.T) {
	c := karmadaClient(t)
	const n = 50
	t.Cleanup(func() {
		deleteAll(t, c, &policyv1alpha1.PropagationPolicy{ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: "bulk"}})
	})
	pp := &policyv1alpha1.PropagationPolicy{
		ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: "bulk"},
		Spec: policyv1alpha1.PropagationSpec{
			ResourceSelectors: []policyv1alpha1.ResourceSelector{{APIVersion: "apps/v1", Kind: "Deployment", LabelSelector: &metav1.LabelSelector{MatchLabels: map[string]string{"bulk": "yes"}}}},
			Placement:         policyv1alpha1.Placement{ClusterAffinity: &policyv1alpha1.ClusterAffinity{ClusterNames: []string{"member1", "member2"}}},
		},
	}
	if err := c.Create(ctx, pp); err != nil {
		t.Fatal(err)
	}
	for i := 0; i < n; i++ {
		d := deploymentNamed(fmt.Sprintf("bulk-%02d", i), 1)
		d.Labels = map[string]string{"bulk": "yes"}
		if err := c.Create(ctx, d); err != nil {
			t.Fatal(err)
		}
		if i == n/2 {
			// Halfway through: kill the controller manager where it stands.
			rec, err := os.ReadFile(filepath.Join(fleet.StateDir, "run", "karmada", "karmada-controller-manager.pid"))
			if err != nil {
				t.Fatal(err)
			}
			var pid int
			if _, err := fmt.Sscanf(string(rec), "%d", &pid); err != nil {
				t.Fatal(err)
			}
			if err := syscall.Kill(pid, syscall.SIGKILL); err != nil {
				t.Fatal(err)
			}
		}
	}
	// up restarts what is not running.
	if out, err := karmadaLocal("up", "--kubeconfig", fleet.Kubeconfig, "--port-base", strconv.Itoa(fleet.PortBase)); err != nil {
		t.Fatalf("up after the kill: %v\n%s", err, out)
	}
	for _, m := range []string{"member1", "member2"} {
		if have := waitAvailableCount(ctx, kube(t, m), "bulk=yes", n); have != n {
			t.Fatalf("%s has %d of %d bulk Deployments available", m, have, n)
		}
		works := &workv1alpha1.WorkList{}
		if err := c.List(ctx, works, client.InNamespace("karmada-es-"+m)); err != nil {
			t.Fatal(err)
		}
		perBinding := map[string]int{}
		for _, w := range works.Items {
			if name := w.Labels["resourcebinding.karmada.io/name"]; strings.HasPrefix(name, "bulk-") {
				perBinding[name]++
			}
		}
		if len(perBinding) != n {
			t.Errorf("%s has works for %d bindings, want %d", m, len(perBinding), n)
		}
		for b, count := range perBinding {
			if count != 1 {
				t.Errorf("%s has %d works for binding %s, want 1", m, count, b)
			}
		}
	}
	// Clean up: deleting the templates removes them from the members.
	if err := deleteTemplates(c, "bulk"); err != nil {
		t.Fatalf("deleting the bulk templates: %v", err)
	}
	for _, m := range []string{"member1", "member2"} {
		kc := kube(t, m)
		err := wait.PollUntilContextTimeout(ctx, 500*time.Millisecond, 2*time.Minute, true, func(ctx context.Context) (bool, error) {
			list, err := kc.AppsV1().Deployments("default").List(ctx, metav1.ListOptions{LabelSelector: "bulk=yes"})
			return err == nil && len(list.Items) == 0, nil
		})
		if err != nil {
			t.Errorf("bulk Deployments left in %s after their templates were deleted", m)
		}
	}
}

// deleteAll deletes objects of the control plane that a test made, those
// already gone aside.
// deleteTemplates deletes the Deployments of default labelled label=yes.
// The collection delete may outlast the client's 5 s timeout on a busy
// machine; it is idempotent, so it is sent again until it succeeds (for up
// to two minutes).
func deleteTemplates(c client.Client, label string) error {
	var last error
	if err := wait.PollUntilContextTimeout(context.Background(), time.Second, 2*time.Minute, true, func(ctx context.Context) (bool, error) {
		last = c.DeleteAllOf(ctx, &appsv1.Deployment{}, client.InNamespace("default"), client.MatchingLabels{label: "yes"})
		return last == nil, nil
	}); err != nil {
		return fmt.Errorf("%w (last error: %v)", err, last)
	}
	return nil
}

func deleteAll(t *testing.T, c client.Client, objs ...client.Object) {
	t.Helper()
	for _, o := range objs {
		if err := c.Delete(context.Background(), o); client.IgnoreNotFound(err) != nil {
			t.Errorf("deleting %T %s: %v", o, o.GetName(), err)
		}
	}
}

// waitAvailableCount waits up to three minutes until n one-replica
// Deployments of the selector are available in the member's default
// namespace, and returns how many were at the end.
func waitAvailableCount(ctx context.Context, kc kubernetes.Interface, selector string, n int) int {
	var have int
	_ = wait.PollUntilContextTimeout(ctx, 500*time.Millisecond, 3*time.Minute, true, func(ctx context.Context) (bool, error) {
		list, err := kc.AppsV1().Deployments("default").List(ctx, metav1.ListOptions{LabelSelector: selector})
		if err != nil {
			return false, nil
		}
		have = 0
		for _, d := range list.Items {
			if *d.Spec.Replicas == 1 && d.Status.AvailableReplicas == 1 {
				have++
			}
		}
		return have == n, nil
	})
	return have
}
