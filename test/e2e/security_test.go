//go:build e2e

package e2e

import (
	"bytes"
	"context"
	"crypto/tls"
	"crypto/x509"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	clientv3 "go.etcd.io/etcd/client/v3"
	"go.uber.org/zap"
)

// etcdGet reads one key from the fleet's etcd, over gRPC, with the client
// certificate <cert>.crt of its PKI: the values found, or etcd's error.
func etcdGet(t *testing.T, cert, key string) ([][]byte, error) {
	t.Helper()
	pki := filepath.Join(fleet.StateDir, "etcd", "pki")
	pair, err := tls.LoadX509KeyPair(filepath.Join(pki, cert+".crt"), filepath.Join(pki, cert+".key"))
	if err != nil {
		t.Fatal(err)
	}
	caPEM, err := os.ReadFile(filepath.Join(pki, "ca.crt"))
	if err != nil {
		t.Fatal(err)
	}
	pool := x509.NewCertPool()
	pool.AppendCertsFromPEM(caPEM)
	cli, err := clientv3.New(clientv3.Config{
		Endpoints:   []string{fmt.Sprintf("https://127.0.0.1:%d", fleet.PortBase+8)},
		TLS:         &tls.Config{RootCAs: pool, Certificates: []tls.Certificate{pair}, MinVersion: tls.VersionTLS12},
		DialTimeout: 10 * time.Second, Logger: zap.NewNop(),
	})
	if err != nil {
		t.Fatal(err)
	}
	defer cli.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	resp, err := cli.Get(ctx, key)
	if err != nil {
		return nil, err
	}
	var values [][]byte
	for _, kv := range resp.Kvs {
		values = append(values, kv.Value)
	}
	return values, nil
}

// Secrets are encrypted in etcd: member1's credentials in the control
// plane, read straight from etcd, are secretbox (XSalsa20-Poly1305)
// ciphertext, not the token.
func TestSecretsEncryptedAtRest(t *testing.T) {
	key := "/registry-karmada/secrets/karmada-cluster/member1"
	values, err := etcdGet(t, "root-client", key)
	if err != nil || len(values) != 1 {
		t.Fatalf("etcd answered %d values (%v): want the one key %s", len(values), err, key)
	}
	stored := values[0]
	if !bytes.HasPrefix(stored, []byte("k8s:enc:secretbox:v1:secretbox1:")) {
		t.Fatalf("member1's credentials are stored as %q..., want secretbox ciphertext", stored[:min(len(stored), 40)])
	}
	if strings.Contains(string(stored), "token") || strings.Contains(string(stored), "caBundle") {
		t.Fatal("the stored Secret shows its keys in plain text")
	}
}

// Each API server reaches etcd as itself and only under its own prefix: a
// member's API server certificate cannot read the control plane's keys.
func TestAPIServersIsolatedInEtcd(t *testing.T) {
	key := "/registry-karmada/secrets/karmada-cluster/member1"
	if values, err := etcdGet(t, "apiserver-etcd-client-member1", key); len(values) != 0 || err == nil || !strings.Contains(err.Error(), "permission denied") {
		t.Errorf("member1's API server read the control plane's key %s: %d values (%v), want permission denied", key, len(values), err)
	}
	if values, err := etcdGet(t, "apiserver-etcd-client-karmada", key); err != nil || len(values) != 1 {
		t.Errorf("the karmada-apiserver cannot read its own key %s: %d values (%v)", key, len(values), err)
	}
	own := "/registry-member1/namespaces/kube-system"
	if values, err := etcdGet(t, "apiserver-etcd-client-member1", own); err != nil || len(values) != 1 {
		t.Errorf("member1's API server cannot read its own key %s: %d values (%v)", own, len(values), err)
	}
}
