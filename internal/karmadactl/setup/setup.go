// Package setup is `karmadactl setup`: it installs, or upgrades in place,
// what the Karmada control plane needs inside its API server
// (internal/controlplane). The Helm chart's post-install and post-upgrade
// Job runs it, which is how the chart's CRDs are upgraded (Helm never
// upgrades the CRDs of a chart's crds/ directory).
package setup

import (
	"context"
	"fmt"
	"net/url"
	"os"
	"strconv"
	"time"

	"github.com/spf13/cobra"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/discovery"
	"k8s.io/client-go/rest"
	"k8s.io/klog/v2"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/karmada-go/karmada/internal/controlplane"
	"github.com/karmada-go/karmada/internal/karmadactl/options"
	"github.com/karmada-go/karmada/internal/scheme"
)

// Options are the command's flags.
type Options struct {
	// Server, CACertFile and CAKeyFile make an ephemeral administrator
	// credential instead of using --kubeconfig.
	Server, CACertFile, CAKeyFile string
	WebhookURL, WebhookCAFile     string
	// AggregatedURL and AggregatedCAFile: where the karmada-apiserver
	// reaches karmada-aggregated-apiserver, which then serves Clusters.
	AggregatedURL, AggregatedCAFile string
	// SearchURL: where the karmada-apiserver reaches karmada-search, whose
	// APIService is then registered (trusted with the control plane's CA).
	SearchURL string
	// MetricsAdapterURL: where the karmada-apiserver reaches
	// karmada-metrics-adapter, whose APIService v1beta1.metrics.k8s.io is
	// then registered (trusted with the control plane's CA).
	MetricsAdapterURL string
	APIServerURL      string
	Admins            []string
	Timeout           time.Duration
}

// Validate checks the flags before anything is touched.
func (o *Options) Validate() error {
	if o.WebhookURL == "" {
		return fmt.Errorf("--webhook-url is required: where the karmada-apiserver calls karmada-webhook, e.g. https://karmada-webhook.karmada-system.svc:443")
	}
	if u, err := url.Parse(o.WebhookURL); err != nil || u.Scheme != "https" || u.Host == "" {
		return fmt.Errorf("--webhook-url=%q: must be an https URL with a host, e.g. https://karmada-webhook.karmada-system.svc:443", o.WebhookURL)
	}
	if (o.CACertFile == "") != (o.CAKeyFile == "") {
		return fmt.Errorf("--ca-cert-file and --ca-key-file go together: both or neither")
	}
	if o.CAKeyFile != "" && o.Server == "" {
		return fmt.Errorf("--karmada-server is required with --ca-key-file: the karmada-apiserver's URL")
	}
	if o.AggregatedURL != "" {
		if _, err := aggregatedAPIServer(o.AggregatedURL); err != nil {
			return err
		}
	} else if o.AggregatedCAFile != "" {
		return fmt.Errorf("--aggregated-apiserver-ca-file goes with --aggregated-apiserver-url")
	}
	if o.SearchURL != "" {
		if _, err := serviceURL("--search-url", o.SearchURL); err != nil {
			return err
		}
	}
	if o.MetricsAdapterURL != "" {
		if _, err := serviceURL("--metrics-adapter-url", o.MetricsAdapterURL); err != nil {
			return err
		}
	}
	if o.Timeout <= 0 {
		return fmt.Errorf("--timeout=%s: must be positive", o.Timeout)
	}
	return nil
}

