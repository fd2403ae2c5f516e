package localup

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/karmada-go/karmada/internal/localup/process"
)

// A fleet that would run out of inotify instances is refused before
// anything starts, with the limit and the way to raise it; what is already
// healthy needs none more, and a fleet within the limit passes.
func TestInotifyEnough(t *testing.T) {
	dir := t.TempDir()
	old := inotifyLimitPath
	inotifyLimitPath = filepath.Join(dir, "max_user_instances")
	t.Cleanup(func() { inotifyLimitPath = old })
	if err := os.WriteFile(inotifyLimitPath, []byte("128\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	var steps []*process.Step
	for i := 0; i < 20; i++ {
		steps = append(steps,
			&process.Step{Name: fmt.Sprintf("member%d/kube-apiserver", i), Binary: "/bin/kube-apiserver"},
			&process.Step{Name: fmt.Sprintf("member%d/kube-controller-manager", i), Binary: "/bin/kube-controller-manager"})
	}
	// 20 × (7 + 1) = 160 > 128.
	err := inotifyEnough(steps, nil, 0)
	if err == nil || !strings.Contains(err.Error(), "about 160 inotify instances") || !strings.Contains(err.Error(), "sysctl -w fs.inotify.max_user_instances=256") {
		t.Fatalf("error %v: want the need (160) and the sysctl that raises the limit", err)
	}
	// The same fleet with half of it already healthy: 80 + 10 in use.
	healthy := map[string]bool{}
	for _, s := range steps[:20] {
		healthy[s.Name] = true
	}
	if err := inotifyEnough(steps, healthy, 10); err != nil {
		t.Errorf("half already running: %v", err)
	}
	// What other processes hold counts.
	if err := inotifyEnough(steps[:10], nil, 100); err == nil {
		t.Error("40 more with 100 in use passed a limit of 128")
	}
	// No limit to read: nothing to check.
	inotifyLimitPath = filepath.Join(dir, "missing")
	if err := inotifyEnough(steps, nil, 0); err != nil {
		t.Errorf("no limit file: %v", err)
	}
}
