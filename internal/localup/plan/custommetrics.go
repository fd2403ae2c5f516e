package plan

import (
	"crypto/tls"
	"fmt"
	"path/filepath"
	"time"

	rbacv1 "k8s.io/api/rbac/v1"

	"github.com/karmada-go/karmada/internal/localup/pki"
	"github.com/karmada-go/karmada/internal/localup/process"
)

// slotCustomMetrics is a push member's custom metrics server (slot 4 of
// a member block is the agent's in a pull member only: pull members run
// none, as the control plane does not reach them).
const slotCustomMetrics = 4

// CustomMetricsUser is the custom metrics server's identity in its
// member.
const CustomMetricsUser = "system:karmada-local:custom-metrics"

// customMetricsStep is the name of a member's custom metrics process.
func customMetricsStep(member string) string { return member + "/custom-metrics" }

// prepareCustomMetrics makes a push member's custom metrics server's
// serving certificate and identity.
func prepareCustomMetrics(c *Cluster) error {
	var err error
	if c.customMetricsCert, c.customMetricsKey, err = c.CA.Ensure(pki.CertSpec{Name: "custom-metrics-serving", CommonName: "custom-metrics", Server: true,
		IPs: pki.Loopback, DNS: []string{"custom-metrics.kube-system.svc", "localhost"}}); err != nil {
		return err
	}
	cert, key, err := c.CA.Ensure(pki.CertSpec{Name: "custom-metrics-client", CommonName: CustomMetricsUser, Client: true})
	if err != nil {
		return err
	}
	c.customMetricsConfig = filepath.Join(c.dir, "custom-metrics.kubeconfig")
	return writeComponentKubeconfig(c.customMetricsConfig, c, CustomMetricsUser, cert, key)
}

// customMetricsSteps run a push member's custom.metrics.k8s.io once its
// nodes exist: its rights (read the kinds whose objects may carry a
// metric), the process (`karmada-local member-custom-metrics`, on the
// custom-metrics-apiserver library, serving what `usage set --metric`
// writes), and its APIServices (v1beta2 and v1beta1, as
// prometheus-adapter registers them).
func (f *Fleet) customMetricsSteps(c *Cluster, nodes string, servingTLS *tls.Config) []*process.Step {
	port := c.ports[slotCustomMetrics]
	rbac := &process.Step{
		Name:    c.Name + "/custom-metrics-rbac",
		Cluster: c.Name,
		After:   []string{nodes},
		Run: memberServerRBAC(c, "custom-metrics", CustomMetricsUser, CustomMetricsUser, []rbacv1.PolicyRule{
			{APIGroups: []string{""}, Resources: []string{"pods", "namespaces", "services", "nodes"}, Verbs: []string{"get", "list", "watch"}},
			{APIGroups: []string{"apps"}, Resources: []string{"deployments", "statefulsets", "replicasets"}, Verbs: []string{"get", "list"}},
			{APIGroups: []string{"networking.k8s.io"}, Resources: []string{"ingresses"}, Verbs: []string{"get", "list"}},
		}),
	}
	server := &process.Step{
		Name:    customMetricsStep(c.Name),
		Cluster: c.Name,
		After:   []string{rbac.Name},
		Binary:  f.bin("karmada-local"),
		Args: append([]string{"member-custom-metrics"}, process.NewArgs().
			Set("lister-kubeconfig", c.customMetricsConfig).
			Set("authentication-kubeconfig", c.customMetricsConfig).
			Set("authorization-kubeconfig", c.customMetricsConfig).
			Set("bind-address", "127.0.0.1").
			Set("secure-port", port).
			Set("tls-cert-file", c.customMetricsCert).
			Set("tls-private-key-file", c.customMetricsKey).
			// No /debug/pprof or /debug/flags (the generic server's
			// default): none of our servers serves them unasked.
			Set("profiling", false).
			Strings()...),
		Ports:        []int{port},
		Probe:        &process.Probe{URL: fmt.Sprintf("https://127.0.0.1:%d/livez", port), TLS: servingTLS},
		ReadyTimeout: 60 * time.Second,
	}
	api := &process.Step{
		Name:    c.Name + "/custom-metrics-apiservice",
		Cluster: c.Name,
		After:   []string{server.Name},
		Run: memberAPIServices(c, "custom-metrics", port,
			memberAPI{group: "custom.metrics.k8s.io", version: "v1beta2", versionPriority: 200},
			memberAPI{group: "custom.metrics.k8s.io", version: "v1beta1", versionPriority: 100}),
	}
	return []*process.Step{rbac, server, api}
}
