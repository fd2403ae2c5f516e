package plan

// The highly available control plane of `karmada-local up --ha`: a
// three-member etcd cluster, two karmada-apiservers behind haproxy, and two
// replicas of every controller (leader-elected) and of karmada-webhook
// (behind haproxy too). The load balancer takes the ports the single
// karmada-apiserver and karmada-webhook have without --ha, so every
// kubeconfig, the members' joins and the webhook configurations are the same
// in both layouts; the replicas listen on the ports of two more blocks after
// the members' (haBlocks).

import (
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"text/template"
	"time"

	"github.com/karmada-go/karmada/internal/atomicfile"
	"github.com/karmada-go/karmada/internal/localup/process"
)

// haBlocks is how many blocks of ten ports --ha adds after the members'.
const haBlocks = 2

// Slots of the HA blocks, counted from their first port.
const (
	haEtcd2Client = iota
	haEtcd2Peer
	haEtcd3Client
	haEtcd3Peer
	haAPIServer1
	haAPIServer2
	haKubeControllerManager2
	haControllerManager2Metrics
	haControllerManager2Health
	haScheduler2Metrics
	haScheduler2Health
	haWebhook1
	haWebhook2
	haWebhook2Metrics
	haAggregatedAPIServer1
	haAggregatedAPIServer2
	haSlots
)

// LastPort is the last port the configuration's layout uses: the
// clusters' blocks, the HA blocks with --ha, then the components block.
func (c Config) LastPort() int {
	return c.componentsBlock() + 10 - 1
}

// componentsBlock is the first port of the block of the control plane's
// components that have no slot in its cluster block (componentSlot*).
func (c Config) componentsBlock() int {
	blocks := c.Members + 1
	if c.HA {
		blocks += haBlocks
	}
	return c.PortBase + 10*blocks
}

// haPort is a port of the HA blocks.
func (f *Fleet) haPort(slot int) int {
	return f.Cfg.PortBase + 10*(f.Cfg.Members+1) + slot
}

// etcdMember is one member of the fleet's etcd: one without --ha, three with.
type etcdMember struct {
	// step is its step's name; name its etcd member name.
	Step, Name, dataDir  string
	clientPort, peerPort int
}

func (m etcdMember) clientURL() string { return fmt.Sprintf("https://127.0.0.1:%d", m.clientPort) }
func (m etcdMember) peerURL() string   { return fmt.Sprintf("https://127.0.0.1:%d", m.peerPort) }

// layoutEtcd names the etcd members. The first keeps the names and data
// directory of the single member, so that a fleet's layout reads the same
// with or without --ha.
func (f *Fleet) layoutEtcd() {
	cp := f.Clusters[0]
	f.Etcd.Members = []etcdMember{{Step: "karmada/etcd", Name: "karmada-local", dataDir: filepath.Join(f.Cfg.StateDir, "etcd", "data"),
		clientPort: cp.ports[slotEtcdClient], peerPort: cp.ports[slotEtcdPeer]}}
	if !f.Cfg.HA {
		return
	}
	for i, slots := range [][2]int{{haEtcd2Client, haEtcd2Peer}, {haEtcd3Client, haEtcd3Peer}} {
		n := fmt.Sprint(i + 2)
		f.Etcd.Members = append(f.Etcd.Members, etcdMember{Step: "karmada/etcd-" + n, Name: "karmada-local-" + n,
			dataDir: filepath.Join(f.Cfg.StateDir, "etcd", "data-"+n), clientPort: f.haPort(slots[0]), peerPort: f.haPort(slots[1])})
	}
}

// etcdEndpoints are the client URLs of every etcd member, as an API server's
// --etcd-servers takes them.
func (f *Fleet) etcdEndpoints() []string {
	var out []string
	for _, m := range f.Etcd.Members {
		out = append(out, m.clientURL())
	}
	return out
}

// etcdSteps are the names of the etcd members' steps.
func (f *Fleet) etcdSteps() []string {
	var out []string
	for _, m := range f.Etcd.Members {
		out = append(out, m.Step)
	}
	return out
}

