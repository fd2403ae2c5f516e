package cli

import (
	"crypto/tls"
	"errors"
	"fmt"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/go-logr/logr"
	"github.com/spf13/pflag"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/apiserver/pkg/apis/apiserver"
	"k8s.io/apiserver/pkg/authentication/authenticator"
	"k8s.io/apiserver/pkg/authentication/authenticatorfactory"
	"k8s.io/apiserver/pkg/authorization/authorizer"
	"k8s.io/apiserver/pkg/authorization/authorizerfactory"
	"k8s.io/apiserver/pkg/server/dynamiccertificates"
	authenticationclient "k8s.io/client-go/kubernetes/typed/authentication/v1"
	authorizationclient "k8s.io/client-go/kubernetes/typed/authorization/v1"
	"k8s.io/client-go/rest"
	certutil "k8s.io/client-go/util/cert"
	"sigs.k8s.io/controller-runtime/pkg/healthz"
	metricsserver "sigs.k8s.io/controller-runtime/pkg/metrics/server"

	"github.com/karmada-go/karmada/internal/certexpiry"
)

// MetricsFlags are the flags of the metrics endpoint every binary serves
// (and of /debug/pprof, served there when asked). By default it is HTTPS,
// and every request is authenticated (a bearer token, through a
// TokenReview; or a client certificate signed by --client-ca-file) and
// authorized (a SubjectAccessReview of the request's verb on its path, as
// for any non-resource URL) by the API server, as Kubernetes' own
// components do: to scrape, an identity needs `get` on the nonResourceURL
// /metrics (and /debug/pprof/* for profiles).
type MetricsFlags struct {
	BindAddress  string
	Secure       bool
	CertFile     string
	KeyFile      string
	ClientCAFile string
	EnablePprof  bool
}

// AddFlags registers the flags.
func (m *MetricsFlags) AddFlags(f *pflag.FlagSet) {
	f.StringVar(&m.BindAddress, "metrics-bind-address", "127.0.0.1:8080", "address of /metrics; '0' disables it")
	f.BoolVar(&m.Secure, "metrics-secure", true, "serve /metrics (and /debug/pprof) over HTTPS, each request authenticated and authorized by the API server (TokenReview, SubjectAccessReview of get on the path); false serves plain HTTP to anyone who can connect, as Karmada does")
	f.StringVar(&m.CertFile, "metrics-tls-cert-file", "", "serving certificate of /metrics (reloaded on change); empty: a self-signed certificate made at start")
	f.StringVar(&m.KeyFile, "metrics-tls-private-key-file", "", "key of --metrics-tls-cert-file")
	f.StringVar(&m.ClientCAFile, "client-ca-file", "", "also authenticate /metrics requests by client certificates this CA signed (user: the certificate's CN, groups: its O), as the API server's --client-ca-file")
	f.BoolVar(&m.EnablePprof, "enable-pprof", false, "also serve /debug/pprof on the metrics address (behind the same authentication)")
}

// Enabled reports whether metrics are served at all.
func (m *MetricsFlags) Enabled() bool { return m.BindAddress != "" && m.BindAddress != "0" }

// Validate checks the flags, naming the bad one.
func (m *MetricsFlags) Validate() error {
	if (m.CertFile == "") != (m.KeyFile == "") {
		return errors.New("--metrics-tls-cert-file and --metrics-tls-private-key-file go together")
	}
	for _, f := range []string{m.CertFile, m.KeyFile, m.ClientCAFile} {
		if f == "" {
			continue
		}
		if _, err := os.Stat(f); err != nil {
			return fmt.Errorf("metrics TLS: %w", err)
		}
	}
	if !m.Secure && m.ClientCAFile != "" {
		return errors.New("--client-ca-file authenticates /metrics requests over HTTPS: it needs --metrics-secure")
	}
	if m.Enabled() {
		if _, _, err := net.SplitHostPort(m.BindAddress); err != nil {
			return fmt.Errorf("--metrics-bind-address=%q: %w", m.BindAddress, err)
		}
	}
	return nil
}

// ServerOptions are controller-runtime's options for the metrics server.
func (m *MetricsFlags) ServerOptions() metricsserver.Options {
	o := metricsserver.Options{BindAddress: m.BindAddress}
	if !m.Enabled() {
		o.BindAddress = "0"
		return o
	}
	o.ExtraHandlers = map[string]http.Handler{}
	if m.EnablePprof {
		o.ExtraHandlers = PprofHandlers()
	}
	if !m.Secure {
		return o
	}
	// Health over TLS too, unauthenticated as Kubernetes' components serve
	// it (they always allow these paths).
	ping := &healthz.Handler{Checks: map[string]healthz.Checker{"ping": healthz.Ping}}
	for _, p := range alwaysAllowed {
		o.ExtraHandlers[p] = http.StripPrefix(p, ping)
	}
	o.SecureServing = true
	o.FilterProvider = m.authenticated
	certexpiry.File("metrics", certexpiry.Serving, m.CertFile)
	certexpiry.File("metrics-client-ca", certexpiry.CA, m.ClientCAFile)
	o.TLSOpts = []func(*tls.Config){func(c *tls.Config) {
		c.MinVersion = tls.VersionTLS12
		// A certificate is asked for, not required: token clients send
		// none; the authenticator verifies those sent.
		c.ClientAuth = tls.RequestClientCert
	}}
	if m.CertFile != "" {
		o.CertDir, o.CertName = filepath.Dir(m.CertFile), filepath.Base(m.CertFile)
		o.KeyName = filepath.Base(m.KeyFile)
		if filepath.Dir(m.KeyFile) != o.CertDir {
			// controller-runtime takes one directory: a key elsewhere is
			// read through a path relative to it.
			if rel, err := filepath.Rel(o.CertDir, m.KeyFile); err == nil {
				o.KeyName = rel
			}
		}
	} else {
		// Not controller-runtime's default directory under /tmp: anyone
		// who can write there could choose the certificate.
		o.TLSOpts = append(o.TLSOpts, selfSigned)
	}
	return o
}

