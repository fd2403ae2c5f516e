//go:build e2e

package e2e

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/karmada-go/karmada/internal/testenv"
)

// The fleet's own life cycle: a second up changes nothing, status shows every
// component healthy, and down leaves no process behind. The fleet is brought
// up again at the end, so that the test is independent like the others. Go
// runs a package's tests file by file in the order of their names: this
// file's name sorts last (TestLifecycleRunsLast keeps it so), so in a whole
// run the fleet is not restarted mid-suite.
// fleetProcesses: etcd, 9 control plane components (kube-apiserver,
// kube-controller-manager, karmada-webhook, karmada-aggregated-apiserver,
// karmada-search, karmada-controller-manager, karmada-scheduler,
// karmada-descheduler, karmada-metrics-adapter), 6 per
// member (kube-apiserver, kube-controller-manager, kube-scheduler, kwok,
// karmada-scheduler-estimator, metrics-server), the push members' (member1,
// member2) custom metrics servers, and member3's karmada-agent.
const fleetProcesses = 10 + 3*6 + 2 + 1

func TestLifecycle(t *testing.T) {
	t.Run("up again changes nothing", func(t *testing.T) {
		before := pids(t)
		status, _ := karmadaLocal("status")
		out, err := karmadaLocal("up", "--kubeconfig", fleet.Kubeconfig, "--port-base", strconv.Itoa(fleet.PortBase))
		if err != nil {
			t.Fatalf("second up: %v\n%s", err, out)
		}
		if !strings.Contains(out, "already up") {
			t.Errorf("second up did not say the fleet is already up:\n%s", out)
		}
		if after := pids(t); fmt.Sprint(before) != fmt.Sprint(after) {
			t.Errorf("second up changed processes: before %v, after %v\nstatus before:\n%s", before, after, status)
			// Why a component was not running (the fleet's state is
			// removed after the run): the end of its log.
			for _, l := range strings.Split(status, "\n") {
				f := strings.Fields(l)
				if len(f) < 2 || !strings.Contains(f[0], "/") || strings.Contains(l, " healthy ") {
					continue
				}
				member, component, _ := strings.Cut(f[0], "/")
				log, _ := os.ReadFile(filepath.Join(fleet.StateDir, "logs", member, component+".log"))
				t.Logf("%s was not healthy before up; its log (last lines):\n%s", f[0], tail(string(log), 60))
			}
		}
	})

	t.Run("status lists every component healthy", func(t *testing.T) {
		out, err := karmadaLocal("status")
		if err != nil {
			t.Fatalf("status: %v\n%s", err, out)
		}
		lines := 0
		for _, l := range strings.Split(out, "\n") {
			if strings.HasPrefix(l, "karmada/") || strings.HasPrefix(l, "member") {
				lines++
				if !strings.Contains(l, "healthy") || strings.Contains(l, "unhealthy") {
					t.Errorf("not healthy: %s", l)
				}
			}
		}
		if lines != fleetProcesses {
			t.Errorf("status lists %d components, want %d:\n%s", lines, fleetProcesses, out)
		}
	})

	t.Run("down leaves no process of the fleet running", func(t *testing.T) {
		running := pids(t)
		if len(running) != fleetProcesses {
			t.Fatalf("found %d fleet processes before down, want %d: %v", len(running), fleetProcesses, running)
		}
		out, err := karmadaLocal("down")
		if err != nil {
			t.Fatalf("down: %v\n%s", err, out)
		}
		for _, pid := range running {
			if processAlive(pid) {
				t.Errorf("pid %d still runs after down", pid)
			}
		}
		if left := pids(t); len(left) != 0 {
			t.Errorf("processes referring to the state directory remain: %v", left)
		}
	})

	t.Run("up after down brings every member back Ready", func(t *testing.T) {
		out, err := karmadaLocal("up", "--members", "3", "--nodes-per-member", "3", "--kubeconfig", fleet.Kubeconfig, "--port-base", strconv.Itoa(fleet.PortBase))
		if err != nil {
			t.Fatalf("up after down: %v\n%s", err, out)
		}
		c := karmadaClient(t)
		for _, m := range []string{"member1", "member2", "member3"} {
			waitClusterReady(context.Background(), t, c, m, metav1.ConditionTrue, 90*time.Second)
		}
	})
}

// TestLifecycleRunsLast: no test file sorts after this one, so TestLifecycle,
// which takes the fleet down and up again, is the last test of a whole run.
func TestLifecycleRunsLast(t *testing.T) { testenv.RunsLast(t, "zz_lifecycle_test.go") }
