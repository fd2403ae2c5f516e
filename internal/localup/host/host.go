// Package host is karmada-local's host-cluster room (`karmada-local host
// up|down|status`): a real single-node Kubernetes cluster on this machine,
// to install the control plane into with its Helm chart as a platform team
// installs it on theirs. Its node is a real kubelet with containerd and
// runc (Debian's packages), pod networking by the CNI bridge plugin,
// Services by kube-proxy (iptables), cluster DNS by CoreDNS and volumes by
// a local-path provisioner; every image comes from `make images`, imported
// into containerd (nothing is pulled). It needs root. It runs its steps
// with the process room and issues its certificates with the pki room, as
// the fleet does.
//
// Files: host.go (configuration, layout, plan), flags.go (each process's
// flags and configuration files), setup.go (the network, image,
// in-cluster and teardown tasks), provisioner.go (volumes).
package host

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"time"

	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"

	"github.com/karmada-go/karmada/internal/localup/pki"
	"github.com/karmada-go/karmada/internal/localup/process"
)

// ContextName is the kubeconfig context of the host cluster.
const ContextName = "karmada-host"

// NodeName is the name of the host cluster's one node.
const NodeName = "karmada-host"

// The host cluster's address plan: a node address of its own on a bridge
// with no ports (reachable from pods, unlike loopback, and from nowhere
// else), and Service and pod ranges that the local fleet does not use.
const (
	hostLink          = "karmada-host0"
	hostCNIBridge     = "karmada-cni0"
	hostServiceCIDR   = "10.233.0.0/18"
	hostKubernetesSvc = "10.233.0.1"
	hostDNSService    = "10.233.0.10"
	hostPodCIDR       = "10.233.64.0/24"
	hostClusterDomain = "cluster.local"
	// DefaultNodeIP is the node's address.
	DefaultNodeIP = "172.30.255.1"
	// NodePortRange is the range of NodePorts, above the local fleet's
	// default ports (31000 and up).
	NodePortRange = "32000-32767"
	// StorageClass provisions node-local volumes (the default class).
	StorageClass = "karmada-local-path"
)

// Host ports: the API server and the kubelet on the node address, the
// rest on loopback.
const (
	hostAPIServerPort   = 6443
	hostEtcdClientPort  = 2479
	hostEtcdPeerPort    = 2480
	hostKCMPort         = 10257
	hostSchedulerPort   = 10259
	hostKubeletPort     = 10250
	hostKubeletHealth   = 10248
	hostProxyMetrics    = 10249
	hostProxyHealth     = 10256
	hostProvisionerPort = 10261
)

// Config is what `karmada-local host up` is asked to run.
type Config struct {
	StateDir string
	BinDir   string
	// Kubeconfig receives the context karmada-host.
	Kubeconfig string
	// NodeIP is the node's address, on a bridge of its own.
	NodeIP string
	// ImageDir holds the OCI layout tarballs of `make images`, imported
	// into containerd at every up.
	ImageDir string
}

// Validate rejects configurations that cannot work, naming the flag.
func (c Config) Validate() error {
	ip := net.ParseIP(c.NodeIP)
	switch {
	case c.StateDir == "":
		return fmt.Errorf("--state-dir must not be empty")
	case c.Kubeconfig == "":
		return fmt.Errorf("--kubeconfig must not be empty")
	case ip == nil || ip.To4() == nil || ip.IsLoopback() || ip.IsUnspecified():
		return fmt.Errorf("--node-ip=%q: must be an IPv4 address that is not loopback (pods cannot reach the host's loopback), e.g. %s", c.NodeIP, DefaultNodeIP)
	case c.ImageDir == "":
		return fmt.Errorf("--images must not be empty: the directory of `make images`' tarballs")
	}
	return nil
}

// hostBinaries are what the host cluster runs besides Debian's packages.
var hostBinaries = []string{"etcd", "kube-apiserver", "kube-controller-manager", "kube-scheduler", "kubelet", "kube-proxy", "karmada-local"}

