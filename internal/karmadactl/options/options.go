// Package options holds what every karmadactl subcommand shares: how to reach
// the Karmada control plane and a member cluster from kubeconfig files.
package options

import (
	"fmt"

	"github.com/spf13/pflag"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/karmada-go/karmada/internal/cli"
	"github.com/karmada-go/karmada/internal/scheme"
)

// Global are the flags of the root command.
type Global struct {
	// Kubeconfig reaches the Karmada control plane.
	Kubeconfig string
	// KarmadaContext selects the context in Kubeconfig.
	KarmadaContext string
}

// AddFlags registers the global flags.
func (g *Global) AddFlags(fs *pflag.FlagSet) {
	fs.StringVar(&g.Kubeconfig, "kubeconfig", "", "kubeconfig of the Karmada control plane (default: $KUBECONFIG, then ~/.kube/config)")
	fs.StringVar(&g.KarmadaContext, "karmada-context", "", "context of --kubeconfig that reaches the Karmada control plane (default: its current context)")
}

// KarmadaConfig returns the control plane's REST configuration.
func (g *Global) KarmadaConfig() (*rest.Config, error) {
	cfg, err := cli.LoadConfig(g.Kubeconfig, g.KarmadaContext)
	if err != nil {
		return nil, fmt.Errorf("reaching the Karmada control plane (--kubeconfig, --karmada-context): %w", err)
	}
	return cfg, nil
}

// KarmadaClient returns a client of the control plane that knows every kind.
func (g *Global) KarmadaClient() (client.Client, error) {
	cfg, err := g.KarmadaConfig()
	if err != nil {
		return nil, err
	}
	return client.New(cfg, client.Options{Scheme: scheme.Scheme})
}
