//go:build e2e

package e2e

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	authenticationv1 "k8s.io/api/authentication/v1"
	authorizationv1 "k8s.io/api/authorization/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// The Karmada components' /metrics (and /debug/pprof) answer only requests
// the karmada-apiserver authenticates and authorizes, over TLS with the
// fleet's certificate.
func TestMetricsNeedCredentials(t *testing.T) {
	ctx := context.Background()
	cfg := restConfig(t, "karmada-apiserver")
	pool := x509.NewCertPool()
	pool.AppendCertsFromPEM(cfg.CAData)
	admin, err := tls.X509KeyPair(cfg.CertData, cfg.KeyData)
	if err != nil {
		t.Fatal(err)
	}
	kc := kube(t, "karmada-apiserver")
	sa := &corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Name: "e2e-no-metrics"}}
	if _, err := kc.CoreV1().ServiceAccounts("default").Create(ctx, sa, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = kc.CoreV1().ServiceAccounts("default").Delete(context.Background(), sa.Name, metav1.DeleteOptions{})
	})
	tr, err := kc.CoreV1().ServiceAccounts("default").CreateToken(ctx, sa.Name, &authenticationv1.TokenRequest{}, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	get := func(port int, path string, cert *tls.Certificate, token string) (int, error) {
		tc := &tls.Config{RootCAs: pool, MinVersion: tls.VersionTLS12}
		if cert != nil {
			tc.Certificates = []tls.Certificate{*cert}
		}
		hc := &http.Client{Timeout: 10 * time.Second, Transport: &http.Transport{TLSClientConfig: tc}}
		req, _ := http.NewRequestWithContext(ctx, http.MethodGet, fmt.Sprintf("https://127.0.0.1:%d%s", port, path), nil)
		if token != "" {
			req.Header.Set("Authorization", "Bearer "+token)
		}
		resp, err := hc.Do(req)
		if err != nil {
			return 0, err
		}
		resp.Body.Close()
		return resp.StatusCode, nil
	}
	for name, port := range map[string]int{
		"karmada-webhook":            fleet.PortBase + 3,
		"karmada-controller-manager": fleet.PortBase + 4,
		"karmada-scheduler":          fleet.PortBase + 6,
	} {
		for _, c := range []struct {
			what, path string
			cert       *tls.Certificate
			token      string
			want       int
		}{
			{"without credentials", "/metrics", nil, "", http.StatusUnauthorized},
			{"without credentials", "/debug/pprof/", nil, "", http.StatusUnauthorized},
			{"with a token that may not", "/metrics", nil, tr.Status.Token, http.StatusForbidden},
			{"as the fleet's admin (client certificate)", "/metrics", &admin, "", http.StatusOK},
			{"health, without credentials (as Kubernetes serves it)", "/healthz", nil, "", http.StatusOK},
		} {
			got, err := get(port, c.path, c.cert, c.token)
			if err != nil || got != c.want {
				t.Errorf("%s %s %s: %d (%v), want %d", name, c.path, c.what, got, err, c.want)
			}
		}
	}
}