// hostPackages are the programs of Debian's packages it needs, by package.
var hostPackages = map[string]string{
	"containerd":              "containerd",
	"ctr":                     "containerd",
	"runc":                    "runc",
	"iptables":                "iptables",
	"/usr/lib/cni/bridge":     "containernetworking-plugins",
	"/usr/lib/cni/host-local": "containernetworking-plugins",
	"/usr/lib/cni/loopback":   "containernetworking-plugins",
	"/usr/lib/cni/portmap":    "containernetworking-plugins",
}

// hostCluster is a prepared host cluster: its files and addresses.
type hostCluster struct {
	cfg Config
	dir string
	ca  *pki.CA
	// Files, filled by prepare.
	serving, servingKey                                                                string
	admin, adminKey                                                                    string
	saKey, saPub                                                                       string
	kubeletServing, kubeletKey                                                         string
	kubeletClient, kubeletClientKey                                                    string
	adminConfig, kcmConfig, schedConfig, kubeletConfig, proxyConfig, provisionerConfig string
	etcdCA                                                                             *pki.CA
	etcdServer, etcdServerKey                                                          string
	etcdClient, etcdClientKey                                                          string
}

func newHostCluster(cfg Config) *hostCluster {
	return &hostCluster{cfg: cfg, dir: cfg.StateDir}
}

func (h *hostCluster) path(elem ...string) string {
	return filepath.Join(append([]string{h.dir}, elem...)...)
}

func (h *hostCluster) apiURL() string {
	return fmt.Sprintf("https://%s:%d", h.cfg.NodeIP, hostAPIServerPort)
}

func (h *hostCluster) containerdSocket() string { return h.path("containerd", "containerd.sock") }

func (h *hostCluster) logPath(step string) string {
	return filepath.Join(h.dir, "logs", filepath.FromSlash(step)+".log")
}

func (h *hostCluster) bin(name string) string { return filepath.Join(h.cfg.BinDir, name) }

