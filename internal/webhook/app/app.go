// Package app builds the karmada-webhook command.
package app

import (
	"strings"

	"context"
	"crypto/tls"
	"errors"
	"flag"
	"fmt"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/client-go/discovery"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"time"

	"github.com/spf13/cobra"
	"golang.org/x/sync/errgroup"
	authenticationv1 "k8s.io/api/authentication/v1"
	authorizationv1 "k8s.io/api/authorization/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
	"k8s.io/klog/v2"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/healthz"
	metricsserver "sigs.k8s.io/controller-runtime/pkg/metrics/server"
	crwebhook "sigs.k8s.io/controller-runtime/pkg/webhook"
	"sigs.k8s.io/controller-runtime/pkg/webhook/conversion"

	policyv1alpha1 "github.com/karmada-go/karmada/api/policy/v1alpha1"
	"github.com/karmada-go/karmada/internal/certexpiry"
	"github.com/karmada-go/karmada/internal/cli"
	"github.com/karmada-go/karmada/internal/features"
	"github.com/karmada-go/karmada/internal/metrics"
	"github.com/karmada-go/karmada/internal/scheme"
	"github.com/karmada-go/karmada/internal/version"
	"github.com/karmada-go/karmada/internal/webhook"
)

// Options are the flags of karmada-webhook, with Karmada's names.
type Options struct {
	BindAddress   string
	SecurePort    int
	CertDir       string
	CertName      string
	KeyName       string
	TLSMinVersion string
	Metrics       cli.MetricsFlags
	Kubeconfig    string
	// AllowNoExecuteTaintPolicy admits ClusterTaintPolicies with NoExecute
	// taints.
	AllowNoExecuteTaintPolicy bool
	HealthProbeBindAddress    string
	// Seconds of the default NoExecute tolerations given to policies.
	DefaultNotReadyTolerationSeconds    int64
	DefaultUnreachableTolerationSeconds int64
}

var tlsVersions = map[string]uint16{"1.2": tls.VersionTLS12, "1.3": tls.VersionTLS13}

// Validate checks the flags, naming the bad one.
func (o *Options) Validate() error {
	if o.SecurePort < 1 || o.SecurePort > 65535 {
		return fmt.Errorf("--secure-port=%d: must be between 1 and 65535", o.SecurePort)
	}
	if net.ParseIP(o.BindAddress) == nil {
		return fmt.Errorf("--bind-address=%q: must be an IP address", o.BindAddress)
	}
	if o.DefaultNotReadyTolerationSeconds < 0 || o.DefaultUnreachableTolerationSeconds < 0 {
		return fmt.Errorf("--default-not-ready-toleration-seconds=%d and --default-unreachable-toleration-seconds=%d must not be negative", o.DefaultNotReadyTolerationSeconds, o.DefaultUnreachableTolerationSeconds)
	}
	if _, ok := tlsVersions[o.TLSMinVersion]; !ok {
		return fmt.Errorf("--tls-min-version=%q: must be 1.2 or 1.3", o.TLSMinVersion)
	}
	if o.Metrics.Enabled() && o.Metrics.Secure && o.Kubeconfig == "" {
		return errors.New("--metrics-secure (the default) has /metrics requests reviewed by the API server: give --kubeconfig (an identity that may create TokenReviews and SubjectAccessReviews, nothing else), or --metrics-bind-address=0, or --metrics-secure=false")
	}
	if err := o.Metrics.Validate(); err != nil {
		return err
	}
	for _, f := range []string{o.CertName, o.KeyName} {
		if _, err := os.Stat(filepath.Join(o.CertDir, f)); err != nil {
			return fmt.Errorf("--cert-dir=%s: %w (the webhook serves only TLS: give it a certificate and key)", o.CertDir, err)
		}
	}
	return nil
}

