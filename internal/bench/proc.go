package bench

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/prometheus/procfs"
)

// clockTicks is USER_HZ, the unit of utime and stime in /proc/<pid>/stat;
// it is 100 on every Linux architecture Go supports.
const clockTicks = 100

// ProcessSource finds the pid of a watched process each time it is asked,
// so that a restarted process is followed.
type ProcessSource struct {
	Name string
	// PIDFile holds "PID [START]" (karmada-local's format); PID is used
	// when PIDFile is empty.
	PIDFile string
	PID     int
}

func (s ProcessSource) pid() (int, error) {
	if s.PIDFile == "" {
		return s.PID, nil
	}
	data, err := os.ReadFile(s.PIDFile)
	if err != nil {
		return 0, err
	}
	fields := strings.Fields(string(data))
	if len(fields) == 0 {
		return 0, fmt.Errorf("%s is empty", s.PIDFile)
	}
	return strconv.Atoi(fields[0])
}

// KarmadaLocalProcesses are the control plane components that karmada-local
// started from stateDir, when their pid files exist; with all, every process
// of the fleet (API servers, etcd, members' components), named as
// karmada-local names them.
func KarmadaLocalProcesses(stateDir string, all bool) []ProcessSource {
	var out []ProcessSource
	if !all {
		for _, name := range []string{"karmada-controller-manager", "karmada-scheduler", "karmada-webhook"} {
			p := filepath.Join(stateDir, "run", "karmada", name+".pid")
			if _, err := os.Stat(p); err == nil {
				out = append(out, ProcessSource{Name: name, PIDFile: p})
			}
		}
		return out
	}
	files, _ := filepath.Glob(filepath.Join(stateDir, "run", "*", "*.pid"))
	sort.Strings(files)
	for _, p := range files {
		name := strings.TrimSuffix(filepath.Base(p), ".pid")
		cluster := filepath.Base(filepath.Dir(p))
		if cluster != "karmada" || !strings.HasPrefix(name, "karmada-") {
			name = cluster + "/" + name
		}
		out = append(out, ProcessSource{Name: name, PIDFile: p})
	}
	return out
}

// ParseProcessFlag reads NAME=PID or NAME=PIDFILE.
func ParseProcessFlag(s string) (ProcessSource, error) {
	name, v, ok := strings.Cut(s, "=")
	if !ok || name == "" || v == "" {
		return ProcessSource{}, fmt.Errorf("--process %q: want NAME=PID or NAME=PIDFILE", s)
	}
	if pid, err := strconv.Atoi(v); err == nil {
		return ProcessSource{Name: name, PID: pid}, nil
	}
	return ProcessSource{Name: name, PIDFile: v}, nil
}

// ProcessFigures are one process's resource use during a run.
type ProcessFigures struct {
	// PeakRSSBytes is the largest resident set seen while sampling.
	PeakRSSBytes int64 `json:"peakRSSBytes"`
	// CPUSeconds is user plus system time spent during the run, summed
	// over every pid the process had (a restart starts a new one).
	CPUSeconds float64 `json:"cpuSeconds"`
	// Args is the command line, so the report says what settings ran.
	Args []string `json:"args,omitempty"`
	// Error says why nothing could be read, if so.
	Error string `json:"error,omitempty"`
}

// procSample is one reading of a process.
type procSample struct {
	cpuTicks uint64
	rss      int64
}

func readProc(pid int) (procSample, error) {
	p, err := procfs.NewProc(pid)
	if err != nil {
		return procSample{}, err
	}
	st, err := p.Stat()
	if err != nil {
		return procSample{}, err
	}
	status, err := p.NewStatus()
	if err != nil {
		return procSample{}, err
	}
	return procSample{cpuTicks: uint64(st.UTime + st.STime), rss: int64(status.VmRSS)}, nil
}

func readArgs(pid int) []string {
	p, err := procfs.NewProc(pid)
	if err != nil {
		return nil
	}
	args, _ := p.CmdLine()
	return args
}

// pidUse accumulates one pid's readings.
type pidUse struct {
	first, last uint64
}

// Sampler reads the watched processes' memory and CPU time every interval.
type Sampler struct {
	sources  []ProcessSource
	interval time.Duration

	mu      sync.Mutex
	figures map[string]*ProcessFigures
	pids    map[string]map[int]*pidUse
	stop    context.CancelFunc
	done    chan struct{}
}

// StartSampler takes a first reading at once and then one every interval
// until Stop. A pid first seen after the start counts its CPU time from its
// own start.
func StartSampler(sources []ProcessSource, interval time.Duration) *Sampler {
	s := &Sampler{sources: sources, interval: interval, figures: map[string]*ProcessFigures{}, pids: map[string]map[int]*pidUse{}, done: make(chan struct{})}
	for _, src := range sources {
		s.figures[src.Name] = &ProcessFigures{}
		s.pids[src.Name] = map[int]*pidUse{}
	}
	s.sample(true)
	ctx, cancel := context.WithCancel(context.Background())
	s.stop = cancel
	go func() {
		defer close(s.done)
		t := time.NewTicker(interval)
		defer t.Stop()
		for {
			select {
			case <-ctx.Done():
				return
			case <-t.C:
				s.sample(false)
			}
		}
	}()
	return s
}

func (s *Sampler) sample(initial bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, src := range s.sources {
		fig := s.figures[src.Name]
		pid, err := src.pid()
		if err != nil {
			if initial {
				fig.Error = err.Error()
			}
			continue
		}
		smp, err := readProc(pid)
		if err != nil {
			if initial {
				fig.Error = err.Error()
			}
			continue
		}
		fig.Error = ""
		if fig.Args == nil {
			fig.Args = readArgs(pid)
		}
		if smp.rss > fig.PeakRSSBytes {
			fig.PeakRSSBytes = smp.rss
		}
		u, ok := s.pids[src.Name][pid]
		if !ok {
			u = &pidUse{}
			if initial {
				u.first = smp.cpuTicks
			}
			s.pids[src.Name][pid] = u
		}
		u.last = smp.cpuTicks
	}
}

// Stop takes a last reading and returns the figures by process name.
func (s *Sampler) Stop() map[string]ProcessFigures {
	s.stop()
	<-s.done
	s.sample(false)
	s.mu.Lock()
	defer s.mu.Unlock()
	out := map[string]ProcessFigures{}
	for name, fig := range s.figures {
		var ticks uint64
		for _, u := range s.pids[name] {
			ticks += u.last - u.first
		}
		f := *fig
		f.CPUSeconds = float64(ticks) / clockTicks
		out[name] = f
	}
	return out
}

// sortedNames returns the keys of m in order.
func sortedNames[V any](m map[string]V) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}
