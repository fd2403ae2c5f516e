// Package app builds the karmada-search command.
package app

import (
	"context"

	"github.com/spf13/cobra"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	genericapiserver "k8s.io/apiserver/pkg/server"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/client"

	searchv1alpha1 "github.com/karmada-go/karmada/api/search/v1alpha1"
	"github.com/karmada-go/karmada/internal/apiserverapp"
	"github.com/karmada-go/karmada/internal/cli"
	"github.com/karmada-go/karmada/internal/scheme"
	"github.com/karmada-go/karmada/internal/search"
)

// Options are karmada-search's flags: those of every k8s.io/apiserver
// server, with their usual names (apiserverapp).
type Options struct {
	*apiserverapp.Options
}

// NewOptions are the defaults: ResourceRegistries are checked by the
// server itself, without admission plugins.
func NewOptions() *Options {
	o := &Options{apiserverapp.NewOptions(search.Codecs.LegacyCodec(searchv1alpha1.SchemeGroupVersion))}
	o.Recommended.Etcd.StorageConfig.EncodeVersioner = runtime.NewMultiGroupVersioner(searchv1alpha1.SchemeGroupVersion,
		schema.GroupKind{Group: searchv1alpha1.GroupName})
	o.Recommended.Admission = nil
	return o
}

// binary is karmada-search as apiserverapp runs it.
var binary = apiserverapp.Binary{
	Use:   "karmada-search",
	Short: "Cache chosen kinds of the member clusters and serve them through a search API and a proxy",
	Long: `karmada-search serves search.karmada.io/v1alpha1 behind the karmada-apiserver's
aggregation layer (APIService v1alpha1.search.karmada.io):

- ResourceRegistry (kept in etcd under --etcd-prefix): the kinds to cache
  (spec.resourceSelectors) from the member clusters spec.targetCluster
  selects. karmada-search lists and watches them in each member with the
  Cluster's credentials and keeps them compactly in memory; a registry's
  Ready condition says what is cached, or what stands in the way.
- /apis/search.karmada.io/v1alpha1/search/cache/<Kubernetes path>: lists and
  gets of what is cached, from every member at once, each object annotated
  resource.karmada.io/cached-from-cluster; labelSelector, fieldSelector
  (metadata.name, metadata.namespace, and a few per kind), limit and continue.
- /apis/search.karmada.io/v1alpha1/proxying/karmada/proxy/<Kubernetes path>: a
  server for kubectl: discovery from the karmada-apiserver, reads of cached
  kinds from the cache, and updates, patches and deletes of a cached object
  sent to the member that has it, as the caller.

Every read is authorized as the caller's list or get of that resource in the
karmada-apiserver (a SubjectAccessReview); every write needs clusters/proxy
on the member, where the member's RBAC applies to the caller.`,
	Example: `  karmada-search --kubeconfig karmada.config \
    --authentication-kubeconfig karmada.config --authorization-kubeconfig karmada.config \
    --etcd-servers https://127.0.0.1:2379 --etcd-prefix /registry-karmada-search \
    --etcd-cafile ca.crt --etcd-certfile etcd-client.crt --etcd-keyfile etcd-client.key \
    --tls-cert-file serving.crt --tls-private-key-file serving.key --secure-port 7444`,
	Codecs:     search.Codecs,
	SetOpenAPI: search.SetOpenAPI,
	New: func(c genericapiserver.CompletedConfig, kube kubernetes.Interface, karmada *rest.Config) (*genericapiserver.GenericAPIServer, error) {
		cl, err := client.New(karmada, client.Options{Scheme: scheme.Scheme})
		if err != nil {
			return nil, err
		}
		server, err := search.New(c, kube, cl)
		if err != nil {
			return nil, err
		}
		return server.GenericAPIServer, nil
	},
}

// Run serves until ctx ends.
func Run(ctx context.Context, o *Options) error { return binary.Run(ctx, o.Options) }

// NewCommand returns the karmada-search command.
func NewCommand() *cobra.Command { return binary.Command(NewOptions().Options) }

// Main runs the command and returns the exit code.
func Main() int { return cli.Run(NewCommand()) }
