// Package options holds what every karmadactl subcommand shares: how to reach
// the Karmada control plane and a member cluster from kubeconfig files.
package options

import (
	"fmt"

	"github.com/spf13/pflag"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
	"sigs.k8s.io/controller-runtime/pkg/client"

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
	cfg, err := LoadConfig(g.Kubeconfig, g.KarmadaContext)
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

// LoadConfig loads a context of a kubeconfig file; an empty path follows the
// usual rules ($KUBECONFIG, then ~/.kube/config).
func LoadConfig(path, context string) (*rest.Config, error) {
	rules := clientcmd.NewDefaultClientConfigLoadingRules()
	if path != "" {
		rules.ExplicitPath = path
	}
	cfg, err := clientcmd.NewNonInteractiveDeferredLoadingClientConfig(rules, &clientcmd.ConfigOverrides{CurrentContext: context}).ClientConfig()
	if err != nil {
		return nil, err
	}
	cfg.QPS, cfg.Burst = 50, 100
	return cfg, nil
}
