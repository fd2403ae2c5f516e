// Package app builds the karmada-bench command.
package app

import (
	"context"
	"fmt"
	"io"
	"os"
	"os/signal"
	"path/filepath"
	"strings"
	"time"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/karmada-go/karmada/internal/bench"
	"github.com/karmada-go/karmada/internal/cli"
	"github.com/karmada-go/karmada/internal/version"
)

// Main runs the command and returns the exit code.
func Main() int { return cli.Run(NewCommand()) }

// NewCommand returns the karmada-bench root command.
func NewCommand() *cobra.Command {
	cmd := &cobra.Command{
		Version: version.Get().String(),
		Use:     "karmada-bench",
		Short:   "Measure a Karmada-API control plane from the outside",
		Long: `karmada-bench measures a control plane that serves the Karmada API, through
that API and the member clusters' APIs only, so the same commands measure
this project or any other implementation. Every wait is driven by watches.

  propagate        K Deployments through one PropagationPolicy: time until each
                   exists in every member, is available there, and shows every
                   replica available in its aggregated status
  restart          the same, then kill and restart the controller manager with
                   changes made while it was down: catch-up time and member writes
  apiserver-limit  the karmada-apiserver's raw create rate, the ceiling of
                   propagation
  floor            the same Deployments created directly in every member: the
                   members' own time, which no control plane can beat
  works            Works written per second for N ResourceBindings that are
                   there when the controller manager starts`,
		SilenceUsage:  true,
		SilenceErrors: true,
	}
	cmd.AddCommand(newPropagateCommand(), newRestartCommand(), newLimitCommand(), newFloorCommand(), newEndpointsCommand(), newAutoscaleCommand(), newWorksCommand())
	return cmd
}

// common are the flags of every subcommand that reaches the fleet.
type common struct {
	kubeconfig     string
	karmadaContext string
	members        []string
	qps            float32
	burst          int
	concurrency    int
	out            string
	cleanupTimeout time.Duration
}

func (c *common) addFlags(fs *pflag.FlagSet) {
	fs.StringVar(&c.kubeconfig, "kubeconfig", defaultKubeconfig(), "kubeconfig holding the control plane's context and one context per member, named as the member")
	fs.StringVar(&c.karmadaContext, "karmada-context", "karmada-apiserver", "context of the karmada-apiserver")
	fs.StringSliceVar(&c.members, "members", []string{"member1", "member2", "member3"}, "member clusters, each a context of --kubeconfig and a Cluster of the control plane")
	fs.Float32Var(&c.qps, "qps", 500, "queries per second of the benchmark's clients (to each API server)")
	fs.IntVar(&c.burst, "burst", 1000, "burst of the benchmark's clients")
	fs.IntVar(&c.concurrency, "concurrency", 16, "templates created at once")
	fs.StringVar(&c.out, "out", "", "also write the result as JSON to this file")
	fs.DurationVar(&c.cleanupTimeout, "cleanup-timeout", 10*time.Minute, "how long the clean-up may take, also after Ctrl-C")
}

// defaultKubeconfig is karmada-local's kubeconfig when it exists, else the
// usual ($KUBECONFIG, ~/.kube/config).
func defaultKubeconfig() string {
	if env := os.Getenv("KUBECONFIG"); env != "" {
		return env
	}
	home, _ := os.UserHomeDir()
	p := filepath.Join(home, ".kube", "karmada.config")
	if _, err := os.Stat(p); err == nil {
		return p
	}
	return ""
}

func (c *common) client() bench.ClientSettings {
	return bench.ClientSettings{QPS: c.qps, Burst: c.burst}
}

func (c *common) validate() error {
	switch {
	case c.qps <= 0 || c.burst < 1:
		return fmt.Errorf("--qps=%v --burst=%d: both must be positive", c.qps, c.burst)
	case c.concurrency < 1:
		return fmt.Errorf("--concurrency=%d: must be at least 1", c.concurrency)
	case c.cleanupTimeout <= 0:
		return fmt.Errorf("--cleanup-timeout=%s: must be positive", c.cleanupTimeout)
	}
	return nil
}

// scenario are the flags of propagate and restart.
type scenario struct {
	common
	templates      int
	perNamespace   int
	replicas       int32
	mode           string
	timeout        time.Duration
	ceiling        float64
	measureCeiling bool
	ceilingObjects int
	processes      []string
	stateDir       string
	fleetProcesses bool
	sampleInterval time.Duration
}

