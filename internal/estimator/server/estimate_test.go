package server

import (
	"fmt"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	clusterv1alpha1 "github.com/karmada-go/karmada/api/cluster/v1alpha1"
	workv1alpha2 "github.com/karmada-go/karmada/api/work/v1alpha2"
	"github.com/karmada-go/karmada/internal/estimator"
)

func node(name, cpu, mem string, pods int64, mutate ...func(*corev1.Node)) *corev1.Node {
	n := &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: name, Labels: map[string]string{"kubernetes.io/hostname": name}},
		Status: corev1.NodeStatus{Allocatable: corev1.ResourceList{
			corev1.ResourceCPU: resource.MustParse(cpu), corev1.ResourceMemory: resource.MustParse(mem), corev1.ResourcePods: *resource.NewQuantity(pods, resource.DecimalSI),
		}}}
	for _, m := range mutate {
		m(n)
	}
	return n
}

func pod(name, nodeName, cpu string) *corev1.Pod {
	return &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "default", UID: types.UID(name)},
		Spec: corev1.PodSpec{NodeName: nodeName, Containers: []corev1.Container{{Name: "c", Resources: corev1.ResourceRequirements{
			Requests: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse(cpu)}}}}},
		Status: corev1.PodStatus{Phase: corev1.PodRunning}}
}

func cpuReq(cpu string) *workv1alpha2.ReplicaRequirements {
	return &workv1alpha2.ReplicaRequirements{Namespace: "default", ResourceRequest: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse(cpu)}}
}

func withLabel(k, v string) func(*corev1.Node) { return func(n *corev1.Node) { n.Labels[k] = v } }

