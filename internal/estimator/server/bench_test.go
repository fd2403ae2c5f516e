package server

import (
	"fmt"
	"sort"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	"k8s.io/apimachinery/pkg/types"

	workv1alpha2 "github.com/karmada-go/karmada/api/work/v1alpha2"
)

// bigMember is a member of 1,000 nodes (3 zones, a tenth of them tainted
// for GPUs) running 30,000 pods, as the target describes.
func bigMember() *Cache {
	c := NewCache()
	for i := 0; i < 1000; i++ {
		n := node(fmt.Sprintf("node-%04d", i), "32", "128Gi", 110, func(n *corev1.Node) {
			n.Labels["topology.kubernetes.io/zone"] = fmt.Sprintf("zone-%d", i%3)
			if i%10 == 0 {
				n.Spec.Taints = []corev1.Taint{{Key: "nvidia.com/gpu", Effect: corev1.TaintEffectNoSchedule}}
			}
		})
		c.SetNode(n)
	}
	for i := 0; i < 30000; i++ {
		p := pod(fmt.Sprintf("p-%05d", i), fmt.Sprintf("node-%04d", i%1000), "250m")
		p.UID = types.UID(p.Name)
		p.Spec.Containers[0].Resources.Requests[corev1.ResourceMemory] = resource.MustParse("512Mi")
		c.SetPod(p)
	}
	return c
}

func bigRequest() *workv1alpha2.ReplicaRequirements {
	return &workv1alpha2.ReplicaRequirements{Namespace: "default",
		ResourceRequest: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("2"), corev1.ResourceMemory: resource.MustParse("4Gi")},
		NodeClaim: &workv1alpha2.NodeClaim{HardNodeAffinity: &corev1.NodeSelector{NodeSelectorTerms: []corev1.NodeSelectorTerm{{
			MatchExpressions: []corev1.NodeSelectorRequirement{{Key: "topology.kubernetes.io/zone", Operator: corev1.NodeSelectorOpIn, Values: []string{"zone-0", "zone-1"}}}}}}}}
}

// BenchmarkMaxReplicas1000Nodes is one MaxAvailableReplicas at 1,000 nodes
// and 30,000 pods, with required affinity, taints and three assumed
// workloads; it reports the p99 of the runs.
func BenchmarkMaxReplicas1000Nodes(b *testing.B) {
	e := &Estimator{Cache: bigMember()}
	req := bigRequest()
	assumed := []Assumed{{Namespace: "default", Components: []workv1alpha2.Component{{Name: "", Replicas: 50,
		ReplicaRequirements: &workv1alpha2.ComponentReplicaRequirements{ResourceRequest: req.ResourceRequest}}}}}
	durations := make([]time.Duration, 0, b.N)
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		start := time.Now()
		n, err := e.MaxReplicas(req, assumed)
		durations = append(durations, time.Since(start))
		if err != nil || n == 0 {
			b.Fatalf("MaxReplicas = %d, %v", n, err)
		}
	}
	b.StopTimer()
	sort.Slice(durations, func(i, j int) bool { return durations[i] < durations[j] })
	b.ReportMetric(float64(durations[len(durations)*99/100].Microseconds())/1000, "p99-ms")
}

// BenchmarkComponentSets1000Nodes is one MaxAvailableComponentSets of a
// two-component workload (a 4-cpu manager, three 2-cpu workers) there.
func BenchmarkComponentSets1000Nodes(b *testing.B) {
	e := &Estimator{Cache: bigMember()}
	b.ResetTimer()
	comps := []workv1alpha2.Component{
		{Name: "jobmanager", Replicas: 1, ReplicaRequirements: &workv1alpha2.ComponentReplicaRequirements{ResourceRequest: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("4")}}},
		{Name: "taskmanager", Replicas: 3, ReplicaRequirements: &workv1alpha2.ComponentReplicaRequirements{ResourceRequest: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("2")}}},
	}
	for i := 0; i < b.N; i++ {
		if n, err := e.MaxComponentSets("default", comps, nil); err != nil || n == 0 {
			b.Fatalf("MaxComponentSets = %d, %v", n, err)
		}
	}
}

// BenchmarkPodEvent is the cost of one pod update in the cache.
func BenchmarkPodEvent(b *testing.B) {
	c := bigMember()
	p := pod("moving", "node-0001", "1")
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		p.Spec.NodeName = fmt.Sprintf("node-%04d", i%1000)
		c.SetPod(p)
	}
}
