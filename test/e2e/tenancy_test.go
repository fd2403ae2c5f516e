//go:build e2e

package e2e

import (
	"context"
	"strings"
	"testing"
	"time"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/wait"
	"sigs.k8s.io/controller-runtime/pkg/client"

	policyv1alpha1 "github.com/karmada-go/karmada/api/policy/v1alpha1"
	workv1alpha2 "github.com/karmada-go/karmada/api/work/v1alpha2"
)

// An OverridePolicy that would move a propagated Deployment into the
// member's kube-system is refused: the binding says why, naming the policy,
// and the Deployment is neither moved nor duplicated.
func TestOverrideCannotMoveNamespace(t *testing.T) {
	ctx := context.Background()
	c := karmadaClient(t)
	d := deploymentNamed("stay-put", 1)
	propagate(ctx, t, d, policyv1alpha1.Placement{ClusterAffinity: &policyv1alpha1.ClusterAffinity{ClusterNames: []string{"member1"}}})
	waitMemberDeployment(ctx, t, "member1", "stay-put", 1)
	op := &policyv1alpha1.OverridePolicy{
		ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: "move-to-kube-system"},
		Spec: policyv1alpha1.OverrideSpec{
			ResourceSelectors: []policyv1alpha1.ResourceSelector{{APIVersion: "apps/v1", Kind: "Deployment", Name: "stay-put"}},
			OverrideRules: []policyv1alpha1.RuleWithCluster{{Overriders: policyv1alpha1.Overriders{Plaintext: []policyv1alpha1.PlaintextOverrider{{
				Path: "/metadata/namespace", Operator: policyv1alpha1.OverriderOpReplace, Value: apiextensionsv1.JSON{Raw: []byte(`"kube-system"`)}}}}}},
		},
	}
	if err := c.Create(ctx, op); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = c.Delete(context.Background(), op) })
	var cond *metav1.Condition
	err := wait.PollUntilContextTimeout(ctx, 250*time.Millisecond, 30*time.Second, true, func(ctx context.Context) (bool, error) {
		rb := &workv1alpha2.ResourceBinding{}
		if err := c.Get(ctx, client.ObjectKey{Namespace: "default", Name: "stay-put-deployment"}, rb); err != nil {
			return false, nil
		}
		cond = meta.FindStatusCondition(rb.Status.Conditions, workv1alpha2.OverridesApplied)
		return cond != nil && cond.Status == metav1.ConditionFalse, nil
	})
	if err != nil || !strings.Contains(cond.Message, "OverridePolicy default/move-to-kube-system") || !strings.Contains(cond.Message, "metadata.namespace") {
		t.Fatalf("the binding's OverridesApplied is %+v, want False naming the policy and metadata.namespace", cond)
	}
	kc := kube(t, "member1")
	if _, err := kc.AppsV1().Deployments("kube-system").Get(ctx, "stay-put", metav1.GetOptions{}); !apierrors.IsNotFound(err) {
		t.Errorf("the Deployment reached member1's kube-system (err %v)", err)
	}
	if _, err := kc.AppsV1().Deployments("default").Get(ctx, "stay-put", metav1.GetOptions{}); err != nil {
		t.Errorf("the Deployment left member1's default namespace: %v", err)
	}
}
