package pki

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"encoding/base64"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"k8s.io/apiserver/pkg/server/options/encryptionconfig"
)

func TestCAIssuesVerifiableServingAndClientCerts(t *testing.T) {
	dir := t.TempDir()
	ca, err := LoadOrCreateCA(dir, "test-ca")
	if err != nil {
		t.Fatal(err)
	}
	srvCert, srvKey, err := ca.Ensure(CertSpec{Name: "srv", CommonName: "srv", Server: true, IPs: Loopback, DNS: []string{"localhost"}})
	if err != nil {
		t.Fatal(err)
	}
	cliCert, cliKey, err := ca.Ensure(CertSpec{Name: "cli", CommonName: "alice", Organization: []string{"system:masters"}, Client: true})
	if err != nil {
		t.Fatal(err)
	}

	// A real TLS handshake in both directions proves the chain and usages.
	srvPair, err := tls.LoadX509KeyPair(srvCert, srvKey)
	if err != nil {
		t.Fatal(err)
	}
	pool := x509.NewCertPool()
	pool.AddCert(ca.Cert)
	var gotCN string
	var gotOrg []string
	ts := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		gotCN = r.TLS.PeerCertificates[0].Subject.CommonName
		gotOrg = r.TLS.PeerCertificates[0].Subject.Organization
	}))
	ts.TLS = &tls.Config{Certificates: []tls.Certificate{srvPair}, ClientCAs: pool, ClientAuth: tls.RequireAndVerifyClientCert}
	ts.StartTLS()
	defer ts.Close()

	cliPair, err := tls.LoadX509KeyPair(cliCert, cliKey)
	if err != nil {
		t.Fatal(err)
	}
	client := &http.Client{Transport: &http.Transport{TLSClientConfig: &tls.Config{RootCAs: pool, Certificates: []tls.Certificate{cliPair}}}}
	resp, err := client.Get(ts.URL)
	if err != nil {
		t.Fatalf("TLS handshake with issued certificates failed: %v", err)
	}
	resp.Body.Close()
	if gotCN != "alice" || len(gotOrg) != 1 || gotOrg[0] != "system:masters" {
		t.Fatalf("server saw client %q %v, want alice [system:masters]", gotCN, gotOrg)
	}

	// A client without a certificate from this CA is refused.
	other, err := LoadOrCreateCA(t.TempDir(), "other-ca")
	if err != nil {
		t.Fatal(err)
	}
	oc, ok, err := other.Ensure(CertSpec{Name: "cli", CommonName: "mallory", Client: true})
	if err != nil {
		t.Fatal(err)
	}
	oPair, _ := tls.LoadX509KeyPair(oc, ok)
	bad := &http.Client{Transport: &http.Transport{TLSClientConfig: &tls.Config{RootCAs: pool, Certificates: []tls.Certificate{oPair}}}}
	if resp, err := bad.Get(ts.URL); err == nil {
		resp.Body.Close()
		t.Fatal("a client certificate from another CA was accepted")
	}
}

func TestEnsureKeepsValidCertsAndReissuesChangedOnes(t *testing.T) {
	dir := t.TempDir()
	ca, err := LoadOrCreateCA(dir, "test-ca")
	if err != nil {
		t.Fatal(err)
	}
	spec := CertSpec{Name: "srv", CommonName: "srv", Server: true, IPs: []net.IP{net.ParseIP("127.0.0.1")}}
	certPath, _, err := ca.Ensure(spec)
	if err != nil {
		t.Fatal(err)
	}
	first, _ := os.ReadFile(certPath)
	if _, _, err := ca.Ensure(spec); err != nil {
		t.Fatal(err)
	}
	second, _ := os.ReadFile(certPath)
	if string(first) != string(second) {
		t.Fatal("an unchanged, valid certificate was issued again")
	}
	spec.DNS = []string{"localhost"}
	if _, _, err := ca.Ensure(spec); err != nil {
		t.Fatal(err)
	}
	third, _ := os.ReadFile(certPath)
	if string(third) == string(second) {
		t.Fatal("a certificate whose SANs changed was not issued again")
	}

	// Reloading the CA gives the same authority.
	again, err := LoadOrCreateCA(dir, "test-ca")
	if err != nil {
		t.Fatal(err)
	}
	if !again.Cert.Equal(ca.Cert) {
		t.Fatal("reloading the CA produced a different certificate")
	}
}

