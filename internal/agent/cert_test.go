package agent

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"fmt"
	"math/big"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/validation/field"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
)

type testCA struct {
	cert *x509.Certificate
	key  *ecdsa.PrivateKey
	pem  []byte
}

func newTestCA(t *testing.T) *testCA {
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: "test-ca"}, NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(time.Hour),
		IsCA: true, BasicConstraintsValid: true, KeyUsage: x509.KeyUsageCertSign}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		t.Fatal(err)
	}
	cert, _ := x509.ParseCertificate(der)
	return &testCA{cert: cert, key: key, pem: pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der})}
}

// issue returns a certificate and key for cn, valid from notBefore to notAfter.
func (ca *testCA) issue(t *testing.T, serial int64, cn string, notBefore, notAfter time.Time, server bool) (certPEM, keyPEM []byte) {
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{SerialNumber: big.NewInt(serial), Subject: pkix.Name{CommonName: cn}, NotBefore: notBefore, NotAfter: notAfter,
		KeyUsage: x509.KeyUsageDigitalSignature, ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageClientAuth}}
	if server {
		tmpl.ExtKeyUsage = []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth}
		tmpl.DNSNames = []string{"localhost"}
		tmpl.IPAddresses = loopbackIPs
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, ca.cert, &key.PublicKey, ca.key)
	if err != nil {
		t.Fatal(err)
	}
	kd, err := x509.MarshalECPrivateKey(key)
	if err != nil {
		t.Fatal(err)
	}
	return pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}), pem.EncodeToMemory(&pem.Block{Type: "EC PRIVATE KEY", Bytes: kd})
}

// A renewed certificate is presented at once, on new connections, without
// a restart: the server sees the old serial before Renew and the new one
// after.
func TestRenewedCertificateIsUsedAtOnce(t *testing.T) {
	ca := newTestCA(t)
	srvCert, srvKey := ca.issue(t, 100, "server", time.Now().Add(-time.Hour), time.Now().Add(time.Hour), true)
	pair, err := tls.X509KeyPair(srvCert, srvKey)
	if err != nil {
		t.Fatal(err)
	}
	pool := x509.NewCertPool()
	pool.AddCert(ca.cert)
	srv := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		fmt.Fprint(w, r.TLS.PeerCertificates[0].SerialNumber.String())
	}))
	srv.TLS = &tls.Config{Certificates: []tls.Certificate{pair}, ClientCAs: pool, ClientAuth: tls.RequireAndVerifyClientCert, MinVersion: tls.VersionTLS12}
	srv.EnableHTTP2 = true
	srv.StartTLS()
	defer srv.Close()

	c1, k1 := ca.issue(t, 1, "system:karmada:agent:edge", time.Now().Add(-time.Minute), time.Now().Add(time.Hour), false)
	cfg, creds, err := RotatingConfig(&rest.Config{Host: srv.URL, TLSClientConfig: rest.TLSClientConfig{CAData: ca.pem, CertData: c1, KeyData: k1}})
	if err != nil {
		t.Fatal(err)
	}
	if creds == nil {
		t.Fatal("no credentials for a config with a client certificate")
	}
	hc, err := rest.HTTPClientFor(cfg)
	if err != nil {
		t.Fatal(err)
	}
	serial := func() string {
		t.Helper()
		resp, err := hc.Get(srv.URL)
		if err != nil && strings.Contains(err.Error(), "use of closed network connection") {
			// A request racing with the renewal's closing of the old
			// connections may fail once (as client-go's connrotation); the
			// next one dials anew.
			resp, err = hc.Get(srv.URL)
		}
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		buf := make([]byte, 64)
		n, _ := resp.Body.Read(buf)
		return string(buf[:n])
	}
	if got := serial(); got != "1" {
		t.Fatalf("before renewal the server saw serial %s, want 1", got)
	}
	c2, k2 := ca.issue(t, 2, "system:karmada:agent:edge", time.Now().Add(-time.Minute), time.Now().Add(2*time.Hour), false)
	if err := creds.Renew(c2, k2); err != nil {
		t.Fatal(err)
	}
	if got := serial(); got != "2" {
		t.Fatalf("after renewal the server saw serial %s, want 2 (the old connection kept the old certificate)", got)
	}
	kc, err := creds.Kubeconfig()
	if err != nil {
		t.Fatal(err)
	}
	back, err := clientcmd.RESTConfigFromKubeConfig(kc)
	if err != nil {
		t.Fatal(err)
	}
	if string(back.CertData) != string(c2) || back.Host != srv.URL {
		t.Errorf("the kubeconfig holds another certificate or server (%s)", back.Host)
	}
	// A key that is not the certificate's is refused, and the one in use kept.
	if err := creds.Renew(c1, k2); err == nil {
		t.Error("Renew accepted a key of another certificate")
	}
	if creds.Leaf().SerialNumber.Int64() != 2 {
		t.Errorf("serial in use after a refused renewal: %v", creds.Leaf().SerialNumber)
	}
}

