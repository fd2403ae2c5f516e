// Package pki is karmada-local's certificate authorities: CAs kept on disk,
// leaf certificates issued, kept while good and issued again when their
// subject changes or their renewal is due, the service-account key and the
// encryption configuration.
package pki

import (
	"bytes"
	"crypto"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/base64"
	"encoding/pem"
	"errors"
	"fmt"
	"math/big"
	"net"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"time"

	"github.com/karmada-go/karmada/internal/atomicfile"
)

// Default lifetimes of the certificates karmada-local makes (up's
// --cert-validity-period and --ca-validity-period), as Karmada's
// karmadactl init has them.
const (
	DefaultCertValidity = 365 * 24 * time.Hour
	DefaultCAValidity   = 10 * 365 * 24 * time.Hour
	// maxRenewBefore: a leaf certificate with less than this left (or a
	// third of its lifetime, when shorter) is issued again by the next
	// up, before the expiry alert (30 days) would fire.
	maxRenewBefore = 30 * 24 * time.Hour
	// Backdate is how far before its issue a certificate is valid from,
	// for clocks a little behind.
	Backdate = time.Hour
)

// Validity says how long the certificates a CA issues last.
type Validity struct {
	// CA is the lifetime of a new CA, Leaf of a new leaf certificate
	// (zero: the defaults).
	CA, Leaf time.Duration
	// Renew issues every leaf certificate Ensure is asked for again, good
	// or not (karmada-local certs renew).
	Renew bool
}

// LeafLifetime is the lifetime of a new leaf certificate.
func (v Validity) LeafLifetime() time.Duration {
	if v.Leaf <= 0 {
		return DefaultCertValidity
	}
	return v.Leaf
}

// CALifetime is the lifetime of a new CA.
func (v Validity) CALifetime() time.Duration {
	if v.CA <= 0 {
		return DefaultCAValidity
	}
	return v.CA
}

// renewBefore is how close to its expiry a leaf certificate is issued again.
func (v Validity) renewBefore() time.Duration {
	return min(maxRenewBefore, v.LeafLifetime()/3)
}

// CA is a certificate authority whose key lives on disk beside its certificate.
type CA struct {
	Cert    *x509.Certificate
	Key     crypto.Signer
	CertPEM []byte
	// Dir is where the CA and the certificates it issues are written.
	Dir string
	// validity of what it issues.
	validity Validity
}

// CertSpec describes a leaf certificate to issue.
type CertSpec struct {
	// Name is the file stem: <Name>.crt and <Name>.key.
	Name         string
	CommonName   string
	Organization []string
	// Server certificates get the serving usage and these SANs.
	Server bool
	IPs    []net.IP
	DNS    []string
	// Client certificates get the client-auth usage.
	Client bool
}

// LoadOrCreateCA is LoadOrCreateCAWith the default lifetimes.
func LoadOrCreateCA(dir, commonName string) (*CA, error) {
	return LoadOrCreateCAWith(dir, commonName, Validity{})
}

// LoadOrCreateCAWith loads dir/ca.crt and dir/ca.key, or creates them when
// both are absent. A half-present or unreadable pair is an error rather than
// being replaced, since replacing a CA silently invalidates every kubeconfig.
// The CA issues leaf certificates as v says.
func LoadOrCreateCAWith(dir, commonName string, v Validity) (*CA, error) {
	certPath, keyPath := filepath.Join(dir, "ca.crt"), filepath.Join(dir, "ca.key")
	_, certErr := os.Stat(certPath)
	_, keyErr := os.Stat(keyPath)
	switch {
	case certErr == nil && keyErr == nil:
		return loadCA(dir, certPath, keyPath, v)
	case errors.Is(certErr, os.ErrNotExist) && errors.Is(keyErr, os.ErrNotExist):
	default:
		return nil, fmt.Errorf("certificate authority in %s is incomplete (need both ca.crt and ca.key): the state directory is stale, run `karmada-local down --purge`", dir)
	}
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return nil, fmt.Errorf("creating %s: %w", dir, err)
	}
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return nil, fmt.Errorf("generating CA key: %w", err)
	}
	now := time.Now()
	tmpl := &x509.Certificate{
		SerialNumber:          randomSerial(),
		Subject:               pkix.Name{CommonName: commonName},
		NotBefore:             now.Add(-Backdate),
		NotAfter:              now.Add(v.CALifetime()),
		KeyUsage:              x509.KeyUsageCertSign | x509.KeyUsageDigitalSignature | x509.KeyUsageKeyEncipherment,
		BasicConstraintsValid: true,
		IsCA:                  true,
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, key.Public(), key)
	if err != nil {
		return nil, fmt.Errorf("creating CA certificate: %w", err)
	}
	if err := writeKeyPair(certPath, keyPath, der, key); err != nil {
		return nil, err
	}
	return loadCA(dir, certPath, keyPath, v)
}

