//go:build e2e

package e2e

import (
	"context"
	"strings"
	"testing"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	policyv1alpha1 "github.com/karmada-go/karmada/api/policy/v1alpha1"
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
