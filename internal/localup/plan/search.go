package plan

import (
	"context"
	"crypto/tls"
	"fmt"
	"time"

	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/karmada-go/karmada/internal/controlplane"
	"github.com/karmada-go/karmada/internal/localup/process"
	"github.com/karmada-go/karmada/internal/scheme"
)

// componentSlotSearch is karmada-search's port in the components block.
const componentSlotSearch = 1

// SearchEtcdUser is karmada-search's etcd user, allowed its own prefix
// only.
const SearchEtcdUser = "karmada-search"

// SearchEtcdPrefix is where it keeps ResourceRegistries.
const SearchEtcdPrefix = "/registry-karmada-search"

// searchPort is where the karmada-apiserver reaches karmada-search (one
// replica, with --ha too: its cache is rebuilt from the members at start).
func (f *Fleet) searchPort() int {
	return f.Cfg.componentsBlock() + componentSlotSearch
}

// searchSteps run karmada-search once the Cluster API is served, then
// register its APIService.
func (f *Fleet) searchSteps(c *Cluster, after ...string) []*process.Step {
	port := f.searchPort()
	server := &process.Step{
		Name:         "karmada/karmada-search",
		Cluster:      c.Name,
		After:        after,
		Binary:       f.bin("karmada-search"),
		Args:         f.searchArgs(c, port),
		Ports:        []int{port},
		Probe:        &process.Probe{URL: fmt.Sprintf("https://127.0.0.1:%d/readyz", port), TLS: &tls.Config{RootCAs: c.pool(), MinVersion: tls.VersionTLS12}},
		ReadyTimeout: 60 * time.Second,
	}
	api := c.apiServiceStep("karmada/search-api", server.Name, port, controlplane.EnsureSearchAPIService)
	return []*process.Step{server, api}
}

// searchArgs are its flags.
func (f *Fleet) searchArgs(c *Cluster, port int) []string {
	return f.aggregatedServerArgs(c, c.karmadaConfigs["karmada-search"], SearchEtcdPrefix, f.Etcd.search, f.Etcd.searchKey, c.searchCert, c.searchKey, port)
}

// apiServiceStep registers, once the server step is ready, the APIService
// of an aggregated API server on port with ensure (a controlplane.Ensure*
// function), trusted with the control plane's CA.
func (c *Cluster) apiServiceStep(name, server string, port int,
	ensure func(context.Context, client.Client, controlplane.AggregatedAPIServer, time.Duration) error) *process.Step {
	return &process.Step{
		Name:    name,
		Cluster: c.Name,
		After:   []string{server},
		Run: func(ctx context.Context) error {
			cfg, err := c.restConfig()
			if err != nil {
				return err
			}
			cl, err := client.New(cfg, client.Options{Scheme: scheme.Scheme})
			if err != nil {
				return err
			}
			return ensure(ctx, cl, controlplane.AggregatedAPIServer{Host: "localhost", Port: int32(port), CABundle: c.CA.CertPEM}, 60*time.Second)
		},
	}
}