func defaultStateDir() string {
	if env := os.Getenv("KARMADA_LOCAL_STATE_DIR"); env != "" {
		return env
	}
	home, _ := os.UserHomeDir()
	return filepath.Join(home, ".karmada-local")
}

func (s *scenario) addFlags(fs *pflag.FlagSet) {
	s.common.addFlags(fs)
	fs.IntVar(&s.templates, "templates", 100, "number of Deployments (K)")
	fs.IntVar(&s.perNamespace, "templates-per-namespace", bench.DefaultPerNamespace, "Deployments in one namespace: above it a run uses several namespaces, each with its own policy (a member's Deployment controller lists the namespace on every sync, so one namespace of K would cost the members more with each K)")
	fs.Int32Var(&s.replicas, "replicas", 0, "replicas of each Deployment (default 1 when duplicated, one per member when divided)")
	fs.StringVar(&s.mode, "mode", string(bench.Duplicated), "duplicated (every replica in every member) or divided (replicas split by equal static weights)")
	fs.DurationVar(&s.timeout, "timeout", 30*time.Minute, "how long to wait for every template to be fully propagated")
	fs.Float64Var(&s.ceiling, "apiserver-ceiling", 0, "the karmada-apiserver's create rate from an earlier apiserver-limit run (creates/s); 0 measures it first")
	fs.BoolVar(&s.measureCeiling, "measure-ceiling", true, "measure the apiserver ceiling before the run when --apiserver-ceiling is not given")
	fs.IntVar(&s.ceilingObjects, "ceiling-objects", 0, "Deployments created to measure the ceiling (default: --templates, at most 1000)")
	fs.StringArrayVar(&s.processes, "process", nil, "a control plane process to measure, NAME=PID or NAME=PIDFILE (repeatable; default: karmada-controller-manager and karmada-scheduler of the karmada-local fleet)")
	fs.StringVar(&s.stateDir, "karmada-local-state-dir", defaultStateDir(), "karmada-local's state directory, where the processes' pid files are (env KARMADA_LOCAL_STATE_DIR)")
	fs.BoolVar(&s.fleetProcesses, "measure-fleet", false, "measure every process of the karmada-local fleet (API servers, etcd, members), not only the controller manager and the scheduler")
	fs.DurationVar(&s.sampleInterval, "sample-interval", 250*time.Millisecond, "how often the processes' memory and CPU time are read")
}

func (s *scenario) options(log io.Writer) (bench.Options, error) {
	if err := s.validate(); err != nil {
		return bench.Options{}, err
	}
	if s.perNamespace < 1 {
		return bench.Options{}, fmt.Errorf("--templates-per-namespace=%d: must be at least 1", s.perNamespace)
	}
	mode, err := bench.ParseMode(s.mode)
	if err != nil {
		return bench.Options{}, err
	}
	replicas := s.replicas
	if replicas == 0 {
		replicas = 1
		if mode == bench.Divided {
			replicas = int32(len(s.members))
		}
	}
	o := bench.Options{
		Workload: bench.Workload{
			Templates: s.templates, PerNamespace: s.perNamespace, Replicas: replicas, Mode: mode, Concurrency: s.concurrency,
			Timeout: s.timeout, CleanupTimeout: s.cleanupTimeout, Log: log,
		},
		Client:         s.client(),
		Ceiling:        s.ceiling,
		MeasureCeiling: s.measureCeiling,
		CeilingObjects: s.ceilingObjects,
		SampleInterval: s.sampleInterval,
	}
	if o.CeilingObjects == 0 {
		o.CeilingObjects = min(s.templates, 1000)
	}
	if err := o.Validate(); err != nil {
		return o, err
	}
	if s.ceiling < 0 {
		return o, fmt.Errorf("--apiserver-ceiling=%v: must not be negative", s.ceiling)
	}
	if s.sampleInterval <= 0 {
		return o, fmt.Errorf("--sample-interval=%s: must be positive", s.sampleInterval)
	}
	for _, p := range s.processes {
		src, err := bench.ParseProcessFlag(p)
		if err != nil {
			return o, err
		}
		o.Processes = append(o.Processes, src)
	}
	if len(s.processes) == 0 {
		o.Processes = bench.KarmadaLocalProcesses(s.stateDir, s.fleetProcesses)
	}
	return o, nil
}