// prepare creates (or reuses) every certificate, key and kubeconfig.
func (h *hostCluster) prepare() error {
	pkiDir := h.path("pki")
	var err error
	if h.ca, err = pki.LoadOrCreateCA(pkiDir, "karmada-host-ca"); err != nil {
		return err
	}
	node := net.ParseIP(h.cfg.NodeIP)
	if h.serving, h.servingKey, err = h.ca.Ensure(pki.CertSpec{Name: "apiserver", CommonName: "kube-apiserver", Server: true,
		IPs: []net.IP{node, net.ParseIP(hostKubernetesSvc), net.ParseIP("127.0.0.1")},
		DNS: []string{"localhost", "kubernetes", "kubernetes.default", "kubernetes.default.svc", "kubernetes.default.svc." + hostClusterDomain}}); err != nil {
		return err
	}
	if h.admin, h.adminKey, err = h.ca.Ensure(pki.CertSpec{Name: "admin", CommonName: pki.AdminUser, Organization: []string{"system:masters"}, Client: true}); err != nil {
		return err
	}
	if h.saKey, h.saPub, err = pki.EnsureServiceAccountKey(pkiDir); err != nil {
		return err
	}
	// The kubelet serves with a certificate of the cluster's CA, which the
	// API server checks; the API server reaches it as
	// kube-apiserver-kubelet-client (bound to system:kubelet-api-admin).
	if h.kubeletServing, h.kubeletKey, err = h.ca.Ensure(pki.CertSpec{Name: "kubelet-serving", CommonName: "system:node:" + NodeName, Organization: []string{"system:nodes"},
		Server: true, IPs: []net.IP{node}, DNS: []string{NodeName}}); err != nil {
		return err
	}
	if h.kubeletClient, h.kubeletClientKey, err = h.ca.Ensure(pki.CertSpec{Name: "apiserver-kubelet-client", CommonName: "kube-apiserver-kubelet-client", Client: true}); err != nil {
		return err
	}
	for _, name := range []string{"controller-manager-serving", "scheduler-serving"} {
		if _, _, err := h.ca.Ensure(pki.CertSpec{Name: name, CommonName: name, Server: true, IPs: pki.Loopback, DNS: []string{"localhost"}}); err != nil {
			return err
		}
	}
	type identity struct {
		file, user string
		orgs       []string
		target     *string
	}
	for _, id := range []identity{
		{"admin", pki.AdminUser, []string{"system:masters"}, &h.adminConfig},
		{"controller-manager", "system:kube-controller-manager", nil, &h.kcmConfig},
		{"scheduler", "system:kube-scheduler", nil, &h.schedConfig},
		// The node authorizer and NodeRestriction admission know the
		// kubelet by this name and group.
		{"kubelet", "system:node:" + NodeName, []string{"system:nodes"}, &h.kubeletConfig},
		{"kube-proxy", "system:kube-proxy", nil, &h.proxyConfig},
		// The provisioner writes PersistentVolumes: bound in hostSetup.
		{"provisioner", "system:karmada:local-path-provisioner", nil, &h.provisionerConfig},
	} {
		cert, key, err := h.ca.Ensure(pki.CertSpec{Name: id.file + "-client", CommonName: id.user, Organization: id.orgs, Client: true})
		if err != nil {
			return err
		}
		*id.target = h.path(id.file + ".kubeconfig")
		if err := writeHostKubeconfig(*id.target, h.apiURL(), h.ca.CertPEM, id.user, cert, key); err != nil {
			return err
		}
	}
	if h.etcdCA, err = pki.LoadOrCreateCA(h.path("pki", "etcd"), "karmada-host-etcd-ca"); err != nil {
		return err
	}
	if h.etcdServer, h.etcdServerKey, err = h.etcdCA.Ensure(pki.CertSpec{Name: "server", CommonName: "etcd", Server: true, Client: true, IPs: pki.Loopback, DNS: []string{"localhost"}}); err != nil {
		return err
	}
	if h.etcdClient, h.etcdClientKey, err = h.etcdCA.Ensure(pki.CertSpec{Name: "apiserver-etcd-client", CommonName: "kube-apiserver", Client: true}); err != nil {
		return err
	}
	return nil
}

func writeHostKubeconfig(path, server string, caPEM []byte, user, cert, key string) error {
	cfg := clientcmdapi.NewConfig()
	cfg.Clusters[ContextName] = &clientcmdapi.Cluster{Server: server, CertificateAuthorityData: caPEM}
	cfg.AuthInfos[user] = &clientcmdapi.AuthInfo{ClientCertificate: cert, ClientKey: key}
	cfg.Contexts[ContextName] = &clientcmdapi.Context{Cluster: ContextName, AuthInfo: user}
	cfg.CurrentContext = ContextName
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		return err
	}
	return pki.WriteKubeconfig(*cfg, path)
}

func (h *hostCluster) adminTLS() (*tls.Config, error) {
	pair, err := tls.LoadX509KeyPair(h.admin, h.adminKey)
	if err != nil {
		return nil, err
	}
	pool := x509.NewCertPool()
	pool.AddCert(h.ca.Cert)
	return &tls.Config{RootCAs: pool, Certificates: []tls.Certificate{pair}, MinVersion: tls.VersionTLS12}, nil
}

