package plan

import (
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
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
	if pods := c[corev1.ResourcePods]; pods.String() != "110" || instanceType(c) != "kwok.16c64g" {
		t.Errorf("capacity %v (%s): unnamed resources keep the default", c, instanceType(c))
	}
	if instanceType(NodeCapacity(nil)) != "kwok.8c32g" {
		t.Errorf("default instance type %s", instanceType(NodeCapacity(nil)))
	}
	for _, bad := range []string{"member2", "member2:cpu", "member2:cpu=lots", ":cpu=1"} {
		if _, err := ParseNodeCapacity([]string{bad}); err == nil || !strings.Contains(err.Error(), "--node-capacity") {
			t.Errorf("%q: error %v, want one naming --node-capacity", bad, err)
		}
	}
	cfg := Config{Members: 2, NodesPerMember: 1, PortBase: 30000, StateDir: "/tmp/x", Kubeconfig: "/tmp/x/k", NodeCapacity: map[string]corev1.ResourceList{"member5": c}}
	if err := cfg.Validate(); err == nil || !strings.Contains(err.Error(), "member5") {
		t.Errorf("a capacity for a member the fleet lacks: %v", err)
	}
}
