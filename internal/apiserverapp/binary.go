package apiserverapp

import (
	"context"

	"github.com/spf13/cobra"
	"k8s.io/apimachinery/pkg/runtime/serializer"
	genericapiserver "k8s.io/apiserver/pkg/server"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/klog/v2"

	"github.com/karmada-go/karmada/internal/version"
)

// Binary is one of our aggregated API servers (karmada-aggregated-apiserver,
// karmada-search) as its command runs it: the same flags, the same wait
// for the karmada-apiserver, the same configuration and start; what
// differs is its help, its codecs and OpenAPI, and the server it builds.
type Binary struct {
	Use, Short, Long, Example string
	Codecs                    serializer.CodecFactory
	SetOpenAPI                func(*genericapiserver.RecommendedConfig)
	// New builds the server from its completed configuration, with a
	// client of the karmada-apiserver's core API and the configuration
	// that reaches the karmada-apiserver as the server's identity.
	New func(c genericapiserver.CompletedConfig, kube kubernetes.Interface, karmada *rest.Config) (*genericapiserver.GenericAPIServer, error)
}

// Run waits for the karmada-apiserver, builds the server and serves until
// ctx ends.
func (b Binary) Run(ctx context.Context, o *Options) error {
	if err := o.WaitForKarmadaAPIServer(ctx); err != nil {
		return err
	}
	c, err := o.Config(b.Codecs, b.SetOpenAPI)
	if err != nil {
		return err
	}
	kube, err := kubernetes.NewForConfig(c.ClientConfig)
	if err != nil {
		return err
	}
	server, err := b.New(c.Complete(), kube, c.ClientConfig)
	if err != nil {
		return err
	}
	klog.InfoS("Starting", "version", version.Get().String())
	return server.PrepareRun().RunWithContext(ctx)
}

// Command is the binary's command over o, its flags validated before it
// runs.
func (b Binary) Command(o *Options) *cobra.Command {
	cmd := &cobra.Command{
		Version:       version.Get().String(),
		Use:           b.Use,
		Short:         b.Short,
		Long:          b.Long,
		Example:       b.Example,
		SilenceUsage:  true,
		SilenceErrors: true,
		Args:          cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if err := o.Validate(); err != nil {
				return err
			}
			return b.Run(cmd.Context(), o)
		},
	}
	o.AddFlags(cmd.Flags())
	return cmd
}
