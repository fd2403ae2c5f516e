//go:build e2e

package e2e

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os/exec"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/prometheus/common/expfmt"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	policyv1alpha1 "github.com/karmada-go/karmada/api/policy/v1alpha1"
	"github.com/karmada-go/karmada/internal/certexpiry"
	"github.com/karmada-go/karmada/internal/localup/pki"
	"github.com/karmada-go/karmada/internal/localup/process"
	"github.com/karmada-go/karmada/internal/testenv"
)

// fleetStatus is karmada-local status -o json.
func fleetStatus(t *testing.T) []process.ComponentStatus {
	t.Helper()
	out, err := exec.Command(fleet.Bin, "status", "-o", "json", "--state-dir", fleet.StateDir).Output()
	if err != nil {
		t.Fatalf("karmada-local status -o json: %v", err)
	}
	var st []process.ComponentStatus
	if err := json.Unmarshal(out, &st); err != nil {
		t.Fatalf("karmada-local status -o json: %v\n%s", err, out)
	}
	return st
}

// karmada-local certs renew on a running fleet while templates propagate:
// every leaf certificate is issued again, every server presents its new
// one, no process restarts (but the members' kwoks), nothing stops propagating, the kubeconfig's
// admin credentials are the new ones, and the components' certificate
// metric follows.
func TestRenewCertificatesWhilePropagating(t *testing.T) {
	ctx := context.Background()
	pids := map[string]int{}
	for _, s := range fleetStatus(t) {
		if s.Running {
			pids[s.Name] = s.PID
		}
	}
	c := karmadaClient(t)
	ns := "certs-renew"
	if err := c.Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}); err != nil && !apierrors.IsAlreadyExists(err) {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = c.Delete(context.Background(), &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}) })
	targets := []string{"member1", "member2", pullMember}
	pp := &policyv1alpha1.PropagationPolicy{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "renew"},
		Spec: policyv1alpha1.PropagationSpec{
			ResourceSelectors: []policyv1alpha1.ResourceSelector{{APIVersion: "v1", Kind: "ConfigMap",
				LabelSelector: &metav1.LabelSelector{MatchLabels: map[string]string{"renew": "template"}}}},
			Placement: policyv1alpha1.Placement{ClusterAffinity: &policyv1alpha1.ClusterAffinity{ClusterNames: targets}},
		},
	}
	if err := c.Create(ctx, pp); err != nil && !apierrors.IsAlreadyExists(err) {
		t.Fatal(err)
	}
	const templates = 60
	var created atomic.Int32
	done := make(chan struct{})
	go func() {
		defer close(done)
		tick := time.NewTicker(100 * time.Millisecond)
		defer tick.Stop()
		for i := 0; i < templates; i++ {
			cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: fmt.Sprintf("cm-%02d", i), Labels: map[string]string{"renew": "template"}}}
			// A fresh client each time: each reads the kubeconfig as it
			// is then, before and after the renewal.
			for attempt := 0; ; attempt++ {
				err := karmadaClient(t).Create(ctx, cm.DeepCopy())
				if err == nil || apierrors.IsAlreadyExists(err) {
					break
				}
				if attempt == 50 {
					t.Errorf("creating %s: %v", cm.Name, err)
					return
				}
				<-tick.C
			}
			created.Add(1)
			<-tick.C
		}
	}()
	testenv.Eventually(t, time.Minute, "10 templates created", func(context.Context) error {
		if n := created.Load(); n < 10 {
			return fmt.Errorf("%d created", n)
		}
		return nil
	})
	began := time.Now()
	out, err := karmadaLocal("certs", "renew")
	if err != nil {
		t.Fatalf("karmada-local certs renew: %v\n%s", err, out)
	}
	t.Logf("certs renew took %s (%d templates created meanwhile):\n%s", time.Since(began).Round(100*time.Millisecond), created.Load(), out)
	for _, server := range []string{"karmada/etcd", "karmada/kube-apiserver", "karmada/karmada-webhook", "karmada/karmada-search", "member1/kube-apiserver", "member3/kube-apiserver", "member1/kwok"} {
		said := false
		for _, line := range strings.Split(out, "\n") {
			f := strings.Fields(line)
			said = said || (len(f) > 0 && f[0] == server && strings.Contains(line, "serves its renewed certificate"))
		}
		if !said {
			t.Errorf("certs renew does not say %s serves its renewed certificate", server)
		}
	}
	<-done
	testenv.Eventually(t, 3*time.Minute, fmt.Sprintf("%d templates in %v", templates, targets), func(ctx context.Context) error {
		for _, m := range targets {
			list, err := kube(t, m).CoreV1().ConfigMaps(ns).List(ctx, metav1.ListOptions{LabelSelector: "renew=template"})
			if err != nil {
				return fmt.Errorf("%s: %v", m, err)
			}
			if len(list.Items) != templates {
				return fmt.Errorf("%s has %d", m, len(list.Items))
			}
		}
		return nil
	})
	// No process was restarted but the members' kwoks (simulators that
	// read their serving certificate only at start), which run again.
	for _, s := range fleetStatus(t) {
		if strings.HasSuffix(s.Name, "/kwok") {
			if !s.Running {
				t.Errorf("%s not running after the renewal", s.Name)
			}
			continue
		}
		if before, ok := pids[s.Name]; ok && (s.PID != before || !s.Running) {
			t.Errorf("%s: pid %d before the renewal, %d (running %t) after", s.Name, before, s.PID, s.Running)
		}
	}
	// Every leaf certificate has a year ahead again.
	out, err = karmadaLocal("certs", "check", "-o", "json")
	if err != nil {
		t.Fatalf("karmada-local certs check: %v\n%s", err, out)
	}
	var certs []certexpiry.Certificate
	if err := json.Unmarshal([]byte(out), &certs); err != nil {
		t.Fatalf("certs check -o json: %v\n%s", err, out)
	}
	leaves := 0
	for _, cert := range certs {
		if cert.CA {
			continue
		}
		leaves++
		if cert.Residual < pki.DefaultCertValidity-time.Hour {
			t.Errorf("%s has %s left after the renewal", cert.Path, cert.Residual)
		}
	}
	if leaves < 20 {
		t.Errorf("certs check lists %d leaf certificates", leaves)
	}
	// The kubeconfig holds the renewed admin certificate, and it works.
	cfg := restConfig(t, "karmada-apiserver")
	admin, err := tls.X509KeyPair(cfg.CertData, cfg.KeyData)
	if err != nil {
		t.Fatal(err)
	}
	leaf, err := x509.ParseCertificate(admin.Certificate[0])
	if err != nil {
		t.Fatal(err)
	}
	if leaf.NotBefore.Before(began.Add(-2 * time.Hour)) {
		t.Errorf("the kubeconfig's admin certificate was issued %s, before the renewal", leaf.NotBefore)
	}
	// The controller manager's certificate metric reads the renewed client
	// certificate (its kubeconfig's file).
	pool := x509.NewCertPool()
	pool.AppendCertsFromPEM(cfg.CAData)
	hc := &http.Client{Timeout: 10 * time.Second, Transport: &http.Transport{TLSClientConfig: &tls.Config{RootCAs: pool, Certificates: []tls.Certificate{admin}, MinVersion: tls.VersionTLS12}}}
	resp, err := hc.Get(fmt.Sprintf("https://127.0.0.1:%d/metrics", fleet.PortBase+4))
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		body, _ := io.ReadAll(resp.Body)
		t.Fatalf("/metrics of the controller manager: %d %s", resp.StatusCode, body)
	}
	var parser expfmt.TextParser
	families, err := parser.TextToMetricFamilies(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	found := false
	for _, m := range families["karmada_certificate_expiration_timestamp_seconds"].GetMetric() {
		labels := map[string]string{}
		for _, l := range m.GetLabel() {
			labels[l.GetName()] = l.GetValue()
		}
		if labels["certificate"] == "karmada-apiserver" && labels["usage"] == "client" {
			found = true
			if left := time.Until(time.Unix(int64(m.GetGauge().GetValue()), 0)); left < pki.DefaultCertValidity-time.Hour {
				t.Errorf("the controller manager's client certificate metric says %s left after the renewal", left.Round(time.Hour))
			}
		}
	}
	if !found {
		t.Error("the controller manager exports no expiry of its client certificate")
	}
}
