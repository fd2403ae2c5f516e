//go:build e2e

package e2e

import (
	"bytes"
	"context"
	"encoding/json"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// benchReport holds the fields of karmada-bench's JSON result the tests
// check.
type benchReport struct {
	Namespace     string `json:"namespace"`
	Complete      int    `json:"complete"`
	Incomplete    int    `json:"incomplete"`
	InEveryMember struct {
		Count int `json:"count"`
	} `json:"inEveryMember"`
	Available struct {
		Count int `json:"count"`
	} `json:"available"`
	Aggregated struct {
		Count int `json:"count"`
	} `json:"aggregated"`
	Ceiling              float64 `json:"apiserverCeiling"`
	CreateRate           float64 `json:"createRate"`
	UserCreatesOfCeiling float64 `json:"userCreatesOfCeiling"`
	Requests             struct {
		Members struct {
			Total    float64 `json:"total"`
			Mutating float64 `json:"mutating"`
		} `json:"members"`
		PerMemberCopy float64 `json:"perMemberCopy"`
	} `json:"requests"`
	Resources map[string]struct {
		CPUSeconds   float64 `json:"cpuSeconds"`
		PeakRSSBytes int64   `json:"peakRSSBytes"`
		Error        string  `json:"error"`
	} `json:"resources"`
	Restart *struct {
		ChangedCopies int     `json:"changedCopies"`
		CaughtUp      float64 `json:"caughtUp"`
		MemberWrites  float64 `json:"memberWrites"`
		Needless      float64 `json:"needlessMemberWrites"`
	} `json:"restart"`
	Floor *struct {
		Wall      float64 `json:"wall"`
		WallRatio float64 `json:"wallRatio"`
	} `json:"floor"`
	Wall float64 `json:"wall"`
	// works
	Works          int     `json:"works"`
	Written        int     `json:"written"`
	WorksPerSecond float64 `json:"worksPerSecond"`
	WorksRequests  struct {
		Mutating float64 `json:"mutating"`
	} `json:"worksRequests"`
	Cleanup struct {
		Complete bool     `json:"complete"`
		Problems []string `json:"problems"`
	} `json:"cleanup"`
}

// karmadaBench runs the real binary against the run's fleet and reads its
// JSON result.
func karmadaBench(t *testing.T, args ...string) benchReport {
	t.Helper()
	out := filepath.Join(t.TempDir(), "result.json")
	args = append(args, "--kubeconfig", fleet.Kubeconfig, "--karmada-local-state-dir", fleet.StateDir,
		"--members", "member1,member2,member3", "--out", out)
	cmd := exec.Command(filepath.Join(filepath.Dir(fleet.Bin), "karmada-bench"), args...)
	var buf bytes.Buffer
	cmd.Stdout, cmd.Stderr = &buf, &buf
	err := cmd.Run()
	t.Logf("karmada-bench %s:\n%s", strings.Join(args, " "), buf.String())
	if err != nil {
		t.Fatalf("karmada-bench: %v", err)
	}
	data, err := os.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	var r benchReport
	if err := json.Unmarshal(data, &r); err != nil {
		t.Fatalf("result: %v\n%s", err, data)
	}
	return r
}

// assertBenchCleanedUp checks that the run's namespace is gone everywhere.
func assertBenchCleanedUp(ctx context.Context, t *testing.T, r benchReport) {
	t.Helper()
	if !r.Cleanup.Complete || len(r.Cleanup.Problems) > 0 {
		t.Errorf("clean-up incomplete: %v", r.Cleanup.Problems)
	}
	for _, c := range []string{"karmada-apiserver", "member1", "member2", "member3"} {
		if _, err := kube(t, c).CoreV1().Namespaces().Get(ctx, r.Namespace, metav1.GetOptions{}); err == nil {
			t.Errorf("namespace %s is still in %s", r.Namespace, c)
		}
	}
}

// testBenchPropagate runs `karmada-bench propagate` with 20 templates.
func testBenchPropagate(ctx context.Context, t *testing.T) {
	r := karmadaBench(t, "propagate", "--templates", "20", "--ceiling-objects", "20")
	if r.Complete != 20 || r.Incomplete != 0 || r.InEveryMember.Count != 20 || r.Aggregated.Count != 20 {
		t.Errorf("complete %d, incomplete %d, in every member %d, aggregated %d: want all 20",
			r.Complete, r.Incomplete, r.InEveryMember.Count, r.Aggregated.Count)
	}
	if r.Ceiling <= 0 {
		t.Errorf("apiserver ceiling %v", r.Ceiling)
	}
	// The user's create rate while propagating is measured and set beside
	// the ceiling (a measurement, not a speed asserted).
	if r.CreateRate <= 0 || r.UserCreatesOfCeiling <= 0 || math.Abs(r.UserCreatesOfCeiling-r.CreateRate/r.Ceiling) > 1e-9 {
		t.Errorf("user creates %v/s, %v of the ceiling %v: want both measured and the second their ratio", r.CreateRate, r.UserCreatesOfCeiling, r.Ceiling)
	}
	// One member request per copy: a create-only apply, no read first (the
	// informers' lists and a read where a cache lags may add a few).
	if m := r.Requests.Members; m.Mutating != 60 || r.Requests.PerMemberCopy >= 1.5 {
		t.Errorf("members' deployments: %v requests (%.2f per copy), %v writes: want 60 writes and about one request per copy", m.Total, r.Requests.PerMemberCopy, m.Mutating)
	}
	for _, name := range []string{"karmada-controller-manager", "karmada-scheduler", "karmada-webhook"} {
		f, ok := r.Resources[name]
		if !ok || f.Error != "" || f.PeakRSSBytes <= 0 {
			t.Errorf("%s not measured: %+v", name, f)
		}
	}
	assertBenchCleanedUp(ctx, t, r)
}

// testBenchRestart runs `karmada-bench restart` with 10 templates: every
// change made while the controller manager was down reaches the members,
// with one write per changed copy and none for the unchanged ones.
func testBenchRestart(ctx context.Context, t *testing.T) {
	r := karmadaBench(t, "restart", "--templates", "10", "--apiserver-ceiling", "1", "--settle", "3s",
		"--karmada-local", fleet.Bin)
	if r.Complete != 10 || r.Restart == nil {
		t.Fatalf("complete %d, restart %+v", r.Complete, r.Restart)
	}
	// Every other template changed: 5 templates x 3 members.
	if r.Restart.ChangedCopies != 15 || r.Restart.CaughtUp <= 0 {
		t.Errorf("restart figures %+v: want 15 changed copies caught up", *r.Restart)
	}
	if r.Restart.Needless != 0 || r.Restart.MemberWrites != 15 {
		t.Errorf("member writes %v (needless %v) for 15 changed copies", r.Restart.MemberWrites, r.Restart.Needless)
	}
	assertBenchCleanedUp(ctx, t, r)
}

// testBenchWorks runs `karmada-bench works` with 20 bindings: the
// controller manager, started with them all there, writes one Work per
// binding and member, each once, and the run leaves nothing behind.
func testBenchWorks(ctx context.Context, t *testing.T) {
	r := karmadaBench(t, "works", "--bindings", "20", "--karmada-local", fleet.Bin, "--timeout", "5m")
	if r.Works != 60 || r.Written != 60 || r.WorksPerSecond <= 0 {
		t.Errorf("works %d, written %d, %v per second: want 60 of 60 and a rate", r.Works, r.Written, r.WorksPerSecond)
	}
	if r.WorksRequests.Mutating < 60 {
		t.Errorf("%v writes to works: want at least the 60 creates", r.WorksRequests.Mutating)
	}
	if f, ok := r.Resources["karmada-controller-manager"]; !ok || f.Error != "" || f.CPUSeconds <= 0 {
		t.Errorf("controller manager not measured: %+v", f)
	}
	assertBenchCleanedUp(ctx, t, r)
}

// testBenchFloor runs `karmada-bench floor` with 10 Deployments: each is
// seen available in every member, the members are measured, and nothing is
// left behind.
func testBenchFloor(ctx context.Context, t *testing.T) {
	r := karmadaBench(t, "floor", "--templates", "10")
	if r.InEveryMember.Count != 10 || r.Available.Count != 10 {
		t.Errorf("in every member %d, available %d: want 10 and 10", r.InEveryMember.Count, r.Available.Count)
	}
	if f, ok := r.Resources["member1/kube-apiserver"]; !ok || f.Error != "" || f.CPUSeconds <= 0 {
		t.Errorf("member1's API server not measured: %+v", f)
	}
	assertBenchCleanedUp(ctx, t, r)
}

// testBenchPropagateAgainstFloor runs `karmada-bench propagate --floor` with
// 5 templates: the floor runs first on the same fleet and the result gives
// the propagation's wall time divided by the floor's.
func testBenchPropagateAgainstFloor(ctx context.Context, t *testing.T) {
	r := karmadaBench(t, "propagate", "--templates", "5", "--apiserver-ceiling", "1", "--floor")
	if r.Complete != 5 || r.Floor == nil || r.Floor.Wall <= 0 || r.Wall <= 0 {
		t.Fatalf("complete %d, wall %v, floor %+v: want 5 complete and both walls", r.Complete, r.Wall, r.Floor)
	}
	if want := r.Wall / r.Floor.Wall; math.Abs(r.Floor.WallRatio-want) > 0.01*want {
		t.Errorf("wall ratio %v, want %v / %v = %v", r.Floor.WallRatio, r.Wall, r.Floor.Wall, want)
	}
	assertBenchCleanedUp(ctx, t, r)
}