func loadCA(dir, certPath, keyPath string, v Validity) (*CA, error) {
	cert, certPEM, err := ReadCert(certPath)
	if err != nil {
		return nil, err
	}
	key, err := readKey(keyPath)
	if err != nil {
		return nil, err
	}
	if !cert.IsCA {
		return nil, fmt.Errorf("%s is not a CA certificate: the state directory is stale, run `karmada-local down --purge`", certPath)
	}
	return &CA{Cert: cert, Key: key, CertPEM: certPEM, Dir: dir, validity: v}, nil
}

// Ensure returns the paths of a leaf certificate and key issued by the CA,
// issuing them when they are missing, not signed by this CA, expiring soon,
// issued for a different subject or SANs or lifetime, or when the CA renews
// everything (Validity.Renew). A new pair replaces the old one file by file
// through a rename, so a process reading them meanwhile sees one or the
// other whole.
func (ca *CA) Ensure(spec CertSpec) (certPath, keyPath string, err error) {
	certPath = filepath.Join(ca.Dir, spec.Name+".crt")
	keyPath = filepath.Join(ca.Dir, spec.Name+".key")
	if cert, _, err := ReadCert(certPath); err == nil && !ca.validity.Renew && ca.stillGood(cert, spec) {
		if _, err := readKey(keyPath); err == nil {
			return certPath, keyPath, nil
		}
	}
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return "", "", fmt.Errorf("generating key for %s: %w", spec.Name, err)
	}
	now := time.Now()
	tmpl := &x509.Certificate{
		SerialNumber: randomSerial(),
		Subject:      pkix.Name{CommonName: spec.CommonName, Organization: spec.Organization},
		NotBefore:    now.Add(-Backdate),
		NotAfter:     now.Add(ca.validity.LeafLifetime()),
		KeyUsage:     x509.KeyUsageDigitalSignature | x509.KeyUsageKeyEncipherment,
		IPAddresses:  spec.IPs,
		DNSNames:     spec.DNS,
	}
	if spec.Server {
		tmpl.ExtKeyUsage = append(tmpl.ExtKeyUsage, x509.ExtKeyUsageServerAuth)
	}
	if spec.Client {
		tmpl.ExtKeyUsage = append(tmpl.ExtKeyUsage, x509.ExtKeyUsageClientAuth)
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, ca.Cert, key.Public(), ca.Key)
	if err != nil {
		return "", "", fmt.Errorf("issuing certificate %s: %w", spec.Name, err)
	}
	if err := writeKeyPair(certPath, keyPath, der, key); err != nil {
		return "", "", err
	}
	return certPath, keyPath, nil
}

// stillGood reports whether an existing certificate can be kept for spec.
func (ca *CA) stillGood(cert *x509.Certificate, spec CertSpec) bool {
	if cert.CheckSignatureFrom(ca.Cert) != nil {
		return false
	}
	if time.Until(cert.NotAfter) < ca.validity.renewBefore() {
		return false
	}
	// Issued for another lifetime (up's --cert-validity-period changed).
	if lifetime := cert.NotAfter.Sub(cert.NotBefore) - Backdate; lifetime < ca.validity.LeafLifetime()-time.Minute || lifetime > ca.validity.LeafLifetime()+time.Minute {
		return false
	}
	if cert.Subject.CommonName != spec.CommonName || !slices.Equal(cert.Subject.Organization, spec.Organization) {
		return false
	}
	if !slices.Equal(cert.DNSNames, spec.DNS) || len(cert.IPAddresses) != len(spec.IPs) {
		return false
	}
	for i := range spec.IPs {
		if !cert.IPAddresses[i].Equal(spec.IPs[i]) {
			return false
		}
	}
	return true
}

// EnsureServiceAccountKey returns the paths of an RSA key pair used to sign and
// verify service account tokens, creating it when absent.
func EnsureServiceAccountKey(dir string) (privPath, pubPath string, err error) {
	privPath, pubPath = filepath.Join(dir, "sa.key"), filepath.Join(dir, "sa.pub")
	if _, err := readKey(privPath); err == nil {
		if _, err := os.Stat(pubPath); err == nil {
			return privPath, pubPath, nil
		}
	}
	// Service account signing needs RSA or ECDSA; ECDSA P-256 is accepted by
	// kube-apiserver (ES256) and is much faster to generate.
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return "", "", fmt.Errorf("generating service account key: %w", err)
	}
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return "", "", fmt.Errorf("creating %s: %w", dir, err)
	}
	keyDER, err := x509.MarshalPKCS8PrivateKey(key)
	if err != nil {
		return "", "", fmt.Errorf("encoding service account key: %w", err)
	}
	pubDER, err := x509.MarshalPKIXPublicKey(key.Public())
	if err != nil {
		return "", "", fmt.Errorf("encoding service account public key: %w", err)
	}
	if err := os.WriteFile(privPath, pem.EncodeToMemory(&pem.Block{Type: "PRIVATE KEY", Bytes: keyDER}), 0o600); err != nil {
		return "", "", fmt.Errorf("writing %s: %w", privPath, err)
	}
	if err := os.WriteFile(pubPath, pem.EncodeToMemory(&pem.Block{Type: "PUBLIC KEY", Bytes: pubDER}), 0o644); err != nil {
		return "", "", fmt.Errorf("writing %s: %w", pubPath, err)
	}
	return privPath, pubPath, nil
}

