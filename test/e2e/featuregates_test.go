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
// --help lists them with Karmada's stages and defaults), refuses an unknown
// one, and refuses by name a gate whose feature is missing here, with exit
// code 1, before anything else is checked.
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
		for _, want := range []string{"PropagationPolicyPreemption=true|false (ALPHA - default=false)", "GracefulEviction=true|false (BETA - default=true)", "WorkloadAffinity=true|false (ALPHA - default=false)"} {
			if !strings.Contains(help, want) {
				t.Errorf("%s --help does not list %q", b, want)
			}
		}
		out, code := run("--feature-gates=ControllerPriorityQueue=true")
		if code != 1 || !strings.Contains(out, "--feature-gates: ControllerPriorityQueue (the controllers' priority queue): not implemented by this control plane yet; leave it off") {
			t.Errorf("%s --feature-gates=ControllerPriorityQueue=true: exit %d\n%s", b, code, out)
		}
		out, code = run("--feature-gates=NoSuchGate=true")
		if code == 0 || !strings.Contains(out, "unrecognized feature gate: NoSuchGate") {
			t.Errorf("%s --feature-gates=NoSuchGate=true: exit %d\n%s", b, code, out)
		}
	}
}
