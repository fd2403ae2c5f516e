// Package localup runs a whole Karmada fleet on one machine: etcd, the Karmada
// API server and its components, and member clusters made of real
// kube-apiserver, kube-controller-manager and kube-scheduler processes with
// kwok nodes. Processes are children started on loopback with TLS, recorded by
// pid in a state directory so that later invocations can report on them and
// stop them.
//
// This package is the operations on a fleet: localup.go (up and down),
// targets.go (stopping and starting one member, agent or component),
// certs.go (listing and renewing certificates), status.go and state.go (the
// state file). The rest lives in rooms below it: plan (what the fleet is:
// its configuration, port layout, steps, each binary's flags, the tasks
// that are not processes), process (steps, the DAG runner, supervision of
// processes, ports, status), pki (CAs, certificates, kubeconfig files) and
// host (the one-node host cluster of `karmada-local host`).
package localup

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/karmada-go/karmada/internal/localup/pki"
	"github.com/karmada-go/karmada/internal/localup/plan"
	"github.com/karmada-go/karmada/internal/localup/process"
)

// Up brings the fleet up, starting only what is not already running and
// healthy, and returns once every API server and node is ready.
func Up(ctx context.Context, cfg plan.Config, out io.Writer) error {
	if err := checkUp(cfg); err != nil {
		return err
	}
	began := time.Now()
	rec, err := readState(cfg.StateDir)
	if err != nil {
		return err
	}
	running, err := process.Running(cfg.StateDir)
	if err != nil {
		return err
	}
	if rec != nil {
		keepRecorded(&cfg, rec)
		if len(running) > 0 && !rec.sameFleet(recordOf(cfg)) {
			return fmt.Errorf("the fleet in %s is running with --members=%d --nodes-per-member=%d --port-base=%d --pull-members=%s --profiling=%t --advertise-address=%s --karmada-kubeconfig=%s --ha=%t; run `karmada-local down` before changing them",
				cfg.StateDir, rec.Members, rec.NodesPerMember, rec.PortBase, strings.Join(rec.PullMembers, ","), rec.Profiling, rec.AdvertiseAddress, rec.ExternalKarmada, rec.HA)
		}
	}
	f := plan.NewFleet(cfg)
	if err := f.Prepare(); err != nil {
		return err
	}
	steps, err := f.Steps()
	if err != nil {
		return err
	}

	// What is already running and healthy is left alone.
	healthy, err := process.KeepHealthy(ctx, steps, running, out)
	if err != nil {
		return err
	}
	if allHealthy(steps, healthy) {
		fmt.Fprintf(out, "The fleet in %s is already up; nothing changed.\n", cfg.StateDir)
		return nil
	}
	if err := portsFree(steps, healthy); err != nil {
		return err
	}
	if err := inotifyEnough(steps, healthy, inotifyInUse()); err != nil {
		return err
	}
	if err := writeState(cfg.StateDir, recordOf(cfg)); err != nil {
		return err
	}
	mode := ""
	if len(cfg.PullMembers) > 0 {
		mode = fmt.Sprintf("; %s in pull mode, with a karmada-agent", strings.Join(cfg.PullMembers, ", "))
	}
	fmt.Fprintf(out, "Starting a fleet of %d member cluster(s) with %d node(s) each%s (state in %s)\n", cfg.Members, cfg.NodesPerMember, mode, cfg.StateDir)
	if err := process.RunSteps(ctx, f.Cfg.StateDir, steps, healthy, out); err != nil {
		return err
	}
	if err := f.WriteUserKubeconfig(); err != nil {
		return err
	}
	printTry(out, cfg, time.Since(began))
	return nil
}

// checkUp refuses, before anything is touched, what cannot work: an
// invalid configuration, ports in the ephemeral range, missing binaries,
// --ha without haproxy.
func checkUp(cfg plan.Config) error {
	if err := cfg.Validate(); err != nil {
		return err
	}
	if err := process.CheckOutsideEphemeral(cfg.PortBase, cfg.LastPort()); err != nil {
		return err
	}
	if err := process.CheckBinaries(cfg.BinDir, plan.RequiredBinaries); err != nil {
		return err
	}
	if cfg.HA {
		if _, err := plan.FindHAProxy(); err != nil {
			return err
		}
	}
	return nil
}

