// Package localup runs a whole Karmada fleet on one machine: etcd, the Karmada
// API server and its controller manager, and member clusters made of real
// kube-apiserver, kube-controller-manager and kube-scheduler processes with
// kwok nodes. Processes are children started on loopback with TLS, recorded by
// pid in a state directory so that later invocations can report on them and
// stop them.
package localup

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"sync"
	"text/tabwriter"
	"time"
)

// stateVersion is the layout version of the state directory. A directory
// written by another version is reported as stale instead of being misread.
const stateVersion = 1

// stateRecord is written to <state>/fleet.json by up.
type stateRecord struct {
	Version        int    `json:"version"`
	Members        int    `json:"members"`
	NodesPerMember int    `json:"nodesPerMember"`
	PortBase       int    `json:"portBase"`
	Kubeconfig     string `json:"kubeconfig"`
	// PullMembers are the members registered in pull mode.
	PullMembers []string `json:"pullMembers,omitempty"`
	// Profiling is up's --profiling.
	Profiling bool `json:"profiling,omitempty"`
	// PropagateKinds and ClusterAdmin are what the members let Karmada
	// write, as up was last given them: a later up (or a restart) without
	// either flag keeps them rather than narrowing the members' grants
	// back to the default. They may change while the fleet runs.
	PropagateKinds []string `json:"propagateKinds,omitempty"`
	ClusterAdmin   bool     `json:"clusterAdmin,omitempty"`
}

// recordOf is what up records of cfg.
func recordOf(cfg Config) stateRecord {
	return stateRecord{Members: cfg.Members, NodesPerMember: cfg.NodesPerMember, PortBase: cfg.PortBase,
		Kubeconfig: cfg.Kubeconfig, PullMembers: cfg.PullMembers, Profiling: cfg.Profiling,
		PropagateKinds: cfg.PropagateKinds, ClusterAdmin: cfg.ClusterAdmin}
}

// config is the configuration of the recorded fleet.
func (r stateRecord) config(stateDir, binDir string) Config {
	return Config{StateDir: stateDir, BinDir: binDir, Kubeconfig: r.Kubeconfig, Members: r.Members,
		NodesPerMember: r.NodesPerMember, PortBase: r.PortBase, PullMembers: r.PullMembers, Profiling: r.Profiling,
		PropagateKinds: r.PropagateKinds, ClusterAdmin: r.ClusterAdmin}
}

// sameFleet reports whether two records describe the same processes with
// the same flags (the kubeconfig may move).
func (r stateRecord) sameFleet(o stateRecord) bool {
	return r.Members == o.Members && r.PortBase == o.PortBase && r.NodesPerMember == o.NodesPerMember &&
		slices.Equal(sorted(r.PullMembers), sorted(o.PullMembers)) && r.Profiling == o.Profiling
}

func statePath(dir string) string { return filepath.Join(dir, "fleet.json") }

// readState returns the record, or nil when the directory holds no fleet.
func readState(dir string) (*stateRecord, error) {
	data, err := os.ReadFile(statePath(dir))
	if errors.Is(err, os.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("reading %s: %w", statePath(dir), err)
	}
	rec := &stateRecord{}
	if err := json.Unmarshal(data, rec); err != nil || rec.Version != stateVersion {
		return nil, &StaleStateError{Dir: dir, Reason: fmt.Sprintf("fleet.json is not a version %d record", stateVersion)}
	}
	return rec, nil
}

func writeState(dir string, rec stateRecord) error {
	rec.Version = stateVersion
	data, err := json.MarshalIndent(rec, "", "  ")
	if err != nil {
		return err
	}
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return fmt.Errorf("creating state directory %s: %w", dir, err)
	}
	tmp := statePath(dir) + ".tmp"
	if err := os.WriteFile(tmp, append(data, '\n'), 0o600); err != nil {
		return fmt.Errorf("writing %s: %w", tmp, err)
	}
	return os.Rename(tmp, statePath(dir))
}

