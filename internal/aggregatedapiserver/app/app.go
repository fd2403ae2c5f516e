// Package app builds the karmada-aggregated-apiserver command.
package app

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"math"
	"net"
	"time"

	"github.com/spf13/cobra"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	utilerrors "k8s.io/apimachinery/pkg/util/errors"
	"k8s.io/apimachinery/pkg/util/sets"
	"k8s.io/apimachinery/pkg/util/wait"
	genericapiserver "k8s.io/apiserver/pkg/server"
	genericoptions "k8s.io/apiserver/pkg/server/options"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/clientcmd"
	cliflag "k8s.io/component-base/cli/flag"
	"k8s.io/klog/v2"
	netutils "k8s.io/utils/net"

	clusterv1alpha1 "github.com/karmada-go/karmada/api/cluster/v1alpha1"
	"github.com/karmada-go/karmada/internal/aggregatedapiserver"
	"github.com/karmada-go/karmada/internal/cli"
	"github.com/karmada-go/karmada/internal/version"
)

// defaultEtcdPrefix is where Clusters are kept without --etcd-prefix.
const defaultEtcdPrefix = "/registry"

// Options are karmada-aggregated-apiserver's flags: those of every
// k8s.io/apiserver server (etcd, serving, delegated authentication and
// authorization, admission, audit, features, --kubeconfig of the
// karmada-apiserver), with their usual names, as Karmada's.
type Options struct {
	Recommended *genericoptions.RecommendedOptions
	ServerRun   *genericoptions.ServerRunOptions
	// KubeAPIQPS and KubeAPIBurst limit the requests to the karmada-apiserver.
	KubeAPIQPS   float32
	KubeAPIBurst int
}

// NewOptions are the defaults.
func NewOptions() *Options {
	o := &Options{
		Recommended: genericoptions.NewRecommendedOptions(defaultEtcdPrefix,
			aggregatedapiserver.Codecs.LegacyCodec(clusterv1alpha1.SchemeGroupVersion)),
		ServerRun:    genericoptions.NewServerRunOptions(),
		KubeAPIQPS:   40,
		KubeAPIBurst: 60,
	}
	o.Recommended.Etcd.StorageConfig.EncodeVersioner = runtime.NewMultiGroupVersioner(clusterv1alpha1.SchemeGroupVersion,
		schema.GroupKind{Group: clusterv1alpha1.GroupName})
	// The generic server's default; served by the aggregator, never alone.
	o.Recommended.SecureServing.BindPort = 443
	// Clusters are cluster-scoped: the namespace lifecycle has nothing to
	// check (and would need to watch every namespace). The webhooks and
	// admission policies of the karmada-apiserver apply.
	o.Recommended.Admission.DefaultOffPlugins = sets.New("NamespaceLifecycle")
	// Requests come through the karmada-apiserver, whose API Priority and
	// Fairness already queued them.
	o.Recommended.Features.EnablePriorityAndFairness = false
	return o
}

// Validate checks the flags, naming the bad one.
func (o *Options) Validate() error {
	var errs []error
	errs = append(errs, o.Recommended.Validate()...)
	errs = append(errs, o.ServerRun.Validate()...)
	if o.Recommended.CoreAPI == nil || o.Recommended.CoreAPI.CoreAPIKubeconfigPath == "" {
		errs = append(errs, errors.New("--kubeconfig is required: the karmada-apiserver's, to read admission webhook configurations and the member credentials the proxy uses"))
	}
	if len(o.Recommended.Etcd.StorageConfig.Transport.ServerList) == 0 {
		errs = append(errs, errors.New("--etcd-servers is required"))
	}
	if o.KubeAPIQPS <= 0 || o.KubeAPIBurst <= 0 {
		errs = append(errs, fmt.Errorf("--kube-api-qps=%v and --kube-api-burst=%d must be positive", o.KubeAPIQPS, o.KubeAPIBurst))
	}
	return utilerrors.NewAggregate(errs)
}