func TestRenewalIsDueAtTheThreshold(t *testing.T) {
	ca := newTestCA(t)
	start := time.Now().Truncate(time.Second)
	c, k := ca.issue(t, 1, "agent", start, start.Add(100*time.Hour), false)
	_, creds, err := RotatingConfig(&rest.Config{Host: "https://127.0.0.1:1", TLSClientConfig: rest.TLSClientConfig{CAData: ca.pem, CertData: c, KeyData: k}})
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		after time.Duration
		due   bool
	}{{0, false}, {79 * time.Hour, false}, {80 * time.Hour, true}, {99 * time.Hour, true}, {101 * time.Hour, true}} {
		if got := creds.Due(start.Add(tc.after), 0.2); got != tc.due {
			t.Errorf("at %s of a 100h certificate: due %v, want %v", tc.after, got, tc.due)
		}
	}
}

// A token config has nothing to rotate; a kubeconfig file is replaced
// whole, and a path that is not a regular file is left alone.
func TestRotatingConfigWithoutCertificateAndAtomicWrite(t *testing.T) {
	in := &rest.Config{Host: "https://127.0.0.1:1", BearerToken: "t"}
	out, creds, err := RotatingConfig(in)
	if err != nil || creds != nil || out != in {
		t.Fatalf("token config: creds %v, err %v", creds, err)
	}
	dir := t.TempDir()
	p := filepath.Join(dir, "kubeconfig")
	if err := os.WriteFile(p, []byte("old"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := writeFileAtomic(p, []byte("new")); err != nil {
		t.Fatal(err)
	}
	if b, _ := os.ReadFile(p); string(b) != "new" {
		t.Errorf("file holds %q", b)
	}
	if st, _ := os.Stat(p); st.Mode().Perm() != 0o600 {
		t.Errorf("mode %v, want 0600", st.Mode().Perm())
	}
	link := filepath.Join(dir, "link")
	if err := os.Symlink(p, link); err != nil {
		t.Fatal(err)
	}
	if err := writeFileAtomic(link, []byte("x")); err == nil {
		t.Error("a symlink (as in a Secret volume) was replaced")
	}
	entries, _ := os.ReadDir(dir)
	if len(entries) != 2 {
		t.Errorf("temporary files left behind: %v", entries)
	}
}

var loopbackIPs = []net.IP{net.ParseIP("127.0.0.1")}

func TestRefusedFieldReadsTheCauses(t *testing.T) {
	idErr := apierrors.NewInvalid(schema.GroupKind{Group: "cluster.karmada.io", Kind: "Cluster"}, "e2e-pull",
		field.ErrorList{field.Invalid(field.NewPath("spec", "id"), "uid", "the member is already cluster \"member2\"")})
	zoneErr := apierrors.NewInvalid(schema.GroupKind{Group: "cluster.karmada.io", Kind: "Cluster"}, "e2e-pull",
		field.ErrorList{field.Invalid(field.NewPath("spec", "zones"), "x", "bad")})
	if !refusedField(fmt.Errorf("wrapped: %w", idErr), "spec.id") {
		t.Error("an Invalid answer naming spec.id was not recognised")
	}
	if refusedField(zoneErr, "spec.id") || refusedField(apierrors.NewConflict(schema.GroupResource{}, "x", nil), "spec.id") {
		t.Error("another refusal was taken for the id's")
	}
}
