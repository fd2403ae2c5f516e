package certexpiry

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"math/big"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"testing"
	"time"

	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/metrics"
)

func certPEM(t *testing.T, notAfter time.Time) []byte {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: "x"}, NotBefore: notAfter.Add(-time.Hour), NotAfter: notAfter}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, key.Public(), key)
	if err != nil {
		t.Fatal(err)
	}
	return pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der})
}

func value(t *testing.T, name, usage string) (float64, bool) {
	t.Helper()
	families, err := metrics.Registry.Gather()
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range families {
		if f.GetName() != "karmada_certificate_expiration_timestamp_seconds" {
			continue
		}
		for _, m := range f.GetMetric() {
			labels := map[string]string{}
			for _, l := range m.GetLabel() {
				labels[l.GetName()] = l.GetValue()
			}
			if labels["certificate"] == name && labels["usage"] == usage {
				return m.GetGauge().GetValue(), true
			}
		}
	}
	return 0, false
}

// A file's expiry is read at every scrape: a renewed file shows at once;
// a missing one is left out.
func TestFileIsReadAtEveryScrape(t *testing.T) {
	path := filepath.Join(t.TempDir(), "serving.crt")
	first := time.Now().Add(24 * time.Hour).Truncate(time.Second)
	if err := os.WriteFile(path, certPEM(t, first), 0o600); err != nil {
		t.Fatal(err)
	}
	File("test-serving", Serving, path)
	if v, ok := value(t, "test-serving", Serving); !ok || int64(v) != first.Unix() {
		t.Fatalf("expiry %v (found %t), want %d", v, ok, first.Unix())
	}
	renewed := first.Add(365 * 24 * time.Hour)
	if err := os.WriteFile(path, certPEM(t, renewed), 0o600); err != nil {
		t.Fatal(err)
	}
	if v, _ := value(t, "test-serving", Serving); int64(v) != renewed.Unix() {
		t.Errorf("after renewal %v, want %d", v, renewed.Unix())
	}
	if err := os.Remove(path); err != nil {
		t.Fatal(err)
	}
	if _, ok := value(t, "test-serving", Serving); ok {
		t.Error("a missing file still has a series")
	}
}

// A client configuration's embedded certificates are exported as they are,
// and the server's serving certificate as the client saw it.
func TestConfigRecordsThePeer(t *testing.T) {
	srv := httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {}))
	defer srv.Close()
	caNotAfter := time.Now().Add(48 * time.Hour).Truncate(time.Second)
	cfg := &rest.Config{Host: srv.URL, TLSClientConfig: rest.TLSClientConfig{CAData: certPEM(t, caNotAfter)}}
	Config("test-apiserver", cfg)
	if v, ok := value(t, "test-apiserver", CA); !ok || int64(v) != caNotAfter.Unix() {
		t.Errorf("CA expiry %v (found %t), want %d", v, ok, caNotAfter.Unix())
	}
	if _, ok := value(t, "test-apiserver", Peer); ok {
		t.Error("a peer series before any request")
	}
	rt := cfg.WrapTransport(srv.Client().Transport)
	req, _ := http.NewRequest(http.MethodGet, srv.URL, nil)
	resp, err := rt.RoundTrip(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	want := srv.TLS.Certificates[0]
	leaf, err := x509.ParseCertificate(want.Certificate[0])
	if err != nil {
		t.Fatal(err)
	}
	if v, ok := value(t, "test-apiserver", Peer); !ok || int64(v) != leaf.NotAfter.Unix() {
		t.Errorf("peer expiry %v (found %t), want %d", v, ok, leaf.NotAfter.Unix())
	}
}
