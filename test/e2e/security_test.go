//go:build e2e

package e2e

import (
	"bytes"
	"crypto/tls"
	"crypto/x509"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// Secrets are encrypted in etcd: member1's credentials in the control
// plane, read straight from etcd, are AES-CBC ciphertext, not the token.
func TestSecretsEncryptedAtRest(t *testing.T) {
	pki := filepath.Join(fleet.stateDir, "etcd", "pki")
	pair, err := tls.LoadX509KeyPair(filepath.Join(pki, "apiserver-etcd-client.crt"), filepath.Join(pki, "apiserver-etcd-client.key"))
	if err != nil {
		t.Fatal(err)
	}
	caPEM, err := os.ReadFile(filepath.Join(pki, "ca.crt"))
	if err != nil {
		t.Fatal(err)
	}
	pool := x509.NewCertPool()
	pool.AppendCertsFromPEM(caPEM)
	hc := &http.Client{Transport: &http.Transport{TLSClientConfig: &tls.Config{RootCAs: pool, Certificates: []tls.Certificate{pair}, MinVersion: tls.VersionTLS12}}}
	key := "/registry-karmada/secrets/karmada-cluster/member1"
	body, _ := json.Marshal(map[string]string{"key": base64.StdEncoding.EncodeToString([]byte(key))})
	resp, err := hc.Post(fmt.Sprintf("https://127.0.0.1:%d/v3/kv/range", fleet.portBase+8), "application/json", bytes.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	data, _ := io.ReadAll(resp.Body)
	var out struct {
		KVs []struct {
			Value string `json:"value"`
		} `json:"kvs"`
	}
	if err := json.Unmarshal(data, &out); err != nil || len(out.KVs) != 1 {
		t.Fatalf("etcd answered %d %s (%v): want the one key %s", resp.StatusCode, data, err, key)
	}
	stored, err := base64.StdEncoding.DecodeString(out.KVs[0].Value)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.HasPrefix(stored, []byte("k8s:enc:aescbc:v1:key1:")) {
		t.Fatalf("member1's credentials are stored as %q..., want AES-CBC ciphertext", stored[:min(len(stored), 40)])
	}
	if strings.Contains(string(stored), "token") || strings.Contains(string(stored), "caBundle") {
		t.Fatal("the stored Secret shows its keys in plain text")
	}
}