// NewCommand returns the karmada-webhook command.
func NewCommand() *cobra.Command {
	o := &Options{}
	cmd := &cobra.Command{
		Version: version.Get().String(),
		Use:     "karmada-webhook",
		Short:   "Admit Karmada objects: validation, defaulting and binding conversion",
		Long: `karmada-webhook is the karmada-apiserver's admission webhook for the
Karmada kinds. It validates PropagationPolicy, ClusterPropagationPolicy,
OverridePolicy, ClusterOverridePolicy, ResourceBinding,
ClusterResourceBinding, Work and Cluster on create and update, and denies
with the field path, the value and what is allowed; it sets Karmada's
defaults on policies and bindings; and it converts ResourceBinding and
ClusterResourceBinding between v1alpha1 and v1alpha2 (POST /convert).

It is also a tenancy boundary: a namespaced policy cannot select or write
outside its namespace, no overrider may change a manifest's apiVersion,
kind, name, namespace, generateName, uid or ownerReferences, and no policy
may live in karmada-system, karmada-cluster or karmada-es-*.

Admission needs almost no credentials: with --kubeconfig it lists
Clusters when a Cluster's spec.id changes (refusing one member under two
names), asks the API server (SubjectAccessReview) whether the author of a
policy or binding with conflictResolution: Overwrite holds the "adopt" verb
on it (without --kubeconfig such policies are refused), and has the API
server review requests to /metrics (and /debug/pprof with --enable-pprof);
nothing else. A pull-mode cluster's agent may change of its Cluster only
what it sets when it claims it. It serves HTTPS only,
with the certificate in --cert-dir (reloaded when the files change), and
/healthz and /readyz on the same port.`,
		Example:       `  karmada-webhook --cert-dir /var/serving-cert --secure-port 8443 --kubeconfig /etc/karmada/webhook.kubeconfig`,
		SilenceUsage:  true,
		SilenceErrors: true,
		Args:          cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if err := features.Check(); err != nil {
				return err
			}
			if err := o.Validate(); err != nil {
				return err
			}
			return Run(cmd.Context(), o)
		},
	}
	f := cmd.Flags()
	f.StringVar(&o.BindAddress, "bind-address", "127.0.0.1", "IP address the webhook server listens on (loopback by default; 0.0.0.0 for every interface, as a pod serving the API server needs)")
	f.IntVar(&o.SecurePort, "secure-port", 8443, "port of the webhook server (HTTPS)")
	f.StringVar(&o.CertDir, "cert-dir", "/var/serving-cert", "directory of the serving certificate and key")
	f.StringVar(&o.CertName, "tls-cert-file-name", "tls.crt", "serving certificate file in --cert-dir")
	f.StringVar(&o.KeyName, "tls-private-key-file-name", "tls.key", "serving key file in --cert-dir")
	f.StringVar(&o.TLSMinVersion, "tls-min-version", "1.3", "lowest TLS version accepted: 1.2 or 1.3")
	o.Metrics.AddFlags(f)
	f.StringVar(&o.Kubeconfig, "kubeconfig", "", "kubeconfig of the karmada-apiserver, used only to list Clusters when one's spec.id changes, to check the adopt right of Overwrite policies' authors, and to review /metrics requests (TokenReview, SubjectAccessReview); required while metrics are served with --metrics-secure")
	features.Gate.AddFlag(f)
	f.BoolVar(&o.AllowNoExecuteTaintPolicy, "allow-no-execute-taint-policy", false, "admit ClusterTaintPolicies with NoExecute taints, which evict every workload not tolerating them from the clusters they taint")
	f.Int64Var(&o.DefaultNotReadyTolerationSeconds, "default-not-ready-toleration-seconds", webhook.DefaultTolerationSeconds, "tolerationSeconds of the toleration of cluster.karmada.io/not-ready:NoExecute given to every (Cluster)PropagationPolicy that has none: how long its workloads stay on a NotReady cluster before the taint manager evicts them")
	f.Int64Var(&o.DefaultUnreachableTolerationSeconds, "default-unreachable-toleration-seconds", webhook.DefaultTolerationSeconds, "tolerationSeconds of the toleration of cluster.karmada.io/unreachable:NoExecute given to every (Cluster)PropagationPolicy that has none")
	f.StringVar(&o.HealthProbeBindAddress, "health-probe-bind-address", "127.0.0.1:8000", "address of plain-HTTP /healthz and /readyz; '0' disables it (they are also served on the webhook port)")
	gofs := flag.NewFlagSet("klog", flag.ExitOnError)
	klog.InitFlags(gofs)
	f.AddGoFlagSet(gofs)
	return cmd
}

