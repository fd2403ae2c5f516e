// Package plan is what a karmada-local fleet is: its Config (the flags of
// `karmada-local up`) and their validation, the port layout, the Fleet of
// Clusters with their certificates and kubeconfigs (Prepare), and the steps
// that run it (Steps): each binary's flags (flags.go), the HA layout
// (ha.go), the aggregated API server, search, estimators and descheduler,
// pull-mode agents, etcd isolation, and the tasks that are not processes
// (setup.go: CRDs, kwok nodes, joins). The localup package runs the plan
// with the process room.
package plan

import (
	"crypto/tls"
	"crypto/x509"
	"fmt"
	"net"
	"path/filepath"

	"k8s.io/client-go/tools/clientcmd"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"

	"github.com/karmada-go/karmada/internal/atomicfile"
	"github.com/karmada-go/karmada/internal/localup/kwok"
	"github.com/karmada-go/karmada/internal/localup/pki"
	"github.com/karmada-go/karmada/internal/localup/process"
	"github.com/karmada-go/karmada/internal/webhook"
)

// Cluster is one Kubernetes control plane of the fleet: the Karmada control
// plane or a member.
type Cluster struct {
	// host is the address its API server listens at.
	host    string
	Name    string
	Index   int
	context string
	dir     string
	ports   [10]int
	CA      *pki.CA
	// Files, filled by prepare.
	serving, servingKey     string
	admin, adminKey         string
	saKey, saPub            string
	frontProxyCA            string
	proxyClient, proxyKey   string
	kcmConfig, schedConfig  string
	kwokConfig, adminConfig string
	// The control plane's karmada-webhook serving certificate, in dir pki.
	webhookCert, webhookKey string
	// The control plane's karmada-aggregated-apiserver serving certificate.
	aggregatedCert, aggregatedKey string
	// karmada-search's serving certificate.
	searchCert, searchKey string
	// karmada-metrics-adapter's serving certificate.
	metricsAdapterCert, metricsAdapterKey string
	// kwokCert and kwokKey: a member's kwok serves the kubelet API (logs,
	// exec) over TLS with them.
	kwokCert, kwokKey string
	// The control plane's Karmada components: the kubeconfig of each one's
	// own identity, and the serving certificate of their /metrics.
	karmadaConfigs          map[string]string
	metricsCert, metricsKey string
	// encryption is the API server's encryption configuration (Secrets
	// encrypted at rest).
	encryption string
	// authorization is the control plane API server's
	// --authorization-config (webhook.AuthorizationConfiguration).
	authorization string
	// etcdCert is the API server's etcd client certificate.
	etcdCert, etcdKey string
	// A pull-mode member's agent: its member kubeconfig (its identity
	// there), and the control plane kubeconfig register obtained.
	Pull                                  bool
	agentMemberConfig, agentKarmadaConfig string
	// A member's karmada-scheduler-estimator: its serving certificate (of
	// the estimators' CA) and its member kubeconfig (its identity there).
	estimatorCert, estimatorKey, estimatorConfig string
	// A member's metrics-server: its serving certificate and its member
	// kubeconfig (its identity there).
	metricsServerCert, metricsServerKey, metricsServerConfig string
	// A push member's custom metrics server: its serving certificate and
	// its member kubeconfig.
	customMetricsCert, customMetricsKey, customMetricsConfig string
}

// etcdAuthStep turns etcd authentication on before any API server starts.
const etcdAuthStep = "karmada/etcd-auth"

// apiURL is where clients reach the cluster's API: its kube-apiserver, or
// with --ha the control plane's load balancer.
func (c *Cluster) apiURL() string {
	return fmt.Sprintf("https://%s", net.JoinHostPort(c.host, fmt.Sprint(c.ports[slotAPIServer])))
}