// StaleStateError says the state directory cannot be used as it is.
type StaleStateError struct {
	Dir    string
	Reason string
}

func (e *StaleStateError) Error() string {
	return fmt.Sprintf("state directory %s is stale: %s; run `karmada-local down --purge --state-dir %s` to start afresh (this deletes the fleet's data)", e.Dir, e.Reason, e.Dir)
}

// MissingBinaryError says an upstream binary has not been built.
type MissingBinaryError struct{ Paths []string }

func (e *MissingBinaryError) Error() string {
	return fmt.Sprintf("missing %s: run `make build` first", strings.Join(e.Paths, ", "))
}

// StartError says a component died or never became ready while starting.
type StartError struct {
	Step    string
	Reason  string
	LogPath string
	LogTail string
}

func (e *StartError) Error() string {
	msg := fmt.Sprintf("%s %s; its log is %s", e.Step, e.Reason, e.LogPath)
	if e.LogTail != "" {
		msg += ", ending with:\n" + indent(e.LogTail, "    ")
	}
	return msg
}

func indent(s, prefix string) string {
	return prefix + strings.ReplaceAll(s, "\n", "\n"+prefix)
}

func checkBinaries(dir string) error {
	var missing []string
	for _, b := range requiredBinaries {
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

// runningProcesses returns the recorded processes of the state directory that
// are still alive, by step name.
func runningProcesses(stateDir string) (map[string]pidRecord, error) {
	out := map[string]pidRecord{}
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
		rec, err := readPidRecord(path)
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(root, strings.TrimSuffix(path, ".pid"))
		if rec.alive() {
			out[filepath.ToSlash(rel)] = rec
		} else {
			// A stale record of a process that is gone.
			_ = os.Remove(path)
		}
		return nil
	})
	return out, err
}

// Up brings the fleet up, starting only what is not already running and
// healthy, and returns once every API server and node is ready.
func Up(ctx context.Context, cfg Config, out io.Writer) error {
	if err := cfg.Validate(); err != nil {
		return err
	}
	if err := checkOutsideEphemeral(cfg.PortBase, cfg.PortBase+10*(cfg.Members+1)-1); err != nil {
		return err
	}
	if err := checkBinaries(cfg.BinDir); err != nil {
		return err
	}
	began := time.Now()
	rec, err := readState(cfg.StateDir)
	if err != nil {
		return err
	}
	running, err := runningProcesses(cfg.StateDir)
	if err != nil {
		return err
	}
	if rec != nil && len(cfg.PropagateKinds) == 0 && !cfg.ClusterAdmin {
		// The grant up was last given stands until another is given.
		cfg.PropagateKinds, cfg.ClusterAdmin = rec.PropagateKinds, rec.ClusterAdmin
	}
	if rec != nil && len(running) > 0 && !rec.sameFleet(recordOf(cfg)) {
		return fmt.Errorf("the fleet in %s is running with --members=%d --nodes-per-member=%d --port-base=%d --pull-members=%s --profiling=%t; run `karmada-local down` before changing them",
			cfg.StateDir, rec.Members, rec.NodesPerMember, rec.PortBase, strings.Join(rec.PullMembers, ","), rec.Profiling)
	}
	f := newFleet(cfg)
	if err := f.prepare(); err != nil {
		return err
	}
	steps, err := f.steps()
	if err != nil {
		return err
	}

	// What is already running and healthy is left alone.
	healthy := map[string]bool{}
	for _, s := range steps {
		if !s.isProcess() {
			continue
		}
		r, ok := running[s.Name]
		if !ok {
			continue
		}
		if s.Probe.Check(ctx) == nil {
			healthy[s.Name] = true
			continue
		}
		fmt.Fprintf(out, "%s (pid %d) is running but not healthy; restarting it\n", s.Name, r.PID)
		if err := stopRecorded(r, 10*time.Second); err != nil {
			return fmt.Errorf("stopping unhealthy %s: %w", s.Name, err)
		}
		delete(running, s.Name)
	}
	allUp := true
	for _, s := range steps {
		if s.isProcess() && !healthy[s.Name] {
			allUp = false
		}
	}
	if allUp {
		fmt.Fprintf(out, "The fleet in %s is already up; nothing changed.\n", cfg.StateDir)
		return nil
	}
	for _, s := range steps {
		if !s.isProcess() || healthy[s.Name] {
			continue
		}
		for _, p := range s.Ports {
			if err := checkPortFree(p, s.Name); err != nil {
				return err
			}
		}
	}
	if err := writeState(cfg.StateDir, recordOf(cfg)); err != nil {
		return err
	}
	mode := ""
	if len(cfg.PullMembers) > 0 {
		mode = fmt.Sprintf("; %s in pull mode, with a karmada-agent", strings.Join(cfg.PullMembers, ", "))
	}
	fmt.Fprintf(out, "Starting a fleet of %d member cluster(s) with %d node(s) each%s (state in %s)\n", cfg.Members, cfg.NodesPerMember, mode, cfg.StateDir)
	if err := f.run(ctx, steps, healthy, out); err != nil {
		return err
	}
	if err := f.writeUserKubeconfig(); err != nil {
		return err
	}
	fmt.Fprintf(out, "The fleet is up in %.1fs. Try:\n", time.Since(began).Seconds())
	fmt.Fprintf(out, "  export KUBECONFIG=%s\n", cfg.Kubeconfig)
	fmt.Fprintf(out, "  kubectl --context %s get crds\n", ControlPlaneContext)
	if cfg.Members > 0 {
		fmt.Fprintf(out, "  kubectl --context %s get nodes -L topology.kubernetes.io/region,topology.kubernetes.io/zone\n", MemberName(1))
		fmt.Fprintf(out, "  kubectl --context %s create deployment nginx --image=nginx --replicas=3\n", MemberName(1))
		fmt.Fprintf(out, "  kubectl --context %s get deployment nginx\n", MemberName(1))
	}
	fmt.Fprintf(out, "  karmada-local status\n")
	return nil
}