func TestIncompleteCAIsReportedNotReplaced(t *testing.T) {
	dir := t.TempDir()
	if _, err := LoadOrCreateCA(dir, "ca"); err != nil {
		t.Fatal(err)
	}
	if err := os.Remove(filepath.Join(dir, "ca.key")); err != nil {
		t.Fatal(err)
	}
	_, err := LoadOrCreateCA(dir, "ca")
	if err == nil || !strings.Contains(err.Error(), "down --purge") {
		t.Fatalf("want an error telling to purge, got %v", err)
	}
	if _, statErr := os.Stat(filepath.Join(dir, "ca.key")); statErr == nil {
		t.Fatal("a new CA key was written over the incomplete authority")
	}
}

func TestServiceAccountKeyIsStable(t *testing.T) {
	dir := t.TempDir()
	priv, pub, err := EnsureServiceAccountKey(dir)
	if err != nil {
		t.Fatal(err)
	}
	a, _ := os.ReadFile(priv)
	priv2, pub2, err := EnsureServiceAccountKey(dir)
	if err != nil {
		t.Fatal(err)
	}
	b, _ := os.ReadFile(priv2)
	if priv != priv2 || pub != pub2 || string(a) != string(b) {
		t.Fatal("the service account key changed between calls; existing tokens would stop working")
	}
	if _, err := readKey(priv); err != nil {
		t.Fatal(err)
	}
}

// The encryption configuration is made once, readable by its owner only,
// with a 32-byte key, and kept across calls.
func TestEncryptionConfigIsStable(t *testing.T) {
	dir := t.TempDir()
	path, err := EnsureEncryptionConfig(dir)
	if err != nil {
		t.Fatal(err)
	}
	first, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if st, _ := os.Stat(path); st.Mode().Perm() != 0o600 {
		t.Errorf("mode %v, want 0600", st.Mode().Perm())
	}
	m := regexp.MustCompile(`secret: (\S+)`).FindSubmatch(first)
	if m == nil {
		t.Fatalf("no key in %s", first)
	}
	if key, err := base64.StdEncoding.DecodeString(string(m[1])); err != nil || len(key) != 32 {
		t.Fatalf("key of %d bytes (%v), want 32", len(key), err)
	}
	if i, j := strings.Index(string(first), "secretbox"), strings.Index(string(first), "identity"); i < 0 || j < i || strings.Contains(string(first), "aescbc") {
		t.Fatalf("want secretbox first and identity after it, no aescbc:\n%s", first)
	}
	if _, err := encryptionconfig.LoadEncryptionConfig(context.Background(), path, false, "test"); err != nil {
		t.Fatalf("kube-apiserver would not load it: %v", err)
	}
	again, err := EnsureEncryptionConfig(dir)
	if err != nil {
		t.Fatal(err)
	}
	if second, _ := os.ReadFile(again); string(second) != string(first) {
		t.Fatal("the key changed: Secrets written before could not be read")
	}
}