func TestMaxReplicasNodeLevelFit(t *testing.T) {
	three := func(mutate ...func(*corev1.Node)) []*corev1.Node {
		return []*corev1.Node{node("n1", "8", "32Gi", 110), node("n2", "8", "32Gi", 110), node("n3", "8", "32Gi", 110, mutate...)}
	}
	gpu := corev1.ResourceName("nvidia.com/gpu")
	cases := []struct {
		name    string
		nodes   []*corev1.Node
		pods    []*corev1.Pod
		req     *workv1alpha2.ReplicaRequirements
		assumed []Assumed
		quotas  []*corev1.ResourceQuota
		want    int32
	}{
		{name: "enough in total, no node large enough", nodes: three(), req: cpuReq("12"), want: 0},
		{name: "small replicas: per node, summed", nodes: three(), req: cpuReq("3"), want: 6},
		{name: "what bound pods request is taken", nodes: three(), pods: []*corev1.Pod{pod("a", "n1", "5"), pod("b", "n2", "2500m")}, req: cpuReq("3"), want: 1 + 1 + 2},
		{name: "terminated pods free their room", nodes: three(), pods: []*corev1.Pod{func() *corev1.Pod { p := pod("a", "n1", "8"); p.Status.Phase = corev1.PodSucceeded; return p }()}, req: cpuReq("4"), want: 6},
		{name: "unbound pods take nothing", nodes: three(), pods: []*corev1.Pod{pod("a", "", "8")}, req: cpuReq("4"), want: 6},
		{name: "pod slots", nodes: []*corev1.Node{node("n1", "8", "32Gi", 2)}, pods: []*corev1.Pod{pod("a", "n1", "0")}, req: cpuReq("1"), want: 1},
		{name: "no resources requested: pod slots", nodes: []*corev1.Node{node("n1", "8", "32Gi", 5), node("n2", "8", "32Gi", 7)}, req: &workv1alpha2.ReplicaRequirements{}, want: 12},
		{name: "a resource no node has", nodes: three(), req: &workv1alpha2.ReplicaRequirements{ResourceRequest: corev1.ResourceList{gpu: resource.MustParse("1")}}, want: 0},
		{name: "node selector", nodes: three(withLabel("disk", "ssd")),
			req: &workv1alpha2.ReplicaRequirements{NodeClaim: &workv1alpha2.NodeClaim{NodeSelector: map[string]string{"disk": "ssd"}}, ResourceRequest: cpuReq("2").ResourceRequest}, want: 4},
		{name: "required node affinity", nodes: three(withLabel("zone", "b")),
			req: &workv1alpha2.ReplicaRequirements{NodeClaim: &workv1alpha2.NodeClaim{HardNodeAffinity: &corev1.NodeSelector{NodeSelectorTerms: []corev1.NodeSelectorTerm{{
				MatchExpressions: []corev1.NodeSelectorRequirement{{Key: "zone", Operator: corev1.NodeSelectorOpNotIn, Values: []string{"b"}}}}}}}, ResourceRequest: cpuReq("2").ResourceRequest}, want: 8},
		{name: "untolerated NoSchedule taint", nodes: three(func(n *corev1.Node) {
			n.Spec.Taints = []corev1.Taint{{Key: "gpu", Effect: corev1.TaintEffectNoSchedule}}
		}),
			req: cpuReq("4"), want: 4},
		{name: "tolerated taint", nodes: three(func(n *corev1.Node) {
			n.Spec.Taints = []corev1.Taint{{Key: "gpu", Effect: corev1.TaintEffectNoSchedule}}
		}),
			req: &workv1alpha2.ReplicaRequirements{NodeClaim: &workv1alpha2.NodeClaim{Tolerations: []corev1.Toleration{{Key: "gpu", Operator: corev1.TolerationOpExists}}}, ResourceRequest: cpuReq("4").ResourceRequest}, want: 6},
		{name: "PreferNoSchedule does not exclude", nodes: three(func(n *corev1.Node) {
			n.Spec.Taints = []corev1.Taint{{Key: "x", Effect: corev1.TaintEffectPreferNoSchedule}}
		}),
			req: cpuReq("4"), want: 6},
		{name: "cordoned node", nodes: three(func(n *corev1.Node) { n.Spec.Unschedulable = true }), req: cpuReq("4"), want: 4},
		{name: "assumed workloads are placed first, node by node", nodes: three(), req: cpuReq("4"),
			assumed: []Assumed{{Namespace: "default", Components: []workv1alpha2.Component{{Name: "a", Replicas: 2, ReplicaRequirements: &workv1alpha2.ComponentReplicaRequirements{ResourceRequest: cpuReq("6").ResourceRequest}}}}}, want: 2},
		{name: "namespace quota on requests.cpu", nodes: three(), req: cpuReq("2"),
			quotas: []*corev1.ResourceQuota{quota("q", corev1.ResourceList{"requests.cpu": resource.MustParse("10")}, corev1.ResourceList{"requests.cpu": resource.MustParse("4")})}, want: 3},
		{name: "quota on pods, minus assumed", nodes: three(), req: cpuReq("1"),
			quotas:  []*corev1.ResourceQuota{quota("q", corev1.ResourceList{"pods": resource.MustParse("10")}, corev1.ResourceList{"pods": resource.MustParse("3")})},
			assumed: []Assumed{{Namespace: "default", Components: []workv1alpha2.Component{{Name: "a", Replicas: 2}}}}, want: 5},
		{name: "quota of another priority class does not apply", nodes: three(), req: cpuReq("2"),
			quotas: []*corev1.ResourceQuota{func() *corev1.ResourceQuota {
				q := quota("q", corev1.ResourceList{"requests.cpu": resource.MustParse("2")}, nil)
				q.Spec.ScopeSelector = &corev1.ScopeSelector{MatchExpressions: []corev1.ScopedResourceSelectorRequirement{{ScopeName: corev1.ResourceQuotaScopePriorityClass, Operator: corev1.ScopeSelectorOpIn, Values: []string{"high"}}}}
				return q
			}()}, want: 12},
		{name: "limits.* quotas do not limit by requests", nodes: three(), req: cpuReq("2"),
			quotas: []*corev1.ResourceQuota{quota("q", corev1.ResourceList{"limits.cpu": resource.MustParse("1")}, nil)}, want: 12},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			c := NewCache()
			for _, n := range tc.nodes {
				c.SetNode(n)
			}
			for _, p := range tc.pods {
				c.SetPod(p)
			}
			e := &Estimator{Cache: c, Quotas: func(string) ([]*corev1.ResourceQuota, error) { return tc.quotas, nil }}
			got, err := e.MaxReplicas(tc.req, tc.assumed)
			if err != nil {
				t.Fatal(err)
			}
			if got != tc.want {
				t.Errorf("MaxReplicas = %d, want %d", got, tc.want)
			}
		})
	}
}

func quota(name string, hard, used corev1.ResourceList) *corev1.ResourceQuota {
	return &corev1.ResourceQuota{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "default"},
		Spec: corev1.ResourceQuotaSpec{Hard: hard}, Status: corev1.ResourceQuotaStatus{Hard: hard, Used: used}}
}

// The general estimator, from the same cluster's totals, says replicas fit
// that no node can run: the reason for the accurate one.
func TestGeneralEstimatorOvercountsWhereNoNodeFits(t *testing.T) {
	cluster := &clusterv1alpha1.Cluster{Status: clusterv1alpha1.ClusterStatus{ResourceSummary: &clusterv1alpha1.ResourceSummary{
		Allocatable: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("24"), corev1.ResourcePods: resource.MustParse("330")}}}}
	if got := estimator.General(cluster, cpuReq("12")); got != 2 {
		t.Fatalf("general estimate = %d, want 2 (24 cpu / 12)", got)
	}
	c := NewCache()
	for i := 1; i <= 3; i++ {
		c.SetNode(node(fmt.Sprintf("n%d", i), "8", "32Gi", 110))
	}
	if got, _ := (&Estimator{Cache: c}).MaxReplicas(cpuReq("12"), nil); got != 0 {
		t.Fatalf("accurate estimate = %d, want 0: no 8-cpu node fits a 12-cpu replica", got)
	}
}

