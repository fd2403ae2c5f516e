package integration

import (
	"context"
	"crypto/x509"
	"encoding/pem"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"helm.sh/helm/v3/pkg/chart"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/cli-runtime/pkg/genericclioptions"
	"k8s.io/client-go/discovery"
	"k8s.io/client-go/discovery/cached/memory"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/restmapper"
	"k8s.io/client-go/tools/clientcmd"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"
	"sigs.k8s.io/yaml"

	"github.com/karmada-go/karmada/internal/helmchart"
	"github.com/karmada-go/karmada/internal/testenv"
)

// warnings collects the API server's warnings (Pod Security's among them).
type warnings struct {
	mu   sync.Mutex
	list []string
}

func (w *warnings) HandleWarningHeader(_ int, _ string, text string) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.list = append(w.list, text)
}

// Every object the chart renders, with each set of values that changes
// its kinds, is accepted by a real kube-apiserver (server-side dry run) in
// a namespace that enforces restricted Pod Security, without a warning.
func TestChartObjectsAreAcceptedByARealAPIServer(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	env := testenv.StartMember(t)
	cfg := rest.CopyConfig(env.Config)
	w := &warnings{}
	cfg.WarningHandler = w
	kc, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		t.Fatal(err)
	}
	dyn, err := dynamic.NewForConfig(cfg)
	if err != nil {
		t.Fatal(err)
	}
	dc, err := discovery.NewDiscoveryClientForConfig(cfg)
	if err != nil {
		t.Fatal(err)
	}
	mapper := restmapper.NewDeferredDiscoveryRESTMapper(memory.NewMemCacheClient(dc))
	ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: helmchart.DefaultNamespace, Labels: map[string]string{
		"pod-security.kubernetes.io/enforce": "restricted", "pod-security.kubernetes.io/warn": "restricted"}}}
	if _, err := kc.CoreV1().Namespaces().Create(ctx, ns, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	ch, err := helmchart.Load()
	if err != nil {
		t.Fatal(err)
	}
	for _, vals := range []string{
		"",
		"etcd: {internal: {replicaCount: 3, storageType: emptyDir}}\napiServer: {replicaCount: 2, serviceType: NodePort, nodePort: 32443, externalURL: 'https://10.0.0.1:32443'}\nscheduler: {replicaCount: 2}",
		"etcd: {mode: external, external: {servers: 'https://e:2379', certs: {caCrt: a, crt: b, key: c}}}\napiServer: {serviceType: LoadBalancer}",
		"installMode: agent\nagent: {clusterName: member1}",
		"installMode: agent\nagent: {clusterName: member1, memberKubeconfigSecret: m1, kubeconfig: {caCrt: a, crt: b, key: c, server: 'https://k:1'}}",
	} {
		v := map[string]any{}
		if err := yaml.Unmarshal([]byte(vals), &v); err != nil {
			t.Fatal(err)
		}
		r, err := helmchart.Render(ctx, ch, v, helmchart.DefaultRelease, helmchart.DefaultNamespace)
		if err != nil {
			t.Fatalf("values %q: %v", vals, err)
		}
		docs := []string{}
		for _, m := range r.Manifests {
			docs = append(docs, m.Content)
		}
		for _, h := range r.Hooks {
			docs = append(docs, h.Manifest)
		}
		n := 0
		for _, d := range docs {
			u := &unstructured.Unstructured{}
			if err := yaml.Unmarshal([]byte(d), &u.Object); err != nil {
				t.Fatal(err)
			}
			if len(u.Object) == 0 {
				continue
			}
			gvk := u.GroupVersionKind()
			m, err := mapper.RESTMapping(gvk.GroupKind(), gvk.Version)
			if err != nil {
				t.Fatalf("values %q: %s is not served: %v", vals, gvk, err)
			}
			w.mu.Lock()
			w.list = nil
			w.mu.Unlock()
			_, err = dyn.Resource(m.Resource).Namespace(u.GetNamespace()).Create(ctx, u, metav1.CreateOptions{DryRun: []string{metav1.DryRunAll}, FieldValidation: "Strict"})
			if err != nil {
				t.Errorf("values %q: the API server refuses %s %s: %v", vals, u.GetKind(), u.GetName(), err)
			}
			w.mu.Lock()
			if len(w.list) > 0 {
				t.Errorf("values %q: %s %s draws warnings: %v", vals, u.GetKind(), u.GetName(), w.list)
			}
			w.mu.Unlock()
			n++
		}
		if n == 0 {
			t.Errorf("values %q rendered nothing", vals)
		}
	}
}

