// Package schedulertest holds the fixtures of the scheduler's tests: member
// clusters with free cpu, binding specs and placements written as text.
package schedulertest

import (
	"strings"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	clusterv1alpha1 "github.com/karmada-go/karmada/api/cluster/v1alpha1"
	policyv1alpha1 "github.com/karmada-go/karmada/api/policy/v1alpha1"
	workv1alpha2 "github.com/karmada-go/karmada/api/work/v1alpha2"
)

// member is a Ready cluster serving Deployments with cpu free for the given
// number of 1-cpu replicas.
// Member is a cluster of the region with freeCPU cpus allocatable, 100
// pods, serving Deployments.
func Member(name, region string, freeCPU int, taints ...corev1.Taint) clusterv1alpha1.Cluster {
	return clusterv1alpha1.Cluster{
		ObjectMeta: metav1.ObjectMeta{Name: name},
		Spec:       clusterv1alpha1.ClusterSpec{Region: region, Taints: taints},
		Status: clusterv1alpha1.ClusterStatus{
			APIEnablements: []clusterv1alpha1.APIEnablement{{GroupVersion: "apps/v1", Resources: []clusterv1alpha1.APIResource{{Name: "deployments", Kind: "Deployment"}}}},
			ResourceSummary: &clusterv1alpha1.ResourceSummary{Allocatable: corev1.ResourceList{
				corev1.ResourceCPU: *resource.NewQuantity(int64(freeCPU), resource.DecimalSI), corev1.ResourcePods: resource.MustParse("100"),
			}},
		},
	}
}

// Spec is the binding of Deployment default/web with replicas of 1 cpu
// each, placed by p.
func Spec(replicas int32, p *policyv1alpha1.Placement) *workv1alpha2.ResourceBindingSpec {
	return &workv1alpha2.ResourceBindingSpec{
		Resource:            workv1alpha2.ObjectReference{APIVersion: "apps/v1", Kind: "Deployment", Namespace: "default", Name: "web"},
		Replicas:            replicas,
		ReplicaRequirements: &workv1alpha2.ReplicaRequirements{ResourceRequest: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("1")}},
		Placement:           p,
	}
}

// Targets writes a placement as "name=replicas,...".
func Targets(ts []workv1alpha2.TargetCluster) string {
	var out []string
	for _, t := range ts {
		out = append(out, t.Name+"="+itoa(t.Replicas))
	}
	return strings.Join(out, ",")
}

func itoa(n int32) string {
	return strings.TrimSpace(resource.NewQuantity(int64(n), resource.DecimalSI).String())
}
