package bench

import (
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"
)

func TestParseProcessFlag(t *testing.T) {
	p, err := ParseProcessFlag("cm=123")
	if err != nil || p.Name != "cm" || p.PID != 123 || p.PIDFile != "" {
		t.Errorf("cm=123: %+v %v", p, err)
	}
	p, err = ParseProcessFlag("cm=/run/cm.pid")
	if err != nil || p.PIDFile != "/run/cm.pid" {
		t.Errorf("pid file: %+v %v", p, err)
	}
	for _, bad := range []string{"cm", "=1", "cm="} {
		if _, err := ParseProcessFlag(bad); err == nil {
			t.Errorf("%q accepted", bad)
		}
	}
}

func TestSamplerReadsThisProcess(t *testing.T) {
	dir := t.TempDir()
	pidFile := filepath.Join(dir, "me.pid")
	// karmada-local's format: pid and start time.
	if err := os.WriteFile(pidFile, []byte(strconv.Itoa(os.Getpid())+" 42\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	s := StartSampler([]ProcessSource{
		{Name: "me", PIDFile: pidFile},
		{Name: "gone", PIDFile: filepath.Join(dir, "missing.pid")},
	}, 10*time.Millisecond)
	// Burn some CPU so that the figure can be checked.
	deadline := time.Now().Add(300 * time.Millisecond)
	x := 0
	for time.Now().Before(deadline) {
		x++
	}
	figs := s.Stop()
	me := figs["me"]
	if me.Error != "" || me.PeakRSSBytes <= 0 || me.CPUSeconds <= 0 || len(me.Args) == 0 {
		t.Errorf("me = %+v (x=%d)", me, x)
	}
	if figs["gone"].Error == "" {
		t.Error("a missing pid file gave no error")
	}
}

func TestKarmadaLocalProcesses(t *testing.T) {
	dir := t.TempDir()
	if got := KarmadaLocalProcesses(dir, false); len(got) != 0 {
		t.Fatalf("found %v in an empty state directory", got)
	}
	run := filepath.Join(dir, "run", "karmada")
	if err := os.MkdirAll(run, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(run, "karmada-scheduler.pid"), []byte("1 1\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	got := KarmadaLocalProcesses(dir, false)
	if len(got) != 1 || got[0].Name != "karmada-scheduler" {
		t.Errorf("got %+v", got)
	}
	for _, f := range []string{"run/karmada/etcd.pid", "run/member1/kwok.pid"} {
		p := filepath.Join(dir, filepath.FromSlash(f))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte("1 1\n"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	var names []string
	for _, p := range KarmadaLocalProcesses(dir, true) {
		names = append(names, p.Name)
	}
	if strings.Join(names, ",") != "karmada/etcd,karmada-scheduler,member1/kwok" {
		t.Errorf("all processes: %v", names)
	}
}

// The test process reads itself: CPU time, resident memory and arguments.
func TestReadProcReadsItself(t *testing.T) {
	s, err := readProc(os.Getpid())
	if err != nil {
		t.Fatal(err)
	}
	if s.rss < 1<<20 {
		t.Errorf("resident set %d bytes, want at least 1 MiB", s.rss)
	}
	// Burn a little CPU so that the second reading cannot be below the first.
	x := 0
	for i := range 50_000_000 {
		x += i
	}
	later, err := readProc(os.Getpid())
	if err != nil || later.cpuTicks < s.cpuTicks || x == 0 {
		t.Errorf("CPU ticks went from %d to %d (err %v)", s.cpuTicks, later.cpuTicks, err)
	}
	if args := readArgs(os.Getpid()); !slices.Equal(args, os.Args) {
		t.Errorf("arguments %q, want %q", args, os.Args)
	}
	if _, err := readProc(1 << 30); err == nil {
		t.Error("a pid that does not exist was read")
	}
}
