package apply

import (
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/cli-runtime/pkg/resource"

	policyv1alpha1 "github.com/karmada-go/karmada/api/policy/v1alpha1"
)

// Each object applied gets a policy of its own, selecting it by name:
// -C places it on those clusters; --all-clusters leaves the clusters open.
func TestPolicy(t *testing.T) {
	info := &resource.Info{Name: "web", Namespace: "shop", Mapping: &meta.RESTMapping{
		GroupVersionKind: schema.GroupVersionKind{Group: "apps", Version: "v1", Kind: "Deployment"}, Scope: meta.RESTScopeNamespace}}
	obj, spec := (&Options{Clusters: []string{"member1", "member2"}}).policy(info)
	p, ok := obj.(*policyv1alpha1.PropagationPolicy)
	if !ok || p.Name != "web-deployment" || p.Namespace != "shop" {
		t.Fatalf("policy %T %+v", obj, obj)
	}
	if spec.ResourceSelectors[0] != (policyv1alpha1.ResourceSelector{APIVersion: "apps/v1", Kind: "Deployment", Namespace: "shop", Name: "web"}) ||
		strings.Join(spec.Placement.ClusterAffinity.ClusterNames, ",") != "member1,member2" {
		t.Errorf("spec %+v", spec)
	}
	_, spec = (&Options{AllClusters: true}).policy(info)
	if len(spec.Placement.ClusterAffinity.ClusterNames) != 0 {
		t.Errorf("--all-clusters names clusters: %v", spec.Placement.ClusterAffinity.ClusterNames)
	}
	ns := &resource.Info{Name: "reader", Mapping: &meta.RESTMapping{
		GroupVersionKind: schema.GroupVersionKind{Group: "rbac.authorization.k8s.io", Version: "v1", Kind: "ClusterRole"}, Scope: meta.RESTScopeRoot}}
	if obj, _ := (&Options{AllClusters: true}).policy(ns); obj.GetName() != "reader-clusterrole" {
		t.Errorf("cluster-scoped: %T %s", obj, obj.GetName())
	} else if _, ok := obj.(*policyv1alpha1.ClusterPropagationPolicy); !ok {
		t.Errorf("cluster-scoped kind gets %T", obj)
	}
}

func TestValidate(t *testing.T) {
	if err := (&Options{AllClusters: true, Clusters: []string{"m1"}}).Validate(); err == nil || !strings.Contains(err.Error(), "exclude each other") {
		t.Errorf("--all-clusters with -C: %v", err)
	}
	if err := (&Options{Clusters: []string{"M1"}}).Validate(); err == nil || !strings.Contains(err.Error(), "--cluster") {
		t.Errorf("a bad cluster name: %v", err)
	}
}
