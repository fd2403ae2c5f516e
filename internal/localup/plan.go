package localup

import (
	"crypto/tls"
	"crypto/x509"
	"fmt"
	"net"
	"path/filepath"
	"slices"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/client-go/tools/clientcmd"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"

	"github.com/karmada-go/karmada/internal/atomicfile"
	"github.com/karmada-go/karmada/internal/clusters/memberrights"
	"github.com/karmada-go/karmada/internal/interpreter/thirdparty"
	"github.com/karmada-go/karmada/internal/localup/pki"
	"github.com/karmada-go/karmada/internal/webhook"
)

// Port layout: every cluster owns a block of ten ports starting at
// PortBase + 10*index, where index 0 is the Karmada control plane and index i
// is member i. Slots inside a block:
const (
	slotAPIServer         = 0
	slotControllerManager = 1
	slotScheduler         = 2
	slotKwok              = 3
	// The control plane runs no kube-scheduler and no kwok: karmada-webhook
	// takes their slots there.
	slotKarmadaWebhook        = slotScheduler
	slotKarmadaWebhookMetrics = slotKwok
	// Karmada components, control plane block only.
	slotKarmadaControllerManagerMetrics = 4
	slotKarmadaControllerManagerHealth  = 5
	slotKarmadaSchedulerMetrics         = 6
	slotKarmadaSchedulerHealth          = 7
	slotEtcdClient                      = 8 // control plane block only
	slotEtcdPeer                        = 9 // control plane block only
)

// ControlPlane is the name of the Karmada control plane in the plan and the
// kubeconfig context that reaches it.
const (
	ControlPlane        = "karmada"
	ControlPlaneContext = "karmada-apiserver"
)

// Config is what `karmada-local up` is asked to run.
type Config struct {
	// StateDir holds certificates, etcd data, logs and pid files.
	StateDir string
	// BinDir holds the upstream binaries built by `make build`.
	BinDir string
	// Kubeconfig is the file that receives the fleet's contexts.
	Kubeconfig string
	// Members is the number of member clusters, named member1..N.
	Members int
	// NodesPerMember is the number of kwok nodes of each member.
	NodesPerMember int
	// PortBase is the first port of the layout above.
	PortBase int
	// PropagateKinds are the kinds Karmada may write in the members
	// (karmadactl join --propagate-kinds; DefaultPropagateKinds when
	// empty); ClusterAdmin grants it every right instead.
	PropagateKinds []string
	ClusterAdmin   bool
	// PullMembers are registered in pull mode (karmadactl register) and
	// run a karmada-agent; the others are joined in push mode.
	PullMembers []string
	// Profiling serves /debug/pprof on every kube-apiserver and on etcd,
	// to clients they authenticate (an admin of the cluster; etcd's root
	// client certificate). Off by default, as the hardening guides want.
	Profiling bool
	// AdvertiseAddress is where the API servers listen and are reached
	// (127.0.0.1 when empty): another local address lets pods of a host
	// cluster (karmada-local host) reach the members.
	AdvertiseAddress string
	// ExternalKarmada, when set, is the kubeconfig of a Karmada control
	// plane running elsewhere (installed on a host cluster, say), in
	// context ExternalKarmadaContext: the fleet starts no control plane of
	// its own and joins (or registers) its members there.
	ExternalKarmada        string
	ExternalKarmadaContext string
	// HA runs the control plane highly available (ha.go): three etcd
	// members, two karmada-apiservers and two karmada-webhooks behind
	// haproxy, two leader-elected replicas of every controller.
	HA bool
	// CertValidity and CAValidity are the lifetimes of the certificates
	// and CAs karmada-local makes (zero: DefaultCertValidity and
	// DefaultCAValidity). A certificate issued for another lifetime is
	// issued again by the next up; a CA is kept (replacing it would
	// invalidate every kubeconfig).
	CertValidity, CAValidity time.Duration
	// ClusterFailureThreshold and ClusterSuccessThreshold are how long a
	// member must keep failing (passing) its health probe before its
	// Cluster turns NotReady (Ready again): the controller manager's and the
	// agents' flags of those names (zero: theirs, 30 s).
	ClusterFailureThreshold, ClusterSuccessThreshold time.Duration
	// NodeCapacity gives a member's kwok nodes another capacity than the
	// default 8 cpu, 32Gi, 110 pods (--node-capacity); resources not named
	// keep the default.
	NodeCapacity map[string]corev1.ResourceList
	// DeschedulingInterval and UnschedulableThreshold are
	// karmada-descheduler's flags of those names (zero: its defaults, 2m
	// and 5m).
	DeschedulingInterval, UnschedulableThreshold time.Duration
	// renew issues every leaf certificate again (certs renew).
	renew bool
}