// clientTLS is the admin client's TLS configuration for probes.
func (c *Cluster) clientTLS() (*tls.Config, error) {
	pair, err := tls.LoadX509KeyPair(c.admin, c.adminKey)
	if err != nil {
		return nil, fmt.Errorf("loading admin certificate of %s: %w", c.Name, err)
	}
	return &tls.Config{RootCAs: c.pool(), Certificates: []tls.Certificate{pair}, MinVersion: tls.VersionTLS12}, nil
}

func (c *Cluster) pool() *x509.CertPool {
	p := x509.NewCertPool()
	p.AddCert(c.CA.Cert)
	return p
}

// Fleet is a prepared plan: clusters with their certificates and kubeconfigs.
type Fleet struct {
	Cfg      Config
	Clusters []*Cluster
	Etcd     struct {
		CA                *pki.CA
		server, serverKey string
		// root administers etcd auth; each API server has a client
		// certificate of its own (cluster.etcdCert).
		Root, RootKey string
		// members: one, or three with --ha.
		Members []etcdMember
		// karmada-aggregated-apiserver's client certificate.
		aggregated, aggregatedKey string
		// karmada-search's client certificate.
		search, searchKey string
	}
	// estimator is the members' estimators' PKI (estimator.go).
	estimator estimatorPKI
}

func (f *Fleet) LogPath(step string) string { return process.LogPath(f.Cfg.StateDir, step) }

func (f *Fleet) PidPath(step string) string { return process.PidPath(f.Cfg.StateDir, step) }

func (f *Fleet) bin(name string) string { return filepath.Join(f.Cfg.BinDir, name) }

// RequiredBinaries are the upstream binaries every fleet needs.
var RequiredBinaries = []string{"karmada-local", "etcd", "kube-apiserver", "kube-controller-manager", "kube-scheduler", "kwok", "karmada-controller-manager", "karmada-scheduler", "karmada-webhook", "karmada-agent", "karmada-aggregated-apiserver", "karmada-search", "karmada-scheduler-estimator", "karmada-descheduler", "metrics-server", "karmada-metrics-adapter"}

// NewFleet lays out clusters and ports; it touches nothing on disk.
func NewFleet(cfg Config) *Fleet {
	f := &Fleet{Cfg: cfg}
	for i := 0; i <= cfg.Members; i++ {
		c := &Cluster{Index: i, host: cfg.Address()}
		if i == 0 {
			c.Name, c.context = ControlPlane, ControlPlaneContext
		} else {
			c.Name = MemberName(i)
			c.context = c.Name
			c.Pull = cfg.isPull(c.Name)
		}
		c.dir = filepath.Join(cfg.StateDir, c.Name)
		for s := range c.ports {
			c.ports[s] = cfg.PortBase + 10*i + s
		}
		f.Clusters = append(f.Clusters, c)
	}
	f.layoutEtcd()
	return f
}

func (f *Fleet) Cluster(name string) *Cluster {
	for _, c := range f.Clusters {
		if c.Name == name {
			return c
		}
	}
	return nil
}