// reviews asks the API server, with a SubjectAccessReview, whether a user
// may do something.
type reviews struct{ kc kubernetes.Interface }

func (r reviews) Allowed(ctx context.Context, user authenticationv1.UserInfo, attrs authorizationv1.ResourceAttributes) (bool, error) {
	extra := map[string]authorizationv1.ExtraValue{}
	for k, v := range user.Extra {
		extra[k] = authorizationv1.ExtraValue(v)
	}
	sar := &authorizationv1.SubjectAccessReview{Spec: authorizationv1.SubjectAccessReviewSpec{
		User: user.Username, UID: user.UID, Groups: user.Groups, Extra: extra, ResourceAttributes: &attrs}}
	res, err := r.kc.AuthorizationV1().SubjectAccessReviews().Create(ctx, sar, metav1.CreateOptions{})
	if err != nil {
		return false, err
	}
	return res.Status.Allowed, nil
}

// Run serves the webhook, metrics and health until ctx ends.
func Run(ctx context.Context, o *Options) error {
	ctrl.SetLogger(klog.NewKlogr())
	metrics.RegisterBuildInfo()
	certexpiry.File("webhook", certexpiry.Serving, filepath.Join(o.CertDir, o.CertName))
	log := klog.FromContext(ctx)
	server := crwebhook.NewServer(crwebhook.Options{
		Host: o.BindAddress, Port: o.SecurePort, CertDir: o.CertDir, CertName: o.CertName, KeyName: o.KeyName,
		TLSOpts: []func(*tls.Config){func(c *tls.Config) { c.MinVersion = tlsVersions[o.TLSMinVersion] }},
	})
	var cfg *rest.Config
	var clusters client.Reader
	if o.Kubeconfig != "" {
		var err error
		if cfg, err = clientcmd.BuildConfigFromFlags("", o.Kubeconfig); err != nil {
			return fmt.Errorf("--kubeconfig %s: %w", o.Kubeconfig, err)
		}
		certexpiry.Config(certexpiry.KarmadaAPIServer, cfg)
		// Read when a Cluster's id changes, which is rare: no cache.
		if clusters, err = client.New(cfg, client.Options{Scheme: scheme.Scheme}); err != nil {
			return err
		}
	} else {
		log.Info("No --kubeconfig: a Cluster taking another Cluster's spec.id (one member under two names) is not refused")
	}
	var authorizer webhook.Authorizer
	var scales webhook.ScaleTargets
	if cfg != nil {
		kc, err := kubernetes.NewForConfig(cfg)
		if err != nil {
			return err
		}
		authorizer = reviews{kc}
		scales = discoveryScales{kc.Discovery()}
	} else {
		log.Info("No --kubeconfig: policies with conflictResolution: Overwrite are refused (their author's adopt right cannot be checked)")
	}
	var quotas client.Client
	var quotaReader *cachedReader
	if features.Gate.Enabled(features.FederatedQuotaEnforcement) {
		if cfg == nil {
			return fmt.Errorf("--feature-gates=FederatedQuotaEnforcement=true needs --kubeconfig: the webhook reads FederatedResourceQuotas and records what placements take of them")
		}
		var err error
		if quotas, err = client.New(cfg, client.Options{Scheme: scheme.Scheme}); err != nil {
			return err
		}
		if quotaReader, err = newCachedReader(cfg, quotas, &policyv1alpha1.FederatedResourceQuota{}); err != nil {
			return err
		}
		log.Info("Enforcing FederatedResourceQuotas' overall limits on placements")
	}
	for _, e := range webhook.EndpointsWith(scheme.Scheme, webhook.Options{Clusters: clusters, Authorizer: authorizer, AllowNoExecuteTaintPolicy: o.AllowNoExecuteTaintPolicy, Quotas: quotas, QuotaReader: quotaReader.reader(), ScaleTargets: scales,
		DefaultNotReadyTolerationSeconds: &o.DefaultNotReadyTolerationSeconds, DefaultUnreachableTolerationSeconds: &o.DefaultUnreachableTolerationSeconds}) {
		server.Register(e.Path, &crwebhook.Admission{Handler: e.Handler()})
	}
	server.Register(webhook.ConvertPath, conversion.NewWebhookHandler(scheme.Scheme))
	server.Register(webhook.ConfinementPath, webhook.Confinement())
	// Ready once the server answers TLS on its own port.
	started := server.StartedChecker()
	health := &healthz.Handler{Checks: map[string]healthz.Checker{"ping": healthz.Ping}}
	ready := &healthz.Handler{Checks: map[string]healthz.Checker{"webhook": started}}
	server.Register("/healthz", http.StripPrefix("/healthz", health))
	server.Register("/readyz", http.StripPrefix("/readyz", ready))

	g, ctx := errgroup.WithContext(ctx)
	g.Go(func() error { return server.Start(ctx) })
	if quotaReader != nil {
		g.Go(func() error { return quotaReader.start(ctx) })
	}
	metrics, err := metricsserver.NewServer(o.Metrics.ServerOptions(), cfg, nil)
	if err != nil {
		return err
	}
	if metrics != nil {
		g.Go(func() error { return metrics.Start(ctx) })
	}
	if o.HealthProbeBindAddress != "0" && o.HealthProbeBindAddress != "" {
		mux := http.NewServeMux()
		mux.Handle("/healthz", http.StripPrefix("/healthz", health))
		mux.Handle("/healthz/", http.StripPrefix("/healthz", health))
		mux.Handle("/readyz", http.StripPrefix("/readyz", ready))
		mux.Handle("/readyz/", http.StripPrefix("/readyz", ready))
		probe := &http.Server{Addr: o.HealthProbeBindAddress, Handler: mux, ReadHeaderTimeout: 10 * time.Second}
		g.Go(func() error {
			<-ctx.Done()
			return probe.Close()
		})
		g.Go(func() error {
			if err := probe.ListenAndServe(); err != nil && !errors.Is(err, http.ErrServerClosed) {
				return fmt.Errorf("--health-probe-bind-address=%s: %w", o.HealthProbeBindAddress, err)
			}
			return nil
		})
	}
	log.Info("Starting karmada-webhook", "address", net.JoinHostPort(o.BindAddress, strconv.Itoa(o.SecurePort)))
	return g.Wait()
}

// Main runs the command and returns the exit code.
func Main() int { return cli.Run(NewCommand()) }

// discoveryScales answers from the API server's discovery whether a kind
// serves a scale subresource (one discovery request per FederatedHPA or
// CronFederatedHPA written: they are few). A group or kind the API server
// does not serve (yet) is not refused: the controllers report it.
type discoveryScales struct{ dc discovery.DiscoveryInterface }

func (d discoveryScales) Scalable(_ context.Context, apiVersion, kind string) (string, bool, error) {
	if apiVersion == "" {
		return "", true, nil
	}
	list, err := d.dc.ServerResourcesForGroupVersion(apiVersion)
	if apierrors.IsNotFound(err) {
		return "", true, nil
	}
	if err != nil {
		return "", false, err
	}
	var resource string
	for _, r := range list.APIResources {
		if r.Kind == kind && !strings.Contains(r.Name, "/") {
			resource = r.Name
		}
	}
	if resource == "" {
		return "", true, nil
	}
	for _, r := range list.APIResources {
		if r.Name == resource+"/scale" {
			return resource, true, nil
		}
	}
	return resource, false, nil
}