// thresholdArgs are the health thresholds' flags, when set.
func (c Config) thresholdArgs() []string {
	var args []string
	if c.ClusterFailureThreshold > 0 {
		args = append(args, "--cluster-failure-threshold="+c.ClusterFailureThreshold.String())
	}
	if c.ClusterSuccessThreshold > 0 {
		args = append(args, "--cluster-success-threshold="+c.ClusterSuccessThreshold.String())
	}
	return args
}

// validity is how the fleet's CAs issue certificates.
func (c Config) validity() pki.Validity {
	return pki.Validity{CA: c.CAValidity, Leaf: c.CertValidity, Renew: c.renew}
}

func (c Config) caValidityOrDefault() time.Duration { return c.validity().CALifetime() }

// address is where the fleet's API servers listen.
func (c Config) address() string {
	if c.AdvertiseAddress == "" {
		return "127.0.0.1"
	}
	return c.AdvertiseAddress
}

// external says whether the control plane runs elsewhere.
func (c Config) external() bool { return c.ExternalKarmada != "" }

// DefaultPropagateKinds are what the fleet's members let Karmada write:
// karmadactl join's default, the kinds of the customizations we ship
// (CloneSets, FlinkDeployments, ...), and the example.com group of the e2e
// tests' sample CRD.
var DefaultPropagateKinds = append(append(slices.Clone(memberrights.DefaultKinds), thirdparty.Resources...), "*.example.com")

// Validate rejects configurations that cannot work, naming the flag.
func (c Config) Validate() error {
	switch {
	case c.Members < 0 || c.Members > 50:
		return fmt.Errorf("--members=%d: must be between 0 and 50", c.Members)
	case c.NodesPerMember < 1 || c.NodesPerMember > 500:
		return fmt.Errorf("--nodes-per-member=%d: must be between 1 and 500", c.NodesPerMember)
	case c.PortBase < 1024 || c.lastPort() > 65535:
		return fmt.Errorf("--port-base=%d: the fleet needs ports %d to %d, which must lie between 1024 and 65535", c.PortBase, c.PortBase, c.lastPort())
	case c.DeschedulingInterval < 0 || c.UnschedulableThreshold < 0:
		return fmt.Errorf("--descheduling-interval=%s and --unschedulable-threshold=%s must not be negative", c.DeschedulingInterval, c.UnschedulableThreshold)
	case c.ClusterFailureThreshold < 0 || c.ClusterSuccessThreshold < 0:
		return fmt.Errorf("--cluster-failure-threshold=%s and --cluster-success-threshold=%s must not be negative", c.ClusterFailureThreshold, c.ClusterSuccessThreshold)
	case c.StateDir == "":
		return fmt.Errorf("--state-dir must not be empty")
	case c.Kubeconfig == "":
		return fmt.Errorf("--kubeconfig must not be empty")
	case c.ClusterAdmin && len(c.PropagateKinds) > 0:
		return fmt.Errorf("--propagate-kinds and --cluster-admin: choose one (--cluster-admin grants every kind)")
	case c.CertValidity != 0 && c.CertValidity < time.Hour:
		return fmt.Errorf("--cert-validity-period=%s: must be at least 1h", c.CertValidity)
	case c.CAValidity != 0 && c.CAValidity < time.Hour:
		return fmt.Errorf("--ca-validity-period=%s: must be at least 1h", c.CAValidity)
	case c.CertValidity != 0 && c.CertValidity > c.caValidityOrDefault():
		return fmt.Errorf("--cert-validity-period=%s: must not exceed the CAs' lifetime (--ca-validity-period=%s): a certificate cannot outlive its CA", c.CertValidity, c.caValidityOrDefault())
	case c.HA && c.ExternalKarmada != "":
		return fmt.Errorf("--ha with --karmada-kubeconfig: the control plane runs elsewhere, so there is none here to make highly available")
	case c.ExternalKarmada != "" && c.Members == 0:
		return fmt.Errorf("--karmada-kubeconfig with --members=0: a fleet joined to another control plane needs members")
	}
	if c.AdvertiseAddress != "" {
		ip := net.ParseIP(c.AdvertiseAddress)
		if ip == nil || ip.To4() == nil || ip.IsUnspecified() {
			return fmt.Errorf("--advertise-address=%q: must be an IPv4 address of this machine, e.g. 127.0.0.1 or the host cluster's node address", c.AdvertiseAddress)
		}
		l, err := net.Listen("tcp", net.JoinHostPort(c.AdvertiseAddress, "0"))
		if err != nil {
			return fmt.Errorf("--advertise-address=%s: not an address of this machine (%v); karmada-local host up gives the host cluster's node one", c.AdvertiseAddress, err)
		}
		_ = l.Close()
	}
	for m, rl := range c.NodeCapacity {
		if !slices.Contains(memberNames(c.Members), m) {
			return fmt.Errorf("--node-capacity: %q is not a member of the fleet (member1..member%d)", m, c.Members)
		}
		for name, q := range rl {
			if q.Sign() <= 0 {
				return fmt.Errorf("--node-capacity %s: %s=%s must be positive", m, name, q.String())
			}
		}
	}
	for _, m := range c.PullMembers {
		if !slices.Contains(memberNames(c.Members), m) {
			return fmt.Errorf("--pull-members: %q is not a member of the fleet (member1..member%d)", m, c.Members)
		}
	}
	if !c.ClusterAdmin && len(c.PropagateKinds) > 0 {
		if _, err := memberrights.ParseKinds(c.PropagateKinds); err != nil {
			return err
		}
	}
	return nil
}