func TestCacheFollowsEvents(t *testing.T) {
	c := NewCache()
	e := &Estimator{Cache: c}
	c.SetNode(node("n1", "4", "8Gi", 110))
	p := pod("a", "n1", "3")
	c.SetPod(p)
	check := func(want int32) {
		t.Helper()
		if got, _ := e.MaxReplicas(cpuReq("1"), nil); got != want {
			t.Fatalf("MaxReplicas = %d, want %d", got, want)
		}
	}
	check(1)
	p2 := p.DeepCopy()
	p2.Spec.Containers[0].Resources.Requests[corev1.ResourceCPU] = resource.MustParse("1")
	c.SetPod(p2) // an update replaces, not adds
	check(3)
	c.DeletePod(p.UID)
	check(4)
	c.SetNode(node("n1", "6", "8Gi", 110)) // resized
	check(6)
	c.SetPod(pod("b", "n2", "1")) // a pod seen before its node
	c.SetNode(node("n2", "2", "8Gi", 110))
	check(7)
	c.DeleteNode("n1")
	check(1)
	if c.Nodes() != 1 {
		t.Fatalf("Nodes() = %d, want 1", c.Nodes())
	}
}

func TestMaxComponentSets(t *testing.T) {
	comp := func(name string, replicas int32, cpu string) workv1alpha2.Component {
		return workv1alpha2.Component{Name: name, Replicas: replicas, ReplicaRequirements: &workv1alpha2.ComponentReplicaRequirements{ResourceRequest: cpuReq(cpu).ResourceRequest}}
	}
	c := NewCache()
	for i := 1; i <= 3; i++ {
		c.SetNode(node(fmt.Sprintf("n%d", i), "8", "32Gi", 110))
	}
	e := &Estimator{Cache: c}
	cases := []struct {
		name       string
		components []workv1alpha2.Component
		assumed    []Assumed
		want       int32
	}{
		// A set: one 5-cpu manager and two 2-cpu workers (9 cpu); the
		// total (24) bounds it at 2. Node by node: set 1 puts its manager
		// and a worker on n1, a worker on n2; set 2 its manager on n2 and
		// both workers on n3; a third manager finds no node with 5 free.
		{name: "sets placed node by node", components: []workv1alpha2.Component{comp("jobmanager", 1, "5"), comp("taskmanager", 2, "2")}, want: 2},
		{name: "one component larger than any node", components: []workv1alpha2.Component{comp("jobmanager", 1, "9"), comp("taskmanager", 1, "1")}, want: 0},
		{name: "small sets, bounded by the total", components: []workv1alpha2.Component{comp("a", 1, "1"), comp("b", 1, "1")}, want: 12},
		{name: "assumed sets first", components: []workv1alpha2.Component{comp("a", 1, "4")},
			assumed: []Assumed{{Namespace: "default", Components: []workv1alpha2.Component{comp("a", 3, "4")}}}, want: 3},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			got, err := e.MaxComponentSets("default", tc.components, tc.assumed)
			if err != nil {
				t.Fatal(err)
			}
			if got != tc.want {
				t.Errorf("MaxComponentSets = %d, want %d", got, tc.want)
			}
		})
	}
}

func TestCountUnschedulable(t *testing.T) {
	now := time.Date(2026, 1, 1, 12, 0, 0, 0, time.UTC)
	waiting := func(name string, since time.Duration, reason string) *corev1.Pod {
		p := pod(name, "", "1")
		p.Status.Phase = corev1.PodPending
		p.Status.Conditions = []corev1.PodCondition{{Type: corev1.PodScheduled, Status: corev1.ConditionFalse, Reason: reason, LastTransitionTime: metav1.NewTime(now.Add(-since))}}
		return p
	}
	deleting := waiting("d", time.Hour, corev1.PodReasonUnschedulable)
	deleting.DeletionTimestamp = &metav1.Time{Time: now}
	pods := []*corev1.Pod{
		waiting("old", 10*time.Minute, corev1.PodReasonUnschedulable),
		waiting("exactly", 5*time.Minute, corev1.PodReasonUnschedulable),
		waiting("new", time.Minute, corev1.PodReasonUnschedulable),
		waiting("gated", time.Hour, corev1.PodReasonSchedulingGated),
		deleting,
		pod("running", "n1", "1"),
	}
	if got := CountUnschedulable(pods, 5*time.Minute, now); got != 2 {
		t.Fatalf("CountUnschedulable = %d, want 2 (old, exactly)", got)
	}
	if got := CountUnschedulable(pods, 0, now); got != 3 {
		t.Fatalf("CountUnschedulable(threshold 0) = %d, want 3", got)
	}
}
