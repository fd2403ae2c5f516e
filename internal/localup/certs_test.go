package localup

import (
	"os"
	"path/filepath"
	"reflect"
	"testing"
	"time"

	"github.com/karmada-go/karmada/internal/certexpiry"
	"github.com/karmada-go/karmada/internal/localup/process"
)

func TestResidual(t *testing.T) {
	for d, want := range map[time.Duration]string{-time.Minute: "expired", 0: "expired", 30 * time.Minute: "30m", 5 * time.Hour: "5h", 400 * 24 * time.Hour: "400d"} {
		if got := certexpiry.Residual(d); got != want {
			t.Errorf("residual(%s) = %s, want %s", d, got, want)
		}
	}
}

func TestCertificateUsers(t *testing.T) {
	dir := t.TempDir()
	kc := filepath.Join(dir, "kubeconfig")
	if err := os.WriteFile(kc, []byte(`apiVersion: v1
kind: Config
clusters: [{name: c, cluster: {server: "https://127.0.0.1:1", certificate-authority: /pki/ca.crt}}]
users: [{name: u, user: {client-certificate: /pki/u.crt, client-key: /pki/u.key}}]
contexts: [{name: c, context: {cluster: c, user: u}}]
current-context: c
`), 0o600); err != nil {
		t.Fatal(err)
	}
	users := certificateUsers([]*process.Step{
		{Name: "a", Binary: "x", Args: []string{"--tls-cert-file=/pki/srv.crt", "--kubeconfig=" + kc}},
		{Name: "b", Binary: "x", Args: []string{"--cert-dir=/pki", "--tls-cert-file-name=hook.crt", "--etcd-cafile=/pki/ca.crt"}},
		{Name: "task", Args: []string{"--tls-cert-file=/pki/srv.crt"}},
	})
	want := map[string][]string{"/pki/srv.crt": {"a"}, "/pki/u.crt": {"a"}, "/pki/ca.crt": {"a", "b"}, "/pki/hook.crt": {"b"}}
	if !reflect.DeepEqual(users, want) {
		t.Errorf("users %v, want %v", users, want)
	}
}