// Prepare creates (or reuses) every certificate, key and component kubeconfig.
func (f *Fleet) Prepare() error {
	ca, err := pki.LoadOrCreateCAWith(filepath.Join(f.Cfg.StateDir, "etcd", "pki"), "karmada-local-etcd-ca", f.Cfg.Validity())
	if err != nil {
		return err
	}
	f.Etcd.CA = ca
	if f.Etcd.server, f.Etcd.serverKey, err = ca.Ensure(pki.CertSpec{Name: "server", CommonName: "etcd", Server: true, Client: true, IPs: pki.Loopback, DNS: []string{"localhost"}}); err != nil {
		return err
	}
	if f.Etcd.Root, f.Etcd.RootKey, err = ca.Ensure(pki.CertSpec{Name: "root-client", CommonName: EtcdRootUser, Client: true}); err != nil {
		return err
	}
	if f.Etcd.aggregated, f.Etcd.aggregatedKey, err = ca.Ensure(pki.CertSpec{Name: "karmada-aggregated-apiserver-etcd-client", CommonName: AggregatedAPIServerEtcdUser, Client: true}); err != nil {
		return err
	}
	if f.Etcd.search, f.Etcd.searchKey, err = ca.Ensure(pki.CertSpec{Name: "karmada-search-etcd-client", CommonName: SearchEtcdUser, Client: true}); err != nil {
		return err
	}
	for _, c := range f.Clusters {
		// etcd authenticates each API server by its certificate's CN and
		// lets it reach its own key prefix only.
		if c.etcdCert, c.etcdKey, err = ca.Ensure(pki.CertSpec{Name: "apiserver-etcd-client-" + c.Name, CommonName: EtcdUser(c.Name), Client: true}); err != nil {
			return err
		}
	}
	for _, c := range f.Clusters {
		if err := f.prepareCluster(c); err != nil {
			return err
		}
		if c.Pull {
			if err := f.preparePull(c); err != nil {
				return err
			}
		}
	}
	if !f.Cfg.External() {
		return f.prepareEstimators()
	}
	return nil
}

func (f *Fleet) prepareCluster(c *Cluster) error {
	pkiDir := filepath.Join(c.dir, "pki")
	ca, err := pki.LoadOrCreateCAWith(pkiDir, c.Name+"-ca", f.Cfg.Validity())
	if err != nil {
		return err
	}
	c.CA = ca
	for _, phase := range []func(*Cluster, string) error{f.prepareAPIServer, f.prepareFrontProxy, prepareIdentities, prepareKwok, prepareServing} {
		if err := phase(c, pkiDir); err != nil {
			return err
		}
	}
	if c.Index == 0 {
		return prepareControlPlane(c)
	}
	return nil
}

// prepareAPIServer: the API server's serving certificate, the
// administrator's client certificate, the service-account key and the
// encryption of Secrets; the control plane's authorization configuration.
func (f *Fleet) prepareAPIServer(c *Cluster, pkiDir string) error {
	ca := c.CA
	var err error
	ips := pki.Loopback
	if c.host != "127.0.0.1" {
		ips = append([]net.IP{net.ParseIP(c.host)}, pki.Loopback...)
	}
	if c.serving, c.servingKey, err = ca.Ensure(pki.CertSpec{Name: "apiserver", CommonName: "kube-apiserver", Server: true, IPs: ips,
		DNS: []string{"localhost", "kubernetes", "kubernetes.default", "kubernetes.default.svc"}}); err != nil {
		return err
	}
	if c.admin, c.adminKey, err = ca.Ensure(pki.CertSpec{Name: "admin", CommonName: pki.AdminUser, Organization: []string{"system:masters"}, Client: true}); err != nil {
		return err
	}
	if c.saKey, c.saPub, err = pki.EnsureServiceAccountKey(pkiDir); err != nil {
		return err
	}
	if c.encryption, err = pki.EnsureEncryptionConfig(pkiDir); err != nil {
		return err
	}
	if c.Index == 0 {
		if c.authorization, err = writeAuthorizationConfig(c); err != nil {
			return err
		}
	}
	return nil
}

// prepareFrontProxy: the aggregation layer's front proxy, with its own CA
// as kubeadm sets it up.
func (f *Fleet) prepareFrontProxy(c *Cluster, pkiDir string) error {
	fp, err := pki.LoadOrCreateCAWith(filepath.Join(pkiDir, "front-proxy"), c.Name+"-front-proxy-ca", f.Cfg.Validity())
	if err != nil {
		return err
	}
	c.frontProxyCA = filepath.Join(fp.Dir, "ca.crt")
	if c.proxyClient, c.proxyKey, err = fp.Ensure(pki.CertSpec{Name: "front-proxy-client", CommonName: "front-proxy-client", Client: true}); err != nil {
		return err
	}
	return nil
}