// NewCommand returns `karmadactl setup`.
func NewCommand(g *options.Global) *cobra.Command {
	o := Options{}
	cmd := &cobra.Command{
		Use:   "setup",
		Short: "Install or upgrade what the control plane needs in the karmada-apiserver (CRDs, webhooks, RBAC)",
		Long: `Install, or upgrade in place, what a Karmada control plane needs inside its
karmada-apiserver: the Karmada CRDs (created, or updated when they changed, and
waited for until Established), karmada-webhook's admission configurations and
the bindings' CRD conversion, each component's RBAC, API Priority and Fairness
for Karmada's components, kube-public/cluster-info (for karmadactl register),
the namespaces karmada-system and karmada-cluster, and the default
ClusterTaintPolicy. With --aggregated-apiserver-url, Clusters are served by
karmada-aggregated-apiserver rather than a CRD: the APIService
v1alpha1.cluster.karmada.io is pointed at it (an ExternalName Service in
karmada-system), once it has copied the Clusters an earlier CRD served, and
setup waits until the karmada-apiserver serves Clusters through it. Every
step is idempotent; failures (the API server or the
webhook not up yet) are retried until --timeout.

The Helm chart runs it in a Job after every install and upgrade, with
--karmada-server and the control plane's CA: it then acts with a one-hour
administrator certificate it signs in memory, and stores none.`,
		Example: `  # With an administrator's kubeconfig
  karmadactl setup --kubeconfig karmada.config --webhook-url https://karmada-webhook.karmada-system.svc:443

  # As the chart's Job does
  karmadactl setup --karmada-server https://karmada-apiserver.karmada-system.svc:5443 \
    --ca-cert-file /etc/karmada/pki/ca.crt --ca-key-file /etc/karmada/pki/ca.key \
    --webhook-url https://karmada-webhook.karmada-system.svc:443 --admin-user system:karmada:admin \
    --aggregated-apiserver-url https://karmada-aggregated-apiserver.karmada-system.svc.cluster.local:443`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if err := o.Validate(); err != nil {
				return err
			}
			cfg, caPEM, err := o.config(g)
			if err != nil {
				return err
			}
			webhookCA := caPEM
			if o.WebhookCAFile != "" {
				if webhookCA, err = os.ReadFile(o.WebhookCAFile); err != nil {
					return fmt.Errorf("--webhook-ca-file: %w", err)
				}
			}
			if len(webhookCA) == 0 {
				return fmt.Errorf("--webhook-ca-file is required: the kubeconfig names no CA to trust karmada-webhook with")
			}
			apiURL := o.APIServerURL
			if apiURL == "" {
				apiURL = cfg.Host
			}
			co := controlplane.Options{
				WebhookURL: o.WebhookURL, WebhookCABundle: webhookCA,
				APIServerURL: apiURL, CABundle: caPEM,
				Admins: o.Admins,
			}
			if o.AggregatedURL != "" {
				a, _ := aggregatedAPIServer(o.AggregatedURL)
				a.CABundle = caPEM
				if o.AggregatedCAFile != "" {
					if a.CABundle, err = os.ReadFile(o.AggregatedCAFile); err != nil {
						return fmt.Errorf("--aggregated-apiserver-ca-file: %w", err)
					}
				}
				if len(a.CABundle) == 0 {
					return fmt.Errorf("--aggregated-apiserver-ca-file is required: the kubeconfig names no CA to trust karmada-aggregated-apiserver with")
				}
				co.AggregatedAPIServer = a
			}
			var extra Extra
			if o.SearchURL != "" {
				extra.Search, _ = serviceURL("--search-url", o.SearchURL)
				extra.Search.CABundle = caPEM
			}
			if o.MetricsAdapterURL != "" {
				extra.MetricsAdapter, _ = serviceURL("--metrics-adapter-url", o.MetricsAdapterURL)
				extra.MetricsAdapter.CABundle = caPEM
			}
			return Run(cmd.Context(), cfg, co, extra, o.Timeout)
		},
	}
	f := cmd.Flags()
	f.StringVar(&o.Server, "karmada-server", "", "URL of the karmada-apiserver, with --ca-cert-file and --ca-key-file instead of --kubeconfig")
	f.StringVar(&o.CACertFile, "ca-cert-file", "", "the control plane's CA certificate (PEM): trusted for the karmada-apiserver, and with --ca-key-file, signs a one-hour administrator certificate held in memory")
	f.StringVar(&o.CAKeyFile, "ca-key-file", "", "the control plane's CA key (PEM)")
	f.StringVar(&o.WebhookURL, "webhook-url", "", "URL at which the karmada-apiserver calls karmada-webhook (required)")
	f.StringVar(&o.WebhookCAFile, "webhook-ca-file", "", "CA (PEM) the karmada-apiserver trusts karmada-webhook with (default: the control plane's CA)")
	f.StringVar(&o.AggregatedURL, "aggregated-apiserver-url", "", "URL at which the karmada-apiserver reaches karmada-aggregated-apiserver (host:port of an ExternalName Service); the Cluster API is then served by it instead of a CRD, Clusters an earlier CRD holds copied over")
	f.StringVar(&o.AggregatedCAFile, "aggregated-apiserver-ca-file", "", "CA (PEM) the karmada-apiserver trusts karmada-aggregated-apiserver with (default: the control plane's CA)")
	f.StringVar(&o.MetricsAdapterURL, "metrics-adapter-url", "", "URL at which the karmada-apiserver reaches karmada-metrics-adapter (host:port of an ExternalName Service); its APIServices v1beta1.metrics.k8s.io, v1beta2.custom.metrics.k8s.io and v1beta1.custom.metrics.k8s.io are registered, trusted with the control plane's CA")
	f.StringVar(&o.SearchURL, "search-url", "", "URL at which the karmada-apiserver reaches karmada-search (host:port of an ExternalName Service); its APIService v1alpha1.search.karmada.io is registered, trusted with the control plane's CA")
	f.StringVar(&o.APIServerURL, "karmada-apiserver-advertise-url", "", "URL members reach the karmada-apiserver at, published in kube-public/cluster-info for karmadactl register (default: the URL dialed)")
	f.StringSliceVar(&o.Admins, "admin-user", nil, "users bound to cluster-admin (ClusterRoleBinding karmada-admin); repeatable")
	f.DurationVar(&o.Timeout, "timeout", 5*time.Minute, "how long to wait for the karmada-apiserver and retry failures")
	return cmd
}

