package integration

import (
	"context"
	"crypto/tls"
	"net"
	"net/http"
	"testing"
	"time"

	authenticationv1 "k8s.io/api/authentication/v1"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	metricsserver "sigs.k8s.io/controller-runtime/pkg/metrics/server"

	"github.com/karmada-go/karmada/internal/cli"
	"github.com/karmada-go/karmada/internal/controlplane"
	"github.com/karmada-go/karmada/internal/testenv"
)

// /metrics and /debug/pprof answer only requests the API server
// authenticates and authorizes (get on the path), as Kubernetes components
// do; the roles of deploy/rbac grant exactly that.
func TestMetricsAreAuthenticated(t *testing.T) {
	t.Parallel()
	env := testenv.Start(t)
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)
	if err := controlplane.ApplyComponentRBAC(ctx, env.Client); err != nil {
		t.Fatal(err)
	}
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := l.Addr().String()
	l.Close()
	flags := cli.MetricsFlags{BindAddress: addr, Secure: true, EnablePprof: true}
	if err := flags.Validate(); err != nil {
		t.Fatal(err)
	}
	srv, err := metricsserver.NewServer(flags.ServerOptions(), env.Config, nil)
	if err != nil {
		t.Fatal(err)
	}
	go func() { _ = srv.Start(ctx) }()

	kc := kubernetes.NewForConfigOrDie(env.Config)
	token := func(name string, roles ...string) string {
		t.Helper()
		if _, err := kc.CoreV1().ServiceAccounts("default").Create(ctx, &corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Name: name}}, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
		for _, role := range roles {
			crb := &rbacv1.ClusterRoleBinding{ObjectMeta: metav1.ObjectMeta{Name: name + "-" + role},
				RoleRef:  rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: role},
				Subjects: []rbacv1.Subject{{Kind: rbacv1.ServiceAccountKind, Namespace: "default", Name: name}}}
			if _, err := kc.RbacV1().ClusterRoleBindings().Create(ctx, crb, metav1.CreateOptions{}); err != nil {
				t.Fatal(err)
			}
		}
		tr, err := kc.CoreV1().ServiceAccounts("default").CreateToken(ctx, name, &authenticationv1.TokenRequest{}, metav1.CreateOptions{})
		if err != nil {
			t.Fatal(err)
		}
		return tr.Status.Token
	}
	nobody, scraper, profiler := token("nobody"), token("scraper", "karmada-metrics-reader"), token("profiler", "karmada-profiler")
	// The server's certificate is self-signed: only the status codes are
	// checked here (the e2e suite verifies the fleet's certificate).
	hc := &http.Client{Timeout: 10 * time.Second, Transport: &http.Transport{TLSClientConfig: &tls.Config{InsecureSkipVerify: true}}} //nolint:gosec // see above
	status := func(path, token string) (int, error) {
		req, _ := http.NewRequestWithContext(ctx, http.MethodGet, "https://"+addr+path, nil)
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
	testenv.Eventually(t, 10*time.Second, "the metrics server up", func(context.Context) error {
		_, err := status("/metrics", "")
		return err
	})
	for _, c := range []struct {
		what, path, token string
		want              int
	}{
		{"no credentials", "/metrics", "", http.StatusUnauthorized},
		{"a token the API server does not know", "/metrics", "not-a-token", http.StatusUnauthorized},
		{"a token without the right", "/metrics", nobody, http.StatusForbidden},
		{"a metrics reader", "/metrics", scraper, http.StatusOK},
		{"a metrics reader asking for profiles", "/debug/pprof/", scraper, http.StatusForbidden},
		{"no credentials asking for profiles", "/debug/pprof/", "", http.StatusUnauthorized},
		{"a profiler", "/debug/pprof/", profiler, http.StatusOK},
		{"health, unauthenticated as in Kubernetes", "/healthz", "", http.StatusOK},
		{"readiness, unauthenticated as in Kubernetes", "/readyz", "", http.StatusOK},
	} {
		got, err := status(c.path, c.token)
		if err != nil || got != c.want {
			t.Errorf("%s: GET %s answered %d (%v), want %d", c.what, c.path, got, err, c.want)
		}
	}
}
