// Package app builds the karmada-aggregated-apiserver command.
package app

import (
	"context"

	"github.com/spf13/cobra"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/sets"
	genericapiserver "k8s.io/apiserver/pkg/server"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"

	clusterv1alpha1 "github.com/karmada-go/karmada/api/cluster/v1alpha1"
	"github.com/karmada-go/karmada/internal/aggregatedapiserver"
	"github.com/karmada-go/karmada/internal/apiserverapp"
	"github.com/karmada-go/karmada/internal/cli"
)

// Options are karmada-aggregated-apiserver's flags: those of every
// k8s.io/apiserver server, with their usual names, as Karmada's
// (apiserverapp).
type Options struct {
	*apiserverapp.Options
}

// NewOptions are the defaults.
func NewOptions() *Options {
	o := &Options{apiserverapp.NewOptions(aggregatedapiserver.Codecs.LegacyCodec(clusterv1alpha1.SchemeGroupVersion))}
	o.Recommended.Etcd.StorageConfig.EncodeVersioner = runtime.NewMultiGroupVersioner(clusterv1alpha1.SchemeGroupVersion,
		schema.GroupKind{Group: clusterv1alpha1.GroupName})
	// Clusters are cluster-scoped: the namespace lifecycle has nothing to
	// check (and would need to watch every namespace). The webhooks and
	// admission policies of the karmada-apiserver apply.
	o.Recommended.Admission.DefaultOffPlugins = sets.New("NamespaceLifecycle")
	return o
}

// binary is karmada-aggregated-apiserver as apiserverapp runs it.
var binary = apiserverapp.Binary{
	Use:   "karmada-aggregated-apiserver",
	Short: "Serve the Cluster API with its status and proxy subresources",
	Long: `karmada-aggregated-apiserver serves cluster.karmada.io/v1alpha1 behind the
karmada-apiserver's aggregation layer (APIService v1alpha1.cluster.karmada.io):
the Cluster kind (get, list, watch, create, update, patch, delete; the status
subresource; kubectl's columns; OpenAPI), kept in etcd under --etcd-prefix.

clusters/<name>/proxy/<path> forwards a request to <path> in the member's API
as the caller: the member sees the caller's user, groups and extra through
impersonation by the Cluster's impersonator (spec.impersonatorSecretRef, a
Secret in karmada-cluster), never the caller's own credentials. Who may proxy
is RBAC on clusters/proxy in the control plane; what they may do in the member
is the member's RBAC for that user. A Pull cluster is reached only through its
spec.proxyURL.

Callers are authenticated and authorized by the karmada-apiserver (delegated:
TokenReview, SubjectAccessReview, and the front proxy's client certificate);
writes go through the karmada-apiserver's admission webhooks (karmada-webhook's
rules on Clusters keep applying).`,
	Example: `  karmada-aggregated-apiserver --kubeconfig karmada.config \
    --authentication-kubeconfig karmada.config --authorization-kubeconfig karmada.config \
    --etcd-servers https://127.0.0.1:2379 --etcd-prefix /registry-karmada-aggregated-apiserver \
    --etcd-cafile ca.crt --etcd-certfile etcd-client.crt --etcd-keyfile etcd-client.key \
    --tls-cert-file serving.crt --tls-private-key-file serving.key --secure-port 7443`,
	Codecs:     aggregatedapiserver.Codecs,
	SetOpenAPI: aggregatedapiserver.SetOpenAPI,
	New: func(c genericapiserver.CompletedConfig, kube kubernetes.Interface, karmada *rest.Config) (*genericapiserver.GenericAPIServer, error) {
		dyn, err := dynamic.NewForConfig(karmada)
		if err != nil {
			return nil, err
		}
		return aggregatedapiserver.New(c, kube, dyn)
	},
}

// Run serves until ctx ends.
func Run(ctx context.Context, o *Options) error { return binary.Run(ctx, o.Options) }

// NewCommand returns the karmada-aggregated-apiserver command.
func NewCommand() *cobra.Command { return binary.Command(NewOptions().Options) }

// Main runs the command and returns the exit code.
func Main() int { return cli.Run(NewCommand()) }
