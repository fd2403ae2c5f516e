package process

import (
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"text/tabwriter"
	"time"
)

// MissingBinaryError says an upstream binary has not been built.
type MissingBinaryError struct{ Paths []string }

func (e *MissingBinaryError) Error() string {
	return fmt.Sprintf("missing %s: run `make build` first", strings.Join(e.Paths, ", "))
}

// checkBinaries returns a *MissingBinaryError naming every one of names
// that is not an executable file in dir.
func CheckBinaries(dir string, names []string) error {
	var missing []string
	for _, b := range names {
		p := filepath.Join(dir, b)
		if st, err := os.Stat(p); err != nil || st.IsDir() || st.Mode()&0o111 == 0 {
			missing = append(missing, p)
		}
	}
	if len(missing) > 0 {
		return &MissingBinaryError{Paths: missing}
	}
	return nil
}

// keepHealthy returns the process steps that run what the plan says and
// pass their probe, which up leaves alone. A recorded process that fails
// its probe, or runs another binary, flags or environment than its step
// (an upgrade: make build, another --bin-dir; a changed setting), is
// stopped (and dropped from running), to be started again in the plan's
// order.
func KeepHealthy(ctx context.Context, steps []*Step, running map[string]Record, out io.Writer) (map[string]bool, error) {
	// Every process is judged before any is stopped: an API server probed
	// after its etcd was stopped for an upgrade would be taken for
	// unhealthy and restarted for nothing.
	healthy := map[string]bool{}
	restart := map[string]string{}
	for _, s := range steps {
		if !s.IsProcess() {
			continue
		}
		r, ok := running[s.Name]
		if !ok {
			continue
		}
		if why := Drift(s, r.PID); why != "" {
			restart[s.Name] = why
		} else if s.Probe.Check(ctx) == nil {
			healthy[s.Name] = true
		} else {
			restart[s.Name] = "it is running but not healthy"
		}
	}
	for _, s := range steps {
		why, ok := restart[s.Name]
		if !ok {
			continue
		}
		r := running[s.Name]
		fmt.Fprintf(out, "%s (pid %d): %s; restarting it\n", s.Name, r.PID, why)
		if err := Stop(r, 10*time.Second); err != nil {
			return nil, fmt.Errorf("stopping %s: %w", s.Name, err)
		}
		delete(running, s.Name)
	}
	return healthy, nil
}

// runSteps executes steps in dependency order, skipping the already
// healthy processes, each process logging to logPath and recorded in
// pidPath of the state directory. When a step fails, the processes this
// call started are stopped again.
func RunSteps(ctx context.Context, stateDir string, steps []*Step, healthy map[string]bool, out io.Writer) error {
	var (
		mu      sync.Mutex
		started []Record
	)
	err := RunDAG(ctx, steps, func(ctx context.Context, s *Step) error {
		t0 := time.Now()
		if s.IsProcess() {
			if healthy[s.Name] {
				return nil
			}
			p, err := Start(s.Name, s.Binary, s.Args, s.Env, LogPath(stateDir, s.Name), PidPath(stateDir, s.Name))
			if err != nil {
				return err
			}
			mu.Lock()
			started = append(started, p.Rec)
			mu.Unlock()
			if err := WaitReady(ctx, s, p); err != nil {
				return err
			}
			mu.Lock()
			fmt.Fprintf(out, "  %-36s ready in %5.1fs (pid %d)\n", s.Name, time.Since(t0).Seconds(), p.Cmd.Process.Pid)
			mu.Unlock()
			return nil
		}
		if err := s.Run(ctx); err != nil {
			return fmt.Errorf("%s: %w", s.Name, err)
		}
		mu.Lock()
		fmt.Fprintf(out, "  %-36s done in %5.1fs\n", s.Name, time.Since(t0).Seconds())
		mu.Unlock()
		return nil
	})
	if err != nil {
		var wg sync.WaitGroup
		for _, r := range started {
			wg.Add(1)
			go func(r Record) {
				defer wg.Done()
				_ = Stop(r, 10*time.Second)
			}(r)
		}
		wg.Wait()
		for _, s := range steps {
			if s.IsProcess() && !healthy[s.Name] {
				_ = os.Remove(PidPath(stateDir, s.Name))
			}
		}
	}
	return err
}

