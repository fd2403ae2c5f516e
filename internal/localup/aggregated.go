package localup

import (
	"context"
	"crypto/tls"
	"fmt"
	"path/filepath"
	"strings"
	"time"

	"k8s.io/client-go/discovery"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/karmada-go/karmada/internal/controlplane"
	"github.com/karmada-go/karmada/internal/scheme"
)

// Slots of the components block (Config.componentsBlock).
const (
	componentSlotAggregatedAPIServer = 0
)

// AggregatedAPIServerEtcdUser is the etcd user of karmada-aggregated-
// apiserver (its client certificate's CN), allowed its own prefix only.
const AggregatedAPIServerEtcdUser = "karmada-aggregated-apiserver"

// AggregatedAPIServerEtcdPrefix is where it keeps Clusters.
const AggregatedAPIServerEtcdPrefix = "/registry-karmada-aggregated-apiserver"

// clusterAPIStep is the step after which the karmada-apiserver serves
// Clusters through karmada-aggregated-apiserver: what joins, registrations
// and controllers wait for.
const clusterAPIStep = "karmada/cluster-api"

// aggregatedPort is where the karmada-apiserver reaches
// karmada-aggregated-apiserver: the server, or with --ha the balancer in
// front of its two replicas.
func (f *fleet) aggregatedPort() int {
	return f.cfg.componentsBlock() + componentSlotAggregatedAPIServer
}

// aggregatedReplicas are its replicas: one on aggregatedPort, or two behind
// the balancer.
func (f *fleet) aggregatedReplicas() []replica {
	if !f.cfg.HA {
		return []replica{{port: f.aggregatedPort()}}
	}
	return []replica{{port: f.haPort(haAggregatedAPIServer1)}, {suffix: "-2", port: f.haPort(haAggregatedAPIServer2)}}
}

// aggregatedAPIServer is how the karmada-apiserver reaches it: an
// ExternalName Service to localhost, its certificate of the control plane's
// CA.
func (f *fleet) aggregatedAPIServer(c *cluster) *controlplane.AggregatedAPIServer {
	return &controlplane.AggregatedAPIServer{Host: "localhost", Port: int32(f.aggregatedPort()), CABundle: c.ca.CertPEM}
}

// aggregatedSteps run karmada-aggregated-apiserver (after the setup that
// gives it its RBAC), then point the Cluster API at it (cluster-api).
func (f *fleet) aggregatedSteps(c *cluster, after ...string) []*Step {
	var steps []*Step
	cluster := &Step{
		Name:    clusterAPIStep,
		Cluster: c.name,
		Run:     f.switchClusterAPI(c),
	}
	for _, r := range f.aggregatedReplicas() {
		s := &Step{
			Name:    "karmada/karmada-aggregated-apiserver" + r.suffix,
			Cluster: c.name,
			After:   after,
			Binary:  f.bin("karmada-aggregated-apiserver"),
			Args:    f.aggregatedArgs(c, r.port),
			Ports:   []int{r.port},
			// Ready once its post-start hooks are done (the import of an
			// earlier version's Clusters among them).
			Probe:        &Probe{URL: fmt.Sprintf("https://127.0.0.1:%d/readyz", r.port), TLS: &tls.Config{RootCAs: c.pool(), MinVersion: tls.VersionTLS12}},
			ReadyTimeout: 60 * time.Second,
		}
		steps = append(steps, s)
		cluster.After = append(cluster.After, s.Name)
	}
	if f.cfg.HA {
		cluster.After = append(cluster.After, "karmada/haproxy")
	}
	return append(steps, cluster)
}

// aggregatedArgs are a replica's flags.
func (f *fleet) aggregatedArgs(c *cluster, port int) []string {
	return f.aggregatedServerArgs(c, c.karmadaConfigs["karmada-aggregated-apiserver"], AggregatedAPIServerEtcdPrefix,
		f.etcd.aggregated, f.etcd.aggregatedKey, c.aggregatedCert, c.aggregatedKey, port)
}

// aggregatedServerArgs are the flags of one of our aggregated API servers
// (karmada-aggregated-apiserver, karmada-search): its identity's
// kubeconfig for everything it asks the karmada-apiserver, its etcd prefix
// and client certificate, its serving certificate and port.
func (f *fleet) aggregatedServerArgs(c *cluster, kubeconfig, prefix, etcdCert, etcdKey, cert, key string, port int) []string {
	return []string{
		"--kubeconfig=" + kubeconfig,
		"--authentication-kubeconfig=" + kubeconfig,
		"--authorization-kubeconfig=" + kubeconfig,
		"--etcd-servers=" + strings.Join(f.etcdEndpoints(), ","),
		"--etcd-prefix=" + prefix,
		"--etcd-cafile=" + filepath.Join(f.etcd.ca.Dir, "ca.crt"),
		"--etcd-certfile=" + etcdCert,
		"--etcd-keyfile=" + etcdKey,
		"--bind-address=127.0.0.1",
		fmt.Sprintf("--secure-port=%d", port),
		"--tls-cert-file=" + cert,
		"--tls-private-key-file=" + key,
		fmt.Sprintf("--profiling=%t", f.cfg.Profiling),
		"--v=1",
	}
}

// switchClusterAPI points the Cluster API at karmada-aggregated-apiserver
// and waits until the karmada-apiserver serves Clusters through it.
func (f *fleet) switchClusterAPI(c *cluster) func(ctx context.Context) error {
	return func(ctx context.Context) error {
		cfg, err := c.restConfig()
		if err != nil {
			return err
		}
		cl, err := client.New(cfg, client.Options{Scheme: scheme.Scheme})
		if err != nil {
			return err
		}
		disc, err := discovery.NewDiscoveryClientForConfig(cfg)
		if err != nil {
			return err
		}
		return controlplane.SwitchClusterAPI(ctx, cl, disc, *f.aggregatedAPIServer(c), 60*time.Second)
	}
}