// run executes steps, skipping the already healthy processes. When a step
// fails, the processes this call started are stopped again.
func (f *fleet) run(ctx context.Context, steps []*Step, healthy map[string]bool, out io.Writer) error {
	var (
		mu      sync.Mutex
		started []pidRecord
	)
	err := runDAG(ctx, steps, func(ctx context.Context, s *Step) error {
		t0 := time.Now()
		if s.isProcess() {
			if healthy[s.Name] {
				return nil
			}
			p, err := startProcess(s.Name, s.Binary, s.Args, s.Env, f.logPath(s.Name), f.pidPath(s.Name))
			if err != nil {
				return err
			}
			mu.Lock()
			started = append(started, p.rec)
			mu.Unlock()
			if err := waitReady(ctx, s, p); err != nil {
				return err
			}
			mu.Lock()
			fmt.Fprintf(out, "  %-36s ready in %5.1fs (pid %d)\n", s.Name, time.Since(t0).Seconds(), p.cmd.Process.Pid)
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
			go func(r pidRecord) {
				defer wg.Done()
				_ = stopRecorded(r, 10*time.Second)
			}(r)
		}
		wg.Wait()
		for _, s := range steps {
			if s.isProcess() && !healthy[s.Name] {
				_ = os.Remove(f.pidPath(s.Name))
			}
		}
	}
	return err
}

// waitReady polls the step's probe until it passes, the process exits, or
// the step's timeout passes.
func waitReady(ctx context.Context, s *Step, p *process) error {
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
			return &StartError{Step: s.Name, Reason: reason, LogPath: p.logPath, LogTail: tailFile(p.logPath, 15)}
		case <-deadline.C:
			return &StartError{Step: s.Name, Reason: fmt.Sprintf("was not ready after %s (last probe: %v)", timeout, lastErr), LogPath: p.logPath, LogTail: tailFile(p.logPath, 15)}
		case <-tick.C:
			if lastErr = s.Probe.Check(ctx); lastErr == nil {
				return nil
			}
		}
	}
}

