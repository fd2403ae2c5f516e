package plan

import (
	"context"
	"crypto/tls"
	"encoding/base64"
	"fmt"
	"path/filepath"
	"time"

	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller/controllerutil"

	"github.com/karmada-go/karmada/internal/localup/pki"
	"github.com/karmada-go/karmada/internal/localup/process"
)

// slotMetricsServer is a member's metrics-server (the member block's slot
// 9 is free: 8 and 9 are etcd's in the control plane's block only).
const slotMetricsServer = 9

// MetricsServerUser is metrics-server's identity in its member.
const MetricsServerUser = "system:metrics-server"

// metricsAPIServiceStep is the name of the step registering a member's
// metrics.k8s.io.
func metricsAPIServiceStep(member string) string { return member + "/metrics-apiservice" }

// metricsServerStep is the name of a member's metrics-server process.
func metricsServerStep(member string) string { return member + "/metrics-server" }

// prepareMetricsServer makes a member's metrics-server serving certificate
// (for the Service name its member's API server verifies) and its identity.
func prepareMetricsServer(c *Cluster) error {
	var err error
	if c.metricsServerCert, c.metricsServerKey, err = c.CA.Ensure(pki.CertSpec{Name: "metrics-server-serving", CommonName: "metrics-server", Server: true,
		IPs: pki.Loopback, DNS: []string{"metrics-server.kube-system.svc", "localhost"}}); err != nil {
		return err
	}
	cert, key, err := c.CA.Ensure(pki.CertSpec{Name: "metrics-server-client", CommonName: MetricsServerUser, Client: true})
	if err != nil {
		return err
	}
	c.metricsServerConfig = filepath.Join(c.dir, "metrics-server.kubeconfig")
	return writeComponentKubeconfig(c.metricsServerConfig, c, MetricsServerUser, cert, key)
}

// metricsServerSteps run a member's metrics-server once its nodes exist:
// its rights, the process (scraping kwok's emulated kubelet metrics), and
// its APIService, so that the member serves metrics.k8s.io.
func (f *Fleet) metricsServerSteps(c *Cluster, nodes string, servingTLS *tls.Config) []*process.Step {
	port := c.ports[slotMetricsServer]
	rbac := &process.Step{
		Name:    c.Name + "/metrics-server-rbac",
		Cluster: c.Name,
		After:   []string{nodes},
		Run:     metricsServerRBAC(c),
	}
	server := &process.Step{
		Name:    metricsServerStep(c.Name),
		Cluster: c.Name,
		After:   []string{rbac.Name},
		Binary:  f.bin("metrics-server"),
		Args: process.NewArgs().
			Set("kubeconfig", c.metricsServerConfig).
			Set("authentication-kubeconfig", c.metricsServerConfig).
			Set("authorization-kubeconfig", c.metricsServerConfig).
			Set("bind-address", "127.0.0.1").
			Set("secure-port", port).
			Set("tls-cert-file", c.metricsServerCert).
			Set("tls-private-key-file", c.metricsServerKey).
			// The nodes' kubelet is kwok's server, at the node's port,
			// with a certificate of the member's CA.
			On("kubelet-use-node-status-port").
			Set("kubelet-preferred-address-types", "InternalIP").
			Set("kubelet-certificate-authority", filepath.Join(c.CA.Dir, "ca.crt")).
			// The shortest resolution metrics-server accepts: a new
			// pod's first cpu sample (two scrapes) within 20 s. It must
			// exceed the kubelet request timeout (default 10 s): kwok
			// answers on this machine, 5 s is plenty.
			Set("metric-resolution", "10s").
			Set("kubelet-request-timeout", "5s").
			Set("v", 1).
			Strings(),
		Ports: []int{port},
		// Ready once it serves; its first samples follow within the
		// resolution.
		// A renewed serving certificate is picked up from its file (as
		// every k8s.io/apiserver server does): no restart.
		Probe:        &process.Probe{URL: fmt.Sprintf("https://127.0.0.1:%d/livez", port), TLS: servingTLS},
		ReadyTimeout: 60 * time.Second,
	}
	api := &process.Step{
		Name:    metricsAPIServiceStep(c.Name),
		Cluster: c.Name,
		After:   []string{server.Name},
		Run:     metricsAPIService(c, port),
	}
	return []*process.Step{rbac, server, api}
}

// metricsServerRBAC gives metrics-server's identity what it reads (nodes'
// metrics, nodes and pods) and what a delegating API server needs
// (reviews, the authentication ConfigMap), and nothing more.
func metricsServerRBAC(c *Cluster) func(ctx context.Context) error {
	return memberServerRBAC(c, "metrics-server", MetricsServerUser, "system:karmada-local:metrics-server", []rbacv1.PolicyRule{
		{APIGroups: []string{""}, Resources: []string{"nodes/metrics"}, Verbs: []string{"get"}},
		{APIGroups: []string{""}, Resources: []string{"nodes", "pods"}, Verbs: []string{"get", "list", "watch"}},
	})
}

