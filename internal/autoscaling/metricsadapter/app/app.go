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
	openapicommon "k8s.io/kube-openapi/pkg/common"
	ctrlcache "sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"
	cmapiserver "sigs.k8s.io/custom-metrics-apiserver/pkg/apiserver"
	cmcore "sigs.k8s.io/custom-metrics-apiserver/pkg/generated/openapi/core"
	cmcustom "sigs.k8s.io/custom-metrics-apiserver/pkg/generated/openapi/custommetrics"

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
		Short: "Serve the member clusters' resource and custom metrics in the control plane's metrics.k8s.io and custom.metrics.k8s.io",
		Long: `karmada-metrics-adapter serves metrics.k8s.io/v1beta1 (PodMetrics and NodeMetrics)
and custom.metrics.k8s.io (v1beta2 and v1beta1) behind the karmada-apiserver's
aggregation layer (APIServices v1beta1.metrics.k8s.io,
v1beta2.custom.metrics.k8s.io, v1beta1.custom.metrics.k8s.io), so that
` + "`kubectl top pods`" + ` and ` + "`kubectl top nodes`" + ` against the control plane show the pods and
nodes of every member, and FederatedHPAs scale on Pods and Object metrics.
Each request is asked of every Ready member at once (metrics-server there,
or the member's own custom metrics adapter), with the Cluster's credentials.
Resource metrics are merged in namespace, name and cluster order and every
item is annotated resource.karmada.io/query-from-cluster with its member; a
get of a name found in more than one member is refused as ambiguous (409).
Custom metrics of one object found in several members are added up, as
Karmada's adapter adds them. A member that does not answer within
--member-timeout is left out. external.metrics.k8s.io is not served (nor is
it by Karmada's adapter). Nothing is stored or cached.
Who may read what is decided by the karmada-apiserver for the caller before
the members are asked (delegated authorization of the caller's request in
metrics.k8s.io or custom.metrics.k8s.io, in the request's namespace).`,
		Example: `  karmada-metrics-adapter --kubeconfig karmada-metrics-adapter.kubeconfig \
    --authentication-kubeconfig karmada-metrics-adapter.kubeconfig \
    --authorization-kubeconfig karmada-metrics-adapter.kubeconfig \
    --tls-cert-file serving.crt --tls-private-key-file serving.key --secure-port 7443`,
		Codecs: metricsadapter.Codecs,
		SetOpenAPI: func(c *genericapiserver.RecommendedConfig) {
			apiserverapp.SetOpenAPIOfSchemes(c, definitions, metricsadapter.Scheme, cmapiserver.Scheme)
		},
		New: func(c genericapiserver.CompletedConfig, _ kubernetes.Interface, karmada *rest.Config) (*genericapiserver.GenericAPIServer, error) {
			return New(c, karmada, o)
		},
	}
}

// definitions are the OpenAPI definitions of metrics.k8s.io (ours) and
// custom.metrics.k8s.io with the core types it refers to (the
// custom-metrics-apiserver library's).
func definitions(ref openapicommon.ReferenceCallback) map[string]openapicommon.OpenAPIDefinition {
	out := map[string]openapicommon.OpenAPIDefinition{}
	for _, defs := range []openapicommon.GetOpenAPIDefinitions{cmcore.GetOpenAPIDefinitions, cmcustom.GetOpenAPIDefinitions, openapi.GetOpenAPIDefinitions} {
		for k, v := range defs(ref) {
			out[k] = v
		}
	}
	return out
}

// New builds the server: a cache of the Clusters, the member clients, and
// metrics.k8s.io and custom.metrics.k8s.io over them.
func New(c genericapiserver.CompletedConfig, karmada *rest.Config, o *Options) (*genericapiserver.GenericAPIServer, error) {
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
	// custom.metrics.k8s.io (v1beta2 and v1beta1) through the
	// custom-metrics-apiserver library's handlers; external.metrics.k8s.io
	// is not served, as Karmada's adapter does not serve it.
	cm, err := cmapiserver.CompletedConfig{CompletedConfig: c}.New("karmada-metrics-adapter", metricsadapter.CustomProvider{Provider: provider}, nil)
	if err != nil {
		return nil, err
	}
	server := cm.GenericAPIServer
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
