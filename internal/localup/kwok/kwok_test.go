package kwok

import (
	"context"
	"slices"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes/fake"
)

func TestParseNodeCapacity(t *testing.T) {
	got, err := ParseNodeCapacity([]string{"member2:cpu=16,memory=64Gi", "member3:nvidia.com/gpu=4"})
	if err != nil {
		t.Fatal(err)
	}
	cpu, mem := got["member2"][corev1.ResourceCPU], got["member2"][corev1.ResourceMemory]
	if cpu.String() != "16" || mem.String() != "64Gi" || len(got["member3"]) != 1 {
		t.Fatalf("parsed %v", got)
	}
	c := NodeCapacity(got["member2"])
	if pods := c[corev1.ResourcePods]; pods.String() != "110" || InstanceType(c) != "kwok.16c64g" {
		t.Errorf("capacity %v (%s): unnamed resources keep the default", c, InstanceType(c))
	}
	if InstanceType(NodeCapacity(nil)) != "kwok.8c32g" {
		t.Errorf("default instance type %s", InstanceType(NodeCapacity(nil)))
	}
	for _, bad := range []string{"member2", "member2:cpu", "member2:cpu=lots", ":cpu=1"} {
		if _, err := ParseNodeCapacity([]string{bad}); err == nil || !strings.Contains(err.Error(), "--node-capacity") {
			t.Errorf("%q: error %v, want one naming --node-capacity", bad, err)
		}
	}
}

func TestEnsureNodesKeepsOnlyItsOwn(t *testing.T) {
	ctx := context.Background()
	old := Node("member1", 1, 3, nil) // a third node of a larger fleet, default size
	foreign := &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: "someone-elses"}}
	kc := fake.NewClientset(old, foreign)
	custom := corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("16")}
	if err := EnsureNodes(ctx, kc, "member1", 1, 2, custom, 10250); err != nil {
		t.Fatal(err)
	}
	list, err := kc.CoreV1().Nodes().List(ctx, metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, n := range list.Items {
		names = append(names, n.Name)
		if n.Name == "someone-elses" {
			continue
		}
		if cpu := n.Status.Capacity[corev1.ResourceCPU]; cpu.String() != "16" || n.Labels["topology.kubernetes.io/region"] != "us-east-1" {
			t.Errorf("%s: cpu %s, region %q", n.Name, cpu.String(), n.Labels["topology.kubernetes.io/region"])
		}
		if n.Annotations[ResourceMetricsPathAnnotation] != ResourceMetricsPath(n.Name) || n.Status.DaemonEndpoints.KubeletEndpoint.Port != 10250 {
			t.Errorf("%s: metrics path %q, kubelet port %d", n.Name, n.Annotations[ResourceMetricsPathAnnotation], n.Status.DaemonEndpoints.KubeletEndpoint.Port)
		}
	}
	slices.Sort(names)
	if want := []string{"member1-node1", "member1-node2", "someone-elses"}; !slices.Equal(names, want) {
		t.Errorf("nodes %v, want %v (the third managed node removed, the foreign one kept)", names, want)
	}
}