// prepareIdentities: the kubeconfigs of the cluster's own components and
// of its administrator.
func prepareIdentities(c *Cluster, _ string) error {
	ca := c.CA
	type identity struct {
		file, user string
		orgs       []string
		target     *string
	}
	for _, id := range []identity{
		{"controller-manager", "system:kube-controller-manager", nil, &c.kcmConfig},
		{"scheduler", "system:kube-scheduler", nil, &c.schedConfig},
		// kwok acts for every node and pod of the cluster.
		{"kwok", "kwok", []string{"system:masters"}, &c.kwokConfig},
	} {
		cert, key, err := ca.Ensure(pki.CertSpec{Name: id.file + "-client", CommonName: id.user, Organization: id.orgs, Client: true})
		if err != nil {
			return err
		}
		*id.target = filepath.Join(c.dir, id.file+".kubeconfig")
		if err := writeComponentKubeconfig(*id.target, c, id.user, cert, key); err != nil {
			return err
		}
	}
	c.adminConfig = filepath.Join(c.dir, "admin.kubeconfig")
	if err := writeComponentKubeconfig(c.adminConfig, c, "admin", c.admin, c.adminKey); err != nil {
		return err
	}
	return nil
}

// prepareKwok: a member's kwok serves the nodes' kubelet API over TLS.
func prepareKwok(c *Cluster, _ string) error {
	if c.Index == 0 {
		return nil
	}
	var err error
	if c.kwokCert, c.kwokKey, err = c.CA.Ensure(pki.CertSpec{Name: "kwok-serving", CommonName: "kwok", Server: true, IPs: pki.Loopback, DNS: []string{"localhost"}}); err != nil {
		return err
	}
	if err := prepareMetricsServer(c); err != nil {
		return err
	}
	if !c.Pull {
		if err := prepareCustomMetrics(c); err != nil {
			return err
		}
	}
	return kwok.WriteConfig(filepath.Join(c.dir, "kwok"))
}

// prepareServing: serving certificates for the controller manager and
// scheduler, so that their health endpoints can be probed with
// verification.
func prepareServing(c *Cluster, _ string) error {
	for _, name := range []string{"controller-manager-serving", "scheduler-serving"} {
		if _, _, err := c.CA.Ensure(pki.CertSpec{Name: name, CommonName: name, Server: true, IPs: pki.Loopback, DNS: []string{"localhost"}}); err != nil {
			return err
		}
	}
	return nil
}

// prepareControlPlane: the serving certificates of karmada-webhook, the
// aggregated API server, search and the components' metrics, and each
// Karmada component's own identity.
func prepareControlPlane(c *Cluster) error {
	ca := c.CA
	var err error
	// karmada-webhook's, trusted by the karmada-apiserver through the
	// caBundle of the webhook configurations and CRD conversion.
	if c.webhookCert, c.webhookKey, err = ca.Ensure(pki.CertSpec{Name: "karmada-webhook-serving", CommonName: "karmada-webhook", Server: true, IPs: pki.Loopback, DNS: []string{"localhost"}}); err != nil {
		return err
	}
	// karmada-aggregated-apiserver's: the karmada-apiserver verifies it
	// for the Service's name (the APIService's caBundle).
	if c.aggregatedCert, c.aggregatedKey, err = ca.Ensure(pki.CertSpec{Name: "karmada-aggregated-apiserver-serving", CommonName: "karmada-aggregated-apiserver", Server: true, IPs: pki.Loopback,
		DNS: []string{"localhost", "karmada-aggregated-apiserver.karmada-system.svc"}}); err != nil {
		return err
	}
	if c.searchCert, c.searchKey, err = ca.Ensure(pki.CertSpec{Name: "karmada-search-serving", CommonName: "karmada-search", Server: true, IPs: pki.Loopback,
		DNS: []string{"localhost", "karmada-search.karmada-system.svc"}}); err != nil {
		return err
	}
	if c.metricsAdapterCert, c.metricsAdapterKey, err = ca.Ensure(pki.CertSpec{Name: "karmada-metrics-adapter-serving", CommonName: "karmada-metrics-adapter", Server: true, IPs: pki.Loopback,
		DNS: []string{"localhost", "karmada-metrics-adapter.karmada-system.svc"}}); err != nil {
		return err
	}
	if c.metricsCert, c.metricsKey, err = ca.Ensure(pki.CertSpec{Name: "karmada-metrics-serving", CommonName: "karmada-metrics", Server: true, IPs: pki.Loopback, DNS: []string{"localhost"}}); err != nil {
		return err
	}
	// Each Karmada component acts as itself (user
	// system:karmada:<component>), with the rights deploy/rbac gives
	// it, not as system:masters.
	c.karmadaConfigs = map[string]string{}
	for _, name := range karmadaComponents {
		user := KarmadaUser(name)
		cert, key, err := ca.Ensure(pki.CertSpec{Name: name + "-client", CommonName: user, Client: true})
		if err != nil {
			return err
		}
		c.karmadaConfigs[name] = filepath.Join(c.dir, name+".kubeconfig")
		if err := writeComponentKubeconfig(c.karmadaConfigs[name], c, user, cert, key); err != nil {
			return err
		}
	}
	return nil
}

