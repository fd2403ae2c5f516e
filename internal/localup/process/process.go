package process

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/prometheus/procfs"
)

// Record identifies a started process across invocations of karmada-local.
// The start time (from /proc/<pid>/stat) guards against a recycled pid: a
// record only matches the very process that was started.
type Record struct {
	PID       int
	StartTime uint64
}

// Process is a child started by this invocation.
type Process struct {
	name    string
	Cmd     *exec.Cmd
	logPath string
	// exited is closed when the process ends; err holds how it ended.
	exited chan struct{}
	err    error
	// rec is its pid record, with the start time that lets it be stopped.
	Rec Record
}

// Exited is closed when the process ends.
func (p *Process) Exited() <-chan struct{} { return p.exited }

// Start starts binary in its own process group, so that it outlives
// this command and does not receive the terminal's signals, with its output
// appended to logPath, and records its pid in pidPath.
func Start(name, binary string, args, env []string, logPath, pidPath string) (*Process, error) {
	if err := os.MkdirAll(filepath.Dir(logPath), 0o755); err != nil {
		return nil, fmt.Errorf("creating log directory: %w", err)
	}
	logFile, err := os.OpenFile(logPath, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
	if err != nil {
		return nil, fmt.Errorf("opening log %s: %w", logPath, err)
	}
	defer logFile.Close()
	fmt.Fprintf(logFile, "==== %s: starting %s %s\n", time.Now().Format(time.RFC3339), binary, strings.Join(args, " "))

	cmd := exec.Command(binary, args...)
	cmd.Stdout = logFile
	cmd.Stderr = logFile
	cmd.Env = append(os.Environ(), env...)
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if err := cmd.Start(); err != nil {
		return nil, fmt.Errorf("starting %s: %w", name, err)
	}
	p := &Process{name: name, Cmd: cmd, logPath: logPath, exited: make(chan struct{})}
	// The start time is read before the process is reaped: one that died
	// at once is still a zombie with its /proc entry, and is reported by
	// the wait for readiness, with its log.
	rec := Record{PID: cmd.Process.Pid}
	st, err := ProcStartTime(rec.PID)
	go func() {
		p.err = cmd.Wait()
		close(p.exited)
	}()
	if err != nil {
		// Without its start time the record could not be told from a
		// later process that got the same pid: do not leave it running.
		_ = KillGroup(rec.PID, syscall.SIGKILL)
		return nil, fmt.Errorf("reading the start time of %s (pid %d): %w", name, rec.PID, err)
	}
	rec.StartTime = st
	p.Rec = rec
	if err := WriteRecord(pidPath, rec); err != nil {
		_ = KillGroup(rec.PID, syscall.SIGKILL)
		return nil, err
	}
	return p, nil
}

func WriteRecord(path string, rec Record) error {
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return fmt.Errorf("creating pid directory: %w", err)
	}
	data := fmt.Sprintf("%d %d\n", rec.PID, rec.StartTime)
	tmp := path + ".tmp"
	if err := os.WriteFile(tmp, []byte(data), 0o644); err != nil {
		return fmt.Errorf("writing pid file: %w", err)
	}
	if err := os.Rename(tmp, path); err != nil {
		return fmt.Errorf("writing pid file: %w", err)
	}
	return nil
}

// ReadRecord reads a pid file; a missing file is (zero, nil).
func ReadRecord(path string) (Record, error) {
	data, err := os.ReadFile(path)
	if errors.Is(err, os.ErrNotExist) {
		return Record{}, nil
	}
	if err != nil {
		return Record{}, fmt.Errorf("reading pid file: %w", err)
	}
	var rec Record
	if _, err := fmt.Sscanf(string(data), "%d %d", &rec.PID, &rec.StartTime); err != nil {
		return Record{}, fmt.Errorf("pid file %s is corrupt (%q)", path, strings.TrimSpace(string(data)))
	}
	return rec, nil
}

// Alive reports whether the recorded process is still running (zombies count
// as gone).
//
// A record is trusted only with the start time karmada-local read when it
// started the process: a pid alone may since belong to anything (and a
// record of pid 1, whose process group is every process, would have down
// signal the whole machine).
func (r Record) Alive() bool {
	if r.PID <= 1 || r.StartTime == 0 {
		return false
	}
	st, state, err := ProcStat(r.PID)
	if err != nil || state == "Z" || state == "X" {
		return false
	}
	return st == r.StartTime
}

