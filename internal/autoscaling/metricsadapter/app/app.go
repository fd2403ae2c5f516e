// Package app builds the karmada-metrics-adapter command.
package app

import (
	"context"
	"fmt"
	"time"

	"github.com/spf13/cobra"
	genericapiserver "k8s.io/apiserver/pkg/server"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	ctrlcache "sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"

	clusterv1alpha1 "github.com/karmada-go/karmada/api/cluster/v1alpha1"
	"github.com/karmada-go/karmada/internal/apiserverapp"
	"github.com/karmada-go/karmada/internal/autoscaling/metricsadapter"
	"github.com/karmada-go/karmada/internal/autoscaling/metricsadapter/openapi"
	"github.com/karmada-go/karmada/internal/cli"
	"github.com/karmada-go/karmada/internal/clusters/clusterclient"
	"github.com/karmada-go/karmada/internal/scheme"
)

// Options are karmada-metrics-adapter's flags: those of every
// k8s.io/apiserver server but etcd's (it stores nothing), with their usual
// names, and the members' client limits.
type Options struct {
	*apiserverapp.Options
	ClusterAPIQPS   float32
	ClusterAPIBurst int
	// MemberTimeout bounds each member's answer.
	MemberTimeout time.Duration
}

// NewOptions are the defaults.
func NewOptions() *Options {
	o := &Options{Options: apiserverapp.NewOptionsWithoutStorage(), ClusterAPIQPS: 40, ClusterAPIBurst: 60, MemberTimeout: 10 * time.Second}
	o.Recommended.Admission = nil
	return o
}

// NewCommand returns the karmada-metrics-adapter command.
func NewCommand() *cobra.Command {
	o := NewOptions()
	b := binary(o)
	cmd := b.Command(o.Options)
	validate := cmd.RunE
	cmd.RunE = func(c *cobra.Command, args []string) error {
		if o.ClusterAPIQPS <= 0 || o.ClusterAPIBurst <= 0 {
			return fmt.Errorf("--cluster-api-qps=%v and --cluster-api-burst=%d must be positive", o.ClusterAPIQPS, o.ClusterAPIBurst)
		}
		if o.MemberTimeout <= 0 {
			return fmt.Errorf("--member-timeout=%s must be positive", o.MemberTimeout)
		}
		return validate(c, args)
	}
	fs := cmd.Flags()
	fs.Float32Var(&o.ClusterAPIQPS, "cluster-api-qps", o.ClusterAPIQPS, "requests per second to each member cluster's API server")
	fs.IntVar(&o.ClusterAPIBurst, "cluster-api-burst", o.ClusterAPIBurst, "burst of requests to each member cluster's API server")
	fs.DurationVar(&o.MemberTimeout, "member-timeout", o.MemberTimeout, "how long a member's answer is waited for before it is left out of a request's answer")
	return cmd
}

func binary(o *Options) apiserverapp.Binary {
	return apiserverapp.Binary{
		Use:   "karmada-metrics-adapter",
		Short: "Serve the member clusters' resource metrics in the control plane's metrics.k8s.io",
		Long: `karmada-metrics-adapter serves metrics.k8s.io/v1beta1 (PodMetrics and NodeMetrics)
behind the karmada-apiserver's aggregation layer (APIService
v1beta1.metrics.k8s.io), so that ` + "`kubectl top pods`" + ` and ` + "`kubectl top nodes`" + `
against the control plane show the pods and nodes of every member.

Each request is asked of every Ready member's own metrics.k8s.io at once
(metrics-server there), with the Cluster's credentials; the answers are
merged in namespace, name and cluster order and every item is annotated
resource.karmada.io/query-from-cluster with its member. A member that does
not answer within --member-timeout is left out. A get of a name found in more
than one member is refused as ambiguous (409). Nothing is stored or cached.

Who may read what is decided by the karmada-apiserver for the caller before
the members are asked (delegated authorization of get or list on pods or
nodes of metrics.k8s.io, in the request's namespace).`,
		Example: `  karmada-metrics-adapter --kubeconfig karmada-metrics-adapter.kubeconfig \
    --authentication-kubeconfig karmada-metrics-adapter.kubeconfig \
    --authorization-kubeconfig karmada-metrics-adapter.kubeconfig \
    --tls-cert-file serving.crt --tls-private-key-file serving.key --secure-port 7443`,
		Codecs: metricsadapter.Codecs,
		SetOpenAPI: func(c *genericapiserver.RecommendedConfig) {
			apiserverapp.SetOpenAPI(c, metricsadapter.Scheme, openapi.GetOpenAPIDefinitions)
		},
		New: func(c genericapiserver.CompletedConfig, _ kubernetes.Interface, karmada *rest.Config) (*genericapiserver.GenericAPIServer, error) {
			return New(c, karmada, o)
		},
	}
}

// New builds the server: a cache of the Clusters, the member clients, and
// metrics.k8s.io over them.
func New(c genericapiserver.CompletedConfig, karmada *rest.Config, o *Options) (*genericapiserver.GenericAPIServer, error) {
	server, err := c.New("karmada-metrics-adapter", genericapiserver.NewEmptyDelegate())
	if err != nil {
		return nil, err
	}
	clusters, err := ctrlcache.New(karmada, ctrlcache.Options{Scheme: scheme.Scheme, ByObject: map[client.Object]ctrlcache.ByObject{&clusterv1alpha1.Cluster{}: {}}})
	if err != nil {
		return nil, err
	}
	direct, err := client.New(karmada, client.Options{Scheme: scheme.Scheme})
	if err != nil {
		return nil, err
	}
	provider := &metricsadapter.Provider{
		Members: metricsadapter.ClusterMembers{Karmada: clusters,
			Cache: clusterclient.NewCache(direct, clusterclient.Options{QPS: o.ClusterAPIQPS, Burst: o.ClusterAPIBurst, Timeout: o.MemberTimeout})},
		Timeout: o.MemberTimeout,
	}
	if err := metricsadapter.Install(server, provider); err != nil {
		return nil, err
	}
	server.AddPostStartHookOrDie("start-karmada-metrics-adapter-clusters", func(ctx genericapiserver.PostStartHookContext) error {
		runCtx, cancel := context.WithCancel(context.Background())
		go func() {
			<-ctx.Done()
			cancel()
		}()
		go func() { _ = clusters.Start(runCtx) }()
		if !clusters.WaitForCacheSync(runCtx) {
			return fmt.Errorf("the Clusters' cache did not sync")
		}
		return nil
	})
	return server, nil
}

// Main runs the command and returns the exit code.
func Main() int { return cli.Run(NewCommand()) }