// Config turns the options into the server's configuration.
func (o *Options) Config() (*genericapiserver.RecommendedConfig, error) {
	if err := o.Recommended.SecureServing.MaybeDefaultWithSelfSignedCerts("localhost", nil, []net.IP{netutils.ParseIPSloppy("127.0.0.1")}); err != nil {
		return nil, fmt.Errorf("self-signed serving certificate: %w", err)
	}
	c := genericapiserver.NewRecommendedConfig(aggregatedapiserver.Codecs)
	if err := o.ServerRun.ApplyTo(&c.Config); err != nil {
		return nil, err
	}
	aggregatedapiserver.SetOpenAPI(c)
	if err := o.Recommended.ApplyTo(c); err != nil {
		return nil, err
	}
	c.ClientConfig.QPS, c.ClientConfig.Burst = o.KubeAPIQPS, o.KubeAPIBurst
	return c, nil
}

// Run serves until ctx ends.
func Run(ctx context.Context, o *Options) error {
	if err := o.waitForKarmadaAPIServer(ctx); err != nil {
		return err
	}
	c, err := o.Config()
	if err != nil {
		return err
	}
	kube, err := kubernetes.NewForConfig(c.ClientConfig)
	if err != nil {
		return err
	}
	dyn, err := dynamic.NewForConfig(c.ClientConfig)
	if err != nil {
		return err
	}
	server, err := aggregatedapiserver.New(c.Complete(), kube, dyn)
	if err != nil {
		return err
	}
	klog.InfoS("Starting", "version", version.Get().String())
	return server.PrepareRun().RunWithContext(ctx)
}

// NewCommand returns the karmada-aggregated-apiserver command.
func NewCommand() *cobra.Command {
	o := NewOptions()
	cmd := &cobra.Command{
		Version: version.Get().String(),
		Use:     "karmada-aggregated-apiserver",
		Short:   "Serve the Cluster API with its status and proxy subresources",
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
		SilenceUsage:  true,
		SilenceErrors: true,
		Args:          cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if err := o.Validate(); err != nil {
				return err
			}
			return Run(cmd.Context(), o)
		},
	}
	fs := cmd.Flags()
	var named cliflag.NamedFlagSets
	o.Recommended.AddFlags(named.FlagSet("generic"))
	o.ServerRun.AddUniversalFlags(named.FlagSet("server"))
	misc := named.FlagSet("misc")
	misc.Float32Var(&o.KubeAPIQPS, "kube-api-qps", o.KubeAPIQPS, "requests per second to the karmada-apiserver")
	misc.IntVar(&o.KubeAPIBurst, "kube-api-burst", o.KubeAPIBurst, "burst of requests to the karmada-apiserver")
	logging := flag.NewFlagSet("logging", flag.ContinueOnError)
	klog.InitFlags(logging)
	named.FlagSet("logging").AddGoFlagSet(logging)
	for _, f := range named.FlagSets {
		fs.AddFlagSet(f)
	}
	return cmd
}

// Main runs the command and returns the exit code.
func Main() int { return cli.Run(NewCommand()) }

// waitForKarmadaAPIServer waits until the karmada-apiserver answers and lets
// this server read the front proxy's CA its delegated authentication needs
// (kube-system/extension-apiserver-authentication): in a chart, the server
// starts beside the karmada-apiserver and the Job that grants it that
// right, and waiting here beats restarting with a growing back-off.
func (o *Options) waitForKarmadaAPIServer(ctx context.Context) error {
	path := o.Recommended.Authentication.RemoteKubeConfigFile
	if path == "" {
		path = o.Recommended.CoreAPI.CoreAPIKubeconfigPath
	}
	cfg, err := clientcmd.BuildConfigFromFlags("", path)
	if err != nil {
		return fmt.Errorf("reading kubeconfig %s: %w", path, err)
	}
	cfg.Timeout = 10 * time.Second
	kube, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		return err
	}
	backoff := wait.Backoff{Duration: time.Second, Factor: 1.5, Steps: math.MaxInt32, Cap: 10 * time.Second}
	var last error
	err = wait.ExponentialBackoffWithContext(ctx, backoff, func(ctx context.Context) (bool, error) {
		_, last = kube.CoreV1().ConfigMaps(metav1.NamespaceSystem).Get(ctx, "extension-apiserver-authentication", metav1.GetOptions{})
		if last != nil {
			klog.InfoS("Waiting for the karmada-apiserver", "server", cfg.Host, "err", last.Error())
			return false, nil
		}
		return true, nil
	})
	if err != nil && last != nil {
		return fmt.Errorf("the karmada-apiserver at %s: %w", cfg.Host, last)
	}
	return err
}
