package agentcsr

import (
	"bytes"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"testing"

	rbacv1 "k8s.io/api/rbac/v1"
	"sigs.k8s.io/yaml"
)

// exampleRegistration is the registration id of the example file.
const exampleRegistration = "0123456789abcdef0123456789abcdef"

var update = flag.Bool("update", false, "rewrite deploy/agent/control-plane-rbac.example.yaml from AgentRBAC")

// The agent's control plane RBAC, as the approval makes it for a cluster
// named member3, is kept as a file beside the other manifests
// (deploy/agent/control-plane-rbac.example.yaml); the file must be what
// AgentRBAC makes. Run with -update after changing AgentRBAC.
func TestAgentRBACFileIsCurrent(t *testing.T) {
	var buf bytes.Buffer
	buf.WriteString("# The control plane rights of one pull-mode cluster's karmada-agent, as the\n" +
		"# agentcsrapproving controller makes them when it approves the cluster's\n" +
		"# registration (here for a cluster named member3, whose registration id is\n" +
		"# " + exampleRegistration + "), owned by its Cluster.\n" +
		"# Generated from AgentRBAC (internal/registration/agentcsr): `go test\n" +
		"# ./internal/registration/agentcsr -run TestAgentRBACFileIsCurrent -update`.\n")
	for _, o := range AgentRBAC("member3", exampleRegistration) {
		gvk, err := apiVersionKind(o)
		if err != nil {
			t.Fatal(err)
		}
		data, err := yaml.Marshal(o)
		if err != nil {
			t.Fatal(err)
		}
		buf.WriteString("---\n")
		buf.WriteString(gvk)
		buf.Write(bytes.ReplaceAll(data, []byte("  creationTimestamp: null\n"), nil))
	}
	_, self, _, _ := runtime.Caller(0)
	path := filepath.Join(filepath.Dir(self), "..", "..", "..", "deploy", "agent", "control-plane-rbac.example.yaml")
	if *update {
		if err := os.WriteFile(path, buf.Bytes(), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	got, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run the test with -update)", err)
	}
	if !bytes.Equal(got, buf.Bytes()) {
		t.Errorf("%s is not what AgentRBAC makes; run the test with -update", path)
	}
}

func apiVersionKind(o any) (string, error) {
	kind := ""
	switch o.(type) {
	case *rbacv1.ClusterRole:
		kind = "ClusterRole"
	case *rbacv1.ClusterRoleBinding:
		kind = "ClusterRoleBinding"
	case *rbacv1.Role:
		kind = "Role"
	case *rbacv1.RoleBinding:
		kind = "RoleBinding"
	default:
		return "", fmt.Errorf("unexpected %T", o)
	}
	return "apiVersion: rbac.authorization.k8s.io/v1\nkind: " + kind + "\n", nil
}
