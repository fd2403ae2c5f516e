//go:build e2e

package e2e

import (
	"errors"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// Every binary Karmada gives --feature-gates takes Karmada's gates (its
// --help lists them with Karmada's stages and defaults) and refuses an
// unknown one before anything else is checked. (Every gate of Karmada's is
// implemented: the refusal by name of a missing feature's gate is unit-tested
// in internal/features.)
func TestEveryBinaryTakesKarmadasFeatureGates(t *testing.T) {
	for _, b := range []string{"karmada-controller-manager", "karmada-scheduler", "karmada-webhook", "karmada-agent", "karmada-descheduler",
		"karmada-scheduler-estimator", "karmada-search", "karmada-aggregated-apiserver", "karmada-metrics-adapter"} {
		bin := filepath.Join(filepath.Dir(fleet.Bin), b)
		run := func(args ...string) (string, int) {
			out, err := exec.Command(bin, args...).CombinedOutput()
			var exit *exec.ExitError
			if errors.As(err, &exit) {
				return string(out), exit.ExitCode()
			}
			if err != nil {
				t.Fatalf("%s %v: %v", b, args, err)
			}
			return string(out), 0
		}
		help, _ := run("--help")
		for _, want := range []string{"PropagationPolicyPreemption=true|false (ALPHA - default=false)", "GracefulEviction=true|false (BETA - default=true)", "WorkloadAffinity=true|false (ALPHA - default=false)", "ControllerPriorityQueue=true|false (BETA - default=true)"} {
			if !strings.Contains(help, want) {
				t.Errorf("%s --help does not list %q", b, want)
			}
		}
		out, code := run("--feature-gates=NoSuchGate=true")
		if code == 0 || !strings.Contains(out, "unrecognized feature gate: NoSuchGate") {
			t.Errorf("%s --feature-gates=NoSuchGate=true: exit %d\n%s", b, code, out)
		}
	}
}
