package app

import (
	"time"

	"github.com/spf13/cobra"

	"github.com/karmada-go/karmada/internal/bench"
	"github.com/karmada-go/karmada/internal/bench/works"
)

func newWorksCommand() *cobra.Command {
	c := &common{}
	var (
		bindings                                  int
		timeout, sampleInterval                   time.Duration
		karmadaLocal, stateDir, stopCmd, startCmd string
		component                                 string
		fleetProcesses                            bool
	)
	cmd := &cobra.Command{
		Use:   "works",
		Short: "Works written per second for N ResourceBindings (the binding → Work path)",
		Long: `works measures the binding controller's throughput the way Karmada's users
measure it: it creates N ConfigMaps in a new namespace, stops the controller
manager, creates one ResourceBinding per ConfigMap already scheduled to every
member (the binding controller's finalizer set, and a scheduler name no
scheduler has, so that nothing reschedules them), starts the controller
manager, and counts through a watch the Works it writes: N per member. It
reports Works per second from the first to the last and from the start, the
karmada-apiserver's requests meanwhile, the peak RSS and CPU of the control
plane's processes, and deletes the namespace (the Works and the members'
copies go with it).`,
		Example: `  # Karmada's users report about 200 Works/s on this path
  karmada-bench works --bindings 10000`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if err := c.validate(); err != nil {
				return err
			}
			o := works.Options{Bindings: bindings, Concurrency: c.concurrency, Timeout: timeout, CleanupTimeout: c.cleanupTimeout,
				SampleInterval: sampleInterval, Log: cmd.OutOrStdout()}
			o.StopCommand, o.StartCommand = componentCommands(karmadaLocal, stateDir, component, stopCmd, startCmd, false)
			o.Processes = bench.KarmadaLocalProcesses(stateDir, fleetProcesses)
			if err := o.Validate(); err != nil {
				return err
			}
			f, err := bench.Connect(c.kubeconfig, c.karmadaContext, c.members, c.client())
			if err != nil {
				return err
			}
			out := cmd.OutOrStdout()
			defer abortOnSecondInterrupt(cmd.Context(), out)()
			r := works.Run(cmd.Context(), f, o)
			return finish(out, c.out, r, r.Error, r.Cleanup.Complete, r.Cleanup.Problems)
		},
	}
	c.addFlags(cmd.Flags())
	fs := cmd.Flags()
	fs.IntVar(&bindings, "bindings", 10000, "ResourceBindings created while the controller manager is stopped (N)")
	fs.DurationVar(&timeout, "timeout", 30*time.Minute, "how long to wait for every Work")
	fs.StringVar(&karmadaLocal, "karmada-local", defaultKarmadaLocal(), "the karmada-local binary that stops and starts the component")
	fs.StringVar(&stateDir, "karmada-local-state-dir", defaultStateDir(), "karmada-local's state directory (env KARMADA_LOCAL_STATE_DIR)")
	fs.StringVar(&component, "component", "karmada-controller-manager", "the karmada-local component to stop and start")
	fs.StringVar(&stopCmd, "stop-command", "", "shell command that stops the controller manager (replaces karmada-local)")
	fs.StringVar(&startCmd, "start-command", "", "shell command that starts it and returns once it is healthy (replaces karmada-local)")
	fs.BoolVar(&fleetProcesses, "measure-fleet", false, "measure every process of the karmada-local fleet, not only the controller manager, the scheduler and the webhook")
	fs.DurationVar(&sampleInterval, "sample-interval", 250*time.Millisecond, "how often the processes' memory and CPU time are read")
	return cmd
}