// alwaysAllowed are the paths served without authentication, as
// Kubernetes' --authorization-always-allow-paths default.
var alwaysAllowed = []string{"/healthz", "/readyz", "/livez"}

// ServerOptionsReviewedBy are ServerOptions whose requests are reviewed by
// the API server of cfg rather than the one the component works against (a
// karmada-agent has its /metrics reviewed by its member).
func (m *MetricsFlags) ServerOptionsReviewedBy(cfg *rest.Config) metricsserver.Options {
	o := m.ServerOptions()
	if o.FilterProvider != nil {
		o.FilterProvider = func(_ *rest.Config, _ *http.Client) (metricsserver.Filter, error) {
			return m.authenticated(cfg, nil)
		}
	}
	return o
}

// selfSigned serves a certificate made at start for localhost.
func selfSigned(c *tls.Config) {
	certPEM, keyPEM, err := certutil.GenerateSelfSignedCertKey("localhost", []net.IP{net.IPv4(127, 0, 0, 1), net.IPv6loopback}, []string{"localhost"})
	if err != nil {
		c.GetCertificate = func(*tls.ClientHelloInfo) (*tls.Certificate, error) { return nil, err }
		return
	}
	pair, err := tls.X509KeyPair(certPEM, keyPEM)
	c.GetCertificate = func(*tls.ClientHelloInfo) (*tls.Certificate, error) { return &pair, err }
}

// authenticated wraps the metrics handlers: each request is authenticated
// and then authorized by the API server reached by cfg (answers cached: a
// minute for tokens, 5 minutes for allowed and 30 s for denied requests).
func (m *MetricsFlags) authenticated(cfg *rest.Config, hc *http.Client) (metricsserver.Filter, error) {
	authn, authz, err := delegated(cfg, hc, m.ClientCAFile)
	if err != nil {
		return nil, err
	}
	return func(log logr.Logger, next http.Handler) (http.Handler, error) {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			if slices.Contains(alwaysAllowed, r.URL.Path) {
				next.ServeHTTP(w, r)
				return
			}
			res, ok, err := authn.AuthenticateRequest(r)
			if err != nil || !ok {
				if err != nil {
					log.V(2).Info("Metrics request not authenticated", "err", err)
				}
				http.Error(w, "Unauthorized", http.StatusUnauthorized)
				return
			}
			attrs := authorizer.AttributesRecord{User: res.User, Verb: strings.ToLower(r.Method), Path: r.URL.Path}
			decision, reason, err := authz.Authorize(r.Context(), attrs)
			if err != nil || decision != authorizer.DecisionAllow {
				log.V(2).Info("Metrics request forbidden", "user", res.User.GetName(), "path", r.URL.Path, "reason", reason, "err", err)
				http.Error(w, fmt.Sprintf("Forbidden (user=%s, verb=%s, path=%s)", res.User.GetName(), attrs.Verb, r.URL.Path), http.StatusForbidden)
				return
			}
			next.ServeHTTP(w, r)
		}), nil
	}, nil
}

// delegated builds the authenticator and authorizer that ask the API server.
func delegated(cfg *rest.Config, hc *http.Client, clientCAFile string) (authenticator.Request, authorizer.Authorizer, error) {
	if cfg == nil {
		return nil, nil, errors.New("authenticated metrics need an API server to review requests (--kubeconfig)")
	}
	if hc == nil {
		var err error
		if hc, err = rest.HTTPClientFor(cfg); err != nil {
			return nil, nil, err
		}
	}
	authnClient, err := authenticationclient.NewForConfigAndClient(cfg, hc)
	if err != nil {
		return nil, nil, err
	}
	authzClient, err := authorizationclient.NewForConfigAndClient(cfg, hc)
	if err != nil {
		return nil, nil, err
	}
	backoff := &wait.Backoff{Duration: 500 * time.Millisecond, Factor: 1.5, Jitter: 0.2, Steps: 5}
	ac := authenticatorfactory.DelegatingAuthenticatorConfig{
		Anonymous:                &apiserver.AnonymousAuthConfig{Enabled: false},
		TokenAccessReviewClient:  authnClient,
		TokenAccessReviewTimeout: 10 * time.Second,
		WebhookRetryBackoff:      backoff,
		CacheTTL:                 time.Minute,
	}
	if clientCAFile != "" {
		ca, err := dynamiccertificates.NewDynamicCAContentFromFile("client-ca", clientCAFile)
		if err != nil {
			return nil, nil, fmt.Errorf("--client-ca-file %s: %w", clientCAFile, err)
		}
		ac.ClientCertificateCAContentProvider = ca
	}
	authn, _, err := ac.New()
	if err != nil {
		return nil, nil, fmt.Errorf("authenticating metrics requests: %w", err)
	}
	authz, err := authorizerfactory.DelegatingAuthorizerConfig{
		SubjectAccessReviewClient: authzClient,
		AllowCacheTTL:             5 * time.Minute,
		DenyCacheTTL:              30 * time.Second,
		WebhookRetryBackoff:       backoff,
	}.New()
	if err != nil {
		return nil, nil, fmt.Errorf("authorizing metrics requests: %w", err)
	}
	return authn, authz, nil
}