// abortOnSecondInterrupt lets a second Ctrl-C end a clean-up that the first
// one started. The returned function ends the watch.
func abortOnSecondInterrupt(ctx context.Context, out io.Writer) (stop func()) {
	finished := make(chan struct{})
	go func() {
		select {
		case <-ctx.Done():
		case <-finished:
			return
		}
		fmt.Fprintln(out, "Interrupted: cleaning up (Ctrl-C again to abort the clean-up)")
		ch := make(chan os.Signal, 1)
		signal.Notify(ch, os.Interrupt)
		<-ch
		fmt.Fprintln(out, "Clean-up aborted; objects of the run may be left behind")
		os.Exit(130)
	}()
	return func() { close(finished) }
}

// finish prints a run's report, writes it as JSON to path (when given), and
// turns a failed run or an incomplete clean-up into the command's error.
func finish(out io.Writer, path string, r interface{ Print(io.Writer) }, runErr string, cleanedUp bool, problems []string) error {
	r.Print(out)
	if path != "" {
		if err := bench.WriteJSON(path, r); err != nil {
			return fmt.Errorf("writing %s: %w", path, err)
		}
		fmt.Fprintf(out, "result written to %s\n", path)
	}
	switch {
	case runErr != "":
		return fmt.Errorf("%s", runErr)
	case !cleanedUp:
		return fmt.Errorf("clean-up incomplete: %s", strings.Join(problems, "; "))
	}
	return nil
}

func newPropagateCommand() *cobra.Command {
	s := &scenario{}
	var floorFirst bool
	cmd := &cobra.Command{
		Use:   "propagate",
		Short: "Time K Deployments through one policy into every member",
		Long: `propagate creates a namespace, one PropagationPolicy (every Deployment of the
namespace to --members, duplicated or divided) and K small Deployments as fast
as the client allows, then follows watches on every member and on the control
plane to record, per template, the time from its create request until it
exists in every member it is meant for, until its pods are available there,
and until its aggregated status shows every replica available. It reports
p50/p90/p99/max of each, wall time, throughput, the request counts of the API
servers, the peak RSS and CPU time of the control plane's processes, and
deletes everything it made (also on Ctrl-C), timing how long the members take
to be clean.`,
		Example: `  # 100 one-replica Deployments duplicated to the three members of karmada-local
  karmada-bench propagate --templates 100

  # 1,000 divided over ten members, result as JSON
  karmada-bench propagate --templates 1000 --mode divided \
    --members member1,member2,member3,member4,member5,member6,member7,member8,member9,member10 \
    --out result.json

  # W1 against its floor on the same fleet, one after the other
  karmada-bench propagate --templates 1000 --floor --measure-fleet`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			out := cmd.OutOrStdout()
			o, err := s.options(out)
			if err != nil {
				return err
			}
			f, err := bench.Connect(s.kubeconfig, s.karmadaContext, s.members, s.client())
			if err != nil {
				return err
			}
			defer abortOnSecondInterrupt(cmd.Context(), out)()
			var floor *bench.FloorReport
			if floorFirst {
				if floor, err = runFloorFirst(cmd.Context(), out, f, s, o); err != nil {
					return err
				}
			}
			r := bench.Propagate(cmd.Context(), f, o)
			if floor != nil {
				r.Floor = bench.CompareToFloor(r, floor)
			}
			return finish(out, s.out, r, r.Error, r.Cleanup.Complete, r.Cleanup.Problems)
		},
	}
	s.addFlags(cmd.Flags())
	cmd.Flags().BoolVar(&floorFirst, "floor", false, "first run the floor on the same fleet (the same Deployments created directly in every member, as `floor` does; duplicated mode only), then report the propagation's wall time divided by the floor's")
	return cmd
}

// runFloorFirst runs the floor of a propagate --floor: the same templates,
// namespaces of the same size and client, measuring the whole fleet unless
// --process names processes. A floor that fails or leaves objects behind
// ends the command: a ratio to it would mean nothing.
func runFloorFirst(ctx context.Context, out io.Writer, f *bench.Fleet, s *scenario, o bench.Options) (*bench.FloorReport, error) {
	if o.Workload.Mode != bench.Duplicated {
		return nil, fmt.Errorf("--floor with --mode=%s: the floor creates every Deployment in every member, which only a duplicated propagation does", o.Workload.Mode)
	}
	procs := o.Processes
	if len(s.processes) == 0 {
		procs = bench.KarmadaLocalProcesses(s.stateDir, true)
	}
	fmt.Fprintf(out, "Floor first: the same %d Deployments created directly in every member\n", o.Workload.Templates)
	fr := bench.Floor(ctx, f, o.Workload, o.Client, procs, o.SampleInterval)
	fr.Print(out)
	switch {
	case fr.Error != "":
		return nil, fmt.Errorf("floor: %s", fr.Error)
	case !fr.Cleanup.Complete:
		return nil, fmt.Errorf("floor: clean-up incomplete: %s", strings.Join(fr.Cleanup.Problems, "; "))
	case ctx.Err() != nil:
		return nil, ctx.Err()
	}
	fmt.Fprintln(out)
	return fr, nil
}