// ComponentStatus is one process of the fleet as Status sees it.
type ComponentStatus struct {
	Name    string `json:"name"`
	PID     int    `json:"pid,omitempty"`
	Ports   []int  `json:"ports"`
	Running bool   `json:"running"`
	Healthy bool   `json:"healthy"`
	Problem string `json:"problem,omitempty"`
	// Leader is "leader" or "standby" for a process that elects a leader
	// (with --ha), "?" when it could not be asked, else empty.
	Leader string `json:"leader,omitempty"`
	// RSSBytes is the resident memory now, PeakRSSBytes its peak since start.
	RSSBytes     int64 `json:"rssBytes,omitempty"`
	PeakRSSBytes int64 `json:"peakRSSBytes,omitempty"`
}

// statusOf reports the process steps of a plan whose processes the state
// directory records.
func StatusOf(ctx context.Context, stateDir string, steps []*Step) ([]ComponentStatus, error) {
	running, err := Running(stateDir)
	if err != nil {
		return nil, err
	}
	var out []ComponentStatus
	for _, s := range steps {
		if !s.IsProcess() {
			continue
		}
		st := ComponentStatus{Name: s.Name, Ports: s.Ports}
		if r, ok := running[s.Name]; ok {
			st.PID, st.Running = r.PID, true
			st.RSSBytes, st.PeakRSSBytes, _ = Memory(r.PID)
			if err := s.Probe.Check(ctx); err != nil {
				st.Problem = err.Error()
			} else {
				st.Healthy = true
			}
			if s.Leader != nil {
				switch leads, err := s.Leader.Leads(ctx); {
				case err != nil:
					st.Leader = "?"
				case leads:
					st.Leader = "leader"
				default:
					st.Leader = "standby"
				}
			}
		} else {
			st.Problem = "not running"
		}
		out = append(out, st)
	}
	return out, nil
}

// PrintStatus writes Status as a table.
func PrintStatus(out io.Writer, statuses []ComponentStatus) {
	tw := tabwriter.NewWriter(out, 0, 4, 2, ' ', 0)
	// The LEADER column only for a fleet whose processes elect leaders.
	elects := false
	for _, s := range statuses {
		elects = elects || s.Leader != ""
	}
	leader := func(s ComponentStatus) string {
		if !elects {
			return ""
		}
		if s.Leader == "" {
			return "\t-"
		}
		return "\t" + s.Leader
	}
	fmt.Fprintln(tw, "COMPONENT\tPID\tPORTS\tHEALTH"+leader(ComponentStatus{Leader: "LEADER"})+"\tRSS\tPEAK RSS")
	var total, peak int64
	for _, s := range statuses {
		pid, health, rss, hwm := "-", "healthy", "-", "-"
		if s.Running {
			pid = fmt.Sprint(s.PID)
			rss, hwm = fmt.Sprintf("%dMi", s.RSSBytes>>20), fmt.Sprintf("%dMi", s.PeakRSSBytes>>20)
			total += s.RSSBytes
			peak += s.PeakRSSBytes
		}
		if !s.Healthy {
			health = "unhealthy: " + s.Problem
			if !s.Running {
				health = "stopped"
			}
		}
		ports := make([]string, len(s.Ports))
		for i, p := range s.Ports {
			ports[i] = fmt.Sprint(p)
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s%s\t%s\t%s\n", s.Name, pid, strings.Join(ports, ","), health, leader(s), rss, hwm)
	}
	// The sum of per-process peaks bounds the fleet's peak from above.
	fmt.Fprintf(tw, "TOTAL\t\t\t%s\t%dMi\t%dMi\n", leader(ComponentStatus{Leader: " "}), total>>20, peak>>20)
	tw.Flush()
}

// StaleStateError says the state directory cannot be used as it is.
type StaleStateError struct {
	Dir    string
	Reason string
}

func (e *StaleStateError) Error() string {
	return fmt.Sprintf("state directory %s is stale: %s; run `karmada-local down --purge --state-dir %s` to start afresh (this deletes the fleet's data)", e.Dir, e.Reason, e.Dir)
}

// logPath is where a step's process writes its output in a state directory.
func LogPath(stateDir, step string) string {
	return filepath.Join(stateDir, "logs", filepath.FromSlash(step)+".log")
}

// pidPath is where a step's process is recorded in a state directory.
func PidPath(stateDir, step string) string {
	return filepath.Join(stateDir, "run", filepath.FromSlash(step)+".pid")
}
