package controlplane

import (
	"crypto/x509"
	"encoding/pem"
	"slices"
	"testing"
	"time"

	certutil "k8s.io/client-go/util/cert"
	"k8s.io/client-go/util/keyutil"

	"github.com/karmada-go/karmada/internal/testenv"
)

// The setup Job's credential: an administrator's, signed by the cluster's
// CA, short-lived, held in memory.
func TestEphemeralAdminConfig(t *testing.T) {
	caPEM, caKeyPEM := testenv.CA(t)
	cfg, err := EphemeralAdminConfig("https://karmada-apiserver:5443", caPEM, caKeyPEM, time.Hour)
	if err != nil {
		t.Fatal(err)
	}
	if cfg.Host != "https://karmada-apiserver:5443" || string(cfg.CAData) != string(caPEM) || cfg.Insecure {
		t.Errorf("config %+v", cfg)
	}
	b, _ := pem.Decode(cfg.CertData)
	c, err := x509.ParseCertificate(b.Bytes)
	if err != nil {
		t.Fatal(err)
	}
	if c.Subject.CommonName != SetupUser || !slices.Equal(c.Subject.Organization, []string{"system:masters"}) {
		t.Errorf("subject %v", c.Subject)
	}
	if d := time.Until(c.NotAfter); d > time.Hour || d < 59*time.Minute {
		t.Errorf("lives until %s, want an hour from now", c.NotAfter)
	}
	cas, _ := certutil.ParseCertsPEM(caPEM)
	pool := x509.NewCertPool()
	pool.AddCert(cas[0])
	if _, err := c.Verify(x509.VerifyOptions{Roots: pool, KeyUsages: []x509.ExtKeyUsage{x509.ExtKeyUsageClientAuth}}); err != nil {
		t.Errorf("not a client certificate of the CA: %v", err)
	}
	if _, err := keyutil.ParsePrivateKeyPEM(cfg.KeyData); err != nil {
		t.Errorf("key: %v", err)
	}
	// Bad inputs are refused with what was wrong.
	if _, err := EphemeralAdminConfig("https://x", []byte("junk"), caKeyPEM, time.Hour); err == nil {
		t.Errorf("a junk CA was accepted")
	}
	if _, err := EphemeralAdminConfig("https://x", caPEM, []byte("junk"), time.Hour); err == nil {
		t.Errorf("a junk key was accepted")
	}
}
