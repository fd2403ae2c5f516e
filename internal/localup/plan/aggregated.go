package plan

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
	"github.com/karmada-go/karmada/internal/localup/process"
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
func (f *Fleet) aggregatedPort() int {
	return f.Cfg.componentsBlock() + componentSlotAggregatedAPIServer
}

// aggregatedReplicas are its replicas: one on aggregatedPort, or two behind
// the balancer.
func (f *Fleet) aggregatedReplicas() []replica {
	if !f.Cfg.HA {
		return []replica{{port: f.aggregatedPort()}}
	}
	return []replica{{port: f.haPort(haAggregatedAPIServer1)}, {suffix: "-2", port: f.haPort(haAggregatedAPIServer2)}}
}

// aggregatedAPIServer is how the karmada-apiserver reaches it: an
// ExternalName Service to localhost, its certificate of the control plane's
// CA.
func (f *Fleet) aggregatedAPIServer(c *Cluster) *controlplane.AggregatedAPIServer {
	return &controlplane.AggregatedAPIServer{Host: "localhost", Port: int32(f.aggregatedPort()), CABundle: c.CA.CertPEM}
}

// aggregatedSteps run karmada-aggregated-apiserver (after the setup that
// gives it its RBAC), then point the Cluster API at it (cluster-api).
func (f *Fleet) aggregatedSteps(c *Cluster, after ...string) []*process.Step {
	var steps []*process.Step
	cluster := &process.Step{
		Name:    clusterAPIStep,
		Cluster: c.Name,
		Run:     f.switchClusterAPI(c),
	}
	for _, r := range f.aggregatedReplicas() {
		s := &process.Step{
			Name:    "karmada/karmada-aggregated-apiserver" + r.suffix,
			Cluster: c.Name,
			After:   after,
			Binary:  f.bin("karmada-aggregated-apiserver"),
			Args:    f.aggregatedArgs(c, r.port),
			Ports:   []int{r.port},
			// Ready once its post-start hooks are done (the import of an
			// earlier version's Clusters among them).
			Probe:        &process.Probe{URL: fmt.Sprintf("https://127.0.0.1:%d/readyz", r.port), TLS: &tls.Config{RootCAs: c.pool(), MinVersion: tls.VersionTLS12}},
			ReadyTimeout: 60 * time.Second,
		}
		steps = append(steps, s)
		cluster.After = append(cluster.After, s.Name)
	}
	if f.Cfg.HA {
		cluster.After = append(cluster.After, "karmada/haproxy")
	}
	return append(steps, cluster)
}

// aggregatedArgs are a replica's flags.
func (f *Fleet) aggregatedArgs(c *Cluster, port int) []string {
	return f.aggregatedServerArgs(c, c.karmadaConfigs["karmada-aggregated-apiserver"], AggregatedAPIServerEtcdPrefix,
		f.Etcd.aggregated, f.Etcd.aggregatedKey, c.aggregatedCert, c.aggregatedKey, port)
}

// aggregatedServerArgs are the flags of one of our aggregated API servers
// (karmada-aggregated-apiserver, karmada-search): its identity's
// kubeconfig for everything it asks the karmada-apiserver, its etcd prefix
// and client certificate, its serving certificate and port.
func (f *Fleet) aggregatedServerArgs(c *Cluster, kubeconfig, prefix, etcdCert, etcdKey, cert, key string, port int) []string {
	return process.NewArgs().
		Set("kubeconfig", kubeconfig).
		Set("authentication-kubeconfig", kubeconfig).
		Set("authorization-kubeconfig", kubeconfig).
		Set("etcd-servers", strings.Join(f.etcdEndpoints(), ",")).
		Set("etcd-prefix", prefix).
		Set("etcd-cafile", filepath.Join(f.Etcd.CA.Dir, "ca.crt")).
		Set("etcd-certfile", etcdCert).
		Set("etcd-keyfile", etcdKey).
		Set("bind-address", "127.0.0.1").
		Set("secure-port", port).
		Set("tls-cert-file", cert).
		Set("tls-private-key-file", key).
		Set("profiling", f.Cfg.Profiling).
		Set("v", 1).
		Strings()
}

// switchClusterAPI points the Cluster API at karmada-aggregated-apiserver
// and waits until the karmada-apiserver serves Clusters through it.
func (f *Fleet) switchClusterAPI(c *Cluster) func(ctx context.Context) error {
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