// karmadaComponents are the binaries with an identity of their own.
var karmadaComponents = []string{"karmada-controller-manager", "karmada-scheduler", "karmada-descheduler", "karmada-webhook", "karmada-aggregated-apiserver", "karmada-search", "karmada-metrics-adapter"}

// KarmadaUser is the control plane user a component acts as.
func KarmadaUser(component string) string { return "system:karmada:" + component }

// metricsArgs serve a component's /metrics over HTTPS with the fleet's
// certificate, authenticating clients by token or by a certificate of the
// control plane's CA.
func (c *Cluster) metricsArgs(port int) *process.Args {
	return process.NewArgs().
		Set("metrics-bind-address", fmt.Sprintf("127.0.0.1:%d", port)).
		Set("metrics-tls-cert-file", c.metricsCert).
		Set("metrics-tls-private-key-file", c.metricsKey).
		Set("client-ca-file", filepath.Join(c.CA.Dir, "ca.crt"))
}

// writeAuthorizationConfig writes the control plane API server's
// authorization configuration (the controller manager's confinement, then
// RBAC) and the kubeconfig that reaches karmada-webhook's confinement
// endpoint, verifying its serving certificate with the fleet's CA.
func writeAuthorizationConfig(c *Cluster) (string, error) {
	kubeconfig := filepath.Join(c.dir, "authorization-webhook.kubeconfig")
	cfg := clientcmdapi.NewConfig()
	cfg.Clusters["karmada-webhook"] = &clientcmdapi.Cluster{Server: c.webhookURL() + webhook.ConfinementPath, CertificateAuthorityData: c.CA.CertPEM}
	cfg.AuthInfos["karmada-apiserver"] = &clientcmdapi.AuthInfo{}
	cfg.Contexts["karmada-webhook"] = &clientcmdapi.Context{Cluster: "karmada-webhook", AuthInfo: "karmada-apiserver"}
	cfg.CurrentContext = "karmada-webhook"
	if err := clientcmd.WriteToFile(*cfg, kubeconfig); err != nil {
		return "", fmt.Errorf("writing %s: %w", kubeconfig, err)
	}
	path := filepath.Join(c.dir, "authorization-config.yaml")
	if err := atomicfile.Write(path, []byte(webhook.AuthorizationConfiguration(kubeconfig)), 0o600); err != nil {
		return "", err
	}
	return path, nil
}

// webhookURL is where the karmada-apiserver calls karmada-webhook.
func (c *Cluster) webhookURL() string {
	return fmt.Sprintf("https://127.0.0.1:%d", c.ports[slotKarmadaWebhook])
}
