package estimator

import (
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"

	clusterv1alpha1 "github.com/karmada-go/karmada/api/cluster/v1alpha1"
	workv1alpha2 "github.com/karmada-go/karmada/api/work/v1alpha2"
)

func list(kv ...string) corev1.ResourceList {
	out := corev1.ResourceList{}
	for i := 0; i < len(kv); i += 2 {
		out[corev1.ResourceName(kv[i])] = resource.MustParse(kv[i+1])
	}
	return out
}

func cluster(allocatable, allocated, allocating corev1.ResourceList) *clusterv1alpha1.Cluster {
	return &clusterv1alpha1.Cluster{Status: clusterv1alpha1.ClusterStatus{ResourceSummary: &clusterv1alpha1.ResourceSummary{
		Allocatable: allocatable, Allocated: allocated, Allocating: allocating,
	}}}
}

func TestGeneral(t *testing.T) {
	big := list("cpu", "24", "memory", "96Gi", "pods", "330")
	cases := []struct {
		name    string
		cluster *clusterv1alpha1.Cluster
		req     corev1.ResourceList
		want    int32
	}{
		{"no summary: nothing", &clusterv1alpha1.Cluster{}, list("cpu", "1"), 0},
		{"no request: free pods", cluster(big, list("pods", "30"), nil), nil, 300},
		{"cpu bound", cluster(big, nil, nil), list("cpu", "500m", "memory", "128Mi"), 48},
		{"memory bound", cluster(big, nil, nil), list("cpu", "100m", "memory", "4Gi"), 24},
		{"pods bound", cluster(big, list("pods", "320"), nil), list("cpu", "100m"), 10},
		{"allocated and allocating subtract", cluster(big, list("cpu", "20"), list("cpu", "2")), list("cpu", "1"), 2},
		{"overcommitted: zero, not negative", cluster(big, list("cpu", "30"), nil), list("cpu", "1"), 0},
		{"resource the cluster lacks", cluster(big, nil, nil), list("nvidia.com/gpu", "1"), 0},
		{"milli-cpu divides exactly", cluster(list("cpu", "1"), nil, nil), list("cpu", "250m"), 4},
		{"zero request ignored", cluster(list("cpu", "1", "pods", "7"), nil, nil), list("cpu", "0"), 7},
	}
	for _, c := range cases {
		var req *workv1alpha2.ReplicaRequirements
		if c.req != nil {
			req = &workv1alpha2.ReplicaRequirements{ResourceRequest: c.req}
		}
		if got := General(c.cluster, req); got != c.want {
			t.Errorf("%s: %d, want %d", c.name, got, c.want)
		}
	}
}

func models() []clusterv1alpha1.ResourceModel {
	r := func(name, lo, hi string) clusterv1alpha1.ResourceModelRange {
		return clusterv1alpha1.ResourceModelRange{Name: corev1.ResourceName(name), Min: resource.MustParse(lo), Max: resource.MustParse(hi)}
	}
	return []clusterv1alpha1.ResourceModel{
		{Grade: 0, Ranges: []clusterv1alpha1.ResourceModelRange{r("cpu", "0", "4"), r("memory", "0", "16Gi")}},
		{Grade: 1, Ranges: []clusterv1alpha1.ResourceModelRange{r("cpu", "4", "16"), r("memory", "16Gi", "64Gi")}},
		{Grade: 2, Ranges: []clusterv1alpha1.ResourceModelRange{r("cpu", "16", "1024"), r("memory", "64Gi", "1Ti")}},
	}
}

func TestGeneralWithModels(t *testing.T) {
	c := cluster(list("cpu", "100", "memory", "400Gi", "pods", "1000"), nil, nil)
	c.Spec.ResourceModels = models()
	c.Status.ResourceSummary.AllocatableModelings = []clusterv1alpha1.AllocatableModeling{{Grade: 0, Count: 10}, {Grade: 1, Count: 2}, {Grade: 2, Count: 1}}
	// 6-cpu replicas fit on no grade-0 node (min 0), one per grade-1 node
	// (min 4 → 0!), and two per grade-2 node: models count minimums.
	req := &workv1alpha2.ReplicaRequirements{ResourceRequest: list("cpu", "6")}
	if got := General(c, req); got != 2 {
		t.Errorf("6 cpu: %d, want 2 (only the grade-2 node, min 16 cpu)", got)
	}
	req = &workv1alpha2.ReplicaRequirements{ResourceRequest: list("cpu", "2", "memory", "8Gi")}
	// grade 1: min(4/2, 16/8) = 2 per node × 2; grade 2: min(16/2, 64/8) = 8.
	if got := General(c, req); got != 12 {
		t.Errorf("2 cpu 8Gi: %d, want 12", got)
	}
	// The free pod slots still cap the estimate.
	c.Status.ResourceSummary.Allocated = list("pods", "995")
	if got := General(c, req); got != 5 {
		t.Errorf("with 5 free pods: %d, want 5", got)
	}
}

func TestGrade(t *testing.T) {
	cases := []struct {
		alloc corev1.ResourceList
		want  uint
		ok    bool
	}{
		{list("cpu", "2", "memory", "8Gi"), 0, true},
		{list("cpu", "8", "memory", "32Gi"), 1, true},
		{list("cpu", "32", "memory", "32Gi"), 1, true}, // memory holds it back
		{list("cpu", "32", "memory", "128Gi"), 2, true},
		{list("cpu", "2048", "memory", "128Gi"), 0, false},
	}
	for _, c := range cases {
		got, ok := Grade(models(), c.alloc)
		if got != c.want || ok != c.ok {
			t.Errorf("%v: grade %d ok %v, want %d %v", c.alloc, got, ok, c.want, c.ok)
		}
	}
}

// TestComponentSets: a set is all components together; enough for each
// component alone is not enough for the set.
func TestComponentSets(t *testing.T) {
	cluster := func(cpu, mem string, pods int64) *clusterv1alpha1.Cluster {
		return &clusterv1alpha1.Cluster{Status: clusterv1alpha1.ClusterStatus{ResourceSummary: &clusterv1alpha1.ResourceSummary{
			Allocatable: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse(cpu), corev1.ResourceMemory: resource.MustParse(mem), corev1.ResourcePods: *resource.NewQuantity(pods, resource.DecimalSI)},
		}}}
	}
	req := func(cpu, mem string) *workv1alpha2.ComponentReplicaRequirements {
		return &workv1alpha2.ComponentReplicaRequirements{ResourceRequest: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse(cpu), corev1.ResourceMemory: resource.MustParse(mem)}}
	}
	flink := []workv1alpha2.Component{
		{Name: "jobmanager", Replicas: 1, ReplicaRequirements: req("1", "2Gi")},
		{Name: "taskmanager", Replicas: 3, ReplicaRequirements: req("2", "4Gi")},
	}
	for _, c := range []struct {
		name    string
		cluster *clusterv1alpha1.Cluster
		want    int32
	}{
		{"two sets of 7 cpu", cluster("14", "100Gi", 100), 2},
		{"memory decides", cluster("100", "20Gi", 100), 1},
		{"each component fits, the set does not", cluster("6", "100Gi", 100), 0},
		{"pods decide", cluster("100", "100Gi", 7), 1},
		{"no summary", &clusterv1alpha1.Cluster{}, 0},
	} {
		if got := ComponentSets(c.cluster, flink); got != c.want {
			t.Errorf("%s: %d sets, want %d", c.name, got, c.want)
		}
	}
}