// MemberName is the name of member i (1-based).
func MemberName(i int) string { return fmt.Sprintf("member%d", i) }

func memberNames(n int) []string {
	out := make([]string, n)
	for i := range out {
		out[i] = MemberName(i + 1)
	}
	return out
}

// cluster is one Kubernetes control plane of the fleet: the Karmada control
// plane or a member.
type cluster struct {
	// host is the address its API server listens at.
	host    string
	name    string
	index   int
	context string
	dir     string
	ports   [10]int
	ca      *pki.CA
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
	pull                                  bool
	agentMemberConfig, agentKarmadaConfig string
	// A member's karmada-scheduler-estimator: its serving certificate (of
	// the estimators' CA) and its member kubeconfig (its identity there).
	estimatorCert, estimatorKey, estimatorConfig string
}

// etcdAuthStep turns etcd authentication on before any API server starts.
const etcdAuthStep = "karmada/etcd-auth"

// apiURL is where clients reach the cluster's API: its kube-apiserver, or
// with --ha the control plane's load balancer.
func (c *cluster) apiURL() string {
	return fmt.Sprintf("https://%s", net.JoinHostPort(c.host, fmt.Sprint(c.ports[slotAPIServer])))
}

// clientTLS is the admin client's TLS configuration for probes.
func (c *cluster) clientTLS() (*tls.Config, error) {
	pair, err := tls.LoadX509KeyPair(c.admin, c.adminKey)
	if err != nil {
		return nil, fmt.Errorf("loading admin certificate of %s: %w", c.name, err)
	}
	return &tls.Config{RootCAs: c.pool(), Certificates: []tls.Certificate{pair}, MinVersion: tls.VersionTLS12}, nil
}

func (c *cluster) pool() *x509.CertPool {
	p := x509.NewCertPool()
	p.AddCert(c.ca.Cert)
	return p
}

// fleet is a prepared plan: clusters with their certificates and kubeconfigs.
type fleet struct {
	cfg      Config
	clusters []*cluster
	etcd     struct {
		ca                *pki.CA
		server, serverKey string
		// root administers etcd auth; each API server has a client
		// certificate of its own (cluster.etcdCert).
		root, rootKey string
		// members: one, or three with --ha.
		members []etcdMember
		// karmada-aggregated-apiserver's client certificate.
		aggregated, aggregatedKey string
		// karmada-search's client certificate.
		search, searchKey string
	}
	// estimator is the members' estimators' PKI (estimator.go).
	estimator estimatorPKI
}

func (f *fleet) logPath(step string) string {
	return filepath.Join(f.cfg.StateDir, "logs", filepath.FromSlash(step)+".log")
}

func (f *fleet) pidPath(step string) string {
	return filepath.Join(f.cfg.StateDir, "run", filepath.FromSlash(step)+".pid")
}

func (f *fleet) bin(name string) string { return filepath.Join(f.cfg.BinDir, name) }

// requiredBinaries are the upstream binaries every fleet needs.
var requiredBinaries = []string{"etcd", "kube-apiserver", "kube-controller-manager", "kube-scheduler", "kwok", "karmada-controller-manager", "karmada-scheduler", "karmada-webhook", "karmada-agent", "karmada-aggregated-apiserver", "karmada-search", "karmada-scheduler-estimator", "karmada-descheduler"}