func newRestartCommand() *cobra.Command {
	s := &scenario{}
	var (
		karmadaLocal, stopCmd, startCmd, component string
		settle                                     time.Duration
	)
	cmd := &cobra.Command{
		Use:   "restart",
		Short: "Time the controller manager's catch-up after a crash",
		Long: `restart propagates K templates as propagate does, then kills the controller
manager (by default through karmada-local, with SIGKILL), changes an
annotation on every other template while it is down, starts it again, and
measures the time from the start until every change is seen in every member,
and the members' writes to Deployments from the kill until --settle after
catching up. A control plane that re-applies only what changed makes one
write per changed member copy; the rest is reported as needless.`,
		Example: `  karmada-bench restart --templates 1000

  # another control plane: any commands that stop and start its controllers
  karmada-bench restart --stop-command 'systemctl kill -s KILL my-controllers' \
    --start-command 'systemctl start my-controllers'`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			out := cmd.OutOrStdout()
			o, err := s.options(out)
			if err != nil {
				return err
			}
			if settle < 0 {
				return fmt.Errorf("--settle=%s: must not be negative", settle)
			}
			ro := bench.RestartOptions{Settle: settle}
			ro.StopCommand, ro.StartCommand = componentCommands(karmadaLocal, s.stateDir, component, stopCmd, startCmd, true)
			f, err := bench.Connect(s.kubeconfig, s.karmadaContext, s.members, s.client())
			if err != nil {
				return err
			}
			defer abortOnSecondInterrupt(cmd.Context(), out)()
			r := bench.Restart(cmd.Context(), f, o, ro)
			return finish(out, s.out, r, r.Error, r.Cleanup.Complete, r.Cleanup.Problems)
		},
	}
	s.addFlags(cmd.Flags())
	cmd.Flags().StringVar(&karmadaLocal, "karmada-local", defaultKarmadaLocal(), "the karmada-local binary that stops and starts the component")
	cmd.Flags().StringVar(&component, "component", "karmada-controller-manager", "the karmada-local component to kill and start")
	cmd.Flags().StringVar(&stopCmd, "stop-command", "", "shell command that kills the controller manager (replaces karmada-local)")
	cmd.Flags().StringVar(&startCmd, "start-command", "", "shell command that starts it and returns once it is healthy (replaces karmada-local)")
	cmd.Flags().DurationVar(&settle, "settle", 10*time.Second, "how long member writes are still counted after catching up")
	return cmd
}

// componentCommands are the commands that stop (with kill, SIGKILL) and
// start a component: karmada-local's, or the shell commands given instead.
func componentCommands(karmadaLocal, stateDir, component, stopCmd, startCmd string, kill bool) (stop, start []string) {
	base := []string{karmadaLocal, "--state-dir", stateDir, "component"}
	stop = append(append([]string(nil), base...), "stop", component)
	if kill {
		stop = append(stop, "--kill")
	}
	start = append(append([]string(nil), base...), "start", component)
	if stopCmd != "" {
		stop = []string{"/bin/sh", "-c", stopCmd}
	}
	if startCmd != "" {
		start = []string{"/bin/sh", "-c", startCmd}
	}
	return stop, start
}

// defaultKarmadaLocal is karmada-local next to this binary, else on PATH.
func defaultKarmadaLocal() string {
	if exe, err := os.Executable(); err == nil {
		p := filepath.Join(filepath.Dir(exe), "karmada-local")
		if _, err := os.Stat(p); err == nil {
			return p
		}
	}
	return "karmada-local"
}

