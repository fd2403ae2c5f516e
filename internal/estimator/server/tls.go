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
