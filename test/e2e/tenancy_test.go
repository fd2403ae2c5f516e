//go:build e2e

package e2e

import (
	"context"
	"fmt"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/wait"
	"sigs.k8s.io/controller-runtime/pkg/client"

	clusterv1alpha1 "github.com/karmada-go/karmada/api/cluster/v1alpha1"
	policyv1alpha1 "github.com/karmada-go/karmada/api/policy/v1alpha1"
	workv1alpha1 "github.com/karmada-go/karmada/api/work/v1alpha1"
	workv1alpha2 "github.com/karmada-go/karmada/api/work/v1alpha2"
)

// An OverridePolicy that would move a propagated Deployment into the
// member's kube-system, or make it a ClusterRole, is denied by
// karmada-webhook, naming the field; the Deployment is neither moved nor
// duplicated. (The binding controller's own refusal of such an override,
// whatever admitted it, is tested in test/integration.)
func TestOverrideCannotMoveNamespace(t *testing.T) {
	ctx := context.Background()
	c := karmadaClient(t)
	d := deploymentNamed("stay-put", 1)
	propagate(ctx, t, d, policyv1alpha1.Placement{ClusterAffinity: &policyv1alpha1.ClusterAffinity{ClusterNames: []string{"member1"}}})
	waitMemberDeployment(ctx, t, "member1", "stay-put", 1)
	for _, o := range []struct{ path, value string }{{"/metadata/namespace", `"kube-system"`}, {"/kind", `"ClusterRole"`}} {
		op := &policyv1alpha1.OverridePolicy{
			ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: "move-to-kube-system"},
			Spec: policyv1alpha1.OverrideSpec{
				ResourceSelectors: []policyv1alpha1.ResourceSelector{{APIVersion: "apps/v1", Kind: "Deployment", Name: "stay-put"}},
				OverrideRules: []policyv1alpha1.RuleWithCluster{{Overriders: policyv1alpha1.Overriders{Plaintext: []policyv1alpha1.PlaintextOverrider{{
					Path: o.path, Operator: policyv1alpha1.OverriderOpReplace, Value: apiextensionsv1.JSON{Raw: []byte(o.value)}}}}}},
			},
		}
		err := c.Create(ctx, op)
		if err == nil {
			t.Cleanup(func() { _ = c.Delete(context.Background(), op) })
			t.Fatalf("an override of %s was admitted", o.path)
		}
		if !apierrors.IsInvalid(err) || !strings.Contains(err.Error(), "spec.overrideRules[0].overriders.plaintext[0].path: Forbidden: \""+o.path+"\"") {
			t.Fatalf("override of %s: want Invalid naming spec.overrideRules[0].overriders.plaintext[0].path, got %v", o.path, err)
		}
	}
	kc := kube(t, "member1")
	if _, err := kc.AppsV1().Deployments("kube-system").Get(ctx, "stay-put", metav1.GetOptions{}); !apierrors.IsNotFound(err) {
		t.Errorf("the Deployment reached member1's kube-system (err %v)", err)
	}
	if _, err := kc.AppsV1().Deployments("default").Get(ctx, "stay-put", metav1.GetOptions{}); err != nil {
		t.Errorf("the Deployment left member1's default namespace: %v", err)
	}
}

// A Cluster may only name credentials in karmada-cluster: otherwise whoever
// may create Clusters could have the controller manager send any Secret's
// token to an endpoint of theirs.
func TestClusterCredentialsStayInKarmadaCluster(t *testing.T) {
	ctx := context.Background()
	cl := &clusterv1alpha1.Cluster{
		ObjectMeta: metav1.ObjectMeta{Name: "borrowed-token"},
		Spec: clusterv1alpha1.ClusterSpec{SyncMode: clusterv1alpha1.Push, APIEndpoint: "https://127.0.0.1:1",
			SecretRef: &clusterv1alpha1.LocalSecretReference{Namespace: "default", Name: "someones-token"}},
	}
	err := karmadaClient(t).Create(ctx, cl)
	if err == nil {
		_ = karmadaClient(t).Delete(ctx, cl)
		t.Fatal("a Cluster with credentials in default was admitted")
	}
	if !apierrors.IsInvalid(err) || !strings.Contains(err.Error(), `spec.secretRef.namespace: Unsupported value: "default": supported values: "karmada-cluster"`) {
		t.Fatalf("want Invalid naming spec.secretRef.namespace, got %v", err)
	}
}

// A ResourceBinding cannot bind another namespace's object: a tenant who
// may create bindings in default cannot copy member1's credentials from
// karmada-cluster into members.
func TestBindingCannotReachAnotherNamespace(t *testing.T) {
	ctx := context.Background()
	rb := &workv1alpha2.ResourceBinding{
		ObjectMeta: metav1.ObjectMeta{Name: "steal", Namespace: "default"},
		Spec: workv1alpha2.ResourceBindingSpec{
			Resource: workv1alpha2.ObjectReference{APIVersion: "v1", Kind: "Secret", Namespace: "karmada-cluster", Name: "member1"},
			Clusters: []workv1alpha2.TargetCluster{{Name: "member2"}},
		},
	}
	err := karmadaClient(t).Create(ctx, rb)
	if err == nil {
		_ = karmadaClient(t).Delete(ctx, rb)
		t.Fatal("a binding of karmada-cluster/member1 was admitted")
	}
	if !apierrors.IsInvalid(err) || !strings.Contains(err.Error(), `spec.resource.namespace: Invalid value: "karmada-cluster": must be "default"`) {
		t.Fatalf("want Invalid naming spec.resource.namespace, got %v", err)
	}
	if _, err := kube(t, "member2").CoreV1().Secrets("karmada-cluster").Get(ctx, "member1", metav1.GetOptions{}); !apierrors.IsNotFound(err) {
		t.Errorf("member1's credentials reached member2 (err %v)", err)
	}
}

