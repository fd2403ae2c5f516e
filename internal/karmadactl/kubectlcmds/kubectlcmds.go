// Package kubectlcmds are karmadactl's commands that are kubectl's own
// (describe, logs, exec, attach, top, api-resources, api-versions, explain,
// create, delete, edit, patch, label, annotate), run against the Karmada
// control plane or, with --operation-scope members -C <cluster> (logs and
// top: -C alone), against a member through the control plane's cluster
// proxy, as the caller. Their flags, output and exit codes are kubectl's.
package kubectlcmds

import (
	"os"

	"github.com/spf13/cobra"
	"k8s.io/cli-runtime/pkg/genericiooptions"
	"k8s.io/kubectl/pkg/cmd/annotate"
	"k8s.io/kubectl/pkg/cmd/apiresources"
	"k8s.io/kubectl/pkg/cmd/attach"
	"k8s.io/kubectl/pkg/cmd/create"
	"k8s.io/kubectl/pkg/cmd/delete"
	"k8s.io/kubectl/pkg/cmd/describe"
	"k8s.io/kubectl/pkg/cmd/edit"
	"k8s.io/kubectl/pkg/cmd/exec"
	"k8s.io/kubectl/pkg/cmd/explain"
	"k8s.io/kubectl/pkg/cmd/label"
	"k8s.io/kubectl/pkg/cmd/logs"
	"k8s.io/kubectl/pkg/cmd/patch"
	"k8s.io/kubectl/pkg/cmd/top"

	"github.com/karmada-go/karmada/internal/karmadactl/topclusters"
	cmdutil "k8s.io/kubectl/pkg/cmd/util"

	"github.com/karmada-go/karmada/internal/karmadactl/options"
	"github.com/karmada-go/karmada/internal/karmadactl/target"
)

// Streams are the terminal's.
func Streams() genericiooptions.IOStreams {
	return genericiooptions.IOStreams{In: os.Stdin, Out: os.Stdout, ErrOut: os.Stderr}
}

var (
	// controlPlaneOrMember: --operation-scope karmada (default) or members.
	controlPlaneOrMember = []string{target.Karmada, target.Members}
	// memberOnly: -C required.
	memberOnly = []string{target.Members}
)

// wrap gives a kubectl command karmadactl's target flags, checked before it
// runs, and the parent's name in its examples.
func wrap(flags *target.Flags, cmd *cobra.Command, parent string) *cobra.Command {
	flags.AddFlags(cmd)
	checkFirst(flags, cmd, parent)
	return cmd
}

// checkFirst makes cmd and its subcommands check the target flags before
// running.
func checkFirst(flags *target.Flags, cmd *cobra.Command, parent string) {
	cmd.Example = replaceKubectl(cmd.Example, parent)
	for _, sub := range cmd.Commands() {
		checkFirst(flags, sub, parent)
	}
	run, runE := cmd.Run, cmd.RunE
	if run == nil && runE == nil {
		return
	}
	cmd.Run, cmd.RunE = nil, func(c *cobra.Command, args []string) error {
		if err := flags.Validate(); err != nil {
			return err
		}
		// A member that is not joined is named as the API server names
		// it (Karmada's: clusters.cluster.karmada.io "x" not found).
		if err := flags.CheckCluster(c.Context()); err != nil {
			return err
		}
		if runE != nil {
			return runE(c, args)
		}
		run(c, args)
		return nil
	}
}

type ctor func(f cmdutil.Factory, s genericiooptions.IOStreams) *cobra.Command

func newCmd(g *options.Global, parent string, scopes []string, long string, make ctor) *cobra.Command {
	flags := target.NewFlags(g, scopes...)
	cmd := wrap(flags, make(flags.Factory(), Streams()), parent)
	if long != "" {
		cmd.Long = long
	}
	return cmd
}

// topCommand is kubectl's top for a member (-C), with `top clusters` beside
// its pod and node subcommands: the members' capacity from the control plane.
func topCommand(g *options.Global, parent string) *cobra.Command {
	cmd := newCmd(g, parent, memberOnly, `Display resource (CPU/memory) usage of the pods or nodes of member cluster -C,
from the member's Metrics API (metrics-server); or, with "top clusters", the
capacity of the member clusters as the control plane sees it.`, top.NewCmdTop)
	cmd.AddCommand(topclusters.NewCommand(g))
	return cmd
}

// NewCommands returns the commands, for karmadactl (parent is how it is
// invoked: karmadactl or kubectl karmada).
func NewCommands(g *options.Global, parent string) []*cobra.Command {
	return []*cobra.Command{
		newCmd(g, parent, controlPlaneOrMember, `Show details of a resource or group of resources, in the Karmada control plane
or, with --operation-scope members -C <cluster>, in a member cluster (through
the control plane's cluster proxy, as you: the member's RBAC applies).`,
			func(f cmdutil.Factory, s genericiooptions.IOStreams) *cobra.Command {
				return describe.NewCmdDescribe(parent, f, s)
			}),
		newCmd(g, parent, memberOnly, `Print the logs of a container of a pod in member cluster -C (through the
control plane's cluster proxy, as you).`, logs.NewCmdLogs),
		newCmd(g, parent, controlPlaneOrMember, `Execute a command in a container, in the Karmada control plane or, with
--operation-scope members -C <cluster>, in a member cluster (through the
control plane's cluster proxy, as you).`, exec.NewCmdExec),
		newCmd(g, parent, controlPlaneOrMember, `Attach to a process already running inside a container, in the Karmada control
plane or, with --operation-scope members -C <cluster>, in a member cluster.`, attach.NewCmdAttach),
		topCommand(g, parent),
		newCmd(g, parent, controlPlaneOrMember, `Print the API resources of the Karmada control plane or, with
--operation-scope members -C <cluster>, of a member cluster.`,
			func(f cmdutil.Factory, s genericiooptions.IOStreams) *cobra.Command {
				return apiresources.NewCmdAPIResources(f, s)
			}),
		newCmd(g, parent, controlPlaneOrMember, `Print the API versions of the Karmada control plane or, with
--operation-scope members -C <cluster>, of a member cluster.`,
			func(f cmdutil.Factory, s genericiooptions.IOStreams) *cobra.Command {
				return apiresources.NewCmdAPIVersions(f, s)
			}),
		newCmd(g, parent, controlPlaneOrMember, "", func(f cmdutil.Factory, s genericiooptions.IOStreams) *cobra.Command {
			return explain.NewCmdExplain(parent, f, s)
		}),
		newCmd(g, parent, nil, "", create.NewCmdCreate),
		newCmd(g, parent, controlPlaneOrMember, "", delete.NewCmdDelete),
		newCmd(g, parent, controlPlaneOrMember, "", edit.NewCmdEdit),
		newCmd(g, parent, controlPlaneOrMember, "", patch.NewCmdPatch),
		newCmd(g, parent, controlPlaneOrMember, "", label.NewCmdLabel),
		newCmd(g, parent, controlPlaneOrMember, "", func(f cmdutil.Factory, s genericiooptions.IOStreams) *cobra.Command {
			return annotate.NewCmdAnnotate(parent, f, s)
		}),
	}
}
