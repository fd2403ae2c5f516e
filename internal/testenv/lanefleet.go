package testenv

import (
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"time"
)

// LaneFleet is an e2e lane's one shared fleet: the real karmada-local
// binary (of $KARMADA_BIN_DIR, else bin/) brought up once for the lane
// with a state directory of its own and its own port range, and brought
// down (down --purge) when the lane ends, whatever happened.
type LaneFleet struct {
	// Bin is the karmada-local binary; StateDir and Kubeconfig are the
	// lane's; PortBase its first port.
	Bin, StateDir, Kubeconfig string
	PortBase                  int
	// UpOutput and UpTime are what up printed and how long it took.
	UpOutput string
	UpTime   time.Duration

	dir string
}

// KarmadaBinDir is where `make build` put the binaries the lanes run:
// $KARMADA_BIN_DIR, else bin/.
func KarmadaBinDir() string {
	if dir := os.Getenv("KARMADA_BIN_DIR"); dir != "" {
		return dir
	}
	return filepath.Join(RepoRoot(), "bin")
}

// StartLaneFleet runs `karmada-local up` with upArgs (the lane's
// --kubeconfig and --port-base added) for the lane named lane. The
// returned fleet is set even when up fails, so that the caller's Stop
// removes whatever up started; err says what failed, for the lane's
// TestMain to print.
func StartLaneFleet(lane string, portBase int, upArgs ...string) (*LaneFleet, error) {
	f := &LaneFleet{Bin: filepath.Join(KarmadaBinDir(), "karmada-local"), PortBase: portBase}
	if _, err := os.Stat(f.Bin); err != nil {
		return nil, fmt.Errorf("the %s lane needs %s: run `make build`", lane, f.Bin)
	}
	dir, err := os.MkdirTemp("", "karmada-"+lane+"-")
	if err != nil {
		return nil, err
	}
	f.dir, f.StateDir, f.Kubeconfig = dir, filepath.Join(dir, "state"), filepath.Join(dir, "kubeconfig")
	start := time.Now()
	args := append([]string{"up"}, upArgs...)
	f.UpOutput, err = f.Run(append(args, "--kubeconfig", f.Kubeconfig, "--port-base", strconv.Itoa(portBase))...)
	f.UpTime = time.Since(start)
	fmt.Printf("karmada-local %v took %s:\n%s\n", args, f.UpTime.Round(100*time.Millisecond), f.UpOutput)
	if err != nil {
		return f, fmt.Errorf("karmada-local up failed: %w", err)
	}
	return f, nil
}

// Run runs karmada-local with args against the lane's state directory.
func (f *LaneFleet) Run(args ...string) (string, error) {
	cmd := exec.Command(f.Bin, append(args, "--state-dir", f.StateDir)...)
	var buf bytes.Buffer
	cmd.Stdout, cmd.Stderr = &buf, &buf
	err := cmd.Run()
	return buf.String(), err
}

// Stop brings the fleet down (down --purge) and removes its directory.
func (f *LaneFleet) Stop() {
	if out, err := f.Run("down", "--purge"); err != nil {
		fmt.Fprintf(os.Stderr, "karmada-local down --purge failed: %v\n%s\n", err, out)
	}
	_ = os.RemoveAll(f.dir)
}