// Each component acts as itself in the control plane, with its own rights:
// not system:masters.
func TestComponentsHaveTheirOwnRights(t *testing.T) {
	ctx := context.Background()
	kc := kube(t, "karmada-apiserver")
	can := func(user, verb, group, resource, ns string, name ...string) bool {
		t.Helper()
		sar := &authorizationv1.SubjectAccessReview{Spec: authorizationv1.SubjectAccessReviewSpec{User: user,
			ResourceAttributes: &authorizationv1.ResourceAttributes{Verb: verb, Group: group, Resource: resource, Namespace: ns, Name: strings.Join(name, "")}}}
		res, err := kc.AuthorizationV1().SubjectAccessReviews().Create(ctx, sar, metav1.CreateOptions{})
		if err != nil {
			t.Fatal(err)
		}
		return res.Status.Allowed
	}
	for _, c := range []struct {
		user, verb, group, resource, ns string
		want                            bool
	}{
		{"system:karmada:karmada-scheduler", "get", "", "secrets", "karmada-cluster", false},
		{"system:karmada:karmada-scheduler", "update", "work.karmada.io", "resourcebindings", "default", true},
		{"system:karmada:karmada-webhook", "list", "", "secrets", "", false},
		{"system:karmada:karmada-webhook", "get", "cluster.karmada.io", "clusters", "", false},
		{"system:karmada:karmada-controller-manager", "create", "", "pods", "default", false},
		{"system:karmada:karmada-controller-manager", "bind", "rbac.authorization.k8s.io", "clusterroles", "", false},
		{"system:karmada:karmada-controller-manager", "escalate", "rbac.authorization.k8s.io", "clusterroles", "", false},
		{"system:karmada:karmada-controller-manager", "impersonate", "", "users", "", false},
		{"system:karmada:karmada-controller-manager", "create", "work.karmada.io", "works", "karmada-es-member1", true},
		{"system:karmada:karmada-controller-manager", "get", "", "secrets", "karmada-cluster", true},
		// karmada-aggregated-apiserver reads member credentials for the
		// proxy, and writes nothing outside its own storage.
		{"system:karmada:karmada-aggregated-apiserver", "get", "", "secrets", "karmada-cluster", true},
		{"system:karmada:karmada-aggregated-apiserver", "list", "", "secrets", "default", false},
		{"system:karmada:karmada-aggregated-apiserver", "update", "", "secrets", "karmada-cluster", false},
		{"system:karmada:karmada-aggregated-apiserver", "update", "apiregistration.k8s.io", "apiservices", "", false},
		{"system:karmada:karmada-aggregated-apiserver", "create", "work.karmada.io", "works", "karmada-es-member1", false},
		{"system:karmada:karmada-aggregated-apiserver", "impersonate", "", "users", "", false},
		// karmada-search reads Clusters and member credentials to cache
		// what registries select, and reviews callers' access: nothing
		// else, not even the templates it could serve.
		{"system:karmada:karmada-search", "list", "cluster.karmada.io", "clusters", "", true},
		{"system:karmada:karmada-search", "get", "", "secrets", "karmada-cluster", true},
		{"system:karmada:karmada-search", "list", "", "secrets", "default", false},
		{"system:karmada:karmada-search", "list", "apps", "deployments", "", false},
		{"system:karmada:karmada-search", "update", "cluster.karmada.io", "clusters", "", false},
		{"system:karmada:karmada-search", "impersonate", "", "users", "", false},
		// karmada-descheduler lowers the placement of bindings, nothing
		// else: no Clusters, no Secrets, no templates, no status.
		{"system:karmada:karmada-descheduler", "patch", "work.karmada.io", "resourcebindings", "default", true},
		{"system:karmada:karmada-descheduler", "delete", "work.karmada.io", "resourcebindings", "default", false},
		{"system:karmada:karmada-descheduler", "get", "", "secrets", "karmada-cluster", false},
		{"system:karmada:karmada-descheduler", "list", "cluster.karmada.io", "clusters", "", false},
		{"system:karmada:karmada-descheduler", "get", "apps", "deployments", "default", false},
		{"system:karmada:karmada-descheduler", "create", "work.karmada.io", "works", "karmada-es-member1", false},
	} {
		if got := can(c.user, c.verb, c.group, c.resource, c.ns); got != c.want {
			t.Errorf("%s %s %s.%s in %q: allowed %t, want %t", c.user, c.verb, c.resource, c.group, c.ns, got, c.want)
		}
	}
	// Leases: the scheduler and the descheduler renew their own leader
	// election Lease only, not the controller manager's (to hold its
	// leadership) nor a pull-mode cluster's (to keep a dead cluster alive).
	for _, c := range []struct {
		user, ns, name string
		want           bool
	}{
		{"system:karmada:karmada-scheduler", "karmada-system", "karmada-scheduler", true},
		{"system:karmada:karmada-scheduler", "karmada-system", "karmada-controller-manager", false},
		{"system:karmada:karmada-scheduler", "karmada-cluster", "member3", false},
		{"system:karmada:karmada-descheduler", "karmada-system", "karmada-descheduler", true},
		{"system:karmada:karmada-descheduler", "karmada-system", "karmada-controller-manager", false},
		{"system:karmada:karmada-descheduler", "karmada-cluster", "member3", false},
	} {
		if got := can(c.user, "update", "coordination.k8s.io", "leases", c.ns, c.name); got != c.want {
			t.Errorf("%s update Lease %s/%s: allowed %t, want %t", c.user, c.ns, c.name, got, c.want)
		}
	}
}
