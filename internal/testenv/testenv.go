// Package testenv gives integration tests a real kube-apiserver and etcd, from
// the binaries `make build` puts in bin/, with the Karmada CRDs installed.
package testenv

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"encoding/pem"
	"errors"
	"fmt"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"runtime"
	"sort"
	"strings"
	"testing"
	"time"

	authenticationv1 "k8s.io/api/authentication/v1"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/cache"
	"k8s.io/client-go/tools/clientcmd"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"
	"k8s.io/klog/v2"
	"k8s.io/utils/ptr"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/config"
	"sigs.k8s.io/controller-runtime/pkg/envtest"
	"sigs.k8s.io/controller-runtime/pkg/manager"
	metricsserver "sigs.k8s.io/controller-runtime/pkg/metrics/server"

	policyv1alpha1 "github.com/karmada-go/karmada/api/policy/v1alpha1"
	"github.com/karmada-go/karmada/internal/cli"
	"github.com/karmada-go/karmada/internal/scheme"
	"github.com/karmada-go/karmada/internal/webhook"
	webhookapp "github.com/karmada-go/karmada/internal/webhook/app"
)

// RepoRoot is the root of this repository, found from this file's location.
func RepoRoot() string {
	_, file, _, _ := runtime.Caller(0)
	return filepath.Join(filepath.Dir(file), "..", "..")
}

// BinDir is where the upstream binaries are: $KUBEBUILDER_ASSETS, else bin/.
func BinDir() string {
	if dir := os.Getenv("KUBEBUILDER_ASSETS"); dir != "" {
		return dir
	}
	return filepath.Join(RepoRoot(), "bin")
}

// Env is a running API server for one test.
type Env struct {
	Config *rest.Config
	Client client.Client
	env    *envtest.Environment
}

// Start runs kube-apiserver and etcd with the Karmada CRDs installed and stops
// them when the test ends. A missing binary fails the test: it is never
// skipped.
func Start(t testing.TB) *Env {
	t.Helper()
	return start(t, true)
}

// StartMember runs a kube-apiserver and etcd without the Karmada CRDs, as a
// member cluster's API server (no controllers run in it), and stops them
// when the test ends.
func StartMember(t testing.TB) *Env {
	t.Helper()
	return start(t, false)
}

func start(t testing.TB, crds bool) *Env {
	t.Helper()
	ctrl.SetLogger(klog.NewKlogr())
	bin := BinDir()
	for _, b := range []string{"kube-apiserver", "etcd"} {
		if _, err := os.Stat(filepath.Join(bin, b)); err != nil {
			t.Fatalf("integration tests need %s: run `make build` (or set KUBEBUILDER_ASSETS)", filepath.Join(bin, b))
		}
	}
	env := &envtest.Environment{BinaryAssetsDirectory: bin}
	if crds {
		env.CRDDirectoryPaths = []string{filepath.Join(RepoRoot(), "config", "crd")}
		env.ErrorIfCRDPathMissing = true
	}
	cfg, err := env.Start()
	if err != nil {
		t.Fatalf("starting kube-apiserver and etcd: %v", err)
	}
	t.Cleanup(func() {
		if err := env.Stop(); err != nil {
			t.Errorf("stopping kube-apiserver and etcd: %v", err)
		}
	})
	c, err := client.New(cfg, client.Options{Scheme: scheme.Scheme})
	if err != nil {
		t.Fatal(err)
	}
	return &Env{Config: cfg, Client: c, env: env}
}

// RunManager starts a controller-runtime manager on env with the project's
// scheme, lets setup add controllers to it, and stops it when the test ends
// or when the function it returns is called (which waits until it has
// stopped). Metrics are off; controller names may repeat across tests.
func (e *Env) RunManager(t testing.TB, setup func(context.Context, manager.Manager) error) (stop func()) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	mgr, err := ctrl.NewManager(e.Config, ctrl.Options{
		Scheme:     scheme.Scheme,
		Metrics:    metricsserver.Options{BindAddress: "0"},
		Controller: config.Controller{SkipNameValidation: ptr.To(true)},
		Logger:     klog.NewKlogr(),
	})
	if err != nil {
		cancel()
		t.Fatal(err)
	}
	if err := setup(ctx, mgr); err != nil {
		cancel()
		t.Fatal(err)
	}
	done := make(chan struct{})
	go func() {
		defer close(done)
		if err := mgr.Start(ctx); err != nil {
			t.Errorf("manager: %v", err)
		}
	}()
	stop = func() {
		cancel()
		<-done
	}
	t.Cleanup(stop)
	return stop
}