// Install, upgrade and uninstall through the Helm SDK against a real API
// server: an upgrade keeps every certificate and key it made (read back
// with lookup), except the karmada-apiserver's serving certificate when
// its names change, which is made anew with the same CA; uninstall removes
// every object.
func TestChartUpgradeKeepsCertificates(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	kc, ch, o := installChart(ctx, t)
	first := certSecret(ctx, t, kc)
	rel, err := helmchart.Apply(ctx, ch, map[string]any{"certs": map[string]any{"auto": map[string]any{"hosts": []any{"karmada.example.com"}}}}, o)
	if err != nil {
		t.Fatal(err)
	}
	if rel.Version != 2 {
		t.Errorf("release revision %d after the upgrade, want 2", rel.Version)
	}
	second := certSecret(ctx, t, kc)
	for k, v := range first {
		if k == "apiserver.crt" || k == "apiserver.key" {
			continue
		}
		if string(second[k]) != string(v) {
			t.Errorf("%s changed on upgrade: certificates and keys must be kept", k)
		}
	}
	if string(second["apiserver.crt"]) == string(first["apiserver.crt"]) {
		t.Fatalf("the serving certificate was kept though certs.auto.hosts changed")
	}
	block, _ := pem.Decode(second["apiserver.crt"])
	c, err := x509.ParseCertificate(block.Bytes)
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Contains(c.DNSNames, "karmada.example.com") {
		t.Errorf("new serving certificate names %v, want karmada.example.com among them", c.DNSNames)
	}
	pool := x509.NewCertPool()
	caBlock, _ := pem.Decode(first["ca.crt"])
	ca, _ := x509.ParseCertificate(caBlock.Bytes)
	pool.AddCert(ca)
	if _, err := c.Verify(x509.VerifyOptions{Roots: pool, DNSName: "karmada.example.com"}); err != nil {
		t.Errorf("new serving certificate not signed by the kept CA: %v", err)
	}
	// The same values again: nothing changes.
	if _, err := helmchart.Apply(ctx, ch, map[string]any{"certs": map[string]any{"auto": map[string]any{"hosts": []any{"karmada.example.com"}}}}, o); err != nil {
		t.Fatal(err)
	}
	third := certSecret(ctx, t, kc)
	for k, v := range second {
		if string(third[k]) != string(v) {
			t.Errorf("%s changed on an upgrade with the same values", k)
		}
	}

	found, err := helmchart.Uninstall(o)
	if err != nil || !found {
		t.Fatalf("uninstall: found %v, %v", found, err)
	}
	ns := o.Namespace
	lists := map[string]func() (int, error){
		"secrets": func() (int, error) {
			l, err := kc.CoreV1().Secrets(ns).List(ctx, metav1.ListOptions{})
			return lenOr(l, err)
		},
		"services": func() (int, error) {
			l, err := kc.CoreV1().Services(ns).List(ctx, metav1.ListOptions{})
			return lenOr(l, err)
		},
		"deployments": func() (int, error) {
			l, err := kc.AppsV1().Deployments(ns).List(ctx, metav1.ListOptions{})
			return lenOr(l, err)
		},
		"statefulsets": func() (int, error) {
			l, err := kc.AppsV1().StatefulSets(ns).List(ctx, metav1.ListOptions{})
			return lenOr(l, err)
		},
		"jobs": func() (int, error) {
			l, err := kc.BatchV1().Jobs(ns).List(ctx, metav1.ListOptions{})
			return lenOr(l, err)
		},
		"poddisruptionbudgets": func() (int, error) {
			l, err := kc.PolicyV1().PodDisruptionBudgets(ns).List(ctx, metav1.ListOptions{})
			return lenOr(l, err)
		},
	}
	for kind, list := range lists {
		n, err := list()
		if err != nil {
			t.Fatal(err)
		}
		if n > 0 {
			t.Errorf("%d %s left after uninstall", n, kind)
		}
	}
	// Uninstalling again finds nothing, and is no error.
	if found, err := helmchart.Uninstall(o); err != nil || found {
		t.Errorf("second uninstall: found %v, %v", found, err)
	}
}

// installChart installs the chart with its defaults on an API server of the
// test's own, and returns a client of it, the chart and the options to
// upgrade it with.
func installChart(ctx context.Context, t *testing.T) (kubernetes.Interface, *chart.Chart, helmchart.Options) {
	t.Helper()
	env := testenv.StartMember(t)
	kc, err := kubernetes.NewForConfig(env.Config)
	if err != nil {
		t.Fatal(err)
	}
	ch, err := helmchart.Load()
	if err != nil {
		t.Fatal(err)
	}
	o := helmchart.Options{Getter: getterFor(t, env.Config), Namespace: helmchart.DefaultNamespace, Release: helmchart.DefaultRelease, CreateNamespace: true, Timeout: time.Minute}
	if _, err := helmchart.Apply(ctx, ch, map[string]any{}, o); err != nil {
		t.Fatal(err)
	}
	return kc, ch, o
}