// IsEtcdStep tells the etcd members' steps, which down stops last.
func IsEtcdStep(name string) bool {
	short := name[strings.LastIndexByte(name, '/')+1:]
	n, ok := strings.CutPrefix(short, "etcd-")
	return short == "etcd" || ok && n != "" && strings.Trim(n, "0123456789") == ""
}

// replica is one karmada-apiserver, karmada-webhook, or leader-elected
// controller process: its step's name suffix ("" for the first, "-2") and
// ports.
type replica struct {
	suffix string
	port   int
	// metrics and health are a Karmada controller's.
	metrics, health int
}

// apiserverReplicas are the control plane's karmada-apiservers: the one on
// the cluster's API port, or two behind the load balancer, which takes that
// port.
func (f *Fleet) apiserverReplicas(c *Cluster) []replica {
	if c.Index != 0 || !f.Cfg.HA {
		return []replica{{port: c.ports[slotAPIServer]}}
	}
	return []replica{{port: f.haPort(haAPIServer1)}, {suffix: "-2", port: f.haPort(haAPIServer2)}}
}

func (f *Fleet) webhookReplicas(c *Cluster) []replica {
	if !f.Cfg.HA {
		return []replica{{port: c.ports[slotKarmadaWebhook], metrics: c.ports[slotKarmadaWebhookMetrics]}}
	}
	return []replica{{port: f.haPort(haWebhook1), metrics: c.ports[slotKarmadaWebhookMetrics]},
		{suffix: "-2", port: f.haPort(haWebhook2), metrics: f.haPort(haWebhook2Metrics)}}
}

func (f *Fleet) kubeControllerManagerReplicas(c *Cluster) []replica {
	r := []replica{{port: c.ports[slotControllerManager]}}
	if c.Index == 0 && f.Cfg.HA {
		r = append(r, replica{suffix: "-2", port: f.haPort(haKubeControllerManager2)})
	}
	return r
}

func (f *Fleet) controllerReplicas(c *Cluster, name string) []replica {
	var r []replica
	switch name {
	case "karmada-controller-manager":
		r = []replica{{metrics: c.ports[slotKarmadaControllerManagerMetrics], health: c.ports[slotKarmadaControllerManagerHealth]},
			{suffix: "-2", metrics: f.haPort(haControllerManager2Metrics), health: f.haPort(haControllerManager2Health)}}
	case "karmada-scheduler":
		r = []replica{{metrics: c.ports[slotKarmadaSchedulerMetrics], health: c.ports[slotKarmadaSchedulerHealth]},
			{suffix: "-2", metrics: f.haPort(haScheduler2Metrics), health: f.haPort(haScheduler2Health)}}
	}
	if !f.Cfg.HA {
		r = r[:1]
	}
	return r
}

// haproxyStep is the load balancer in front of the karmada-apiservers and
// karmada-webhooks: TCP passthrough (TLS ends at the replicas, whose
// certificates name 127.0.0.1), health-checked with GET /readyz, so that a
// replica that is starting, stopping or dead gets no new connection, and a
// connection refused by one is retried on the other.
func (f *Fleet) haproxyStep(c *Cluster, apiservers []string) (*process.Step, error) {
	bin, err := FindHAProxy()
	if err != nil {
		return nil, err
	}
	clientTLS, err := c.clientTLS()
	if err != nil {
		return nil, err
	}
	return &process.Step{
		Name:    "karmada/haproxy",
		Cluster: c.Name,
		// Started once one karmada-apiserver serves; the other joins the
		// backend when its health check passes.
		After:  apiservers[:1],
		Binary: bin,
		// -db: in the foreground, its log on stderr; -f the configuration
		// prepare wrote.
		Args:  []string{"-db", "-f", f.haproxyConfigPath()},
		Ports: []int{c.ports[slotAPIServer], c.ports[slotKarmadaWebhook], f.aggregatedPort()},
		// Ready when a karmada-apiserver answers through it.
		Probe:        &process.Probe{URL: c.apiURL() + "/readyz", TLS: clientTLS},
		ReadyTimeout: 30 * time.Second,
	}, nil
}