// RunInformer runs inf until ctx ends and waits for its first list, failing
// the test if that takes more than a minute.
func RunInformer(ctx context.Context, t testing.TB, inf cache.SharedIndexInformer) {
	t.Helper()
	go inf.Run(ctx.Done())
	sctx, cancel := context.WithTimeout(ctx, time.Minute)
	defer cancel()
	if !cache.WaitForCacheSync(sctx.Done(), inf.HasSynced) {
		t.Fatal("the informer did not sync within a minute")
	}
}

// Eventually polls check every 100 ms until it returns nil or the timeout
// passes, then fails the test with check's last error.
func Eventually(t testing.TB, timeout time.Duration, what string, check func(ctx context.Context) error) {
	t.Helper()
	var last, telling error
	err := wait.PollUntilContextTimeout(context.Background(), 100*time.Millisecond, timeout, true, func(ctx context.Context) (bool, error) {
		last = check(ctx)
		// The check cut short by the deadline says less than the one
		// before it: that one is reported too.
		if last != nil && !errors.Is(last, context.DeadlineExceeded) && !strings.Contains(last.Error(), "would exceed context deadline") {
			telling = last
		}
		return last == nil, nil
	})
	if err != nil {
		if telling != nil && telling != last {
			t.Fatalf("%s: not within %s: %v (before the deadline: %v)", what, timeout, last, telling)
		}
		t.Fatalf("%s: not within %s: %v", what, timeout, last)
	}
}

// Consistently checks every 100 ms for the whole period that check holds,
// and fails the test at the first time it does not: for what must not
// happen (a move, a deletion) within a period.
func Consistently(t testing.TB, period time.Duration, what string, check func(ctx context.Context) error) {
	t.Helper()
	start := time.Now()
	for {
		// Each check gets its own time, not what is left of the period: a
		// client call near its end must not fail for the period's sake.
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		err := check(ctx)
		cancel()
		if err != nil {
			t.Fatalf("%s: not so after %s: %v", what, time.Since(start).Round(time.Millisecond), err)
		}
		if time.Since(start) >= period {
			return
		}
		select {
		case <-time.After(100 * time.Millisecond):
		case <-t.Context().Done():
			return
		}
	}
}

// MemberCredentials makes, in a member started by StartMember, a service
// account with cluster-admin rights and returns a token of it and the
// server's CA bundle: what karmadactl join stores for the controller manager.
func MemberCredentials(ctx context.Context, t testing.TB, member *Env) (token string, caBundle []byte) {
	t.Helper()
	c := member.Client
	sa := &corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Namespace: "kube-system", Name: "karmada-test"}}
	if err := c.Create(ctx, sa); err != nil {
		t.Fatal(err)
	}
	crb := &rbacv1.ClusterRoleBinding{
		ObjectMeta: metav1.ObjectMeta{Name: "karmada-test"},
		RoleRef:    rbacv1.RoleRef{APIGroup: "rbac.authorization.k8s.io", Kind: "ClusterRole", Name: "cluster-admin"},
		Subjects:   []rbacv1.Subject{{Kind: "ServiceAccount", Namespace: "kube-system", Name: "karmada-test"}},
	}
	if err := c.Create(ctx, crb); err != nil {
		t.Fatal(err)
	}
	tr := &authenticationv1.TokenRequest{Spec: authenticationv1.TokenRequestSpec{ExpirationSeconds: ptr.To[int64](3600)}}
	if err := c.SubResource("token").Create(ctx, sa, tr); err != nil {
		t.Fatalf("requesting a token: %v", err)
	}
	return tr.Status.Token, member.Config.CAData
}

// writeKubeconfig writes env's administrator credentials as a kubeconfig
// file at path and returns path.
func (e *Env) writeKubeconfig(t testing.TB, path string) string {
	t.Helper()
	kc := clientcmdapi.NewConfig()
	kc.Clusters["env"] = &clientcmdapi.Cluster{Server: e.Config.Host, CertificateAuthorityData: e.Config.CAData}
	kc.AuthInfos["env"] = &clientcmdapi.AuthInfo{ClientCertificateData: e.Config.CertData, ClientKeyData: e.Config.KeyData, Token: e.Config.BearerToken}
	kc.Contexts["env"] = &clientcmdapi.Context{Cluster: "env", AuthInfo: "env"}
	kc.CurrentContext = "env"
	if err := clientcmd.WriteToFile(*kc, path); err != nil {
		t.Fatal(err)
	}
	return path
}