// steps is the host cluster's plan.
func (h *hostCluster) steps() ([]*process.Step, error) {
	adminTLS, err := h.adminTLS()
	if err != nil {
		return nil, err
	}
	pool := x509.NewCertPool()
	pool.AddCert(h.ca.Cert)
	servingTLS := &tls.Config{RootCAs: pool, MinVersion: tls.VersionTLS12}
	etcdTLS := &tls.Config{MinVersion: tls.VersionTLS12}
	{
		pair, err := tls.LoadX509KeyPair(h.etcdClient, h.etcdClientKey)
		if err != nil {
			return nil, err
		}
		ep := x509.NewCertPool()
		ep.AddCert(h.etcdCA.Cert)
		etcdTLS.RootCAs, etcdTLS.Certificates = ep, []tls.Certificate{pair}
	}
	const c = "host"
	network := &process.Step{Name: "host/network", Cluster: c, Run: h.setupNetwork}
	etcd := &process.Step{
		Name: "host/etcd", Cluster: c, After: []string{network.Name},
		Binary: h.bin("etcd"), Args: h.etcdArgs(),
		Ports: []int{hostEtcdClientPort, hostEtcdPeerPort},
		Probe: &process.Probe{URL: fmt.Sprintf("https://127.0.0.1:%d/health", hostEtcdClientPort), TLS: etcdTLS}, ReadyTimeout: 30 * time.Second,
	}
	apiserver := &process.Step{
		Name: "host/kube-apiserver", Cluster: c, After: []string{etcd.Name},
		Binary: h.bin("kube-apiserver"), Args: h.apiserverArgs(),
		Ports: []int{hostAPIServerPort}, Probe: &process.Probe{URL: h.apiURL() + "/readyz", TLS: adminTLS}, ReadyTimeout: 60 * time.Second,
	}
	kcm := &process.Step{
		Name: "host/kube-controller-manager", Cluster: c, After: []string{apiserver.Name},
		Binary: h.bin("kube-controller-manager"), Args: h.controllerManagerArgs(),
		Ports: []int{hostKCMPort}, Probe: &process.Probe{URL: fmt.Sprintf("https://127.0.0.1:%d/healthz", hostKCMPort), TLS: servingTLS}, ReadyTimeout: 60 * time.Second,
	}
	sched := &process.Step{
		Name: "host/kube-scheduler", Cluster: c, After: []string{apiserver.Name},
		Binary: h.bin("kube-scheduler"), Args: h.schedulerArgs(),
		Ports: []int{hostSchedulerPort}, Probe: &process.Probe{URL: fmt.Sprintf("https://127.0.0.1:%d/healthz", hostSchedulerPort), TLS: servingTLS}, ReadyTimeout: 60 * time.Second,
	}
	containerd := &process.Step{
		Name: "host/containerd", Cluster: c, After: []string{network.Name},
		Binary: "containerd", Args: []string{"--config", h.path("containerd", "config.toml")},
		Probe: &process.Probe{Func: h.containerdReady}, ReadyTimeout: 30 * time.Second,
	}
	images := &process.Step{Name: "host/images", Cluster: c, After: []string{containerd.Name}, Run: h.importImages}
	setup := &process.Step{Name: "host/setup", Cluster: c, After: []string{apiserver.Name, images.Name}, Run: h.setupCluster}
	kubelet := &process.Step{
		Name: "host/kubelet", Cluster: c, After: []string{apiserver.Name, images.Name, setup.Name},
		Binary: h.bin("kubelet"), Args: h.kubeletArgs(),
		Ports: []int{hostKubeletHealth},
		Probe: &process.Probe{URL: fmt.Sprintf("http://127.0.0.1:%d/healthz", hostKubeletHealth)}, ReadyTimeout: 60 * time.Second,
	}
	proxy := &process.Step{
		Name: "host/kube-proxy", Cluster: c, After: []string{apiserver.Name, setup.Name},
		Binary: h.bin("kube-proxy"), Args: process.NewArgs().Set("config", h.path("kube-proxy", "config.yaml")).Strings(),
		Ports: []int{hostProxyMetrics, hostProxyHealth},
		Probe: &process.Probe{URL: fmt.Sprintf("http://127.0.0.1:%d/livez", hostProxyHealth)}, ReadyTimeout: 60 * time.Second,
	}
	provisioner := &process.Step{
		Name: "host/local-path-provisioner", Cluster: c, After: []string{setup.Name},
		Binary: h.bin("karmada-local"),
		Args: append([]string{"host", "provisioner"}, process.NewArgs().
			Set("kubeconfig", h.provisionerConfig).Set("volume-dir", h.path("volumes")).
			Set("node", NodeName).Set("health-address", fmt.Sprintf("127.0.0.1:%d", hostProvisionerPort)).
			Strings()...),
		Ports: []int{hostProvisionerPort},
		Probe: &process.Probe{URL: fmt.Sprintf("http://127.0.0.1:%d/healthz", hostProvisionerPort)}, ReadyTimeout: 30 * time.Second,
	}
	ready := &process.Step{Name: "host/ready", Cluster: c, After: []string{kubelet.Name, proxy.Name, kcm.Name, sched.Name, provisioner.Name}, Run: h.waitReady}
	return []*process.Step{network, etcd, apiserver, kcm, sched, containerd, images, setup, kubelet, proxy, provisioner, ready}, nil
}