// DownOptions tune Down.
type DownOptions struct {
	// Purge deletes the state directory and the fleet's kubeconfig contexts.
	Purge bool
}

// Down stops every process the state directory records: all components in
// parallel, then etcd last. It is a no-op when nothing runs.
func Down(stateDir string, opts DownOptions, out io.Writer) error {
	rec, err := readState(stateDir)
	var stale *StaleStateError
	if err != nil && !(opts.Purge && errors.As(err, &stale)) {
		return err
	}
	running, err := runningProcesses(stateDir)
	if err != nil {
		return err
	}
	if len(running) == 0 {
		fmt.Fprintf(out, "No fleet process is running (state in %s).\n", stateDir)
	}
	var etcd []string
	var others []string
	for name := range running {
		if strings.HasSuffix(name, "/etcd") {
			etcd = append(etcd, name)
		} else {
			others = append(others, name)
		}
	}
	for _, group := range [][]string{others, etcd} {
		if err := stopAll(stateDir, group, running, 15*time.Second, out); err != nil {
			return err
		}
	}
	if opts.Purge {
		if rec != nil {
			contexts := []string{ControlPlaneContext}
			for i := 1; i <= rec.Members; i++ {
				contexts = append(contexts, MemberName(i))
			}
			if err := removeFromUserKubeconfig(rec.Kubeconfig, contexts); err != nil {
				return err
			}
		}
		if err := purgeStateDir(stateDir); err != nil {
			return err
		}
		fmt.Fprintf(out, "Removed %s.\n", stateDir)
	}
	return nil
}

// purgeStateDir removes a state directory, and only one: a directory that
// holds a fleet's state file (a typo in --state-dir must not remove a home
// directory). One that does not exist is already gone.
func purgeStateDir(dir string) error {
	if _, err := os.Stat(dir); errors.Is(err, os.ErrNotExist) {
		return nil
	}
	if _, err := os.Stat(statePath(dir)); err != nil {
		return fmt.Errorf("not removing %s: it holds no fleet state (%s), so it is not a karmada-local state directory", dir, filepath.Base(statePath(dir)))
	}
	if err := os.RemoveAll(dir); err != nil {
		return fmt.Errorf("removing %s: %w", dir, err)
	}
	return nil
}