// newFleet lays out clusters and ports; it touches nothing on disk.
func newFleet(cfg Config) *fleet {
	f := &fleet{cfg: cfg}
	for i := 0; i <= cfg.Members; i++ {
		c := &cluster{index: i, host: cfg.address()}
		if i == 0 {
			c.name, c.context = ControlPlane, ControlPlaneContext
		} else {
			c.name = MemberName(i)
			c.context = c.name
			c.pull = cfg.isPull(c.name)
		}
		c.dir = filepath.Join(cfg.StateDir, c.name)
		for s := range c.ports {
			c.ports[s] = cfg.PortBase + 10*i + s
		}
		f.clusters = append(f.clusters, c)
	}
	f.layoutEtcd()
	return f
}

func (f *fleet) cluster(name string) *cluster {
	for _, c := range f.clusters {
		if c.name == name {
			return c
		}
	}
	return nil
}

var loopback = []net.IP{net.ParseIP("127.0.0.1")}

// prepare creates (or reuses) every certificate, key and component kubeconfig.
func (f *fleet) prepare() error {
	ca, err := pki.LoadOrCreateCAWith(filepath.Join(f.cfg.StateDir, "etcd", "pki"), "karmada-local-etcd-ca", f.cfg.validity())
	if err != nil {
		return err
	}
	f.etcd.ca = ca
	if f.etcd.server, f.etcd.serverKey, err = ca.Ensure(pki.CertSpec{Name: "server", CommonName: "etcd", Server: true, Client: true, IPs: loopback, DNS: []string{"localhost"}}); err != nil {
		return err
	}
	if f.etcd.root, f.etcd.rootKey, err = ca.Ensure(pki.CertSpec{Name: "root-client", CommonName: EtcdRootUser, Client: true}); err != nil {
		return err
	}
	if f.etcd.aggregated, f.etcd.aggregatedKey, err = ca.Ensure(pki.CertSpec{Name: "karmada-aggregated-apiserver-etcd-client", CommonName: AggregatedAPIServerEtcdUser, Client: true}); err != nil {
		return err
	}
	if f.etcd.search, f.etcd.searchKey, err = ca.Ensure(pki.CertSpec{Name: "karmada-search-etcd-client", CommonName: SearchEtcdUser, Client: true}); err != nil {
		return err
	}
	for _, c := range f.clusters {
		// etcd authenticates each API server by its certificate's CN and
		// lets it reach its own key prefix only.
		if c.etcdCert, c.etcdKey, err = ca.Ensure(pki.CertSpec{Name: "apiserver-etcd-client-" + c.name, CommonName: EtcdUser(c.name), Client: true}); err != nil {
			return err
		}
	}
	for _, c := range f.clusters {
		if err := f.prepareCluster(c); err != nil {
			return err
		}
		if c.pull {
			if err := f.preparePull(c); err != nil {
				return err
			}
		}
	}
	if !f.cfg.external() {
		return f.prepareEstimators()
	}
	return nil
}