// config returns the control plane's configuration and the CA it is
// trusted with.
func (o *Options) config(g *options.Global) (*rest.Config, []byte, error) {
	if o.CAKeyFile != "" {
		caPEM, err := os.ReadFile(o.CACertFile)
		if err != nil {
			return nil, nil, fmt.Errorf("--ca-cert-file: %w", err)
		}
		keyPEM, err := os.ReadFile(o.CAKeyFile)
		if err != nil {
			return nil, nil, fmt.Errorf("--ca-key-file: %w", err)
		}
		// Longer than any wait, so the credential outlives the run.
		cfg, err := controlplane.EphemeralAdminConfig(o.Server, caPEM, keyPEM, o.Timeout+time.Hour)
		return cfg, caPEM, err
	}
	cfg, err := g.KarmadaConfig()
	if err != nil {
		return nil, nil, err
	}
	ca := cfg.CAData
	if len(ca) == 0 && cfg.CAFile != "" {
		if ca, err = os.ReadFile(cfg.CAFile); err != nil {
			return nil, nil, err
		}
	}
	return cfg, ca, nil
}

// Extra are the optional aggregated API servers whose APIServices setup
// registers once the control plane is installed.
type Extra struct {
	Search, MetricsAdapter *controlplane.AggregatedAPIServer
}

// Run waits until the API server answers, then installs; a failure is
// retried (every 2 s, at most every 15 s later) until timeout.
func Run(ctx context.Context, cfg *rest.Config, o controlplane.Options, extra Extra, timeout time.Duration) error {
	log := klog.FromContext(ctx)
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	dc, err := discovery.NewDiscoveryClientForConfig(cfg)
	if err != nil {
		return err
	}
	var last error
	backoff := wait.Backoff{Duration: 2 * time.Second, Factor: 1.5, Steps: 1 << 30, Cap: 15 * time.Second}
	err = wait.ExponentialBackoffWithContext(ctx, backoff, func(ctx context.Context) (bool, error) {
		if _, last = dc.ServerVersion(); last != nil {
			log.Info("Waiting for the karmada-apiserver", "server", cfg.Host, "err", last.Error())
			return false, nil
		}
		if last = controlplane.Install(ctx, cfg, o); last != nil {
			log.Info("Setup not complete yet, retrying", "err", last.Error())
			return false, nil
		}
		if a := o.AggregatedAPIServer; a != nil {
			// The server is ready once it has its rights (just applied)
			// and has copied an earlier CRD's Clusters.
			if last = switchClusterAPI(ctx, cfg, *a); last != nil {
				log.Info("Waiting for karmada-aggregated-apiserver", "err", last.Error())
				return false, nil
			}
		}
		if extra.Search != nil || extra.MetricsAdapter != nil {
			cl, err := client.New(cfg, client.Options{Scheme: scheme.Scheme})
			if err != nil {
				return false, err
			}
			if extra.Search != nil {
				if last = controlplane.EnsureSearchAPIService(ctx, cl, *extra.Search, 30*time.Second); last != nil {
					log.Info("Waiting for karmada-search", "err", last.Error())
					return false, nil
				}
			}
			if extra.MetricsAdapter != nil {
				if last = controlplane.EnsureMetricsAPIService(ctx, cl, *extra.MetricsAdapter, 30*time.Second); last != nil {
					log.Info("Waiting for karmada-metrics-adapter", "err", last.Error())
					return false, nil
				}
			}
		}
		return true, nil
	})
	if err != nil {
		if last != nil {
			return fmt.Errorf("setting up the control plane at %s: %w (after %s)", cfg.Host, last, timeout)
		}
		return err
	}
	log.Info("Control plane set up", "server", cfg.Host, "webhook", o.WebhookURL)
	return nil
}

// aggregatedAPIServer parses --aggregated-apiserver-url.
func aggregatedAPIServer(raw string) (*controlplane.AggregatedAPIServer, error) {
	return serviceURL("--aggregated-apiserver-url", raw)
}

// serviceURL parses the URL of an aggregated API server (flag names it).
func serviceURL(flag, raw string) (*controlplane.AggregatedAPIServer, error) {
	u, err := url.Parse(raw)
	if err != nil || u.Scheme != "https" || u.Hostname() == "" || (u.Path != "" && u.Path != "/") {
		return nil, fmt.Errorf("%s=%q: must be https://<host>[:<port>], e.g. https://karmada-aggregated-apiserver.karmada-system.svc.cluster.local:443", flag, raw)
	}
	port := 443
	if p := u.Port(); p != "" {
		if port, err = strconv.Atoi(p); err != nil || port < 1 || port > 65535 {
			return nil, fmt.Errorf("%s=%q: port %q is not 1-65535", flag, raw, p)
		}
	}
	return &controlplane.AggregatedAPIServer{Host: u.Hostname(), Port: int32(port)}, nil
}

// switchClusterAPI points the Cluster API at karmada-aggregated-apiserver
// and waits a moment for it to serve Clusters.
func switchClusterAPI(ctx context.Context, cfg *rest.Config, a controlplane.AggregatedAPIServer) error {
	cl, err := client.New(cfg, client.Options{Scheme: scheme.Scheme})
	if err != nil {
		return err
	}
	dc, err := discovery.NewDiscoveryClientForConfig(cfg)
	if err != nil {
		return err
	}
	return controlplane.SwitchClusterAPI(ctx, cl, dc, a, 30*time.Second)
}
