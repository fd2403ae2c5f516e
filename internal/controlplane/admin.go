package controlplane

import (
	"crypto"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"fmt"
	"math/big"
	"time"

	"k8s.io/client-go/rest"
	certutil "k8s.io/client-go/util/cert"
	"k8s.io/client-go/util/keyutil"
)

// SetupUser is the user an ephemeral administrator credential names.
const SetupUser = "system:karmada:setup"

// EphemeralAdminConfig returns a configuration that reaches server as a
// cluster administrator (group system:masters) with a client certificate
// signed by the cluster's CA (caPEM, caKeyPEM) for lifetime, held in memory
// only. The chart's setup Job uses it: it holds the CA (the
// kube-controller-manager signs agent certificates with it), so no
// administrator credential has to be stored for it.
func EphemeralAdminConfig(server string, caPEM, caKeyPEM []byte, lifetime time.Duration) (*rest.Config, error) {
	cas, err := certutil.ParseCertsPEM(caPEM)
	if err != nil {
		return nil, fmt.Errorf("reading the CA certificate: %w", err)
	}
	caKey, err := keyutil.ParsePrivateKeyPEM(caKeyPEM)
	if err != nil {
		return nil, fmt.Errorf("reading the CA key: %w", err)
	}
	signer, ok := caKey.(crypto.Signer)
	if !ok {
		return nil, fmt.Errorf("the CA key (%T) cannot sign", caKey)
	}
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return nil, err
	}
	serial, err := rand.Int(rand.Reader, new(big.Int).Lsh(big.NewInt(1), 62))
	if err != nil {
		return nil, err
	}
	now := time.Now()
	tmpl := &x509.Certificate{
		SerialNumber: serial,
		Subject:      pkix.Name{CommonName: SetupUser, Organization: []string{"system:masters"}},
		NotBefore:    now.Add(-time.Minute),
		NotAfter:     now.Add(lifetime),
		KeyUsage:     x509.KeyUsageDigitalSignature,
		ExtKeyUsage:  []x509.ExtKeyUsage{x509.ExtKeyUsageClientAuth},
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, cas[0], key.Public(), signer)
	if err != nil {
		return nil, fmt.Errorf("signing the setup credential with the CA: %w", err)
	}
	keyPEM, err := keyutil.MarshalPrivateKeyToPEM(key)
	if err != nil {
		return nil, err
	}
	return &rest.Config{
		Host: server,
		TLSClientConfig: rest.TLSClientConfig{
			CAData:   caPEM,
			CertData: pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}),
			KeyData:  keyPEM,
		},
		QPS: 50, Burst: 100,
	}, nil
}