// checkHost fails early, with what to do, when the machine lacks what the
// host cluster needs.
func checkHost(cfg Config) error {
	if os.Geteuid() != 0 {
		return fmt.Errorf("the host cluster needs root (the kubelet, containerd, iptables and network links): run karmada-local host up as root")
	}
	if err := process.CheckBinaries(cfg.BinDir, hostBinaries); err != nil {
		return err
	}
	pkgs := map[string]bool{}
	for prog, pkg := range hostPackages {
		if strings.HasPrefix(prog, "/") {
			if _, err := os.Stat(prog); err != nil {
				pkgs[pkg] = true
			}
		} else if _, err := exec.LookPath(prog); err != nil {
			pkgs[pkg] = true
		}
	}
	if len(pkgs) > 0 {
		names := make([]string, 0, len(pkgs))
		for p := range pkgs {
			names = append(names, p)
		}
		return fmt.Errorf("missing Debian packages %s: run `make host-deps` (hack/install-host-deps.sh)", strings.Join(slices.Sorted(slices.Values(names)), ", "))
	}
	for _, name := range []string{"pause", "coredns"} {
		if _, err := os.Stat(filepath.Join(cfg.ImageDir, name+".tar")); err != nil {
			return fmt.Errorf("missing image %s in %s: run `make images` first", name, cfg.ImageDir)
		}
	}
	return nil
}

// Up brings the host cluster up, starting only what is not running
// and healthy, and returns once its node and cluster DNS are ready.
func Up(ctx context.Context, cfg Config, out io.Writer) error {
	if err := cfg.Validate(); err != nil {
		return err
	}
	if err := checkHost(cfg); err != nil {
		return err
	}
	began := time.Now()
	if err := writeHostState(cfg); err != nil {
		return err
	}
	h := newHostCluster(cfg)
	if err := h.prepare(); err != nil {
		return err
	}
	if err := h.writeConfigs(); err != nil {
		return err
	}
	steps, err := h.steps()
	if err != nil {
		return err
	}
	running, err := process.Running(cfg.StateDir)
	if err != nil {
		return err
	}
	healthy, err := process.KeepHealthy(ctx, steps, running, out)
	if err != nil {
		return err
	}
	fmt.Fprintf(out, "Starting the host cluster: node %s at %s (state in %s)\n", NodeName, cfg.NodeIP, cfg.StateDir)
	if err := process.RunSteps(ctx, cfg.StateDir, steps, healthy, out); err != nil {
		return err
	}
	if err := h.writeUserKubeconfig(); err != nil {
		return err
	}
	fmt.Fprintf(out, "The host cluster is up in %.1fs. Try:\n  kubectl --kubeconfig %s --context %s get nodes,pods -A\n", time.Since(began).Seconds(), cfg.Kubeconfig, ContextName)
	return nil
}

