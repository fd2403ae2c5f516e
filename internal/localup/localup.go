// Package localup runs a whole Karmada fleet on one machine: etcd, the Karmada
// API server and its controller manager, and member clusters made of real
// kube-apiserver, kube-controller-manager and kube-scheduler processes with
// kwok nodes. Processes are children started on loopback with TLS, recorded by
// pid in a state directory so that later invocations can report on them and
// stop them.
//
// Files: plan.go (the configuration, the port layout and the steps of a
// fleet: names, order, probes), flags.go (the flags each upstream binary
// runs with), pki.go and kubeconfig.go (certificates and kubeconfigs),
// setup.go and pull.go (the steps that are not processes: CRDs, joins,
// registration), etcdauth.go (each API server confined to its etcd
// prefix), ports.go (ports free and outside the ephemeral range), step.go
// (the plan runner), process.go (supervision:
// starting, recording, probing and stopping processes), state.go (the
// state file), localup.go (up and down), targets.go (starting and stopping
// one member, agent or component), status.go (what status shows).
package localup

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"time"
)

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

// Up brings the fleet up, starting only what is not already running and
// healthy, and returns once every API server and node is ready.
func Up(ctx context.Context, cfg Config, out io.Writer) error {
	if err := cfg.Validate(); err != nil {
		return err
	}
	if err := checkOutsideEphemeral(cfg.PortBase, cfg.lastPort()); err != nil {
		return err
	}
	if err := checkBinaries(cfg.BinDir); err != nil {
		return err
	}
	if cfg.HA {
		if _, err := findHAProxy(); err != nil {
			return err
		}
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
	if rec != nil && cfg.ClusterFailureThreshold == 0 && cfg.ClusterSuccessThreshold == 0 {
		// Health thresholds too.
		cfg.ClusterFailureThreshold, cfg.ClusterSuccessThreshold = rec.ClusterFailureThreshold, rec.ClusterSuccessThreshold
	}
	if rec != nil && cfg.DeschedulingInterval == 0 && cfg.UnschedulableThreshold == 0 {
		cfg.DeschedulingInterval, cfg.UnschedulableThreshold = rec.DeschedulingInterval, rec.UnschedulableThreshold
	}
	if rec != nil && cfg.NodeCapacity == nil {
		// And the members' node sizes.
		cfg.NodeCapacity = rec.NodeCapacity
	}
	if rec != nil && cfg.CertValidity == 0 && cfg.CAValidity == 0 {
		// Certificates keep the lifetimes up was last given.
		cfg.CertValidity, cfg.CAValidity = rec.CertValidity, rec.CAValidity
	}
	if rec != nil && len(running) > 0 && !rec.sameFleet(recordOf(cfg)) {
		return fmt.Errorf("the fleet in %s is running with --members=%d --nodes-per-member=%d --port-base=%d --pull-members=%s --profiling=%t --advertise-address=%s --karmada-kubeconfig=%s --ha=%t; run `karmada-local down` before changing them",
			cfg.StateDir, rec.Members, rec.NodesPerMember, rec.PortBase, strings.Join(rec.PullMembers, ","), rec.Profiling, rec.AdvertiseAddress, rec.ExternalKarmada, rec.HA)
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
	healthy, err := keepHealthy(ctx, steps, running, out)
	if err != nil {
		return err
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
	if cfg.external() {
		fmt.Fprintf(out, "  kubectl --kubeconfig %s get clusters\n", cfg.ExternalKarmada)
	} else {
		fmt.Fprintf(out, "  kubectl --context %s get crds\n", ControlPlaneContext)
	}
	if cfg.Members > 0 {
		fmt.Fprintf(out, "  kubectl --context %s get nodes -L topology.kubernetes.io/region,topology.kubernetes.io/zone\n", MemberName(1))
		fmt.Fprintf(out, "  kubectl --context %s create deployment nginx --image=nginx --replicas=3\n", MemberName(1))
		fmt.Fprintf(out, "  kubectl --context %s get deployment nginx\n", MemberName(1))
	}
	fmt.Fprintf(out, "  karmada-local status\n")
	return nil
}

// keepHealthy returns the process steps that run what the plan says and
// pass their probe, which up leaves alone. A recorded process that fails
// its probe, or runs another binary, flags or environment than its step
// (an upgrade: make build, another --bin-dir; a changed setting), is
// stopped (and dropped from running), to be started again in the plan's
// order.
func keepHealthy(ctx context.Context, steps []*Step, running map[string]pidRecord, out io.Writer) (map[string]bool, error) {
	// Every process is judged before any is stopped: an API server probed
	// after its etcd was stopped for an upgrade would be taken for
	// unhealthy and restarted for nothing.
	healthy := map[string]bool{}
	restart := map[string]string{}
	for _, s := range steps {
		if !s.isProcess() {
			continue
		}
		r, ok := running[s.Name]
		if !ok {
			continue
		}
		if why := drift(s, r.PID); why != "" {
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
		if err := stopRecorded(r, 10*time.Second); err != nil {
			return nil, fmt.Errorf("stopping %s: %w", s.Name, err)
		}
		delete(running, s.Name)
	}
	return healthy, nil
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
		if isEtcdStep(name) {
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
