package server

import (
	"crypto/tls"
	"crypto/x509"
	"fmt"
	"os"
	"sync"
	"time"

	"google.golang.org/grpc/credentials"

	"github.com/karmada-go/karmada/internal/certexpiry"
)

// Credentials serve the certificate (re-read when it changes on disk) and,
// with a client CA, require a client certificate it signed.
func Credentials(certFile, keyFile, clientCAFile string) (credentials.TransportCredentials, error) {
	if _, err := tls.LoadX509KeyPair(certFile, keyFile); err != nil {
		return nil, fmt.Errorf("--grpc-auth-cert-file/--grpc-auth-key-file: %w", err)
	}
	certexpiry.File("grpc-serving", certexpiry.Serving, certFile)
	cfg := &tls.Config{MinVersion: tls.VersionTLS12, GetCertificate: reloading(certFile, keyFile)}
	if clientCAFile != "" {
		pem, err := os.ReadFile(clientCAFile)
		if err != nil {
			return nil, fmt.Errorf("--grpc-client-ca-file: %w", err)
		}
		pool := x509.NewCertPool()
		if !pool.AppendCertsFromPEM(pem) {
			return nil, fmt.Errorf("--grpc-client-ca-file=%s: no PEM certificate in it", clientCAFile)
		}
		certexpiry.File("grpc-client-ca", certexpiry.CA, clientCAFile)
		cfg.ClientCAs, cfg.ClientAuth = pool, tls.RequireAndVerifyClientCert
		cfg.VerifyPeerCertificate = refuseServingCertificates
	}
	return credentials.NewTLS(cfg), nil
}

// reloading serves the key pair on disk, read again when the certificate
// file changes (certs renew).
func reloading(certFile, keyFile string) func(*tls.ClientHelloInfo) (*tls.Certificate, error) {
	var mu sync.Mutex
	var cached *tls.Certificate
	var mod time.Time
	return func(*tls.ClientHelloInfo) (*tls.Certificate, error) {
		mu.Lock()
		defer mu.Unlock()
		st, err := os.Stat(certFile)
		if err != nil {
			return cached, nil
		}
		if cached == nil || !st.ModTime().Equal(mod) {
			pair, err := tls.LoadX509KeyPair(certFile, keyFile)
			if err != nil {
				if cached != nil {
					return cached, nil
				}
				return nil, err
			}
			cached, mod = &pair, st.ModTime()
		}
		return cached, nil
	}
}

// refuseServingCertificates refuses a client certificate that names hosts:
// a serving certificate. Certificates made by Helm's template functions
// (the chart's) serve both ends, so without this one estimator's serving
// key, signed by the same CA as the scheduler's client certificate, would
// be answered by every other estimator.
func refuseServingCertificates(_ [][]byte, chains [][]*x509.Certificate) error {
	if len(chains) == 0 || len(chains[0]) == 0 {
		return nil
	}
	leaf := chains[0][0]
	if len(leaf.DNSNames) > 0 || len(leaf.IPAddresses) > 0 || len(leaf.URIs) > 0 {
		return fmt.Errorf("the client certificate %q names hosts (%v %v): a serving certificate is not a client's", leaf.Subject.CommonName, leaf.DNSNames, leaf.IPAddresses)
	}
	return nil
}