// A member's own Deployment taken over with conflictResolution: Overwrite is
// released, not deleted, when the template is deleted: the member keeps it
// (as Karmada last applied it), without Karmada's marks.
func TestOverwriteReleasesAdoptedObject(t *testing.T) {
	ctx := context.Background()
	c := karmadaClient(t)
	kc := kube(t, "member1")
	t.Cleanup(func() {
		_ = kc.AppsV1().Deployments("default").Delete(context.Background(), "adoptee", metav1.DeleteOptions{})
	})
	if _, err := kc.AppsV1().Deployments("default").Create(ctx, deploymentNamed("adoptee", 1), metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	template := deploymentNamed("adoptee", 2)
	pp := &policyv1alpha1.PropagationPolicy{
		ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: "adoptee"},
		Spec: policyv1alpha1.PropagationSpec{
			ResourceSelectors:  []policyv1alpha1.ResourceSelector{{APIVersion: "apps/v1", Kind: "Deployment", Name: "adoptee"}},
			Placement:          policyv1alpha1.Placement{ClusterAffinity: &policyv1alpha1.ClusterAffinity{ClusterNames: []string{"member1"}}},
			ConflictResolution: policyv1alpha1.ConflictOverwrite,
		},
	}
	if err := c.Create(ctx, pp); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = c.Delete(context.Background(), pp) })
	if err := c.Create(ctx, template); err != nil {
		t.Fatal(err)
	}
	err := wait.PollUntilContextTimeout(ctx, 200*time.Millisecond, 30*time.Second, true, func(ctx context.Context) (bool, error) {
		d, err := kc.AppsV1().Deployments("default").Get(ctx, "adoptee", metav1.GetOptions{})
		return err == nil && d.Annotations[workv1alpha1.AdoptedAnnotation] != "" && *d.Spec.Replicas == 2, nil
	})
	if err != nil {
		t.Fatal("member1's own Deployment was not adopted (marked and scaled to the template's 2 replicas)")
	}
	if err := c.Delete(ctx, template); err != nil {
		t.Fatal(err)
	}
	err = wait.PollUntilContextTimeout(ctx, 200*time.Millisecond, 30*time.Second, true, func(ctx context.Context) (bool, error) {
		d, err := kc.AppsV1().Deployments("default").Get(ctx, "adoptee", metav1.GetOptions{})
		if err != nil {
			return false, err // deleted: fail at once
		}
		return d.Annotations[workv1alpha1.AdoptedAnnotation] == "" && d.Labels[workv1alpha1.ManagedLabel] == "", nil
	})
	if err != nil {
		t.Fatalf("member1's adopted Deployment was not released after the template's deletion: %v", err)
	}
	// What it was before the adoption is on record, and the documented
	// command puts it back: one replica again.
	kubectl := filepath.Join(filepath.Dir(fleet.Bin), "kubectl") + " --kubeconfig " + fleet.Kubeconfig + " --context member1"
	restore := kubectl + ` -n default get deployment adoptee -o jsonpath='{.metadata.annotations.work\.karmada\.io/pre-adoption}' | base64 -d | gunzip | ` + kubectl + " replace -f -"
	if out, err := exec.Command("bash", "-o", "pipefail", "-c", restore).CombinedOutput(); err != nil {
		t.Fatalf("restoring from the pre-adoption record: %v\n%s", err, out)
	}
	d, err := kc.AppsV1().Deployments("default").Get(ctx, "adoptee", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if *d.Spec.Replicas != 1 {
		t.Errorf("after the restore: %d replicas, want the member's own 1", *d.Spec.Replicas)
	}
}

// A namespace Karmada created in a member, which now also holds the
// member's own ConfigMap, is released rather than deleted when it stops
// being propagated: the member keeps the namespace and the ConfigMap.
func TestNamespaceWithMemberObjectsIsReleased(t *testing.T) {
	ctx := context.Background()
	c := karmadaClient(t)
	kc := kube(t, "member1")
	const name = "e2e-shared"
	createNamespaceUntilCleanup(ctx, t, c, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: name}})
	t.Cleanup(func() { _ = kc.CoreV1().Namespaces().Delete(context.Background(), name, metav1.DeleteOptions{}) })
	waitNamespace(ctx, t, "member1", name, true)
	if _, err := kc.CoreV1().ConfigMaps(name).Create(ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "members-own"}, Data: map[string]string{"k": "v"}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	ns := &corev1.Namespace{}
	if err := c.Get(ctx, client.ObjectKey{Name: name}, ns); err != nil {
		t.Fatal(err)
	}
	ns.Labels["namespace.karmada.io/skip-auto-propagation"] = "true"
	if err := c.Update(ctx, ns); err != nil {
		t.Fatal(err)
	}
	err := wait.PollUntilContextTimeout(ctx, 200*time.Millisecond, 30*time.Second, true, func(ctx context.Context) (bool, error) {
		got, err := kc.CoreV1().Namespaces().Get(ctx, name, metav1.GetOptions{})
		if err != nil || !got.DeletionTimestamp.IsZero() {
			return false, fmt.Errorf("the member's namespace is gone or going (err %v)", err)
		}
		return got.Labels[workv1alpha1.ManagedLabel] == "", nil
	})
	if err != nil {
		t.Fatalf("namespace %s in member1 was not released: %v", name, err)
	}
	if _, err := kc.CoreV1().ConfigMaps(name).Get(ctx, "members-own", metav1.GetOptions{}); err != nil {
		t.Errorf("the member's own ConfigMap is gone: %v", err)
	}
	// The other members' copies held nothing of their own: they go.
	waitNamespace(ctx, t, "member2", name, false)
}