// Stop stops the recorded process and its group: SIGTERM, then SIGKILL
// after grace; with no grace, SIGKILL at once, as a crash. It returns once
// the process is gone.
func Stop(rec Record, grace time.Duration) error {
	if !rec.Alive() {
		return nil
	}
	deadline := time.Now().Add(grace)
	if grace > 0 {
		_ = KillGroup(rec.PID, syscall.SIGTERM)
	}
	for time.Now().Before(deadline) {
		if !rec.Alive() {
			return nil
		}
		time.Sleep(50 * time.Millisecond)
	}
	_ = KillGroup(rec.PID, syscall.SIGKILL)
	deadline = time.Now().Add(5 * time.Second)
	for time.Now().Before(deadline) {
		if !rec.Alive() {
			return nil
		}
		time.Sleep(50 * time.Millisecond)
	}
	return fmt.Errorf("process %d did not exit after SIGKILL", rec.PID)
}

// KillGroup signals the process group led by pid, falling back to the process.
func KillGroup(pid int, sig syscall.Signal) error {
	if err := syscall.Kill(-pid, sig); err == nil {
		return nil
	}
	return syscall.Kill(pid, sig)
}

func ProcStartTime(pid int) (uint64, error) {
	st, _, err := ProcStat(pid)
	return st, err
}

// ProcStat returns the start time (in clock ticks since boot) and the state
// of a process.
func ProcStat(pid int) (uint64, string, error) {
	p, err := procfs.NewProc(pid)
	if err != nil {
		return 0, "", err
	}
	st, err := p.Stat()
	if err != nil {
		return 0, "", err
	}
	return st.Starttime, st.State, nil
}

// Memory returns the resident set size of a process and its peak (VmRSS
// and VmHWM), in bytes.
func Memory(pid int) (rss, peak int64, err error) {
	p, err := procfs.NewProc(pid)
	if err != nil {
		return 0, 0, err
	}
	st, err := p.NewStatus()
	if err != nil {
		return 0, 0, err
	}
	return int64(st.VmRSS), int64(st.VmHWM), nil
}

// Tail returns the last n lines of a file, for error messages.
func Tail(path string, n int) string {
	data, err := os.ReadFile(path)
	if err != nil {
		return ""
	}
	lines := strings.Split(strings.TrimRight(string(data), "\n"), "\n")
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return strings.Join(lines, "\n")
}

// Running returns the recorded processes of the state directory that
// are still alive, by step name.
func Running(stateDir string) (map[string]Record, error) {
	out := map[string]Record{}
	root := filepath.Join(stateDir, "run")
	err := filepath.WalkDir(root, func(path string, d os.DirEntry, err error) error {
		if err != nil {
			if errors.Is(err, os.ErrNotExist) {
				return nil
			}
			return err
		}
		if d.IsDir() || !strings.HasSuffix(path, ".pid") {
			return nil
		}
		rec, err := ReadRecord(path)
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(root, strings.TrimSuffix(path, ".pid"))
		if rec.Alive() {
			out[filepath.ToSlash(rel)] = rec
		} else {
			// A stale record of a process that is gone.
			_ = os.Remove(path)
		}
		return nil
	})
	return out, err
}

// WaitReady polls the step's probe until it passes, the process exits, or
// the step's timeout passes.
func WaitReady(ctx context.Context, s *Step, p *Process) error {
	timeout := s.ReadyTimeout
	if timeout == 0 {
		timeout = time.Minute
	}
	deadline := time.NewTimer(timeout)
	defer deadline.Stop()
	tick := time.NewTicker(100 * time.Millisecond)
	defer tick.Stop()
	var lastErr error
	for {
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-p.exited:
			reason := "exited while starting"
			if p.err != nil {
				reason = fmt.Sprintf("exited while starting (%v)", p.err)
			}
			return &StartError{Step: s.Name, Reason: reason, LogPath: p.logPath, LogTail: Tail(p.logPath, 15)}
		case <-deadline.C:
			return &StartError{Step: s.Name, Reason: fmt.Sprintf("was not ready after %s (last probe: %v)", timeout, lastErr), LogPath: p.logPath, LogTail: Tail(p.logPath, 15)}
		case <-tick.C:
			if lastErr = s.Probe.Check(ctx); lastErr == nil {
				return nil
			}
		}
	}
}

func StopAll(stateDir string, names []string, running map[string]Record, grace time.Duration, out io.Writer) error {
	sort.Strings(names)
	var (
		wg   sync.WaitGroup
		mu   sync.Mutex
		errs []error
	)
	for _, name := range names {
		wg.Add(1)
		go func(name string) {
			defer wg.Done()
			r := running[name]
			err := Stop(r, grace)
			mu.Lock()
			defer mu.Unlock()
			if err != nil {
				errs = append(errs, fmt.Errorf("stopping %s: %w", name, err))
				return
			}
			_ = os.Remove(filepath.Join(stateDir, "run", filepath.FromSlash(name)+".pid"))
			fmt.Fprintf(out, "  stopped %-36s (pid %d)\n", name, r.PID)
		}(name)
	}
	wg.Wait()
	return errors.Join(errs...)
}
