// Package version implements `karmadactl version`: which build karmadactl
// is, in Karmada's form, or as JSON or YAML.
package version

import (
	"encoding/json"
	"fmt"
	"io"

	"github.com/spf13/cobra"
	"sigs.k8s.io/yaml"

	"github.com/karmada-go/karmada/internal/version"
)

// NewCommand returns `karmadactl version`; parent is how the binary was
// invoked (karmadactl, or kubectl karmada).
func NewCommand(parent string) *cobra.Command {
	var output string
	cmd := &cobra.Command{
		Use:   "version",
		Short: "Print the version of karmadactl",
		Long: `Print the version of karmadactl: its release, the commit and date it was built
from, the Go version and the platform.`,
		Example: `  # The version, as Karmada's karmadactl prints it
  karmadactl version

  # As JSON, for scripts
  karmadactl version -o json`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			return Print(cmd.OutOrStdout(), parent, output, version.Get())
		},
	}
	cmd.Flags().StringVarP(&output, "output", "o", "", "one of '', 'json' or 'yaml'")
	return cmd
}

// Print writes info as output asks.
func Print(out io.Writer, parent, output string, info version.Info) error {
	switch output {
	case "":
		_, err := fmt.Fprintf(out, "%s version: %#v\n", parent, info)
		return err
	case "json":
		b, err := json.MarshalIndent(info, "", "  ")
		if err != nil {
			return err
		}
		_, err = fmt.Fprintf(out, "%s\n", b)
		return err
	case "yaml":
		b, err := yaml.Marshal(info)
		if err != nil {
			return err
		}
		_, err = out.Write(b)
		return err
	}
	return fmt.Errorf("--output=%q: must be '', 'json' or 'yaml'", output)
}