// memberServerRBAC gives a member's aggregated server's identity the
// rules, what a delegating API server needs (reviews, the
// authentication ConfigMap), and nothing more.
func memberServerRBAC(c *Cluster, what, userName, role string, rules []rbacv1.PolicyRule) func(ctx context.Context) error {
	return func(ctx context.Context) error {
		cfg, err := c.restConfig()
		if err != nil {
			return err
		}
		cl, err := client.New(cfg, client.Options{})
		if err != nil {
			return err
		}
		user := []rbacv1.Subject{{APIGroup: rbacv1.GroupName, Kind: rbacv1.UserKind, Name: userName}}
		objs := []client.Object{
			&rbacv1.ClusterRole{ObjectMeta: metav1.ObjectMeta{Name: role}, Rules: rules},
			&rbacv1.ClusterRoleBinding{ObjectMeta: metav1.ObjectMeta{Name: role}, Subjects: user,
				RoleRef: rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: role}},
			&rbacv1.ClusterRoleBinding{ObjectMeta: metav1.ObjectMeta{Name: role + ":auth-delegator"}, Subjects: user,
				RoleRef: rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: "system:auth-delegator"}},
		}
		for _, want := range objs {
			obj := want.DeepCopyObject().(client.Object)
			if _, err := controllerutil.CreateOrUpdate(ctx, cl, obj, func() error {
				copyRBAC(obj, want)
				return nil
			}); err != nil {
				return fmt.Errorf("granting %s its rights in %s: %w", what, c.Name, err)
			}
		}
		reader := &rbacv1.RoleBinding{ObjectMeta: metav1.ObjectMeta{Namespace: "kube-system", Name: "karmada-local:" + what + ":auth-reader"}}
		if _, err := controllerutil.CreateOrUpdate(ctx, cl, reader, func() error {
			reader.Subjects = user
			reader.RoleRef = rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "Role", Name: "extension-apiserver-authentication-reader"}
			return nil
		}); err != nil {
			return fmt.Errorf("letting %s read the authentication configuration of %s: %w", what, c.Name, err)
		}
		return nil
	}
}

// metricsAPIService registers metrics.k8s.io in the member (a Service
// kube-system/metrics-server naming localhost, as the control plane's
// aggregated servers are reached) and waits until it is Available.
func metricsAPIService(c *Cluster, port int) func(ctx context.Context) error {
	return memberAPIServices(c, "metrics-server", port, memberAPI{group: "metrics.k8s.io", version: "v1beta1", versionPriority: 100})
}

// memberAPI is one group version an aggregated server of a member serves.
type memberAPI struct {
	group, version  string
	versionPriority int64
}

func (a memberAPI) name() string { return a.version + "." + a.group }

// memberAPIServices registers the group versions a member's aggregated
// server serves at localhost:port (through a Service kube-system/service
// naming localhost, as the control plane's aggregated servers are
// reached) and waits until each is Available.
func memberAPIServices(c *Cluster, service string, port int, apis ...memberAPI) func(ctx context.Context) error {
	return func(ctx context.Context) error {
		cfg, err := c.restConfig()
		if err != nil {
			return err
		}
		cl, err := client.New(cfg, client.Options{})
		if err != nil {
			return err
		}
		svc := &corev1.Service{ObjectMeta: metav1.ObjectMeta{Namespace: "kube-system", Name: service}}
		if _, err := controllerutil.CreateOrUpdate(ctx, cl, svc, func() error {
			svc.Spec.Type = corev1.ServiceTypeExternalName
			svc.Spec.ExternalName = "localhost"
			svc.Spec.Ports = []corev1.ServicePort{{Name: "https", Port: int32(port)}}
			return nil
		}); err != nil {
			return fmt.Errorf("writing Service kube-system/%s in %s: %w", service, c.Name, err)
		}
		for _, a := range apis {
			api := &unstructured.Unstructured{}
			api.SetAPIVersion("apiregistration.k8s.io/v1")
			api.SetKind("APIService")
			api.SetName(a.name())
			if _, err := controllerutil.CreateOrUpdate(ctx, cl, api, func() error {
				api.Object["spec"] = map[string]any{
					"group":                a.group,
					"version":              a.version,
					"service":              map[string]any{"namespace": "kube-system", "name": service, "port": int64(port)},
					"caBundle":             base64.StdEncoding.EncodeToString(c.CA.CertPEM),
					"groupPriorityMinimum": int64(100),
					"versionPriority":      a.versionPriority,
				}
				return nil
			}); err != nil {
				return fmt.Errorf("writing APIService %s in %s: %w", a.name(), c.Name, err)
			}
		}
		for _, a := range apis {
			var last string
			api := &unstructured.Unstructured{}
			api.SetAPIVersion("apiregistration.k8s.io/v1")
			api.SetKind("APIService")
			err = wait.PollUntilContextTimeout(ctx, 200*time.Millisecond, 60*time.Second, true, func(ctx context.Context) (bool, error) {
				if err := cl.Get(ctx, client.ObjectKey{Name: a.name()}, api); err != nil {
					last = err.Error()
					return false, nil
				}
				conds, _, _ := unstructured.NestedSlice(api.Object, "status", "conditions")
				for _, cond := range conds {
					if m, _ := cond.(map[string]any); m["type"] == "Available" {
						last = fmt.Sprintf("Available=%v: %v", m["status"], m["message"])
						return m["status"] == "True", nil
					}
				}
				return false, nil
			})
			if err != nil {
				return fmt.Errorf("APIService %s in %s: %s: %w", a.name(), c.Name, last, err)
			}
		}
		return nil
	}
}

// RestConfig is the cluster administrator's client configuration.
func (c *Cluster) RestConfig() (*rest.Config, error) { return c.restConfig() }

// Members are the fleet's member clusters.
func (f *Fleet) Members() []*Cluster { return f.Clusters[1:] }
