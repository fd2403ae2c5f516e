package process

import (
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"
)

// up restarts a healthy process that runs other flags, another binary or
// another environment than its step: the kernel's view of the process is
// compared with the plan, whatever build started it.
func TestDriftOfARunningProcess(t *testing.T) {
	dir := t.TempDir()
	sleep, err := os.ReadFile("/bin/sleep")
	if err != nil {
		t.Fatal(err)
	}
	bin := filepath.Join(dir, "component")
	if err := os.WriteFile(bin, sleep, 0o755); err != nil {
		t.Fatal(err)
	}
	s := &Step{Name: "karmada/component", Binary: bin, Args: []string{"300"}, Env: []string{"KARMADA_TEST=1"}}
	p, err := Start(s.Name, s.Binary, s.Args, s.Env, filepath.Join(dir, "log"), filepath.Join(dir, "pid"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = Stop(p.Rec, 0) })
	// The process has exec'd once its cmdline is the binary's.
	deadline := time.Now().Add(5 * time.Second)
	for time.Now().Before(deadline) {
		if raw, _ := os.ReadFile("/proc/" + strconv.Itoa(p.Rec.PID) + "/cmdline"); strings.HasPrefix(string(raw), bin) {
			break
		}
		time.Sleep(10 * time.Millisecond)
	}
	if d := Drift(s, p.Rec.PID); d != "" {
		t.Fatalf("the process runs its step, but: %s", d)
	}
	for _, tc := range []struct {
		change func(*Step)
		want   string
	}{
		{func(s *Step) { s.Args = []string{"301"} }, "its flags changed (now 301)"},
		{func(s *Step) { s.Args = []string{"300", "--v=2"} }, "its flags changed (now --v=2)"},
		{func(s *Step) { s.Args = nil }, "its flags changed (no longer 300)"},
		{func(s *Step) { s.Env = []string{"KARMADA_TEST=2"} }, "its environment lacks KARMADA_TEST=2"},
	} {
		c := *s
		tc.change(&c)
		if d := Drift(&c, p.Rec.PID); d != tc.want {
			t.Errorf("drift %q, want %q", d, tc.want)
		}
	}
	// A rebuild writes a new file at the same path (a running executable
	// cannot be written in place).
	tmp := bin + ".new"
	if err := os.WriteFile(tmp, sleep, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Rename(tmp, bin); err != nil {
		t.Fatal(err)
	}
	if d := Drift(s, p.Rec.PID); !strings.Contains(d, "its binary "+bin+" changed") {
		t.Errorf("after a rebuild: drift %q", d)
	}
}
