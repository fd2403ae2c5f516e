package testenv

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"math/big"
	"net"
	"os"
	"path/filepath"
	"testing"
	"time"

	certutil "k8s.io/client-go/util/cert"
	"k8s.io/client-go/util/keyutil"
)

// CertificateRequest is a PEM certificate request for a subject (common
// name, organizations) with DNS names, signed by a new key.
func CertificateRequest(t testing.TB, cn string, orgs []string, dns ...string) []byte {
	t.Helper()
	return KeyedCertificateRequest(t, cn, func(any) []string { return orgs }, dns...)
}

// KeyedCertificateRequest is a PEM certificate request for a subject whose
// organizations depend on the new key that signs it (an agent's
// registration id is derived from its key), with DNS names.
func KeyedCertificateRequest(t testing.TB, cn string, orgs func(pub any) []string, dns ...string) []byte {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	request, err := certutil.MakeCSR(key, &pkix.Name{CommonName: cn, Organization: orgs(key.Public())}, dns, nil)
	if err != nil {
		t.Fatal(err)
	}
	return request
}

// SelfSignedCA is the PEM certificate of a new self-signed CA.
func SelfSignedCA(t testing.TB) []byte {
	t.Helper()
	cert, _ := CA(t)
	return cert
}

// CA is a new self-signed CA: its PEM certificate and key.
func CA(t testing.TB) (certPEM, keyPEM []byte) {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	ca, err := certutil.NewSelfSignedCACert(certutil.Config{CommonName: "ca"}, key)
	if err != nil {
		t.Fatal(err)
	}
	certPEM, err = certutil.EncodeCertificates(ca)
	if err != nil {
		t.Fatal(err)
	}
	if keyPEM, err = keyutil.MarshalPrivateKeyToPEM(key); err != nil {
		t.Fatal(err)
	}
	return certPEM, keyPEM
}

// servingCert writes, under dir, a serving certificate for 127.0.0.1 and its
// key (serving.crt, serving.key), issued by a new CA, which it returns.
func servingCert(t testing.TB, dir string) (ca *x509.Certificate, certFile, keyFile string) {
	t.Helper()
	caKey, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	caTmpl := &x509.Certificate{SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: "webhook-test-ca"}, NotBefore: time.Now().Add(-time.Minute), NotAfter: time.Now().Add(24 * time.Hour),
		IsCA: true, BasicConstraintsValid: true, KeyUsage: x509.KeyUsageCertSign}
	caDER, err := x509.CreateCertificate(rand.Reader, caTmpl, caTmpl, &caKey.PublicKey, caKey)
	if err != nil {
		t.Fatal(err)
	}
	if ca, err = x509.ParseCertificate(caDER); err != nil {
		t.Fatal(err)
	}
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{SerialNumber: big.NewInt(2), Subject: pkix.Name{CommonName: "karmada-webhook"}, NotBefore: time.Now().Add(-time.Minute), NotAfter: time.Now().Add(24 * time.Hour),
		KeyUsage: x509.KeyUsageDigitalSignature, ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth}, IPAddresses: []net.IP{net.ParseIP("127.0.0.1")}}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, ca, &key.PublicKey, caKey)
	if err != nil {
		t.Fatal(err)
	}
	keyDER, err := x509.MarshalECPrivateKey(key)
	if err != nil {
		t.Fatal(err)
	}
	certFile, keyFile = filepath.Join(dir, "serving.crt"), filepath.Join(dir, "serving.key")
	if err := os.WriteFile(certFile, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(keyFile, pem.EncodeToMemory(&pem.Block{Type: "EC PRIVATE KEY", Bytes: keyDER}), 0o600); err != nil {
		t.Fatal(err)
	}
	return ca, certFile, keyFile
}