// keepRecorded keeps what up was last given for what this invocation does
// not say: the members' grant, the health thresholds, the descheduler's
// timing, the node sizes and the certificates' lifetimes.
func keepRecorded(cfg *plan.Config, rec *stateRecord) {
	if len(cfg.PropagateKinds) == 0 && !cfg.ClusterAdmin {
		// The grant up was last given stands until another is given.
		cfg.PropagateKinds, cfg.ClusterAdmin = rec.PropagateKinds, rec.ClusterAdmin
	}
	if cfg.ClusterFailureThreshold == 0 && cfg.ClusterSuccessThreshold == 0 {
		// Health thresholds too.
		cfg.ClusterFailureThreshold, cfg.ClusterSuccessThreshold = rec.ClusterFailureThreshold, rec.ClusterSuccessThreshold
	}
	if cfg.DeschedulingInterval == 0 && cfg.UnschedulableThreshold == 0 {
		cfg.DeschedulingInterval, cfg.UnschedulableThreshold = rec.DeschedulingInterval, rec.UnschedulableThreshold
	}
	if cfg.NodeCapacity == nil {
		// And the members' node sizes.
		cfg.NodeCapacity = rec.NodeCapacity
	}
	if cfg.CertValidity == 0 && cfg.CAValidity == 0 {
		// Certificates keep the lifetimes up was last given.
		cfg.CertValidity, cfg.CAValidity = rec.CertValidity, rec.CAValidity
	}
}

func allHealthy(steps []*process.Step, healthy map[string]bool) bool {
	for _, s := range steps {
		if s.IsProcess() && !healthy[s.Name] {
			return false
		}
	}
	return true
}

// portsFree: every port of a process to start must be free.
func portsFree(steps []*process.Step, healthy map[string]bool) error {
	for _, s := range steps {
		if !s.IsProcess() || healthy[s.Name] {
			continue
		}
		for _, p := range s.Ports {
			if err := process.CheckPortFree(p, s.Name); err != nil {
				return err
			}
		}
	}
	return nil
}

// printTry says the fleet is up and what to try.
func printTry(out io.Writer, cfg plan.Config, took time.Duration) {
	fmt.Fprintf(out, "The fleet is up in %.1fs. Try:\n", took.Seconds())
	fmt.Fprintf(out, "  export KUBECONFIG=%s\n", cfg.Kubeconfig)
	if cfg.External() {
		fmt.Fprintf(out, "  kubectl --kubeconfig %s get clusters\n", cfg.ExternalKarmada)
	} else {
		fmt.Fprintf(out, "  kubectl --context %s get crds\n", plan.ControlPlaneContext)
	}
	if cfg.Members > 0 {
		fmt.Fprintf(out, "  kubectl --context %s get nodes -L topology.kubernetes.io/region,topology.kubernetes.io/zone\n", plan.MemberName(1))
		fmt.Fprintf(out, "  kubectl --context %s create deployment nginx --image=nginx --replicas=3\n", plan.MemberName(1))
		fmt.Fprintf(out, "  kubectl --context %s get deployment nginx\n", plan.MemberName(1))
	}
	fmt.Fprintf(out, "  karmada-local status\n")
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
	var stale *process.StaleStateError
	if err != nil && !(opts.Purge && errors.As(err, &stale)) {
		return err
	}
	running, err := process.Running(stateDir)
	if err != nil {
		return err
	}
	if len(running) == 0 {
		fmt.Fprintf(out, "No fleet process is running (state in %s).\n", stateDir)
	}
	var etcd []string
	var others []string
	for name := range running {
		if plan.IsEtcdStep(name) {
			etcd = append(etcd, name)
		} else {
			others = append(others, name)
		}
	}
	for _, group := range [][]string{others, etcd} {
		if err := process.StopAll(stateDir, group, running, 15*time.Second, out); err != nil {
			return err
		}
	}
	if opts.Purge {
		if rec != nil {
			contexts := []string{plan.ControlPlaneContext}
			for i := 1; i <= rec.Members; i++ {
				contexts = append(contexts, plan.MemberName(i))
			}
			if err := pki.RemoveContexts(rec.Kubeconfig, contexts); err != nil {
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
