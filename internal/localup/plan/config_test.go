package plan

import (
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"

	"github.com/karmada-go/karmada/internal/localup/kwok"
)

func TestNodeCapacityOfAMemberTheFleetLacks(t *testing.T) {
	c := kwok.NodeCapacity(nil)
	cfg := Config{Members: 2, NodesPerMember: 1, PortBase: 30000, StateDir: "/tmp/x", Kubeconfig: "/tmp/x/k", NodeCapacity: map[string]corev1.ResourceList{"member5": c}}
	if err := cfg.Validate(); err == nil || !strings.Contains(err.Error(), "member5") {
		t.Errorf("a capacity for a member the fleet lacks: %v", err)
	}
}
