package plan

import (
	"crypto/tls"
	"fmt"
	"time"

	"github.com/karmada-go/karmada/internal/controlplane"
	"github.com/karmada-go/karmada/internal/localup/process"
)

// componentSlotMetricsAdapter is karmada-metrics-adapter's port in the
// components block.
const componentSlotMetricsAdapter = 4

// metricsAdapterPort is where the karmada-apiserver reaches
// karmada-metrics-adapter (one replica, with --ha too: it keeps no state).
func (f *Fleet) metricsAdapterPort() int {
	return f.Cfg.componentsBlock() + componentSlotMetricsAdapter
}

// metricsAdapterSteps run karmada-metrics-adapter once the Cluster API is
// served, then register the control plane's metrics.k8s.io on it.
func (f *Fleet) metricsAdapterSteps(c *Cluster, after ...string) []*process.Step {
	port := f.metricsAdapterPort()
	kubeconfig := c.karmadaConfigs["karmada-metrics-adapter"]
	server := &process.Step{
		Name:    "karmada/karmada-metrics-adapter",
		Cluster: c.Name,
		After:   after,
		Binary:  f.bin("karmada-metrics-adapter"),
		Args: process.NewArgs().
			Set("kubeconfig", kubeconfig).
			Set("authentication-kubeconfig", kubeconfig).
			Set("authorization-kubeconfig", kubeconfig).
			Set("bind-address", "127.0.0.1").
			Set("secure-port", port).
			Set("tls-cert-file", c.metricsAdapterCert).
			Set("tls-private-key-file", c.metricsAdapterKey).
			Set("profiling", f.Cfg.Profiling).
			Set("v", 1).
			Strings(),
		Ports:        []int{port},
		Probe:        &process.Probe{URL: fmt.Sprintf("https://127.0.0.1:%d/readyz", port), TLS: &tls.Config{RootCAs: c.pool(), MinVersion: tls.VersionTLS12}},
		ReadyTimeout: 60 * time.Second,
	}
	api := c.apiServiceStep("karmada/metrics-adapter-api", server.Name, port, controlplane.EnsureMetricsAPIService)
	return []*process.Step{server, api}
}
