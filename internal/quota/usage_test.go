package quota

import (
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	policyv1alpha1 "github.com/karmada-go/karmada/api/policy/v1alpha1"
	workv1alpha2 "github.com/karmada-go/karmada/api/work/v1alpha2"
)

func TestUsage(t *testing.T) {
	spec := &workv1alpha2.ResourceBindingSpec{
		ReplicaRequirements: &workv1alpha2.ReplicaRequirements{ResourceRequest: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("250m"), corev1.ResourceMemory: resource.MustParse("1Gi")}},
		Clusters:            []workv1alpha2.TargetCluster{{Name: "m1", Replicas: 3}, {Name: "m2", Replicas: 1}},
	}
	u := Usage(spec)
	if c, m, p := u[corev1.ResourceCPU], u[corev1.ResourceMemory], u[corev1.ResourcePods]; c.String() != "1" || m.String() != "4Gi" || p.String() != "4" {
		t.Errorf("usage %v, want cpu 1, memory 4Gi, pods 4", u)
	}
	comps := &workv1alpha2.ResourceBindingSpec{
		Components: []workv1alpha2.Component{{Name: "jm", Replicas: 1, ReplicaRequirements: &workv1alpha2.ComponentReplicaRequirements{ResourceRequest: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("2")}}},
			{Name: "tm", Replicas: 3, ReplicaRequirements: &workv1alpha2.ComponentReplicaRequirements{ResourceRequest: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("1")}}}},
		Clusters: []workv1alpha2.TargetCluster{{Name: "m1", Components: []workv1alpha2.ComponentReplicas{{Name: "jm", Replicas: 1}, {Name: "tm", Replicas: 3}}}},
	}
	if c := Usage(comps)[corev1.ResourceCPU]; c.String() != "5" {
		t.Errorf("components' cpu %s, want 5", c.String())
	}
	if len(Usage(&workv1alpha2.ResourceBindingSpec{})) != 0 {
		t.Error("an unplaced binding uses something")
	}
}

func TestCheck(t *testing.T) {
	q := &policyv1alpha1.FederatedResourceQuota{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "q"},
		Spec: policyv1alpha1.FederatedResourceQuotaSpec{Overall: corev1.ResourceList{"requests.cpu": resource.MustParse("4"), "pods": resource.MustParse("10")}}}
	used := corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("3"), corev1.ResourcePods: resource.MustParse("3")}
	if err := Check(q, used, corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("1")}); err != nil {
		t.Errorf("exactly at the limit: %v", err)
	}
	err := Check(q, used, corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("1500m")})
	if err == nil || !strings.Contains(err.Error(), "FederatedResourceQuota(ns/q) exceeded for resource requests.cpu: requested sum 4500m, limit 4.") || !IsExceeded(err) {
		t.Errorf("over: %v", err)
	}
	if err := Check(q, used, corev1.ResourceList{corev1.ResourceMemory: resource.MustParse("100Gi")}); err != nil {
		t.Errorf("a resource the quota does not limit: %v", err)
	}
}
