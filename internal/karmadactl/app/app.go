// Package app builds the karmadactl command. The same binary installed as
// kubectl-karmada works as a kubectl plugin: `kubectl karmada join ...`.
package app

import (
	"os"
	"path/filepath"
	"strings"

	"github.com/spf13/cobra"
	kubectloptions "k8s.io/kubectl/pkg/cmd/options"

	"github.com/karmada-go/karmada/internal/cli"
	"github.com/karmada-go/karmada/internal/karmadactl/addons"
	"github.com/karmada-go/karmada/internal/karmadactl/apply"
	"github.com/karmada-go/karmada/internal/karmadactl/certs"
	"github.com/karmada-go/karmada/internal/karmadactl/cmdinit"
	"github.com/karmada-go/karmada/internal/karmadactl/cordon"
	"github.com/karmada-go/karmada/internal/karmadactl/explain"
	"github.com/karmada-go/karmada/internal/karmadactl/get"
	"github.com/karmada-go/karmada/internal/karmadactl/interpret"
	"github.com/karmada-go/karmada/internal/karmadactl/join"
	"github.com/karmada-go/karmada/internal/karmadactl/kubectlcmds"
	"github.com/karmada-go/karmada/internal/karmadactl/options"
	"github.com/karmada-go/karmada/internal/karmadactl/promote"
	"github.com/karmada-go/karmada/internal/karmadactl/register"
	"github.com/karmada-go/karmada/internal/karmadactl/setup"
	"github.com/karmada-go/karmada/internal/karmadactl/taint"
	"github.com/karmada-go/karmada/internal/karmadactl/token"
	"github.com/karmada-go/karmada/internal/karmadactl/unjoin"
	"github.com/karmada-go/karmada/internal/karmadactl/unregister"
	kversion "github.com/karmada-go/karmada/internal/karmadactl/version"
	"github.com/karmada-go/karmada/internal/version"
)

// NewCommand returns the root command, named after how it was invoked.
func NewCommand(name string) *cobra.Command {
	g := &options.Global{}
	parent := "karmadactl"
	cmd := &cobra.Command{
		Version:       version.Get().String(),
		Use:           "karmadactl",
		Short:         "Manage the member clusters and policies of a Karmada control plane",
		SilenceUsage:  true,
		SilenceErrors: true,
	}
	if strings.HasPrefix(name, "kubectl-") {
		// Invoked as a kubectl plugin: show usage as `kubectl karmada ...`.
		cmd.Use = name
		cmd.Annotations = map[string]string{cobra.CommandDisplayNameAnnotation: "kubectl karmada"}
		parent = "kubectl karmada"
	}
	g.AddFlags(cmd.PersistentFlags())
	cmd.AddCommand(
		join.NewCommand(g),
		unjoin.NewCommand(g),
		cordon.NewCordonCommand(g),
		cordon.NewUncordonCommand(g),
		taint.NewCommand(g),
		explain.NewExplainCommand(g),
		explain.NewPlanCommand(g),
		token.NewCommand(g, parent),
		register.NewCommand(g),
		unregister.NewCommand(g),
		setup.NewCommand(g),
		cmdinit.NewInitCommand(g),
		cmdinit.NewDeinitCommand(g),
		addons.NewCommand(&g.Kubeconfig),
		certs.NewCommand(g),
		interpret.NewCommand(g),
		kversion.NewCommand(parent),
	)
	cmd.AddCommand(kubectlcmds.NewCommands(g, parent)...)
	cmd.AddCommand(get.NewCommand(g, parent), promote.NewCommand(g, parent), apply.NewCommand(g, parent))
	// kubectl's options: the flags every command inherits (Karmada's
	// karmadactl has it too).
	opts := kubectloptions.NewCmdOptions(os.Stdout)
	opts.Example = "  # Print flags inherited by all commands\n  " + parent + " options"
	cmd.AddCommand(opts)
	return cmd
}

// Run executes the command and returns the process exit code.
func Run() int { return cli.Run(NewCommand(filepath.Base(os.Args[0]))) }
