// Package cli holds what every command-line binary of the project does the
// same way: run a cobra command until done or interrupted, and check
// positional arguments.
package cli

import (
	"context"
	"fmt"
	"os"
	"os/signal"
	"syscall"

	"github.com/spf13/cobra"
)

// Run executes cmd with a context cancelled on SIGINT or SIGTERM, prints an
// error as "error: ..." and returns the process exit code.
func Run(cmd *cobra.Command) int {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	if err := cmd.ExecuteContext(ctx); err != nil {
		fmt.Fprintln(os.Stderr, "error:", err)
		return 1
	}
	return 0
}

// OneName accepts exactly one positional argument, described by what (such
// as "the name of the cluster to join") in the error otherwise.
func OneName(what string) cobra.PositionalArgs {
	return func(_ *cobra.Command, args []string) error {
		if len(args) != 1 {
			return fmt.Errorf("expected %s (one argument), got %d arguments", what, len(args))
		}
		return nil
	}
}
