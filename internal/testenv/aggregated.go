package testenv

import (
	"context"
	"fmt"
	"net"
	"path/filepath"
	"testing"
	"time"

	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/envtest"

	aggregatedapp "github.com/karmada-go/karmada/internal/aggregatedapiserver/app"
)

// StartAggregatedAPIServer runs karmada-aggregated-apiserver in this process
// (the command's own Run) on env's etcd, under a prefix of its own, with
// env's API server authenticating and authorizing its callers (delegated,
// as behind the aggregation layer) and as its --kubeconfig. It returns the
// configuration that reaches it directly as env's administrator; the
// server stops when the test ends.
func (e *Env) StartAggregatedAPIServer(t testing.TB) *rest.Config {
	t.Helper()
	dir := t.TempDir()
	kubeconfig := e.writeKubeconfig(t, dir+"/karmada.config")
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	port := l.Addr().(*net.TCPAddr).Port
	_ = l.Close()

	o := aggregatedapp.NewOptions()
	o.Recommended.Etcd.StorageConfig.Transport.ServerList = []string{e.env.ControlPlane.Etcd.URL.String()}
	o.Recommended.Etcd.StorageConfig.Prefix = "/karmada-aggregated-apiserver"
	o.Recommended.SecureServing.BindAddress = net.ParseIP("127.0.0.1")
	o.Recommended.SecureServing.BindPort = port
	o.Recommended.SecureServing.ServerCert.CertDirectory = dir
	o.Recommended.CoreAPI.CoreAPIKubeconfigPath = kubeconfig
	o.Recommended.Authentication.RemoteKubeConfigFile = kubeconfig
	o.Recommended.Authorization.RemoteKubeConfigFile = kubeconfig
	// env's API server has no front proxy (its kube-system/
	// extension-apiserver-authentication has no requestheader CA, which
	// would leave the server without client CAs): its client CA is given.
	o.Recommended.Authentication.ClientCert.ClientCA = filepath.Join(e.env.ControlPlane.APIServer.CertDir, "client-cert-auth-ca.crt")
	o.Recommended.Authentication.RequestHeader.ClientCAFile = o.Recommended.Authentication.ClientCert.ClientCA
	// Decisions are not cached: a test changes RBAC and asks again.
	o.Recommended.Authorization.AllowCacheTTL, o.Recommended.Authorization.DenyCacheTTL = 0, 0
	if err := o.Validate(); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() {
		defer close(done)
		if err := aggregatedapp.Run(ctx, o); err != nil && ctx.Err() == nil {
			t.Errorf("karmada-aggregated-apiserver: %v", err)
		}
	}()
	t.Cleanup(func() {
		cancel()
		<-done
	})
	cfg := rest.CopyConfig(e.Config)
	cfg.Host = fmt.Sprintf("https://127.0.0.1:%d", port)
	// Its certificate is self-signed for the test.
	cfg.CAData, cfg.Insecure = nil, true
	Eventually(t, 30*time.Second, "karmada-aggregated-apiserver ready", func(ctx context.Context) error {
		hc, err := rest.HTTPClientFor(cfg)
		if err != nil {
			return err
		}
		resp, err := hc.Get(cfg.Host + "/readyz")
		if err != nil {
			return err
		}
		defer resp.Body.Close()
		if resp.StatusCode != 200 {
			return fmt.Errorf("/readyz answered %d", resp.StatusCode)
		}
		return nil
	})
	return cfg
}

// AddUser makes a user of env's API server (client certificate) and returns
// its configuration, reaching host when given (a server env authenticates
// for, such as karmada-aggregated-apiserver) or env's API server.
func (e *Env) AddUser(t testing.TB, name string, groups []string, host string) *rest.Config {
	t.Helper()
	u, err := e.env.ControlPlane.AddUser(envtest.User{Name: name, Groups: groups}, nil)
	if err != nil {
		t.Fatal(err)
	}
	cfg := u.Config()
	if host != "" {
		cfg.Host, cfg.CAData, cfg.Insecure = host, nil, true
	}
	return cfg
}
