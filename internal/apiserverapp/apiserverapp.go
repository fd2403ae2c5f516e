// Package apiserverapp is what Karmada's aggregated API servers
// (karmada-aggregated-apiserver, karmada-search) share as commands: the
// flags of every k8s.io/apiserver server (etcd, serving, delegated
// authentication and authorization, admission, audit, features,
// --kubeconfig of the karmada-apiserver) under their usual names, the
// karmada-apiserver's client limits, and waiting for the karmada-apiserver
// before serving.
package apiserverapp

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"math"
	"net"
	"net/http"
	"time"

	"github.com/spf13/pflag"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/serializer"
	utilerrors "k8s.io/apimachinery/pkg/util/errors"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/apiserver/pkg/endpoints/openapi"
	genericapiserver "k8s.io/apiserver/pkg/server"
	genericoptions "k8s.io/apiserver/pkg/server/options"
	utilfeature "k8s.io/apiserver/pkg/util/feature"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/clientcmd"
	cliflag "k8s.io/component-base/cli/flag"
	"k8s.io/klog/v2"
	openapicommon "k8s.io/kube-openapi/pkg/common"
	netutils "k8s.io/utils/net"

	"github.com/karmada-go/karmada/internal/features"
	"github.com/karmada-go/karmada/internal/routes"
	"github.com/karmada-go/karmada/internal/version"
)

// defaultEtcdPrefix is where objects are kept without --etcd-prefix.
const defaultEtcdPrefix = "/registry"

// Options are the flags.
type Options struct {
	Recommended *genericoptions.RecommendedOptions
	ServerRun   *genericoptions.ServerRunOptions
	// KubeAPIQPS and KubeAPIBurst limit the requests to the karmada-apiserver.
	KubeAPIQPS   float32
	KubeAPIBurst int
}

// NewOptions are the defaults of a server storing with codec: served on
// 443 (behind the aggregator, never alone), without API Priority and
// Fairness (the karmada-apiserver already queued the requests).
func NewOptions(codec runtime.Codec) *Options {
	o := &Options{
		Recommended:  genericoptions.NewRecommendedOptions(defaultEtcdPrefix, codec),
		ServerRun:    genericoptions.NewServerRunOptions(),
		KubeAPIQPS:   40,
		KubeAPIBurst: 60,
	}
	o.Recommended.SecureServing.BindPort = 443
	o.Recommended.Features.EnablePriorityAndFairness = false
	return o
}

// NewOptionsWithoutStorage are the defaults of a server that stores
// nothing (karmada-metrics-adapter): no etcd flags.
func NewOptionsWithoutStorage() *Options {
	o := NewOptions(nil)
	o.Recommended.Etcd = nil
	return o
}

// Validate checks the flags, naming the bad one.
// Karmada's gates are among the server's --feature-gates (with
// Kubernetes' own), as in Karmada's API servers.
func init() {
	if err := features.AddTo(utilfeature.DefaultMutableFeatureGate); err != nil {
		panic(err)
	}
}

func (o *Options) Validate() error {
	var errs []error
	// --feature-gates is parsed into the registry; Set applies it to the
	// gates (Kubernetes' and Karmada's) before anything reads them.
	if r := o.ServerRun.ComponentGlobalsRegistry; r != nil {
		if err := r.Set(); err != nil {
			errs = append(errs, err)
		}
	}
	if err := features.CheckGate(utilfeature.DefaultFeatureGate); err != nil {
		return err
	}
	errs = append(errs, o.Recommended.Validate()...)
	errs = append(errs, o.ServerRun.Validate()...)
	if o.Recommended.CoreAPI == nil || o.Recommended.CoreAPI.CoreAPIKubeconfigPath == "" {
		errs = append(errs, errors.New("--kubeconfig is required: the karmada-apiserver's"))
	}
	if o.Recommended.Etcd != nil && len(o.Recommended.Etcd.StorageConfig.Transport.ServerList) == 0 {
		errs = append(errs, errors.New("--etcd-servers is required"))
	}
	if o.KubeAPIQPS <= 0 || o.KubeAPIBurst <= 0 {
		errs = append(errs, fmt.Errorf("--kube-api-qps=%v and --kube-api-burst=%d must be positive", o.KubeAPIQPS, o.KubeAPIBurst))
	}
	return utilerrors.NewAggregate(errs)
}

// Config turns the options into the server's configuration; setOpenAPI,
// when not nil, gives it the served API's OpenAPI.
func (o *Options) Config(codecs serializer.CodecFactory, setOpenAPI func(*genericapiserver.RecommendedConfig)) (*genericapiserver.RecommendedConfig, error) {
	if err := o.Recommended.SecureServing.MaybeDefaultWithSelfSignedCerts("localhost", nil, []net.IP{netutils.ParseIPSloppy("127.0.0.1")}); err != nil {
		return nil, fmt.Errorf("self-signed serving certificate: %w", err)
	}
	c := genericapiserver.NewRecommendedConfig(codecs)
	if err := o.ServerRun.ApplyTo(&c.Config); err != nil {
		return nil, err
	}
	if setOpenAPI != nil {
		setOpenAPI(c)
	}
	if err := o.Recommended.ApplyTo(c); err != nil {
		return nil, err
	}
	c.ClientConfig.QPS, c.ClientConfig.Burst = o.KubeAPIQPS, o.KubeAPIBurst
	// Outermost: a path that could mean another to what forwards it is
	// refused before authentication, authorization or any lookup.
	chain := c.BuildHandlerChainFunc
	c.BuildHandlerChainFunc = func(h http.Handler, cfg *genericapiserver.Config) http.Handler {
		return routes.RefuseUnsafePaths(chain(h, cfg))
	}
	return c, nil
}

// WaitForKarmadaAPIServer waits until the karmada-apiserver answers and lets
// this server read the front proxy's CA its delegated authentication needs
// (kube-system/extension-apiserver-authentication): in a chart, the server
// starts beside the karmada-apiserver and the Job that grants it that
// right, and waiting here beats restarting with a growing back-off.
func (o *Options) WaitForKarmadaAPIServer(ctx context.Context) error {
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

// AddFlags registers the flags, grouped as k8s.io/apiserver's servers
// group them, and klog's.
func (o *Options) AddFlags(fs *pflag.FlagSet) {
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
}

// SetOpenAPI gives a server's configuration its OpenAPI (v2 and v3) from
// the generated definitions of its API.
func SetOpenAPI(c *genericapiserver.RecommendedConfig, scheme *runtime.Scheme, defs openapicommon.GetOpenAPIDefinitions) {
	SetOpenAPIOfSchemes(c, defs, scheme)
}

// SetOpenAPIOfSchemes is SetOpenAPI for a server whose groups come from
// several schemes (the definitions named by the first scheme that has
// the type).
func SetOpenAPIOfSchemes(c *genericapiserver.RecommendedConfig, defs openapicommon.GetOpenAPIDefinitions, schemes ...*runtime.Scheme) {
	namer := openapi.NewDefinitionNamer(schemes...)
	c.OpenAPIConfig = genericapiserver.DefaultOpenAPIConfig(defs, namer)
	c.OpenAPIConfig.Info.Title = "Karmada"
	c.OpenAPIConfig.Info.Version = version.Get().GitVersion
	c.OpenAPIV3Config = genericapiserver.DefaultOpenAPIV3Config(defs, namer)
	c.OpenAPIV3Config.Info.Title = "Karmada"
	c.OpenAPIV3Config.Info.Version = version.Get().GitVersion
}
