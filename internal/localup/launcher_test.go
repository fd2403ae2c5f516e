package localup

import (
	"bytes"
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/karmada-go/karmada/internal/localup/pki"
	"github.com/karmada-go/karmada/internal/localup/plan"
	"github.com/karmada-go/karmada/internal/localup/process"
)

func testConfig(t *testing.T, binDir string) plan.Config {
	dir := t.TempDir()
	return plan.Config{StateDir: filepath.Join(dir, "state"), BinDir: binDir, Kubeconfig: filepath.Join(dir, "kubeconfig"),
		Members: 1, NodesPerMember: 1, PortBase: freePortBase(t)}
}

// freePortBase finds a block of 20 free ports below the ephemeral range.
func freePortBase(t *testing.T) int {
	for base := 21000; base < 23000; base += 100 {
		ok := true
		for p := base; p < base+20; p++ {
			if process.CheckPortFree(p, "") != nil {
				ok = false
				break
			}
		}
		if ok {
			return base
		}
	}
	t.Fatal("no free block of ports")
	return 0
}

func TestUpWithoutBinariesSaysRunMakeBuild(t *testing.T) {
	err := Up(context.Background(), testConfig(t, t.TempDir()), &bytes.Buffer{})
	var me *process.MissingBinaryError
	if !errors.As(err, &me) || !strings.Contains(err.Error(), "make build") || !strings.Contains(err.Error(), "kube-apiserver") {
		t.Fatalf("want a missing-binary error naming kube-apiserver and make build, got %v", err)
	}
}