func (f *Fleet) haproxyConfigPath() string {
	return filepath.Join(f.Cfg.StateDir, ControlPlane, "haproxy.cfg")
}

var haproxyConfig = template.Must(template.New("haproxy").Parse(`# Written by karmada-local up --ha; rewritten by every up.
global
    log stderr format raw local0 warning
    maxconn 4096

defaults
    mode tcp
    log global
    option tcplog
    option dontlognull
    # A connection refused by a replica (dead, restarting) is retried on
    # the other before the client sees it.
    option redispatch
    retries 3
    timeout connect 2s
    # Watches stay open for up to an hour (--min-request-timeout); the
    # API server, not the balancer, ends them.
    timeout client 2h
    timeout server 2h
    timeout check 2s
    default-server inter 1s fall 2 rise 1 check check-ssl verify none

frontend karmada-apiserver
    bind 127.0.0.1:{{.APIPort}}
    default_backend karmada-apiservers

backend karmada-apiservers
    balance leastconn
    option httpchk GET /readyz
{{- range .APIServers}}
    server {{.Name}} 127.0.0.1:{{.Port}}
{{- end}}

frontend karmada-webhook
    bind 127.0.0.1:{{.WebhookPort}}
    default_backend karmada-webhooks

backend karmada-webhooks
    balance roundrobin
    option httpchk GET /readyz
{{- range .Webhooks}}
    server {{.Name}} 127.0.0.1:{{.Port}}
{{- end}}

frontend karmada-aggregated-apiserver
    bind 127.0.0.1:{{.AggregatedAPIServerPort}}
    default_backend karmada-aggregated-apiservers

backend karmada-aggregated-apiservers
    balance leastconn
    option httpchk GET /readyz
{{- range .AggregatedAPIServers}}
    server {{.Name}} 127.0.0.1:{{.Port}}
{{- end}}
`))

type haproxyServer struct {
	Name string
	Port int
}

// writeHAProxyConfig writes the load balancer's configuration.
func (f *Fleet) writeHAProxyConfig(c *Cluster) error {
	data := struct {
		APIPort, WebhookPort, AggregatedAPIServerPort int
		APIServers, Webhooks, AggregatedAPIServers    []haproxyServer
	}{APIPort: c.ports[slotAPIServer], WebhookPort: c.ports[slotKarmadaWebhook], AggregatedAPIServerPort: f.aggregatedPort()}
	for _, r := range f.apiserverReplicas(c) {
		data.APIServers = append(data.APIServers, haproxyServer{"kube-apiserver" + r.suffix, r.port})
	}
	for _, r := range f.webhookReplicas(c) {
		data.Webhooks = append(data.Webhooks, haproxyServer{"karmada-webhook" + r.suffix, r.port})
	}
	for _, r := range f.aggregatedReplicas() {
		data.AggregatedAPIServers = append(data.AggregatedAPIServers, haproxyServer{"karmada-aggregated-apiserver" + r.suffix, r.port})
	}
	var buf bytes.Buffer
	if err := haproxyConfig.Execute(&buf, data); err != nil {
		return err
	}
	return writeFileAtomic(f.haproxyConfigPath(), buf.Bytes(), 0o644)
}

func writeFileAtomic(path string, data []byte, mode os.FileMode) error {
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return err
	}
	return atomicfile.Write(path, data, mode)
}

// HAProxyMissingError says --ha needs haproxy, which is not installed.
type HAProxyMissingError struct{}

func (HAProxyMissingError) Error() string {
	return "--ha runs haproxy in front of the two karmada-apiservers, and haproxy is not installed (not in $PATH nor /usr/sbin): install the Debian package with `make ha-deps` (as root)"
}

// FindHAProxy finds the haproxy binary: $PATH, then /usr/sbin, where Debian
// puts it (and which a user's $PATH often lacks).
func FindHAProxy() (string, error) {
	if p, err := exec.LookPath("haproxy"); err == nil {
		return p, nil
	}
	if st, err := os.Stat("/usr/sbin/haproxy"); err == nil && st.Mode()&0o111 != 0 {
		return "/usr/sbin/haproxy", nil
	}
	return "", HAProxyMissingError{}
}