func newLimitCommand() *cobra.Command {
	c := &common{}
	var objects int
	cmd := &cobra.Command{
		Use:   "apiserver-limit",
		Short: "Measure the karmada-apiserver's raw create rate",
		Long: `apiserver-limit creates N Deployments, like propagate's templates, in a
namespace that no policy selects and that is kept out of the members, with the
same client settings, and reports creates per second: the ceiling of
propagation, which needs several writes per object. The namespace is deleted
afterwards.`,
		Example: `  karmada-bench apiserver-limit --objects 1000`,
		Args:    cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if err := c.validate(); err != nil {
				return err
			}
			if objects < 1 {
				return fmt.Errorf("--objects=%d: must be at least 1", objects)
			}
			f, err := bench.Connect(c.kubeconfig, c.karmadaContext, c.members, c.client())
			if err != nil {
				return err
			}
			out := cmd.OutOrStdout()
			r := bench.APIServerLimit(cmd.Context(), f, objects, c.concurrency, c.client(), c.cleanupTimeout)
			r.Print(out)
			if c.out != "" {
				if err := bench.WriteJSON(c.out, r); err != nil {
					return err
				}
			}
			if r.Error != "" {
				return fmt.Errorf("%s", r.Error)
			}
			if !r.Cleanup {
				return fmt.Errorf("the namespace of the run was not deleted within %s", c.cleanupTimeout)
			}
			return nil
		},
	}
	c.addFlags(cmd.Flags())
	cmd.Flags().IntVar(&objects, "objects", 1000, "Deployments to create")
	return cmd
}

func newFloorCommand() *cobra.Command {
	c := &common{}
	var (
		templates      int
		perNamespace   int
		replicas       int32
		timeout        time.Duration
		processes      []string
		stateDir       string
		sampleInterval time.Duration
	)
	cmd := &cobra.Command{
		Use:   "floor",
		Short: "Time the same Deployments created directly in every member",
		Long: `floor creates, in one new namespace of every member, the K Deployments that
propagate would put there (duplicated), without the control plane, and
follows watches until every one is available in every member. Its times are
what the members alone need on this machine: the floor under any control
plane's propagate figures. It reports the same milestones, the CPU time and
peak RSS of the fleet's processes (karmada-local's, or --process), and
deletes everything it made, timing how long the members take to be clean.`,
		Example: `  karmada-bench floor --templates 1000`,
		Args:    cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if err := c.validate(); err != nil {
				return err
			}
			if perNamespace < 1 {
				return fmt.Errorf("--templates-per-namespace=%d: must be at least 1", perNamespace)
			}
			if sampleInterval <= 0 {
				return fmt.Errorf("--sample-interval=%s: must be positive", sampleInterval)
			}
			out := cmd.OutOrStdout()
			w := bench.Workload{Templates: templates, PerNamespace: perNamespace, Replicas: replicas, Mode: bench.Duplicated, Concurrency: c.concurrency,
				Timeout: timeout, CleanupTimeout: c.cleanupTimeout, Log: out}
			if err := w.Validate(); err != nil {
				return err
			}
			var procs []bench.ProcessSource
			for _, p := range processes {
				src, err := bench.ParseProcessFlag(p)
				if err != nil {
					return err
				}
				procs = append(procs, src)
			}
			if len(processes) == 0 {
				procs = bench.KarmadaLocalProcesses(stateDir, true)
			}
			f, err := bench.Connect(c.kubeconfig, c.karmadaContext, c.members, c.client())
			if err != nil {
				return err
			}
			defer abortOnSecondInterrupt(cmd.Context(), out)()
			r := bench.Floor(cmd.Context(), f, w, c.client(), procs, sampleInterval)
			return finish(out, c.out, r, r.Error, r.Cleanup.Complete, r.Cleanup.Problems)
		},
	}
	c.addFlags(cmd.Flags())
	fs := cmd.Flags()
	fs.IntVar(&templates, "templates", 100, "Deployments created in each member (K)")
	fs.IntVar(&perNamespace, "templates-per-namespace", bench.DefaultPerNamespace, "Deployments in one namespace: above it a run uses several namespaces (as propagate does)")
	fs.Int32Var(&replicas, "replicas", 1, "replicas of each Deployment")
	fs.DurationVar(&timeout, "timeout", 30*time.Minute, "how long to wait for every Deployment to be available in every member")
	fs.StringArrayVar(&processes, "process", nil, "a process to measure, NAME=PID or NAME=PIDFILE (repeatable; default: every process of the karmada-local fleet)")
	fs.StringVar(&stateDir, "karmada-local-state-dir", defaultStateDir(), "karmada-local's state directory, where the processes' pid files are (env KARMADA_LOCAL_STATE_DIR)")
	fs.DurationVar(&sampleInterval, "sample-interval", 250*time.Millisecond, "how often the processes' memory and CPU time are read")
	return cmd
}
