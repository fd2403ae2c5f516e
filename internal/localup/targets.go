package localup

import (
	"context"
	"fmt"
	"io"
	"slices"
	"strings"
	"time"

	"github.com/karmada-go/karmada/internal/localup/plan"
	"github.com/karmada-go/karmada/internal/localup/process"
)

// stepsOf resolves a target: a member's name stands for every step of that
// member; otherwise the target names one process of the fleet, by its full
// step name (karmada/karmada-controller-manager) or by the part after the
// slash when that is unique (karmada-controller-manager).
func stepsOf(f *plan.Fleet, target string) ([]*process.Step, error) {
	steps, err := f.Steps()
	if err != nil {
		return nil, err
	}
	if c := f.Cluster(target); c != nil && c.Index > 0 {
		var out []*process.Step
		for _, s := range steps {
			if s.Cluster == target {
				out = append(out, s)
			}
		}
		return out, nil
	}
	var byShort []*process.Step
	var names []string
	for _, s := range steps {
		if !s.IsProcess() {
			continue
		}
		if s.Name == target {
			return []*process.Step{s}, nil
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
	for _, c := range f.Clusters[1:] {
		members = append(members, c.Name)
	}
	if len(byShort) > 1 {
		return nil, fmt.Errorf("%q names a process in several clusters; use its full name, such as %s", target, byShort[0].Name)
	}
	return nil, fmt.Errorf("unknown member or component %q: members are %s; components are %s", target, strings.Join(members, ", "), strings.Join(names, ", "))
}

func memberStepsOf(f *plan.Fleet, name string) ([]*process.Step, error) {
	c := f.Cluster(name)
	if c == nil || c.Index == 0 {
		var names []string
		for _, c := range f.Clusters[1:] {
			names = append(names, c.Name)
		}
		return nil, fmt.Errorf("unknown member %q: the fleet has %s", name, strings.Join(names, ", "))
	}
	return stepsOf(f, name)
}

// agentStepOf resolves a pull-mode member's name to its agent process.
func agentStepOf(f *plan.Fleet, name string) ([]*process.Step, error) {
	c := f.Cluster(name)
	if c == nil || !c.Pull {
		var pull []string
		for _, m := range f.Clusters[1:] {
			if m.Pull {
				pull = append(pull, m.Name)
			}
		}
		if len(pull) == 0 {
			return nil, fmt.Errorf("%q runs no karmada-agent: the fleet has no pull-mode member (karmada-local up --pull-members)", name)
		}
		return nil, fmt.Errorf("%q runs no karmada-agent: the pull-mode members are %s", name, strings.Join(pull, ", "))
	}
	return stepsOf(f, plan.AgentStep(name))
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
type resolver func(f *plan.Fleet, target string) ([]*process.Step, error)

func stopTarget(stateDir, binDir, target string, resolve resolver, kill bool, out io.Writer) error {
	f, err := fleetFromState(stateDir, binDir)
	if err != nil {
		return err
	}
	steps, err := resolve(f, target)
	if err != nil {
		return err
	}
	running, err := process.Running(stateDir)
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
	return process.StopAll(stateDir, names, running, grace, out)
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
func label(target string, steps []*process.Step) string {
	if len(steps) == 1 {
		return steps[0].Name
	}
	return target
}

func startSteps(ctx context.Context, f *plan.Fleet, stateDir, binDir, target string, steps []*process.Step, out io.Writer) error {
	if err := process.CheckBinaries(binDir, plan.RequiredBinaries); err != nil {
		return err
	}
	running, err := process.Running(stateDir)
	if err != nil {
		return err
	}
	etcd := false
	for _, m := range f.Etcd.Members {
		_, ok := running[m.Step]
		etcd = etcd || ok
	}
	onlyEtcd := true
	for _, s := range steps {
		onlyEtcd = onlyEtcd && plan.IsEtcdStep(s.Name)
	}
	if !etcd && !onlyEtcd {
		return fmt.Errorf("etcd of the fleet is not running: run `karmada-local up` to start the whole fleet")
	}
	healthy := map[string]bool{}
	for _, s := range steps {
		if _, ok := running[s.Name]; ok && s.IsProcess() && s.Probe.Check(ctx) == nil {
			healthy[s.Name] = true
		}
	}
	for _, s := range steps {
		if s.IsProcess() && !healthy[s.Name] {
			if r, ok := running[s.Name]; ok {
				if err := process.Stop(r, 10*time.Second); err != nil {
					return err
				}
			}
			for _, p := range s.Ports {
				if err := process.WaitPortFree(ctx, p, s.Name, 5*time.Second); err != nil {
					return err
				}
			}
		}
	}
	t0 := time.Now()
	if err := process.RunSteps(ctx, f.Cfg.StateDir, steps, healthy, out); err != nil {
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
