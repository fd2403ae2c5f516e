//go:build hae2e

package hae2e

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"testing"
	"time"

	authenticationv1 "k8s.io/api/authentication/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/karmada-go/karmada/internal/localup/plan"
)

// The load balancer hands over nothing: TLS passes through it, so a client
// is who its own certificate says (not the balancer), and one without
// credentials is as anonymous through it as at an API server; the
// karmada-webhooks behind it still demand TLS.
func TestBalancerKeepsEveryCallersIdentity(t *testing.T) {
	ensureUp(t)
	ctx := context.Background()
	review, err := kube(t, plan.ControlPlaneContext).AuthenticationV1().SelfSubjectReviews().Create(ctx, &authenticationv1.SelfSubjectReview{}, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if got := review.Status.UserInfo.Username; got != "karmada-local-admin" {
		t.Errorf("through the balancer the admin is %q, want karmada-local-admin (its own certificate)", got)
	}
	ca, err := os.ReadFile(filepath.Join(fleet.StateDir, "karmada", "pki", "ca.crt"))
	if err != nil {
		t.Fatal(err)
	}
	pool := x509.NewCertPool()
	pool.AppendCertsFromPEM(ca)
	anonymous := &http.Client{Timeout: 10 * time.Second, Transport: &http.Transport{TLSClientConfig: &tls.Config{RootCAs: pool, MinVersion: tls.VersionTLS12}}}
	for _, port := range []int{fleet.PortBase, fleet.PortBase + 2} {
		url := fmt.Sprintf("https://127.0.0.1:%d/api/v1/namespaces/karmada-system/secrets", port)
		resp, err := anonymous.Get(url)
		if err != nil {
			t.Fatalf("GET %s: %v", url, err)
		}
		body, _ := io.ReadAll(io.LimitReader(resp.Body, 4096))
		resp.Body.Close()
		if port == fleet.PortBase && resp.StatusCode != http.StatusForbidden && resp.StatusCode != http.StatusUnauthorized {
			t.Errorf("anonymous GET %s through the balancer: %d %s, want 401 or 403", url, resp.StatusCode, body)
		}
		if port == fleet.PortBase+2 && resp.StatusCode == http.StatusOK {
			t.Errorf("GET %s on the webhooks' balancer answered 200: %s", url, body)
		}
	}
	// Plain HTTP gets no API through it either.
	resp, err := (&http.Client{Timeout: 10 * time.Second}).Get(fmt.Sprintf("http://127.0.0.1:%d/api/v1/namespaces", fleet.PortBase))
	if err == nil {
		body, _ := io.ReadAll(io.LimitReader(resp.Body, 4096))
		resp.Body.Close()
		if resp.StatusCode == http.StatusOK {
			t.Errorf("plain HTTP through the balancer answered 200: %s", body)
		}
	}
}