// fakeBinDir makes executables standing in for the upstream binaries, to drive
// the launcher's failure paths; etcd runs the given shell script.
func fakeBinDir(t *testing.T, etcdScript string) string {
	dir := t.TempDir()
	for _, b := range plan.RequiredBinaries {
		script := "#!/bin/sh\nsleep 60\n"
		if b == "etcd" {
			script = "#!/bin/sh\n" + etcdScript
		}
		if err := os.WriteFile(filepath.Join(dir, b), []byte(script), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

func TestComponentDyingWhileStartingReportsItsLog(t *testing.T) {
	cfg := testConfig(t, fakeBinDir(t, "echo 'fatal: cannot open data dir' >&2\nexit 3\n"))
	err := Up(context.Background(), cfg, &bytes.Buffer{})
	var se *process.StartError
	if !errors.As(err, &se) {
		t.Fatalf("want *StartError, got %v", err)
	}
	if se.Step != "karmada/etcd" || !strings.Contains(err.Error(), "cannot open data dir") || !strings.Contains(err.Error(), se.LogPath) {
		t.Fatalf("error should name karmada/etcd, its last log lines and log path; got %v", err)
	}
	running, err := process.Running(cfg.StateDir)
	if err != nil {
		t.Fatal(err)
	}
	if len(running) != 0 {
		t.Fatalf("processes left running after a failed up: %v", running)
	}
}

func TestFailedUpStopsWhatItStarted(t *testing.T) {
	// etcd stays up but never answers its probe: up must give up and stop it.
	cfg := testConfig(t, fakeBinDir(t, "exec sleep 60\n"))
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Second)
	defer cancel()
	err := Up(ctx, cfg, &bytes.Buffer{})
	if err == nil {
		t.Fatal("up succeeded with an etcd that never became ready")
	}
	running, _ := process.Running(cfg.StateDir)
	if len(running) != 0 {
		t.Fatalf("processes left running after a failed up: %v", running)
	}
}

func TestStaleStateDirectoryIsReported(t *testing.T) {
	cfg := testConfig(t, fakeBinDir(t, "exit 1\n"))
	if err := os.MkdirAll(cfg.StateDir, 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(statePath(cfg.StateDir), []byte(`{"version": 99}`), 0o600); err != nil {
		t.Fatal(err)
	}
	err := Up(context.Background(), cfg, &bytes.Buffer{})
	var se *process.StaleStateError
	if !errors.As(err, &se) || !strings.Contains(err.Error(), "down --purge") {
		t.Fatalf("want a stale-state error telling how to start afresh, got %v", err)
	}
	// down --purge accepts the stale directory and removes it.
	if err := Down(cfg.StateDir, DownOptions{Purge: true}, &bytes.Buffer{}); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(cfg.StateDir); !os.IsNotExist(err) {
		t.Fatalf("state directory still exists after down --purge: %v", err)
	}
}

func TestValidateNamesTheFlag(t *testing.T) {
	base := plan.Config{StateDir: "s", Kubeconfig: "k", Members: 3, NodesPerMember: 3, PortBase: 31000}
	cases := map[string]func(*plan.Config){
		"--members":          func(c *plan.Config) { c.Members = -1 },
		"--nodes-per-member": func(c *plan.Config) { c.NodesPerMember = 0 },
		"--port-base":        func(c *plan.Config) { c.PortBase = 80 },
		"--pull-members":     func(c *plan.Config) { c.PullMembers = []string{"member4"} },
	}
	for flag, mutate := range cases {
		c := base
		mutate(&c)
		if err := c.Validate(); err == nil || !strings.Contains(err.Error(), flag) {
			t.Errorf("%s: want an error naming the flag, got %v", flag, err)
		}
	}
	if err := base.Validate(); err != nil {
		t.Errorf("defaults rejected: %v", err)
	}
	base.PullMembers = []string{"member3"}
	if err := base.Validate(); err != nil {
		t.Errorf("member3 in pull mode rejected: %v", err)
	}
	// The plan: a pull member registers and runs an agent instead of
	// joining, and the fleet waits for its agent.
	steps := map[string]*process.Step{}
	f := plan.NewFleet(base)
	for _, c := range f.Clusters {
		c.CA = &pki.CA{}
	}
	for _, c := range f.Clusters[1:] {
		if c.Pull != (c.Name == "member3") {
			t.Errorf("%s pull=%v", c.Name, c.Pull)
		}
		if c.Pull {
			for _, s := range f.PullSteps(c, c.Name+"/nodes") {
				steps[s.Name] = s
			}
		}
	}
	if steps["member3/register"] == nil || steps["member3/karmada-agent"] == nil || steps["member3/karmada-agent"].After[0] != "member3/register" {
		t.Errorf("member3's pull steps: %v", steps)
	}
}

func TestDownStopsRecordedProcessesOnly(t *testing.T) {
	dir := t.TempDir()
	f := plan.NewFleet(plan.Config{StateDir: dir})
	p, err := process.Start("member1/kwok", "/bin/sleep", []string{"60"}, nil, f.LogPath("member1/kwok"), f.PidPath("member1/kwok"))
	if err != nil {
		t.Fatal(err)
	}
	// A record of a process that is gone is ignored and cleaned up.
	if err := process.WriteRecord(f.PidPath("member2/kwok"), process.Record{PID: 1 << 22, StartTime: 1}); err != nil {
		t.Fatal(err)
	}
	if err := writeState(dir, stateRecord{Members: 2, NodesPerMember: 1, PortBase: 31000, Kubeconfig: filepath.Join(dir, "kc")}); err != nil {
		t.Fatal(err)
	}
	var out bytes.Buffer
	if err := Down(dir, DownOptions{}, &out); err != nil {
		t.Fatal(err)
	}
	select {
	case <-p.Exited():
	case <-time.After(5 * time.Second):
		t.Fatal("the recorded process still runs after down")
	}
	if _, err := os.Stat(f.PidPath("member1/kwok")); !os.IsNotExist(err) {
		t.Error("pid file kept after the process was stopped")
	}
	if _, err := os.Stat(f.PidPath("member2/kwok")); !os.IsNotExist(err) {
		t.Error("stale pid file kept")
	}
}

func TestPortBaseInEphemeralRangeIsRefused(t *testing.T) {
	lo, hi, err := process.EphemeralRange()
	if err != nil {
		t.Fatalf("reading the ephemeral port range: %v", err)
	}
	cfg := testConfig(t, t.TempDir())
	cfg.PortBase = lo + 100
	err = Up(context.Background(), cfg, &bytes.Buffer{})
	if err == nil || !strings.Contains(err.Error(), "ephemeral") || !strings.Contains(err.Error(), "--port-base") {
		t.Fatalf("want an error about the ephemeral range naming --port-base, got %v", err)
	}
	if process.CheckOutsideEphemeral(lo-100, lo-1) != nil || process.CheckOutsideEphemeral(hi+1, hi+10) != nil {
		t.Fatal("ports outside the ephemeral range were refused")
	}
}

// down --purge removes a state directory only: a directory without the
// fleet's state file is left as it is.
func TestPurgeRemovesOnlyAStateDirectory(t *testing.T) {
	dir := t.TempDir()
	precious := filepath.Join(dir, "precious.txt")
	if err := os.WriteFile(precious, []byte("keep me"), 0o600); err != nil {
		t.Fatal(err)
	}
	err := Down(dir, DownOptions{Purge: true}, &bytes.Buffer{})
	if err == nil || !strings.Contains(err.Error(), "not a karmada-local state directory") {
		t.Fatalf("want a refusal naming the reason, got %v", err)
	}
	if _, err := os.Stat(precious); err != nil {
		t.Fatalf("a file of a directory that is not a fleet's was removed: %v", err)
	}
	// A directory that does not exist is already purged.
	if err := Down(filepath.Join(dir, "never-made"), DownOptions{Purge: true}, &bytes.Buffer{}); err != nil {
		t.Fatalf("purging a missing directory: %v", err)
	}
}

// A pid record is trusted only with the start time of the process it
// names: a record of pid 1, or without a start time, or whose start time
// does not match, is not ours and is never signalled.
func TestPidRecordsWithoutMatchingStartTimeAreNotOurs(t *testing.T) {
	self := os.Getpid()
	st, err := process.ProcStartTime(self)
	if err != nil {
		t.Fatal(err)
	}
	for _, rec := range []process.Record{{PID: 1}, {PID: 1, StartTime: 1}, {PID: self}, {PID: self, StartTime: st + 1}, {PID: 0, StartTime: st}} {
		if rec.Alive() {
			t.Errorf("%+v counts as a process karmada-local started", rec)
		}
		if err := process.Stop(rec, time.Second); err != nil {
			t.Errorf("%+v: %v", rec, err)
		}
	}
	if !(process.Record{PID: self, StartTime: st}).Alive() {
		t.Error("a record with the right pid and start time is not recognised")
	}
	// Still here: nothing was signalled.
	dir := t.TempDir()
	f := plan.NewFleet(plan.Config{StateDir: dir})
	if err := os.MkdirAll(filepath.Dir(f.PidPath("karmada/etcd")), 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(f.PidPath("karmada/etcd"), []byte("1 0\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	running, err := process.Running(dir)
	if err != nil || len(running) != 0 {
		t.Fatalf("a pid file holding pid 1 was taken as running: %v (%v)", running, err)
	}
}

// A failed up stops the processes it started in parallel with the one that
// failed (here karmada-webhook, which needs no etcd): none outlives it.
func TestFailedUpLeavesNoProcessOfItsOwn(t *testing.T) {
	bin := fakeBinDir(t, "echo 'fatal' >&2\nsleep 1\nexit 3\n")
	cfg := testConfig(t, bin)
	if err := Up(context.Background(), cfg, &bytes.Buffer{}); err == nil {
		t.Fatal("up succeeded with an etcd that exits")
	}
	procs, err := os.ReadDir("/proc")
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range procs {
		cmdline, err := os.ReadFile(filepath.Join("/proc", p.Name(), "cmdline"))
		if err != nil || !bytes.Contains(cmdline, []byte(bin)) {
			continue
		}
		if _, state, err := process.ProcStat(atoi(p.Name())); err == nil && state != "Z" && state != "X" {
			t.Errorf("process %s (%s) outlived the failed up", p.Name(), bytes.ReplaceAll(cmdline, []byte{0}, []byte{' '}))
		}
	}
}

func atoi(s string) int {
	n := 0
	for _, c := range s {
		n = n*10 + int(c-'0')
	}
	return n
}
