package promote

import (
	"github.com/karmada-go/karmada/internal/names"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	policyv1alpha1 "github.com/karmada-go/karmada/api/policy/v1alpha1"
)

// The policy selects exactly the promoted object, places it on the member
// it came from and takes the member's object over (Overwrite);
// --dependencies propagates what it uses.
func TestPolicy(t *testing.T) {
	obj := &unstructured.Unstructured{Object: map[string]any{"apiVersion": "apps/v1", "kind": "Deployment", "metadata": map[string]any{"name": "web", "namespace": "shop"}}}
	o := &Options{Cluster: "member1", Dependencies: true}
	p, ok := o.policy(obj, true).(*policyv1alpha1.PropagationPolicy)
	if !ok {
		t.Fatalf("a namespaced kind gets %T", o.policy(obj, true))
	}
	if p.Namespace != "shop" || p.Name != names.PolicyName("shop", "web", schema.GroupVersionKind{Group: "apps", Version: "v1", Kind: "Deployment"}) || p.Spec.ConflictResolution != policyv1alpha1.ConflictOverwrite || !p.Spec.PropagateDeps ||
		len(p.Spec.ResourceSelectors) != 1 || p.Spec.ResourceSelectors[0] != (policyv1alpha1.ResourceSelector{APIVersion: "apps/v1", Kind: "Deployment", Namespace: "shop", Name: "web"}) ||
		len(p.Spec.Placement.ClusterAffinity.ClusterNames) != 1 || p.Spec.Placement.ClusterAffinity.ClusterNames[0] != "member1" {
		t.Errorf("policy %s/%s %+v", p.Namespace, p.Name, p.Spec)
	}
	crd := &unstructured.Unstructured{Object: map[string]any{"apiVersion": "rbac.authorization.k8s.io/v1", "kind": "ClusterRole", "metadata": map[string]any{"name": "reader"}}}
	o = &Options{Cluster: "member2", PolicyName: "mine"}
	if cp, ok := o.policy(crd, false).(*policyv1alpha1.ClusterPropagationPolicy); !ok || cp.Name != "mine" || cp.Spec.PropagateDeps {
		t.Errorf("a cluster-scoped kind gets %+v", o.policy(crd, false))
	}
	long := &unstructured.Unstructured{Object: map[string]any{"apiVersion": "v1", "kind": "ConfigMap", "metadata": map[string]any{"name": strings.Repeat("a", 253), "namespace": "shop"}}}
	if n := (&Options{Cluster: "member1"}).policy(long, true).GetName(); len(n) > 253 {
		t.Errorf("policy name of %d characters", len(n))
	}
}

func TestValidate(t *testing.T) {
	for _, tc := range []struct {
		o    Options
		args []string
		want string
	}{
		{Options{Cluster: "member1", AutoCreatePolicy: true}, []string{"deployment"}, "takes a type and a name"},
		{Options{AutoCreatePolicy: true}, []string{"deployment", "web"}, "--cluster (-C) is required"},
		{Options{Cluster: "member1", Output: "table", AutoCreatePolicy: true}, []string{"deployment", "web"}, "--output"},
		{Options{Cluster: "member1", PolicyName: "x"}, []string{"deployment", "web"}, "--policy-name goes with"},
	} {
		if err := tc.o.Validate(tc.args); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%+v %v: %v, want %q", tc.o, tc.args, err, tc.want)
		}
	}
}
