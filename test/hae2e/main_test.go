//go:build hae2e

// Package hae2e is the HA lane: one highly available fleet (karmada-local up
// --ha: three etcd members, two karmada-apiservers and two karmada-webhooks
// behind haproxy, two leader-elected replicas of each controller) and chaos
// tests on it, each while 200 templates propagate: a leader killed, an etcd
// member killed, a karmada-apiserver killed, a leader paused past its
// lease. Each test leaves the fleet as it found it (what it killed started
// again) and runs alone with -run.
package hae2e

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"strconv"
	"testing"
	"time"

	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/karmada-go/karmada/internal/localup/plan"
	"github.com/karmada-go/karmada/internal/localup/process"
	"github.com/karmada-go/karmada/internal/scheme"
	"github.com/karmada-go/karmada/internal/testenv"
)

// fleet is the one HA fleet of the run.
// fleet is the lane's fleet (testenv.StartLaneFleet).
var fleet *testenv.LaneFleet

// The fleet's members: member1 joined in push mode, member2 registered in
// pull mode (its agent reaches the control plane through the balancer too).
var members = []string{"member1", "member2"}

func TestMain(m *testing.M) { os.Exit(run(m)) }

func run(m *testing.M) int {
	// Apart from a developer's fleet (31000), the e2e lane's (24000) and
	// the host lane's (25000).
	f, err := testenv.StartLaneFleet("hae2e", 26000, "--ha", "--members", "2", "--nodes-per-member", "1", "--pull-members", "member2")
	if f != nil {
		defer f.Stop()
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	fleet = f
	return m.Run()
}

// karmadaLocal runs the real binary against the run's state directory.
func karmadaLocal(args ...string) (string, error) { return fleet.Run(args...) }

// status is karmada-local status -o json.
func status(t *testing.T) []process.ComponentStatus {
	t.Helper()
	cmd := exec.Command(fleet.Bin, "status", "-o", "json", "--state-dir", fleet.StateDir)
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("karmada-local status -o json: %v", err)
	}
	var st []process.ComponentStatus
	if err := json.Unmarshal(out, &st); err != nil {
		t.Fatalf("karmada-local status -o json: %v\n%s", err, out)
	}
	return st
}

func restConfig(t *testing.T, context string) *rest.Config {
	t.Helper()
	cfg, err := clientcmd.NewNonInteractiveDeferredLoadingClientConfig(
		&clientcmd.ClientConfigLoadingRules{ExplicitPath: fleet.Kubeconfig},
		&clientcmd.ConfigOverrides{CurrentContext: context}).ClientConfig()
	if err != nil {
		t.Fatalf("loading context %s: %v", context, err)
	}
	// Long enough for a delete of every template at once; the heartbeat
	// writer bounds its own requests.
	cfg.Timeout = 60 * time.Second
	cfg.QPS, cfg.Burst = 200, 400
	return cfg
}

func kube(t *testing.T, context string) kubernetes.Interface {
	t.Helper()
	kc, err := kubernetes.NewForConfig(restConfig(t, context))
	if err != nil {
		t.Fatal(err)
	}
	return kc
}

func karmadaClient(t *testing.T) client.Client {
	t.Helper()
	c, err := client.New(restConfig(t, plan.ControlPlaneContext), client.Options{Scheme: scheme.Scheme})
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// ensureUp starts whatever is not running (a test that failed before it
// restarted what it killed), and waits until the whole fleet is healthy:
// every test starts from a whole fleet.
func ensureUp(t *testing.T) {
	t.Helper()
	whole := true
	for _, s := range status(t) {
		whole = whole && s.Running
	}
	if whole {
		// Healthy soon, or the wait below says which is not.
	} else if out, err := karmadaLocal("up", "--ha", "--members", "2", "--nodes-per-member", "1", "--pull-members", "member2",
		"--kubeconfig", fleet.Kubeconfig, "--port-base", strconv.Itoa(fleet.PortBase)); err != nil {
		t.Fatalf("karmada-local up --ha: %v\n%s", err, out)
	}
	testenv.Eventually(t, time.Minute, "every process of the fleet healthy", func(ctx context.Context) error {
		for _, s := range status(t) {
			if !s.Healthy {
				return fmt.Errorf("%s: %s", s.Name, s.Problem)
			}
		}
		return nil
	})
}