func stopAll(stateDir string, names []string, running map[string]pidRecord, grace time.Duration, out io.Writer) error {
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
			err := stopRecorded(r, grace)
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

// fleetFromState rebuilds the fleet recorded in a state directory.
func fleetFromState(stateDir, binDir string) (*fleet, error) {
	rec, err := readState(stateDir)
	if err != nil {
		return nil, err
	}
	if rec == nil {
		return nil, fmt.Errorf("no fleet in %s: run `karmada-local up` first", stateDir)
	}
	f := newFleet(rec.config(stateDir, binDir))
	if err := f.prepare(); err != nil {
		return nil, err
	}
	return f, nil
}

// ComponentStatus is one process of the fleet as Status sees it.
type ComponentStatus struct {
	Name    string
	PID     int
	Ports   []int
	Running bool
	Healthy bool
	Problem string
	// RSSBytes is the resident memory now, PeakRSSBytes its peak since start.
	RSSBytes     int64
	PeakRSSBytes int64
}

// Status reports every process of the recorded fleet.
func Status(ctx context.Context, stateDir, binDir string) ([]ComponentStatus, error) {
	f, err := fleetFromState(stateDir, binDir)
	if err != nil {
		return nil, err
	}
	steps, err := f.steps()
	if err != nil {
		return nil, err
	}
	running, err := runningProcesses(stateDir)
	if err != nil {
		return nil, err
	}
	var out []ComponentStatus
	for _, s := range steps {
		if !s.isProcess() {
			continue
		}
		st := ComponentStatus{Name: s.Name, Ports: s.Ports}
		if r, ok := running[s.Name]; ok {
			st.PID, st.Running = r.PID, true
			st.RSSBytes, st.PeakRSSBytes, _ = procMemory(r.PID)
			if err := s.Probe.Check(ctx); err != nil {
				st.Problem = err.Error()
			} else {
				st.Healthy = true
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
	fmt.Fprintln(tw, "COMPONENT\tPID\tPORTS\tHEALTH\tRSS\tPEAK RSS")
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
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\n", s.Name, pid, strings.Join(ports, ","), health, rss, hwm)
	}
	// The sum of per-process peaks bounds the fleet's peak from above.
	fmt.Fprintf(tw, "TOTAL\t\t\t\t%dMi\t%dMi\n", total>>20, peak>>20)
	tw.Flush()
}

// stepsOf resolves a target: a member's name stands for every step of that
// member; otherwise the target names one process of the fleet, by its full
// step name (karmada/karmada-controller-manager) or by the part after the
// slash when that is unique (karmada-controller-manager).
func stepsOf(f *fleet, target string) ([]*Step, error) {
	steps, err := f.steps()
	if err != nil {
		return nil, err
	}
	if c := f.cluster(target); c != nil && c.index > 0 {
		var out []*Step
		for _, s := range steps {
			if s.Cluster == target {
				out = append(out, s)
			}
		}
		return out, nil
	}
	var byShort []*Step
	var names []string
	for _, s := range steps {
		if !s.isProcess() {
			continue
		}
		if s.Name == target {
			return []*Step{s}, nil
		}
		if s.Name[strings.LastIndexByte(s.Name, '/')+1:] == target {
			byShort = append(byShort, s)
		}
		names = append(names, s.Name)
	}
	if len(byShort) == 1 {
		return byShort, nil
	}
	var members []string
	for _, c := range f.clusters[1:] {
		members = append(members, c.name)
	}
	if len(byShort) > 1 {
		return nil, fmt.Errorf("%q names a process in several clusters; use its full name, such as %s", target, byShort[0].Name)
	}
	return nil, fmt.Errorf("unknown member or component %q: members are %s; components are %s", target, strings.Join(members, ", "), strings.Join(names, ", "))
}

func memberStepsOf(f *fleet, name string) ([]*Step, error) {
	c := f.cluster(name)
	if c == nil || c.index == 0 {
		var names []string
		for _, c := range f.clusters[1:] {
			names = append(names, c.name)
		}
		return nil, fmt.Errorf("unknown member %q: the fleet has %s", name, strings.Join(names, ", "))
	}
	return stepsOf(f, name)
}

// agentStepOf resolves a pull-mode member's name to its agent process.
func agentStepOf(f *fleet, name string) ([]*Step, error) {
	c := f.cluster(name)
	if c == nil || !c.pull {
		var pull []string
		for _, m := range f.clusters[1:] {
			if m.pull {
				pull = append(pull, m.name)
			}
		}
		if len(pull) == 0 {
			return nil, fmt.Errorf("%q runs no karmada-agent: the fleet has no pull-mode member (karmada-local up --pull-members)", name)
		}
		return nil, fmt.Errorf("%q runs no karmada-agent: the pull-mode members are %s", name, strings.Join(pull, ", "))
	}
	return stepsOf(f, agentStep(name))
}

// AgentStop stops a pull-mode member's karmada-agent only: the member keeps
// running its workloads, and the control plane stops hearing from it.
func AgentStop(stateDir, binDir, name string, kill bool, out io.Writer) error {
	return stopTarget(stateDir, binDir, name, agentStepOf, kill, out)
}

// AgentStart starts a pull-mode member's karmada-agent again.
func AgentStart(ctx context.Context, stateDir, binDir, name string, out io.Writer) error {
	return startTarget(ctx, stateDir, binDir, name, agentStepOf, out)
}

// MemberStop stops one member's processes, keeping its data.
func MemberStop(stateDir, binDir, name string, out io.Writer) error {
	return stopTarget(stateDir, binDir, name, memberStepsOf, false, out)
}

// ComponentStop stops one process of the fleet (or a member's processes),
// with SIGTERM and a grace period, or at once with SIGKILL when kill is set,
// as a crash would.
func ComponentStop(stateDir, binDir, target string, kill bool, out io.Writer) error {
	return stopTarget(stateDir, binDir, target, stepsOf, kill, out)
}

// MemberStart starts one member's processes again and waits until it is ready.
func MemberStart(ctx context.Context, stateDir, binDir, name string, out io.Writer) error {
	return startTarget(ctx, stateDir, binDir, name, memberStepsOf, out)
}

// ComponentStart starts one stopped process of the fleet (or a member's
// processes) again and waits until it is healthy. What is running and
// healthy is left alone.
func ComponentStart(ctx context.Context, stateDir, binDir, target string, out io.Writer) error {
	return startTarget(ctx, stateDir, binDir, target, stepsOf, out)
}

// resolver turns a target name into the fleet's steps it stands for.
type resolver func(f *fleet, target string) ([]*Step, error)

func stopTarget(stateDir, binDir, target string, resolve resolver, kill bool, out io.Writer) error {
	f, err := fleetFromState(stateDir, binDir)
	if err != nil {
		return err
	}
	steps, err := resolve(f, target)
	if err != nil {
		return err
	}
	running, err := runningProcesses(stateDir)
	if err != nil {
		return err
	}
	var names []string
	for _, s := range steps {
		if _, ok := running[s.Name]; ok {
			names = append(names, s.Name)
		}
	}
	if len(names) == 0 {
		fmt.Fprintf(out, "%s is already stopped.\n", label(target, steps))
		return nil
	}
	grace := 15 * time.Second
	if kill {
		grace = 0
	}
	return stopAll(stateDir, names, running, grace, out)
}

func startTarget(ctx context.Context, stateDir, binDir, target string, resolve resolver, out io.Writer) error {
	f, err := fleetFromState(stateDir, binDir)
	if err != nil {
		return err
	}
	steps, err := resolve(f, target)
	if err != nil {
		return err
	}
	return startSteps(ctx, f, stateDir, binDir, label(target, steps), steps, out)
}

// label names what a target resolved to: its one process, or the target.
func label(target string, steps []*Step) string {
	if len(steps) == 1 {
		return steps[0].Name
	}
	return target
}

func startSteps(ctx context.Context, f *fleet, stateDir, binDir, target string, steps []*Step, out io.Writer) error {
	if err := checkBinaries(binDir); err != nil {
		return err
	}
	running, err := runningProcesses(stateDir)
	if err != nil {
		return err
	}
	if _, ok := running["karmada/etcd"]; !ok {
		return fmt.Errorf("etcd of the fleet is not running: run `karmada-local up` to start the whole fleet")
	}
	healthy := map[string]bool{}
	for _, s := range steps {
		if _, ok := running[s.Name]; ok && s.isProcess() && s.Probe.Check(ctx) == nil {
			healthy[s.Name] = true
		}
	}
	for _, s := range steps {
		if s.isProcess() && !healthy[s.Name] {
			if r, ok := running[s.Name]; ok {
				if err := stopRecorded(r, 10*time.Second); err != nil {
					return err
				}
			}
			for _, p := range s.Ports {
				if err := waitPortFree(ctx, p, s.Name, 5*time.Second); err != nil {
					return err
				}
			}
		}
	}
	t0 := time.Now()
	if err := f.run(ctx, steps, healthy, out); err != nil {
		return err
	}
	fmt.Fprintf(out, "%s is up in %.1fs.\n", target, time.Since(t0).Seconds())
	return nil
}

func sorted(s []string) []string {
	out := slices.Clone(s)
	slices.Sort(out)
	return out
}