func certSecret(ctx context.Context, t *testing.T, kc kubernetes.Interface) map[string][]byte {
	t.Helper()
	s, err := kc.CoreV1().Secrets(helmchart.DefaultNamespace).Get(ctx, "karmada-cert", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if len(s.Data["ca.key"]) == 0 {
		t.Fatalf("karmada-cert holds no CA key: %v", keysOf(s.Data))
	}
	return s.Data
}

func keysOf(m map[string][]byte) []string {
	out := []string{}
	for k := range m {
		out = append(out, k)
	}
	slices.Sort(out)
	return out
}

// getterFor writes a kubeconfig for cfg, as the Helm SDK reads one.
func getterFor(t *testing.T, cfg *rest.Config) genericclioptions.RESTClientGetter {
	t.Helper()
	kc := clientcmdapi.NewConfig()
	kc.Clusters["env"] = &clientcmdapi.Cluster{Server: cfg.Host, CertificateAuthorityData: cfg.CAData}
	kc.AuthInfos["env"] = &clientcmdapi.AuthInfo{ClientCertificateData: cfg.CertData, ClientKeyData: cfg.KeyData, Token: cfg.BearerToken}
	kc.Contexts["env"] = &clientcmdapi.Context{Cluster: "env", AuthInfo: "env"}
	kc.CurrentContext = "env"
	path := filepath.Join(t.TempDir(), "kubeconfig")
	if err := clientcmd.WriteToFile(*kc, path); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(path); err != nil {
		t.Fatal(err)
	}
	f := genericclioptions.NewConfigFlags(false)
	ns := helmchart.DefaultNamespace
	f.KubeConfig, f.Namespace = &path, &ns
	return f
}

// lenOr is the number of items of a list, or its error.
func lenOr(l metav1.ListInterface, err error) (int, error) {
	if err != nil {
		return 0, err
	}
	return meta.LenList(l.(runtime.Object)), nil
}

// certs.auto.renewal: a new token at an upgrade makes every leaf certificate
// anew, signed by the kept CAs (the service account and encryption keys
// kept too), the components' client certificates included; the same token
// again changes nothing.
func TestChartRenewsCertificates(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	kc, ch, o := installChart(ctx, t)
	renewal := func(token string) map[string]any {
		return map[string]any{"certs": map[string]any{"auto": map[string]any{"renewal": token}}}
	}
	clientCert := func() []byte {
		s, err := kc.CoreV1().Secrets(helmchart.DefaultNamespace).Get(ctx, "karmada-controller-manager-kubeconfig", metav1.GetOptions{})
		if err != nil {
			t.Fatal(err)
		}
		return s.Data["tls.crt"]
	}
	first, firstClient := certSecret(ctx, t, kc), clientCert()
	if _, err := helmchart.Apply(ctx, ch, renewal("2026-11-27"), o); err != nil {
		t.Fatal(err)
	}
	second, secondClient := certSecret(ctx, t, kc), clientCert()
	kept := map[string]bool{"ca.crt": true, "ca.key": true, "sa.key": true, "encryption.key": true, "etcd-ca.crt": true, "etcd-ca.key": true}
	roots := map[string]*x509.CertPool{}
	for _, ca := range []string{"ca.crt", "etcd-ca.crt", "front-proxy-ca.crt"} {
		roots[ca] = x509.NewCertPool()
		roots[ca].AppendCertsFromPEM(second[ca])
	}
	for k, v := range first {
		switch {
		case kept[k] && string(second[k]) != string(v):
			t.Errorf("%s changed on renewal; it must be kept", k)
		case !kept[k] && strings.HasSuffix(k, ".crt") && k != "front-proxy-ca.crt" && string(second[k]) == string(v):
			t.Errorf("%s was not renewed", k)
		}
		if !strings.HasSuffix(k, ".crt") || strings.HasSuffix(k, "ca.crt") {
			continue
		}
		block, _ := pem.Decode(second[k])
		c, err := x509.ParseCertificate(block.Bytes)
		if err != nil {
			t.Fatalf("%s: %v", k, err)
		}
		root := roots["ca.crt"]
		switch {
		case strings.HasPrefix(k, "etcd-"):
			root = roots["etcd-ca.crt"]
		case strings.HasPrefix(k, "front-proxy-"):
			root = roots["front-proxy-ca.crt"]
		}
		if _, err := c.Verify(x509.VerifyOptions{Roots: root, KeyUsages: []x509.ExtKeyUsage{x509.ExtKeyUsageAny}}); err != nil {
			t.Errorf("renewed %s does not verify against its kept CA: %v", k, err)
		}
	}
	if string(firstClient) == string(secondClient) || string(secondClient) != string(second["karmada-controller-manager.crt"]) {
		t.Error("the controller manager's client certificate beside its kubeconfig was not renewed")
	}
	// The same token again: nothing changes.
	if _, err := helmchart.Apply(ctx, ch, renewal("2026-11-27"), o); err != nil {
		t.Fatal(err)
	}
	third := certSecret(ctx, t, kc)
	for k, v := range second {
		if string(third[k]) != string(v) {
			t.Errorf("%s changed on an upgrade with the same renewal token", k)
		}
	}
}
