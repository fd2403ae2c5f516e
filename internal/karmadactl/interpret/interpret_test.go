package interpret

import (
	"bytes"
	"strings"
	"testing"

	"github.com/karmada-go/karmada/internal/karmadactl/options"
)

func run(t *testing.T, args ...string) (string, error) {
	t.Helper()
	cmd := NewCommand(&options.Global{})
	var out bytes.Buffer
	cmd.SetOut(&out)
	cmd.SetErr(&out)
	cmd.SetArgs(args)
	err := cmd.Execute()
	return out.String(), err
}

func TestInterpretOperations(t *testing.T) {
	const ric = "testdata/customization.yaml"
	for _, c := range []struct {
		name string
		args []string
		want []string
	}{
		{"check", []string{"-f", ric, "--check"}, []string{"deployment-example  apps/v1 Deployment  InterpretReplica     PASS"}},
		{"replicas", []string{"-f", ric, "--operation", "InterpretReplica", "--observed-file", "testdata/deployment.yaml"},
			[]string{"# [1/2] replica:\n3\n", "# [2/2] requires:\nresourceRequest:\n  cpu: 200m\n"}},
		{"revise, any case", []string{"-f", ric, "--operation", "revisereplica", "--desired-file", "testdata/deployment.yaml", "--desired-replica", "1"},
			[]string{"# [1/1] revised:\n", "  replicas: 1\n"}},
		{"aggregate", []string{"-f", ric, "--operation", "AggregateStatus", "--desired-file", "testdata/deployment.yaml",
			"--status-file", "testdata/status-member1.yaml", "--status-file", "testdata/status-member2.yaml"},
			[]string{"status:\n  readyReplicas: 2\n  replicas: 3\n"}},
		{"aggregate, items with apiVersion and kind (Karmada's test data)", []string{"-f", ric, "--operation", "AggregateStatus", "--desired-file", "testdata/deployment.yaml",
			"--status-file", "testdata/status-karmada-format.yaml"},
			[]string{"status:\n  readyReplicas: 2\n  replicas: 3\n"}},
		{"health", []string{"-f", ric, "--operation", "InterpretHealth", "--observed-file", "testdata/deployment.yaml"}, []string{"# [1/1] healthy:\ntrue\n"}},
		{"status", []string{"-f", ric, "--operation", "InterpretStatus", "--observed-file", "testdata/deployment.yaml"},
			[]string{"# [1/1] status:\nreadyReplicas: 3\nreplicas: 3\n"}},
		{"no rule", []string{"-f", ric, "--operation", "InterpretComponent", "--observed-file", "testdata/deployment.yaml"},
			[]string{"# No customization or built-in rule defines InterpretComponent for Deployment.apps: the default answer."}},
	} {
		t.Run(c.name, func(t *testing.T) {
			out, err := run(t, c.args...)
			if err != nil {
				t.Fatalf("%v\n%s", err, out)
			}
			for _, w := range c.want {
				if !strings.Contains(out, w) {
					t.Errorf("output lacks %q:\n%s", w, out)
				}
			}
		})
	}
}

func TestInterpretErrors(t *testing.T) {
	const ric = "testdata/customization.yaml"
	for _, c := range []struct {
		name string
		args []string
		want string
	}{
		{"unknown operation", []string{"-f", ric, "--operation", "Bogus", "--observed-file", "testdata/deployment.yaml"}, `--operation "Bogus": must be one of InterpretReplica`},
		{"retain without observed", []string{"-f", ric, "--operation", "Retain", "--desired-file", "testdata/deployment.yaml"}, "Retain needs --observed-file"},
		{"no operation", []string{"-f", ric}, "--operation or --check is required"},
		{"no customization", []string{"-f", "testdata/deployment.yaml", "--check"}, "no ResourceInterpreterCustomization in testdata/deployment.yaml"},
		{"check without files", []string{"--check"}, "--check needs the customizations to check: -f FILENAME"},
		{"a status file of another kind", []string{"-f", ric, "--operation", "AggregateStatus", "--desired-file", "testdata/deployment.yaml", "--status-file", "testdata/deployment.yaml"},
			`kind "Deployment": want AggregatedStatusItem (or no kind)`},
	} {
		t.Run(c.name, func(t *testing.T) {
			_, err := run(t, c.args...)
			if err == nil || !strings.Contains(err.Error(), c.want) {
				t.Fatalf("err = %v, want %q", err, c.want)
			}
		})
	}
}

// TestEveryOperationHasARunner: --operation accepts exactly the operations
// a runner answers.
func TestEveryOperationHasARunner(t *testing.T) {
	for name, op := range operations {
		if runners[op].run == nil {
			t.Errorf("--operation %s has no runner", name)
		}
	}
	if len(runners) != len(operations) {
		t.Errorf("%d runners for %d operations", len(runners), len(operations))
	}
}