// StartWebhook runs karmada-webhook in this process (the command's own Run)
// with a certificate from a CA made for the test, registers it with env's
// API server as karmada-local does (admission, and the bindings' CRD
// conversion), and waits until the API server calls it. It uses env's
// administrator credentials as its --kubeconfig (its Cluster lookups and
// SubjectAccessReviews). It stops when the
// test ends.
func (e *Env) StartWebhook(t testing.TB) {
	t.Helper()
	dir := t.TempDir()
	caCert, cert, key := servingCert(t, dir)
	caPEM := pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: caCert.Raw})
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	port := l.Addr().(*net.TCPAddr).Port
	_ = l.Close()
	opts := &webhookapp.Options{BindAddress: "127.0.0.1", SecurePort: port, CertDir: filepath.Dir(cert), CertName: filepath.Base(cert), KeyName: filepath.Base(key),
		TLSMinVersion: "1.3", Metrics: cli.MetricsFlags{BindAddress: "0"}, HealthProbeBindAddress: "0",
		DefaultNotReadyTolerationSeconds: webhook.DefaultTolerationSeconds, DefaultUnreachableTolerationSeconds: webhook.DefaultTolerationSeconds,
		Kubeconfig: e.writeKubeconfig(t, filepath.Join(dir, "webhook.kubeconfig"))}
	if err := opts.Validate(); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() {
		defer close(done)
		if err := webhookapp.Run(ctx, opts); err != nil && ctx.Err() == nil {
			t.Errorf("karmada-webhook: %v", err)
		}
	}()
	t.Cleanup(func() {
		cancel()
		<-done
	})

	url := fmt.Sprintf("https://127.0.0.1:%d", port)
	pool := x509.NewCertPool()
	pool.AddCert(caCert)
	hc := &http.Client{Transport: &http.Transport{TLSClientConfig: &tls.Config{RootCAs: pool, MinVersion: tls.VersionTLS13}}}
	Eventually(t, 10*time.Second, "karmada-webhook ready", func(ctx context.Context) error {
		resp, err := hc.Get(url + "/readyz")
		if err != nil {
			return err
		}
		defer resp.Body.Close()
		if resp.StatusCode != http.StatusOK {
			return fmt.Errorf("/readyz answered %d", resp.StatusCode)
		}
		return nil
	})
	ctx = context.Background()
	if err := webhook.Register(ctx, e.Client, scheme.Scheme, url, caPEM); err != nil {
		t.Fatal(err)
	}
	for _, name := range webhook.ConvertedCRDs {
		Eventually(t, 10*time.Second, "conversion of "+name+" pointed at the webhook", func(ctx context.Context) error {
			crd := &apiextensionsv1.CustomResourceDefinition{}
			if err := e.Client.Get(ctx, client.ObjectKey{Name: name}, crd); err != nil {
				return err
			}
			webhook.SetConversion(crd, url, caPEM)
			return e.Client.Update(ctx, crd)
		})
	}
	// The API server picks the configurations up asynchronously: wait until
	// an invalid object is denied.
	Eventually(t, 10*time.Second, "the API server calling karmada-webhook", func(ctx context.Context) error {
		p := &policyv1alpha1.PropagationPolicy{ObjectMeta: metav1.ObjectMeta{Name: "probe", Namespace: "karmada-system"},
			Spec: policyv1alpha1.PropagationSpec{ResourceSelectors: []policyv1alpha1.ResourceSelector{{APIVersion: "v1", Kind: "ConfigMap"}}}}
		if err := e.Client.Create(ctx, p, client.DryRunAll); err == nil {
			return fmt.Errorf("a policy in karmada-system was admitted")
		}
		return nil
	})
}

// RunsLast fails the test when a test file of the package in the working
// directory sorts after file: Go runs a package's test files in the order
// of their names, and file's tests (a fleet restarted, a control plane
// uninstalled) must come after every other.
func RunsLast(t testing.TB, file string) {
	t.Helper()
	entries, err := os.ReadDir(".")
	if err != nil {
		t.Fatal(err)
	}
	var files []string
	for _, e := range entries {
		if strings.HasSuffix(e.Name(), "_test.go") {
			files = append(files, e.Name())
		}
	}
	sort.Strings(files)
	if last := files[len(files)-1]; last != file {
		t.Errorf("%s sorts after %s, whose tests must run last; rename one of them", last, file)
	}
}