// writeUserKubeconfig merges the context karmada-host into the user's
// kubeconfig, credentials embedded.
func (h *hostCluster) writeUserKubeconfig() error {
	cfg, err := pki.LoadKubeconfig(h.cfg.Kubeconfig)
	if err != nil {
		return err
	}
	cert, err := os.ReadFile(h.admin)
	if err != nil {
		return err
	}
	key, err := os.ReadFile(h.adminKey)
	if err != nil {
		return err
	}
	user := ContextName + "-admin"
	cfg.Clusters[ContextName] = &clientcmdapi.Cluster{Server: h.apiURL(), CertificateAuthorityData: h.ca.CertPEM}
	cfg.AuthInfos[user] = &clientcmdapi.AuthInfo{ClientCertificateData: cert, ClientKeyData: key}
	cfg.Contexts[ContextName] = &clientcmdapi.Context{Cluster: ContextName, AuthInfo: user}
	if cfg.CurrentContext == "" {
		cfg.CurrentContext = ContextName
	}
	if err := os.MkdirAll(filepath.Dir(h.cfg.Kubeconfig), 0o700); err != nil {
		return err
	}
	return pki.WriteKubeconfig(*cfg, h.cfg.Kubeconfig)
}

// Down stops the host cluster: the kubelet first, then every pod
// (their sandboxes stopped and removed through the CRI, so that their
// network namespaces, mounts and iptables rules go with them), then the
// other processes, etcd last, and removes its iptables rules and links.
// With purge, the state directory and the kubeconfig context go too.
func Down(ctx context.Context, stateDir string, purge bool, out io.Writer) error {
	cfg, err := readHostState(stateDir)
	if err != nil {
		return err
	}
	running, err := process.Running(stateDir)
	if err != nil {
		return err
	}
	h := newHostCluster(*cfg)
	if r, ok := running["host/kubelet"]; ok {
		if err := process.StopAll(stateDir, []string{"host/kubelet"}, running, 30*time.Second, out); err != nil {
			return err
		}
		delete(running, "host/kubelet")
		_ = r
	}
	if _, ok := running["host/containerd"]; ok {
		if err := h.removePods(ctx, out); err != nil {
			fmt.Fprintf(out, "  warning: removing pods: %v\n", err)
		}
	}
	var etcd, others []string
	for name := range running {
		if name == "host/etcd" {
			etcd = append(etcd, name)
		} else {
			others = append(others, name)
		}
	}
	var errs []error
	for _, group := range [][]string{others, etcd} {
		if err := process.StopAll(stateDir, group, running, 15*time.Second, out); err != nil {
			errs = append(errs, err)
		}
	}
	if err := h.teardownNetwork(out); err != nil {
		errs = append(errs, err)
	}
	if err := unmountUnder(stateDir); err != nil {
		errs = append(errs, err)
	}
	if err := errors.Join(errs...); err != nil {
		return err
	}
	if purge {
		if err := pki.RemoveContexts(cfg.Kubeconfig, []string{ContextName}); err != nil {
			return err
		}
		if _, err := os.Stat(hostStatePath(stateDir)); err != nil {
			return fmt.Errorf("not removing %s: it holds no host cluster state (%s)", stateDir, filepath.Base(hostStatePath(stateDir)))
		}
		if err := os.RemoveAll(stateDir); err != nil {
			return fmt.Errorf("removing %s: %w", stateDir, err)
		}
		fmt.Fprintf(out, "Removed %s.\n", stateDir)
	}
	return nil
}

// Status reports every process of the host cluster.
func Status(ctx context.Context, stateDir string) ([]process.ComponentStatus, error) {
	cfg, err := readHostState(stateDir)
	if err != nil {
		return nil, err
	}
	h := newHostCluster(*cfg)
	if err := h.prepare(); err != nil {
		return nil, err
	}
	steps, err := h.steps()
	if err != nil {
		return nil, err
	}
	return process.StatusOf(ctx, stateDir, steps)
}