// EnsureEncryptionConfig returns the kube-apiserver encryption configuration
// in dir, creating it with a new random key the first time: Secrets are
// written to etcd encrypted with XSalsa20-Poly1305 (secretbox, which
// Kubernetes recommends over aescbc), and ones written before are still
// read: with the aescbc key of a configuration an earlier version wrote
// (kept, after secretbox), or in plain text (identity).
func EnsureEncryptionConfig(dir string) (string, error) {
	path := filepath.Join(dir, "encryption-config.yaml")
	data, err := os.ReadFile(path)
	if err == nil && bytes.Contains(data, []byte("secretbox")) {
		return path, nil
	}
	legacy := ""
	if err == nil && bytes.Contains(data, []byte("aescbc")) {
		// An earlier version's: its key still reads what it wrote.
		m := aescbcKey.FindSubmatch(data)
		if m == nil {
			return "", fmt.Errorf("%s: an aescbc configuration without a key this version can read; move it away to start with a new key (Secrets it encrypted are then unreadable)", path)
		}
		legacy = fmt.Sprintf(`  - aescbc:
      keys:
      - name: %s
        secret: %s
`, m[1], m[2])
	}
	key := make([]byte, 32)
	if _, err := rand.Read(key); err != nil {
		return "", fmt.Errorf("generating the encryption key: %w", err)
	}
	config := fmt.Sprintf(`apiVersion: apiserver.config.k8s.io/v1
kind: EncryptionConfiguration
resources:
- resources: [secrets]
  providers:
  - secretbox:
      keys:
      - name: secretbox1
        secret: %s
%s  - identity: {}
`, base64.StdEncoding.EncodeToString(key), legacy)
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return "", fmt.Errorf("creating %s: %w", dir, err)
	}
	// Written whole or not at all: a torn file would lose the key.
	if err := atomicfile.Write(path, []byte(config), 0o600); err != nil {
		return "", err
	}
	return path, nil
}

// aescbcKey finds the key of an aescbc provider as earlier versions wrote it.
var aescbcKey = regexp.MustCompile(`(?s)- aescbc:\s*\n\s*keys:\s*\n\s*- name: (\S+)\s*\n\s*secret: (\S+)`)

func writeKeyPair(certPath, keyPath string, der []byte, key *ecdsa.PrivateKey) error {
	keyDER, err := x509.MarshalPKCS8PrivateKey(key)
	if err != nil {
		return fmt.Errorf("encoding key %s: %w", keyPath, err)
	}
	// Write the key first: a certificate without its key is detected as
	// incomplete, while a key without its certificate is simply re-issued.
	// Each file is replaced whole (renamed into place): a running process
	// that reloads it never reads half of one.
	if err := atomicfile.Write(keyPath, pem.EncodeToMemory(&pem.Block{Type: "PRIVATE KEY", Bytes: keyDER}), 0o600); err != nil {
		return err
	}
	return atomicfile.Write(certPath, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}), 0o644)
}

func ReadCert(path string) (*x509.Certificate, []byte, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, nil, fmt.Errorf("reading certificate: %w", err)
	}
	block, _ := pem.Decode(data)
	if block == nil || block.Type != "CERTIFICATE" {
		return nil, nil, fmt.Errorf("%s holds no PEM certificate", path)
	}
	cert, err := x509.ParseCertificate(block.Bytes)
	if err != nil {
		return nil, nil, fmt.Errorf("parsing %s: %w", path, err)
	}
	return cert, data, nil
}

func readKey(path string) (crypto.Signer, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("reading key: %w", err)
	}
	block, _ := pem.Decode(data)
	if block == nil {
		return nil, fmt.Errorf("%s holds no PEM key", path)
	}
	key, err := x509.ParsePKCS8PrivateKey(block.Bytes)
	if err != nil {
		return nil, fmt.Errorf("parsing %s: %w", path, err)
	}
	signer, ok := key.(crypto.Signer)
	if !ok {
		return nil, fmt.Errorf("%s holds a key that cannot sign", path)
	}
	return signer, nil
}

func randomSerial() *big.Int {
	n, err := rand.Int(rand.Reader, new(big.Int).Lsh(big.NewInt(1), 126))
	if err != nil {
		// crypto/rand does not fail on Linux; a fixed serial would still be valid.
		return big.NewInt(time.Now().UnixNano())
	}
	return n
}