// A configuration an earlier version wrote (aescbc) gains secretbox first,
// and keeps its aescbc key: what it encrypted stays readable.
func TestEncryptionConfigMovesToSecretbox(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "encryption-config.yaml")
	old := `apiVersion: apiserver.config.k8s.io/v1
kind: EncryptionConfiguration
resources:
- resources: [secrets]
  providers:
  - aescbc:
      keys:
      - name: key1
        secret: MDEyMzQ1Njc4OWFiY2RlZjAxMjM0NTY3ODlhYmNkZWY=
  - identity: {}
`
	if err := os.WriteFile(path, []byte(old), 0o600); err != nil {
		t.Fatal(err)
	}
	if _, err := EnsureEncryptionConfig(dir); err != nil {
		t.Fatal(err)
	}
	got, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	s := string(got)
	box, cbc, id := strings.Index(s, "secretbox:"), strings.Index(s, "aescbc:"), strings.Index(s, "identity")
	if box < 0 || cbc < box || id < cbc || !strings.Contains(s, "name: key1\n        secret: MDEyMzQ1Njc4OWFiY2RlZjAxMjM0NTY3ODlhYmNkZWY=") {
		t.Fatalf("want secretbox, then the old aescbc key, then identity:\n%s", s)
	}
	if _, err := encryptionconfig.LoadEncryptionConfig(context.Background(), path, false, "test"); err != nil {
		t.Fatalf("kube-apiserver would not load it: %v", err)
	}
	again, _ := EnsureEncryptionConfig(dir)
	if second, _ := os.ReadFile(again); string(second) != s {
		t.Fatal("the configuration changed again")
	}
}

// Lifetimes are the configured ones; a certificate issued for another
// lifetime, or every one when renewing, is issued again; the CA is kept.
func TestValidity(t *testing.T) {
	dir := t.TempDir()
	v := Validity{CA: 48 * time.Hour, Leaf: 3 * time.Hour}
	ca, err := LoadOrCreateCAWith(dir, "test-ca", v)
	if err != nil {
		t.Fatal(err)
	}
	if got := ca.Cert.NotAfter.Sub(ca.Cert.NotBefore) - Backdate; got < 48*time.Hour-time.Minute || got > 48*time.Hour+time.Minute {
		t.Errorf("CA lifetime %s, want 48h", got)
	}
	spec := CertSpec{Name: "cli", CommonName: "alice", Client: true}
	path, _, err := ca.Ensure(spec)
	if err != nil {
		t.Fatal(err)
	}
	first, _, err := ReadCert(path)
	if err != nil {
		t.Fatal(err)
	}
	if got := first.NotAfter.Sub(first.NotBefore) - Backdate; got < 3*time.Hour-time.Minute || got > 3*time.Hour+time.Minute {
		t.Errorf("leaf lifetime %s, want 3h", got)
	}
	serial := func() string {
		t.Helper()
		c, _, err := ReadCert(path)
		if err != nil {
			t.Fatal(err)
		}
		return c.SerialNumber.String()
	}
	// Kept while good (3 h left is more than a third of 3 h).
	if _, _, err := ca.Ensure(spec); err != nil || serial() != first.SerialNumber.String() {
		t.Fatalf("a good certificate was issued again (%v)", err)
	}
	// Another lifetime: issued again; the CA stays.
	longer, err := LoadOrCreateCAWith(dir, "test-ca", Validity{CA: 48 * time.Hour, Leaf: 5 * time.Hour})
	if err != nil {
		t.Fatal(err)
	}
	if !longer.Cert.Equal(ca.Cert) {
		t.Fatal("a new lifetime replaced the CA")
	}
	if _, _, err := longer.Ensure(spec); err != nil || serial() == first.SerialNumber.String() {
		t.Fatalf("a certificate issued for 3h was kept under a 5h lifetime (%v)", err)
	}
	// Renew: issued again although good.
	kept := serial()
	renew, err := LoadOrCreateCAWith(dir, "test-ca", Validity{CA: 48 * time.Hour, Leaf: 5 * time.Hour, Renew: true})
	if err != nil {
		t.Fatal(err)
	}
	if _, _, err := renew.Ensure(spec); err != nil || serial() == kept {
		t.Fatalf("renew kept the certificate (%v)", err)
	}
	// Renewed before the expiry alert: 30 days of a year, a third of less.
	for _, c := range []struct{ leaf, want time.Duration }{
		{365 * 24 * time.Hour, 30 * 24 * time.Hour}, {0, 30 * 24 * time.Hour}, {3 * time.Hour, time.Hour},
	} {
		if got := (Validity{Leaf: c.leaf}).renewBefore(); got != c.want {
			t.Errorf("renewBefore with a %s lifetime: %s, want %s", c.leaf, got, c.want)
		}
	}
}