func (f *fleet) prepareCluster(c *cluster) error {
	pkiDir := filepath.Join(c.dir, "pki")
	ca, err := pki.LoadOrCreateCAWith(pkiDir, c.name+"-ca", f.cfg.validity())
	if err != nil {
		return err
	}
	c.ca = ca
	ips := loopback
	if c.host != "127.0.0.1" {
		ips = append([]net.IP{net.ParseIP(c.host)}, loopback...)
	}
	if c.serving, c.servingKey, err = ca.Ensure(pki.CertSpec{Name: "apiserver", CommonName: "kube-apiserver", Server: true, IPs: ips,
		DNS: []string{"localhost", "kubernetes", "kubernetes.default", "kubernetes.default.svc"}}); err != nil {
		return err
	}
	if c.admin, c.adminKey, err = ca.Ensure(pki.CertSpec{Name: "admin", CommonName: AdminUser, Organization: []string{"system:masters"}, Client: true}); err != nil {
		return err
	}
	if c.saKey, c.saPub, err = pki.EnsureServiceAccountKey(pkiDir); err != nil {
		return err
	}
	if c.encryption, err = pki.EnsureEncryptionConfig(pkiDir); err != nil {
		return err
	}
	if c.index == 0 {
		if c.authorization, err = writeAuthorizationConfig(c); err != nil {
			return err
		}
	}
	// The aggregation layer's front proxy: its own CA, as kubeadm sets it up.
	fp, err := pki.LoadOrCreateCAWith(filepath.Join(pkiDir, "front-proxy"), c.name+"-front-proxy-ca", f.cfg.validity())
	if err != nil {
		return err
	}
	c.frontProxyCA = filepath.Join(fp.Dir, "ca.crt")
	if c.proxyClient, c.proxyKey, err = fp.Ensure(pki.CertSpec{Name: "front-proxy-client", CommonName: "front-proxy-client", Client: true}); err != nil {
		return err
	}
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
	if c.index > 0 {
		if c.kwokCert, c.kwokKey, err = ca.Ensure(pki.CertSpec{Name: "kwok-serving", CommonName: "kwok", Server: true, IPs: loopback, DNS: []string{"localhost"}}); err != nil {
			return err
		}
		if err := writeKwokConfig(filepath.Join(c.dir, "kwok")); err != nil {
			return err
		}
	}
	// Serving certificates for the controller manager and scheduler, so that
	// their health endpoints can be probed with verification.
	for _, name := range []string{"controller-manager-serving", "scheduler-serving"} {
		if _, _, err := ca.Ensure(pki.CertSpec{Name: name, CommonName: name, Server: true, IPs: loopback, DNS: []string{"localhost"}}); err != nil {
			return err
		}
	}
	if c.index == 0 {
		// karmada-webhook's, trusted by the karmada-apiserver through the
		// caBundle of the webhook configurations and CRD conversion.
		if c.webhookCert, c.webhookKey, err = ca.Ensure(pki.CertSpec{Name: "karmada-webhook-serving", CommonName: "karmada-webhook", Server: true, IPs: loopback, DNS: []string{"localhost"}}); err != nil {
			return err
		}
		// karmada-aggregated-apiserver's: the karmada-apiserver verifies it
		// for the Service's name (the APIService's caBundle).
		if c.aggregatedCert, c.aggregatedKey, err = ca.Ensure(pki.CertSpec{Name: "karmada-aggregated-apiserver-serving", CommonName: "karmada-aggregated-apiserver", Server: true, IPs: loopback,
			DNS: []string{"localhost", "karmada-aggregated-apiserver.karmada-system.svc"}}); err != nil {
			return err
		}
		if c.searchCert, c.searchKey, err = ca.Ensure(pki.CertSpec{Name: "karmada-search-serving", CommonName: "karmada-search", Server: true, IPs: loopback,
			DNS: []string{"localhost", "karmada-search.karmada-system.svc"}}); err != nil {
			return err
		}
		if c.metricsCert, c.metricsKey, err = ca.Ensure(pki.CertSpec{Name: "karmada-metrics-serving", CommonName: "karmada-metrics", Server: true, IPs: loopback, DNS: []string{"localhost"}}); err != nil {
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
	}
	return nil
}

// karmadaComponents are the binaries with an identity of their own.
var karmadaComponents = []string{"karmada-controller-manager", "karmada-scheduler", "karmada-descheduler", "karmada-webhook", "karmada-aggregated-apiserver", "karmada-search"}

// KarmadaUser is the control plane user a component acts as.
func KarmadaUser(component string) string { return "system:karmada:" + component }

// metricsArgs serve a component's /metrics over HTTPS with the fleet's
// certificate, authenticating clients by token or by a certificate of the
// control plane's CA.
func (c *cluster) metricsArgs(port int) []string {
	return []string{
		fmt.Sprintf("--metrics-bind-address=127.0.0.1:%d", port),
		"--metrics-tls-cert-file=" + c.metricsCert,
		"--metrics-tls-private-key-file=" + c.metricsKey,
		"--client-ca-file=" + filepath.Join(c.ca.Dir, "ca.crt"),
	}
}

// writeAuthorizationConfig writes the control plane API server's
// authorization configuration (the controller manager's confinement, then
// RBAC) and the kubeconfig that reaches karmada-webhook's confinement
// endpoint, verifying its serving certificate with the fleet's CA.
func writeAuthorizationConfig(c *cluster) (string, error) {
	kubeconfig := filepath.Join(c.dir, "authorization-webhook.kubeconfig")
	cfg := clientcmdapi.NewConfig()
	cfg.Clusters["karmada-webhook"] = &clientcmdapi.Cluster{Server: c.webhookURL() + webhook.ConfinementPath, CertificateAuthorityData: c.ca.CertPEM}
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
func (c *cluster) webhookURL() string {
	return fmt.Sprintf("https://127.0.0.1:%d", c.ports[slotKarmadaWebhook])
}

// steps builds the plan. Each process or task of the fleet is one entry here.
func (f *fleet) steps() ([]*Step, error) {
	etcdTLS := &tls.Config{MinVersion: tls.VersionTLS12}
	{
		pair, err := tls.LoadX509KeyPair(f.etcd.root, f.etcd.rootKey)
		if err != nil {
			return nil, fmt.Errorf("loading etcd client certificate: %w", err)
		}
		pool := x509.NewCertPool()
		pool.AddCert(f.etcd.ca.Cert)
		etcdTLS.RootCAs, etcdTLS.Certificates = pool, []tls.Certificate{pair}
	}
	var steps []*Step
	for _, m := range f.etcd.members {
		steps = append(steps, &Step{
			Name:    m.step,
			Cluster: ControlPlane,
			Binary:  f.bin("etcd"),
			Args:    f.etcdArgs(m),
			Ports:   []int{m.clientPort, m.peerPort},
			// /health answers 200 once the cluster has a leader: the
			// members of a new cluster start together.
			Probe:        &Probe{URL: m.clientURL() + "/health", TLS: etcdTLS},
			ReadyTimeout: 30 * time.Second,
		})
	}
	steps = append(steps, &Step{
		Name:    etcdAuthStep,
		Cluster: ControlPlane,
		After:   f.etcdSteps(),
		Run:     f.isolateAPIServers(etcdTLS),
	})
	if f.cfg.HA {
		if err := f.writeHAProxyConfig(f.clusters[0]); err != nil {
			return nil, err
		}
	}
	for _, c := range f.clusters {
		if c.index == 0 && f.cfg.external() {
			continue
		}
		cs, err := f.clusterSteps(c)
		if err != nil {
			return nil, err
		}
		steps = append(steps, cs...)
	}
	if f.cfg.external() {
		steps = append(steps, f.clustersReadyStep())
	}
	return steps, nil
}

func (f *fleet) clusterSteps(c *cluster) ([]*Step, error) {
	clientTLS, err := c.clientTLS()
	if err != nil {
		return nil, err
	}
	servingTLS := &tls.Config{RootCAs: c.pool(), MinVersion: tls.VersionTLS12}
	prefix := func(s string) string { return c.name + "/" + s }

	var steps, apiservers []*Step
	for _, r := range f.apiserverReplicas(c) {
		apiservers = append(apiservers, &Step{
			Name:         prefix("kube-apiserver" + r.suffix),
			Cluster:      c.name,
			After:        append(f.etcdSteps(), etcdAuthStep),
			Binary:       f.bin("kube-apiserver"),
			Args:         f.apiserverArgs(c, r.port),
			Ports:        []int{r.port},
			Probe:        &Probe{URL: fmt.Sprintf("https://%s/readyz", net.JoinHostPort(c.host, fmt.Sprint(r.port))), TLS: clientTLS},
			ReadyTimeout: 60 * time.Second,
		})
	}
	// The second karmada-apiserver starts once the first serves: two
	// starting together on a new etcd race to initialise the Service IP
	// allocator, and the loser exits ("another caller has already
	// initialized the resource").
	for i := 1; i < len(apiservers); i++ {
		apiservers[i].After = append(apiservers[i].After, apiservers[0].Name)
	}
	steps = append(steps, apiservers...)
	// api is the step after which the cluster's API URL answers.
	api := apiservers[0].Name
	if c.index == 0 && f.cfg.HA {
		var names []string
		for _, s := range apiservers {
			names = append(names, s.Name)
		}
		lb, err := f.haproxyStep(c, names)
		if err != nil {
			return nil, err
		}
		steps = append(steps, lb)
		api = lb.Name
	}

	var kcms []*Step
	for _, r := range f.kubeControllerManagerReplicas(c) {
		kcm := &Step{
			Name:         prefix("kube-controller-manager" + r.suffix),
			Cluster:      c.name,
			After:        []string{api},
			Binary:       f.bin("kube-controller-manager"),
			Args:         f.controllerManagerArgs(c, r.port),
			Ports:        []int{r.port},
			Probe:        &Probe{URL: fmt.Sprintf("https://127.0.0.1:%d/healthz", r.port), TLS: servingTLS},
			Leader:       f.leaderProbe(c, fmt.Sprintf("https://127.0.0.1:%d/metrics", r.port), "", `workqueue_adds_total{name="namespace"}`),
			ReadyTimeout: 60 * time.Second,
		}
		if c.index == 0 {
			// The control plane's starts after the CRDs are installed, so
			// that its garbage collector watches bindings from the start
			// instead of after its next discovery resync.
			kcm.After = []string{"karmada/setup"}
		}
		kcms = append(kcms, kcm)
	}
	steps = append(steps, kcms...)
	if c.index == 0 {
		return append(steps, f.karmadaSteps(c, api)...), nil
	}

	scheduler := &Step{
		Name:         prefix("kube-scheduler"),
		Cluster:      c.name,
		After:        []string{api},
		Binary:       f.bin("kube-scheduler"),
		Args:         schedulerArgs(c),
		Ports:        []int{c.ports[slotScheduler]},
		Probe:        &Probe{URL: fmt.Sprintf("https://127.0.0.1:%d/healthz", c.ports[slotScheduler]), TLS: servingTLS},
		ReadyTimeout: 60 * time.Second,
	}
	kwok := &Step{
		Name:    prefix("kwok"),
		Cluster: c.name,
		After:   []string{api},
		Binary:  f.bin("kwok"),
		Args:    kwokArgs(c),
		// kwok loads <workdir>/kwok.yaml when present; keep a user's
		// ~/.kwok out of the fleet.
		Env: []string{"KWOK_WORKDIR=" + filepath.Join(c.dir, "kwok")},
		// Its kubelet API's certificate is read once.
		RestartToRenew: true,
		Ports:          []int{c.ports[slotKwok]},
		Probe:          &Probe{URL: fmt.Sprintf("https://127.0.0.1:%d/healthz", c.ports[slotKwok]), TLS: servingTLS},
		ReadyTimeout:   60 * time.Second,
	}
	nodes := &Step{
		Name:    prefix("nodes"),
		Cluster: c.name,
		After:   []string{api, kcms[0].Name, scheduler.Name, kwok.Name},
		Run:     f.setupMember(c),
	}
	steps = append(steps, scheduler, kwok, nodes)
	if !f.cfg.external() {
		steps = append(steps, f.estimatorSteps(c, nodes.Name)...)
	}
	if c.pull {
		return append(steps, f.pullSteps(c, nodes.Name)...), nil
	}
	join := &Step{
		Name:    prefix("join"),
		Cluster: c.name,
		After:   []string{nodes.Name, "karmada/setup", clusterAPIStep},
		Run:     f.joinMember(c),
	}
	return append(steps, join), nil
}

// leaderProbe asks a leader-elected process of the cluster, with the
// cluster's administrator certificate, whether it leads; nil without --ha,
// where each runs alone without an election.
func (f *fleet) leaderProbe(c *cluster, metricsURL, lease, marker string) *LeaderProbe {
	if !f.cfg.HA || c.index != 0 {
		return nil
	}
	tlsCfg, err := c.clientTLS()
	if err != nil {
		return nil
	}
	return &LeaderProbe{URL: metricsURL, TLS: tlsCfg, Lease: lease, Marker: marker}
}

// karmadaComponent is one replica of our control plane controllers, acting
// as itself, with its (authenticated) metrics and health endpoints; leader-
// elected with --ha, alone without.
func (f *fleet) karmadaComponent(c *cluster, name string, r replica, after ...string) *Step {
	return &Step{
		Name:    "karmada/" + name + r.suffix,
		Cluster: c.name,
		After:   after,
		Binary:  f.bin(name),
		Args: append([]string{
			"--kubeconfig=" + c.karmadaConfigs[name],
			fmt.Sprintf("--leader-elect=%t", f.cfg.HA),
			fmt.Sprintf("--health-probe-bind-address=127.0.0.1:%d", r.health),
			// Behind the metrics authentication.
			"--enable-pprof",
			"--v=2",
		}, c.metricsArgs(r.metrics)...),
		Ports:        []int{r.metrics, r.health},
		Probe:        &Probe{URL: fmt.Sprintf("http://127.0.0.1:%d/healthz", r.health)},
		Leader:       f.leaderProbe(c, fmt.Sprintf("https://127.0.0.1:%d/metrics", r.metrics), name, ""),
		ReadyTimeout: 30 * time.Second,
	}
}

// controllerManagerMemoryLimit is the fleet's karmada-controller-manager
// --memory-limit.
const controllerManagerMemoryLimit = "512Mi"

// karmadaSteps are the control plane's own: setup, the Karmada components,
// and the wait for every member to be joined and Ready.
func (f *fleet) karmadaSteps(c *cluster, api string) []*Step {
	// The webhook needs no API server; the setup that registers it, and
	// so everything after, waits for it: with failurePolicy Fail, no
	// Karmada object is written unadmitted.
	var steps []*Step
	setup := &Step{
		Name:    "karmada/setup",
		Cluster: c.name,
		After:   []string{api},
		Run:     f.setupControlPlane(c),
	}
	for _, r := range f.webhookReplicas(c) {
		webhook := &Step{
			Name:    "karmada/karmada-webhook" + r.suffix,
			Cluster: c.name,
			Binary:  f.bin("karmada-webhook"),
			Args: append([]string{
				"--bind-address=127.0.0.1",
				fmt.Sprintf("--secure-port=%d", r.port),
				"--cert-dir=" + filepath.Dir(c.webhookCert),
				"--tls-cert-file-name=" + filepath.Base(c.webhookCert),
				"--tls-private-key-file-name=" + filepath.Base(c.webhookKey),
				// Only to review requests to its /metrics.
				"--kubeconfig=" + c.karmadaConfigs["karmada-webhook"],
				// /healthz and /readyz are on the webhook port, over TLS.
				"--health-probe-bind-address=0",
				// For the default ClusterTaintPolicy (NoExecute).
				"--allow-no-execute-taint-policy",
				// FederatedResourceQuotas' overall limits are enforced.
				"--feature-gates=FederatedQuotaEnforcement=true",
				"--enable-pprof",
				"--v=2",
			}, c.metricsArgs(r.metrics)...),
			Ports:        []int{r.port, r.metrics},
			Probe:        &Probe{URL: fmt.Sprintf("https://127.0.0.1:%d/readyz", r.port), TLS: &tls.Config{RootCAs: c.pool(), MinVersion: tls.VersionTLS12}},
			ReadyTimeout: 30 * time.Second,
		}
		steps = append(steps, webhook)
		setup.After = append(setup.After, webhook.Name)
	}
	steps = append(steps, setup)
	// The Cluster API, before anything that reads or writes Clusters.
	steps = append(steps, f.aggregatedSteps(c, setup.Name)...)
	// karmada-search reads Clusters.
	steps = append(steps, f.searchSteps(c, setup.Name, clusterAPIStep)...)
	var kcm []string
	for _, r := range f.controllerReplicas(c, "karmada-controller-manager") {
		s := f.karmadaComponent(c, "karmada-controller-manager", r, setup.Name, clusterAPIStep)
		// Failover on: the default ClusterTaintPolicy taints a failed cluster
		// NoExecute, and the taint manager evicts what does not tolerate it
		// (policies tolerate it 300 s by default).
		// FederatedResourceQuotas' overall usage counted from the bindings,
		// as karmada-webhook enforces it.
		s.Args = append(s.Args, "--feature-gates=Failover=true,FederatedQuotaEnforcement=true", "--enable-no-execute-taint-eviction")
		// Room for K = 10,000 templates over 3 members (a live heap of about
		// 300 MB) on a machine the members share (docs/performance.md).
		s.Args = append(s.Args, "--memory-limit="+controllerManagerMemoryLimit)
		s.Args = append(s.Args, f.cfg.thresholdArgs()...)
		steps = append(steps, s)
		kcm = append(kcm, s.Name)
	}
	for _, r := range f.controllerReplicas(c, "karmada-scheduler") {
		s := f.karmadaComponent(c, "karmada-scheduler", r, setup.Name, clusterAPIStep)
		// Node-level fit from every member's estimator; it starts after
		// them so that its first placements have their answers.
		s.Args = append(s.Args, f.schedulerEstimatorArgs()...)
		for _, m := range f.clusters[1:] {
			s.After = append(s.After, estimatorStep(m.name))
		}
		steps = append(steps, s)
	}
	steps = append(steps, f.deschedulerStep(c, setup.Name, clusterAPIStep))
	ready := f.clustersReadyStep()
	ready.After = append(ready.After, kcm...)
	return append(steps, ready)
}

// clustersReadyStep waits, after every join and agent, until every member's
// Cluster is Ready.
func (f *fleet) clustersReadyStep() *Step {
	ready := &Step{
		Name:    "karmada/clusters-ready",
		Cluster: ControlPlane,
		Run:     f.waitClustersReady(f.clusters[0]),
	}
	for _, m := range f.clusters[1:] {
		if m.pull {
			ready.After = append(ready.After, agentStep(m.name))
		} else {
			ready.After = append(ready.After, m.name+"/join")
		}
	}
	return ready
}
