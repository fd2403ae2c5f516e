//go:build e2e

package e2e

// The adversarial suite: each test acts as an attacker with the attacker's
// own credentials (a bootstrap token, an agent's kubeconfig, a tenant's
// namespaced rights) and asserts that the boundary docs/security.md
// promises holds and that nothing was changed or deleted.

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"encoding/pem"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials"
	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	authorizationv1 "k8s.io/api/authorization/v1"
	certificatesv1 "k8s.io/api/certificates/v1"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/types"
	utilrand "k8s.io/apimachinery/pkg/util/rand"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
	"k8s.io/client-go/util/retry"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	clusterv1alpha1 "github.com/karmada-go/karmada/api/cluster/v1alpha1"
	configv1alpha1 "github.com/karmada-go/karmada/api/config/v1alpha1"
	policyv1alpha1 "github.com/karmada-go/karmada/api/policy/v1alpha1"
	searchv1alpha1 "github.com/karmada-go/karmada/api/search/v1alpha1"
	workv1alpha1 "github.com/karmada-go/karmada/api/work/v1alpha1"
	workv1alpha2 "github.com/karmada-go/karmada/api/work/v1alpha2"
	"github.com/karmada-go/karmada/internal/estimator/pb"
	"github.com/karmada-go/karmada/internal/estimator/service"
	"github.com/karmada-go/karmada/internal/localup"
	"github.com/karmada-go/karmada/internal/names"
	"github.com/karmada-go/karmada/internal/registration/agentcert"
	"github.com/karmada-go/karmada/internal/scheme"
	"github.com/karmada-go/karmada/internal/testenv"
)

// bootstrapToken creates a bootstrap token (as an administrator would hand
// one out) and returns a client configuration acting with it.
func bootstrapToken(t *testing.T) *rest.Config {
	t.Helper()
	out, err := karmadactl("token", "create", "--ttl", "10m", "--print-register-command")
	if err != nil {
		t.Fatalf("token create: %v\n%s", err, out)
	}
	f := strings.Fields(out)
	if len(f) < 5 {
		t.Fatalf("token create printed %q", out)
	}
	tok := f[4]
	id, _, _ := strings.Cut(tok, ".")
	t.Cleanup(func() { _, _ = karmadactl("token", "delete", id) })
	cfg := restConfig(t, "karmada-apiserver")
	return &rest.Config{Host: cfg.Host, BearerToken: tok, TLSClientConfig: rest.TLSClientConfig{CAData: cfg.CAData}, Timeout: 10 * time.Second}
}

// agentCSR is a certificate request for an agent identity, made with a
// fresh key: the subject's organizations as given.
func agentCSR(t *testing.T, name, cn string, orgs ...string) *certificatesv1.CertificateSigningRequest {
	t.Helper()
	return &certificatesv1.CertificateSigningRequest{ObjectMeta: metav1.ObjectMeta{Name: name}, Spec: certificatesv1.CertificateSigningRequestSpec{
		Request:    testenv.CertificateRequest(t, cn, orgs),
		SignerName: certificatesv1.KubeAPIServerClientSignerName,
		Usages:     []certificatesv1.KeyUsage{certificatesv1.UsageDigitalSignature, certificatesv1.UsageClientAuth},
	}}
}

// neverIssued waits until the request is decided and fails the test unless
// it was denied without a certificate.
func neverIssued(ctx context.Context, t *testing.T, admin kubernetes.Interface, name string) {
	t.Helper()
	testenv.Eventually(t, 30*time.Second, "request "+name+" decided", func(ctx context.Context) error {
		got, err := admin.CertificatesV1().CertificateSigningRequests().Get(ctx, name, metav1.GetOptions{})
		if err != nil {
			return err
		}
		if len(got.Status.Certificate) > 0 {
			t.Fatalf("request %s was issued a certificate: %+v", name, got.Status.Conditions)
		}
		for _, c := range got.Status.Conditions {
			switch c.Type {
			case certificatesv1.CertificateApproved:
				t.Fatalf("request %s was approved: %s", name, c.Message)
			case certificatesv1.CertificateDenied:
				return nil
			}
		}
		return fmt.Errorf("undecided: %+v", got.Status.Conditions)
	})
}

// A bootstrap token holder cannot get a certificate for a registered pull
// cluster: not by reusing the name of the request that registered it (as if
// it had been garbage-collected), not with the registration's group, not
// with a group of its own key.
func TestBootstrapTokenCannotTakeOverARegisteredCluster(t *testing.T) {
	ctx := context.Background()
	c := karmadaClient(t)
	admin := kube(t, "karmada-apiserver")
	token, err := kubernetes.NewForConfig(bootstrapToken(t))
	if err != nil {
		t.Fatal(err)
	}
	cl := getCluster(ctx, t, c, "member3")
	recorded := cl.Annotations[clusterv1alpha1.RegistrationAnnotation]
	// The request that registered member3, as the CSR garbage collector
	// would leave it an hour later: gone.
	if recorded != "" {
		if err := admin.CertificatesV1().CertificateSigningRequests().Delete(ctx, recorded, metav1.DeleteOptions{}); err != nil && !apierrors.IsNotFound(err) {
			t.Fatal(err)
		}
	}
	cn := names.AgentUserPrefix + "member3"
	var attempts []*certificatesv1.CertificateSigningRequest
	if recorded != "" && !strings.HasPrefix(recorded, "sha256:") {
		attempts = append(attempts, agentCSR(t, recorded, cn, names.AgentGroup))
	}
	attempts = append(attempts, agentCSR(t, "e2e-takeover-"+utilrand.String(5), cn, names.AgentGroup))
	if id := strings.TrimPrefix(recorded, "sha256:"); id != recorded {
		attempts = append(attempts, agentCSR(t, "e2e-takeover-"+utilrand.String(5), cn, names.AgentGroup, names.AgentRegistrationGroupPrefix+id))
	}
	for _, csr := range attempts {
		if _, err := token.CertificatesV1().CertificateSigningRequests().Create(ctx, csr, metav1.CreateOptions{}); err != nil {
			t.Fatalf("creating request %s with the token: %v", csr.Name, err)
		}
		name := csr.Name
		t.Cleanup(func() {
			_ = admin.CertificatesV1().CertificateSigningRequests().Delete(context.Background(), name, metav1.DeleteOptions{})
		})
		neverIssued(ctx, t, admin, csr.Name)
	}
	if after := getCluster(ctx, t, c, "member3"); after.UID != cl.UID || after.Annotations[clusterv1alpha1.RegistrationAnnotation] != recorded {
		t.Errorf("member3's Cluster changed: uid %s (was %s), registration %q (was %q)", after.UID, cl.UID, after.Annotations[clusterv1alpha1.RegistrationAnnotation], recorded)
	}
}

// agentClient is a client of the control plane acting with an agent's
// kubeconfig.
func agentClient(t *testing.T, kubeconfig []byte) (client.Client, *rest.Config) {
	t.Helper()
	cfg, err := clientcmd.RESTConfigFromKubeConfig(kubeconfig)
	if err != nil {
		t.Fatal(err)
	}
	cfg.Timeout = 10 * time.Second
	ac, err := client.New(cfg, client.Options{Scheme: scheme.Scheme})
	if err != nil {
		t.Fatal(err)
	}
	return ac, cfg
}

// registerFromMember2 registers member2 as cluster name in pull mode with a
// fresh token and returns the agent's kubeconfig register stored.
func registerFromMember2(t *testing.T, name string) []byte {
	t.Helper()
	line, err := karmadactl("token", "create", "--ttl", "10m", "--print-register-command")
	if err != nil {
		t.Fatalf("token create: %v\n%s", err, line)
	}
	f := strings.Fields(line)
	id, _, _ := strings.Cut(f[4], ".")
	t.Cleanup(func() { _, _ = karmadactl("token", "delete", id) })
	args := append(f[1:], "--cluster-name", name, "--discovery-timeout", "60s", "--propagate-kinds", "configmaps")
	if out, err := runKarmadactl(append(args, "--kubeconfig", fleet.kubeconfig, "--context", "member2")...); err != nil {
		t.Fatalf("register %s: %v\n%s", name, err, out)
	}
	s, err := kube(t, "member2").CoreV1().Secrets(agentcert.Namespace).Get(context.Background(), agentcert.SecretName, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	return s.Data[agentcert.SecretKey]
}

// An agent certificate has a short lifetime, and one issued before an
// unregister, or before the name was registered again, has no rights
// afterwards: it reads no Cluster or Work and renews nothing.
func TestAgentCertificateDiesWithItsRegistration(t *testing.T) {
	ctx := context.Background()
	c := karmadaClient(t)
	const name = "e2e-rereg"
	mc := kube(t, "member2")
	t.Cleanup(func() {
		_, _ = karmadactl("unregister", name, "--cluster-kubeconfig", fleet.kubeconfig, "--cluster-context", "member2", "--force")
		_ = mc.CoreV1().Secrets(agentcert.Namespace).Delete(context.Background(), agentcert.SecretName, metav1.DeleteOptions{})
	})
	first := registerFromMember2(t, name)
	old, oldCfg := agentClient(t, first)
	if err := old.Get(ctx, client.ObjectKey{Name: name}, &clusterv1alpha1.Cluster{}); err != nil {
		t.Fatalf("the first certificate reads its own Cluster: %v", err)
	}
	block, _ := pem.Decode(oldCfg.CertData)
	cert, err := x509.ParseCertificate(block.Bytes)
	if err != nil {
		t.Fatal(err)
	}
	if life := cert.NotAfter.Sub(cert.NotBefore); life > 8*24*time.Hour {
		t.Errorf("the agent's certificate lives %s, want a short lifetime (a week by default)", life)
	}
	if out, err := karmadactl("unregister", name, "--cluster-kubeconfig", fleet.kubeconfig, "--cluster-context", "member2"); err != nil {
		t.Fatalf("unregister: %v\n%s", err, out)
	}
	testenv.Eventually(t, 60*time.Second, "the Cluster gone", func(ctx context.Context) error {
		if err := c.Get(ctx, client.ObjectKey{Name: name}, &clusterv1alpha1.Cluster{}); !apierrors.IsNotFound(err) {
			return fmt.Errorf("still there (%v)", err)
		}
		return nil
	})
	registerFromMember2(t, name)
	// The old certificate, kept by whoever copied it: no rights.
	testenv.Eventually(t, 30*time.Second, "the old certificate refused", func(ctx context.Context) error {
		if err := old.Get(ctx, client.ObjectKey{Name: name}, &clusterv1alpha1.Cluster{}); !apierrors.IsForbidden(err) {
			return fmt.Errorf("reading the re-registered Cluster: %v", err)
		}
		if err := old.List(ctx, &workv1alpha1.WorkList{}, client.InNamespace(workv1alpha1.ExecutionNamespace(name))); !apierrors.IsForbidden(err) {
			return fmt.Errorf("listing its Works: %v", err)
		}
		return nil
	})
	oldKube, err := kubernetes.NewForConfig(oldCfg)
	if err != nil {
		t.Fatal(err)
	}
	renewal := agentCSR(t, "e2e-old-renewal-"+utilrand.String(5), names.AgentUserPrefix+name, names.AgentGroup)
	if _, err := oldKube.CertificatesV1().CertificateSigningRequests().Create(ctx, renewal, metav1.CreateOptions{}); err == nil {
		t.Cleanup(func() {
			_ = kube(t, "karmada-apiserver").CertificatesV1().CertificateSigningRequests().Delete(context.Background(), renewal.Name, metav1.DeleteOptions{})
		})
		neverIssued(ctx, t, kube(t, "karmada-apiserver"), renewal.Name)
	} else if !apierrors.IsForbidden(err) {
		t.Fatalf("a renewal with the old certificate: %v", err)
	}
}

// An agent may not rewrite its own Cluster: not remove an administrator's
// quarantine taint, add labels or set its region; its status is its own.
func TestAgentCannotRewriteItsCluster(t *testing.T) {
	ctx := context.Background()
	c := karmadaClient(t)
	s, err := kube(t, "member3").CoreV1().Secrets(agentcert.Namespace).Get(ctx, agentcert.SecretName, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	agent, _ := agentClient(t, s.Data[agentcert.SecretKey])
	quarantine := corev1.Taint{Key: "e2e.example.com/quarantine", Effect: corev1.TaintEffectNoExecute}
	if out, err := karmadactl("taint", "clusters", "member3", quarantine.Key+":NoExecute"); err != nil {
		t.Fatalf("taint: %v\n%s", err, out)
	}
	t.Cleanup(func() { _, _ = karmadactl("taint", "clusters", "member3", quarantine.Key+":NoExecute-") })
	before := getCluster(ctx, t, c, "member3")
	for what, patch := range map[string]string{
		"remove the quarantine taint": `{"spec":{"taints":null}}`,
		"add a label":                 `{"metadata":{"labels":{"e2e-attract":"yes"}}}`,
		"set its region":              `{"spec":{"region":"e2e-elsewhere"}}`,
		"change its API endpoint":     `{"spec":{"apiEndpoint":"https://198.51.100.1:6443"}}`,
	} {
		err := agent.Patch(ctx, &clusterv1alpha1.Cluster{ObjectMeta: metav1.ObjectMeta{Name: "member3"}}, client.RawPatch(types.MergePatchType, []byte(patch)))
		if err == nil {
			t.Errorf("the agent could %s", what)
		} else if !apierrors.IsInvalid(err) && !apierrors.IsForbidden(err) {
			t.Errorf("the agent trying to %s: want Invalid or Forbidden, got %v", what, err)
		}
	}
	after := getCluster(ctx, t, c, "member3")
	if len(after.Spec.Taints) != len(before.Spec.Taints) || after.Labels["e2e-attract"] != "" || after.Spec.Region != before.Spec.Region || after.Spec.APIEndpoint != before.Spec.APIEndpoint {
		t.Errorf("member3's Cluster changed: taints %v, labels %v, region %q, endpoint %q", taintKeys(after), after.Labels, after.Spec.Region, after.Spec.APIEndpoint)
	}
	// Its own status stays its own.
	st := getCluster(ctx, t, c, "member3")
	if err := agent.Status().Update(ctx, st); err != nil {
		t.Errorf("the agent writing its Cluster's status: %v", err)
	}
}

// tenantClient acts as a tenant who may write templates and policies in
// namespace ns of the control plane only.
func tenantClient(ctx context.Context, t *testing.T, ns string) client.Client {
	t.Helper()
	tc, err := client.New(tenantConfig(ctx, t, ns), client.Options{Scheme: scheme.Scheme})
	if err != nil {
		t.Fatal(err)
	}
	return tc
}

// tenantConfig is the configuration of tenantClient's tenant.
func tenantConfig(ctx context.Context, t *testing.T, ns string) *rest.Config {
	t.Helper()
	c := karmadaClient(t)
	user := "e2e-tenant-" + utilrand.String(5)
	role := &rbacv1.Role{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "tenant"}, Rules: []rbacv1.PolicyRule{
		{APIGroups: []string{""}, Resources: []string{"configmaps", "resourcequotas", "limitranges", "secrets"}, Verbs: []string{"*"}},
		{APIGroups: []string{"policy.karmada.io"}, Resources: []string{"propagationpolicies", "overridepolicies"}, Verbs: []string{"get", "list", "watch", "create", "update", "patch", "delete"}},
		{APIGroups: []string{"work.karmada.io"}, Resources: []string{"resourcebindings"}, Verbs: []string{"get", "list", "watch", "create", "update", "patch", "delete"}},
	}}
	binding := &rbacv1.RoleBinding{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "tenant"},
		RoleRef: rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "Role", Name: "tenant"}, Subjects: []rbacv1.Subject{{APIGroup: rbacv1.GroupName, Kind: rbacv1.UserKind, Name: user}}}
	createUntilCleanup(ctx, t, c, role, binding)
	cfg := restConfig(t, "karmada-apiserver")
	cfg.Impersonate = rest.ImpersonationConfig{UserName: user, Groups: []string{"system:authenticated"}}
	return cfg
}

// searchRefused checks that cfg's identity reads nothing of the members
// through karmada-search (its endpoints are open to every authenticated
// user; the read is checked as the caller's) and may not choose what it
// caches.
func searchRefused(t *testing.T, who string, cfg *rest.Config) {
	t.Helper()
	kc, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range []string{"/apis/search.karmada.io/v1alpha1/search/cache/api/v1/secrets",
		"/apis/search.karmada.io/v1alpha1/proxying/karmada/proxy/api/v1/namespaces/kube-system/secrets"} {
		if err := kc.CoreV1().RESTClient().Get().AbsPath(p).Do(context.Background()).Error(); !apierrors.IsForbidden(err) {
			t.Errorf("%s reading %s: %v; want Forbidden", who, p, err)
		}
	}
	unsafePathsRefused(t, who, cfg)
	rr := []byte(`{"apiVersion":"search.karmada.io/v1alpha1","kind":"ResourceRegistry","metadata":{"name":"e2e-attacker"},"spec":{"targetCluster":{},"resourceSelectors":[{"apiVersion":"v1","kind":"Secret"}]}}`)
	err = kc.CoreV1().RESTClient().Post().AbsPath("/apis/search.karmada.io/v1alpha1/resourceregistries").SetHeader("Content-Type", "application/json").Body(rr).Do(context.Background()).Error()
	if !apierrors.IsForbidden(err) {
		t.Errorf("%s creating a ResourceRegistry of Secrets: %v; want Forbidden", who, err)
	}
}

// unsafePathsRefused sends, as cfg's identity and with the path kept as
// written (as curl --path-as-is does), the spellings that once made
// karmada-search read the control plane's Secrets with its own rights
// (a dot segment after openapi/, which it answered as discovery): every
// proxy and cache of ours answers 400 before looking anything up, and no
// credential comes back.
func unsafePathsRefused(t *testing.T, who string, cfg *rest.Config) {
	t.Helper()
	rt, err := rest.TransportFor(cfg)
	if err != nil {
		t.Fatal(err)
	}
	hc := &http.Client{Transport: rt, Timeout: 10 * time.Second}
	const secrets = "api/v1/namespaces/karmada-cluster/secrets"
	for _, p := range []string{
		"/apis/search.karmada.io/v1alpha1/proxying/karmada/proxy/openapi/../" + secrets,
		"/apis/search.karmada.io/v1alpha1/proxying/karmada/proxy/openapi/v3/../../" + secrets,
		"/apis/search.karmada.io/v1alpha1/proxying/karmada/proxy/openapi/%2e%2e/" + secrets,
		"/apis/search.karmada.io/v1alpha1/proxying/karmada/proxy/openapi/%2E%2E/" + secrets,
		"/apis/search.karmada.io/v1alpha1/proxying/karmada/proxy/openapi/..%2f" + secrets,
		"/apis/search.karmada.io/v1alpha1/proxying/karmada/proxy/apis/./../" + secrets,
		"/apis/search.karmada.io/v1alpha1/proxying/karmada/proxy//" + secrets,
	} {
		wantBadRequest(t, hc, who, cfg.Host+p, false)
	}
	// (The karmada-apiserver reads this one as the subresource search/openapi,
	// which nobody is granted: 403 before ours sees it.)
	wantBadRequest(t, hc, who, cfg.Host+"/apis/search.karmada.io/v1alpha1/search/cache/openapi/../"+secrets, true)
	// The cluster proxy: the karmada-apiserver refuses clusters/proxy to an
	// identity without it (403) before the request reaches ours; with it
	// (the administrator), ours answers 400.
	admin, err := rest.TransportFor(restConfig(t, "karmada-apiserver"))
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range []string{
		"/apis/cluster.karmada.io/v1alpha1/clusters/member1/proxy/openapi/../api/v1/namespaces/kube-system/secrets",
		"/apis/cluster.karmada.io/v1alpha1/clusters/member1/proxy/%2e%2e/%2e%2e/member2/proxy/api/v1/secrets",
		"/apis/cluster.karmada.io/v1alpha1/clusters/member1/proxy/api//v1/secrets",
	} {
		wantBadRequest(t, hc, who, cfg.Host+p, true)
		wantBadRequest(t, &http.Client{Transport: admin, Timeout: 10 * time.Second}, "the administrator", cfg.Host+p, false)
	}
}

// wantBadRequest fails unless GET u answers 400 (or 403 when forbiddenToo)
// with no Secret in the body.
func wantBadRequest(t *testing.T, hc *http.Client, who, u string, forbiddenToo bool) {
	t.Helper()
	req, err := http.NewRequest(http.MethodGet, u, nil)
	if err != nil {
		t.Fatal(err)
	}
	res, err := hc.Do(req)
	if err != nil {
		t.Errorf("%s: GET %s: %v", who, u, err)
		return
	}
	body, _ := io.ReadAll(res.Body)
	res.Body.Close()
	ok := res.StatusCode == http.StatusBadRequest || forbiddenToo && res.StatusCode == http.StatusForbidden
	if !ok || strings.Contains(string(body), "SecretList") || strings.Contains(string(body), `"token"`) {
		t.Errorf("%s: GET %s answered %d %.300s; want 400 Bad Request and nothing read", who, u, res.StatusCode, body)
	}
}

// proxyRefused checks that cfg's identity may not reach member's API
// through clusters/<member>/proxy.
func proxyRefused(t *testing.T, who string, cfg *rest.Config, member string) {
	t.Helper()
	kc, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		t.Fatal(err)
	}
	err = kc.CoreV1().RESTClient().Get().AbsPath(proxyPath(member, "/api/v1/namespaces/kube-system/secrets")).Do(context.Background()).Error()
	if !apierrors.IsForbidden(err) || !strings.Contains(err.Error(), "clusters/proxy") {
		t.Errorf("%s proxying to %s: %v; want the control plane's Forbidden on clusters/proxy", who, member, err)
	}
}

// A tenant with rights in one namespace cannot take over the member's own
// objects there (conflictResolution: Overwrite needs a grant the platform
// gives), and the controller-trusted marks a tenant puts on a template do
// not reach the member.
func TestTenantCannotTakeOverMemberObjects(t *testing.T) {
	ctx := context.Background()
	c := karmadaClient(t)
	ns := "e2e-t1-" + utilrand.String(5)
	createNamespaceUntilCleanup(ctx, t, c, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}})
	waitNamespace(ctx, t, "member1", ns, true)
	kc := kube(t, "member1")
	platform := &corev1.ResourceQuota{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "platform-quota"},
		Spec: corev1.ResourceQuotaSpec{Hard: corev1.ResourceList{corev1.ResourcePods: resource.MustParse("2")}}}
	if _, err := kc.CoreV1().ResourceQuotas(ns).Create(ctx, platform, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	tenant := tenantClient(ctx, t, ns)
	mine := &corev1.ResourceQuota{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "platform-quota"},
		Spec: corev1.ResourceQuotaSpec{Hard: corev1.ResourceList{corev1.ResourcePods: resource.MustParse("1k")}}}
	if err := tenant.Create(ctx, mine); err != nil {
		t.Fatalf("the tenant creating a quota in its namespace: %v", err)
	}
	pp := &policyv1alpha1.PropagationPolicy{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "take-over"}, Spec: policyv1alpha1.PropagationSpec{
		ResourceSelectors:  []policyv1alpha1.ResourceSelector{{APIVersion: "v1", Kind: "ResourceQuota", Name: "platform-quota"}},
		Placement:          policyv1alpha1.Placement{ClusterAffinity: &policyv1alpha1.ClusterAffinity{ClusterNames: []string{"member1"}}},
		ConflictResolution: policyv1alpha1.ConflictOverwrite,
	}}
	err := tenant.Create(ctx, pp)
	if err == nil {
		t.Cleanup(func() { _ = c.Delete(context.Background(), pp) })
		t.Errorf("the tenant's Overwrite policy was admitted")
	} else if !apierrors.IsInvalid(err) && !apierrors.IsForbidden(err) {
		t.Errorf("the tenant's Overwrite policy: want Invalid or Forbidden, got %v", err)
	}
	// Nothing may have reached the member's quota meanwhile.
	testenv.Consistently(t, 8*time.Second, "the member's quota unchanged", func(ctx context.Context) error {
		got, err := kc.CoreV1().ResourceQuotas(ns).Get(ctx, "platform-quota", metav1.GetOptions{})
		if err != nil {
			return err
		}
		if q := got.Spec.Hard[corev1.ResourcePods]; q.Cmp(resource.MustParse("2")) != 0 || got.Annotations[workv1alpha1.AdoptedAnnotation] != "" {
			return fmt.Errorf("pods %s, annotations %v", q.String(), got.Annotations)
		}
		return nil
	})

	// Marks the controllers trust, planted on a template, stay out of the
	// member's copy.
	planted := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "planted", Annotations: map[string]string{
		workv1alpha1.PreAdoptionAnnotation: "H4sIAAAAAAAA/w==", workv1alpha1.AdoptedAnnotation: "karmada-es-member1/someone-else"}}}
	if err := tenant.Create(ctx, planted); err != nil {
		t.Fatal(err)
	}
	cmPolicy := &policyv1alpha1.PropagationPolicy{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "planted"}, Spec: policyv1alpha1.PropagationSpec{
		ResourceSelectors: []policyv1alpha1.ResourceSelector{{APIVersion: "v1", Kind: "ConfigMap", Name: "planted"}},
		Placement:         policyv1alpha1.Placement{ClusterAffinity: &policyv1alpha1.ClusterAffinity{ClusterNames: []string{"member1"}}},
	}}
	if err := tenant.Create(ctx, cmPolicy); err != nil {
		t.Fatal(err)
	}
	testenv.Eventually(t, 30*time.Second, "the planted marks kept out of member1", func(ctx context.Context) error {
		got, err := kc.CoreV1().ConfigMaps(ns).Get(ctx, "planted", metav1.GetOptions{})
		if err != nil {
			return err
		}
		if got.Annotations[workv1alpha1.PreAdoptionAnnotation] != "" || got.Annotations[workv1alpha1.AdoptedAnnotation] != "" {
			return fmt.Errorf("annotations %v", got.Annotations)
		}
		return nil
	})
}

// An object Karmada adopted in a member (an administrator's Overwrite) is
// never deleted through the deletion of the namespace Karmada created for
// it: the namespace is released instead.
func TestAdoptedObjectSurvivesNamespaceDeletion(t *testing.T) {
	ctx := context.Background()
	c := karmadaClient(t)
	kc := kube(t, "member1")
	ns := "e2e-adopted-" + utilrand.String(5)
	createNamespaceUntilCleanup(ctx, t, c, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}})
	t.Cleanup(func() { _ = kc.CoreV1().Namespaces().Delete(context.Background(), ns, metav1.DeleteOptions{}) })
	waitNamespace(ctx, t, "member1", ns, true)
	if _, err := kc.CoreV1().ConfigMaps(ns).Create(ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "adopt-me"}, Data: map[string]string{"own": "yes"}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "adopt-me"}, Data: map[string]string{"from": "karmada"}}
	pp := &policyv1alpha1.PropagationPolicy{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "adopt"}, Spec: policyv1alpha1.PropagationSpec{
		ResourceSelectors:  []policyv1alpha1.ResourceSelector{{APIVersion: "v1", Kind: "ConfigMap", Name: "adopt-me"}},
		Placement:          policyv1alpha1.Placement{ClusterAffinity: &policyv1alpha1.ClusterAffinity{ClusterNames: []string{"member1"}}},
		ConflictResolution: policyv1alpha1.ConflictOverwrite,
	}}
	if err := c.Create(ctx, pp); err != nil {
		t.Fatal(err)
	}
	if err := c.Create(ctx, cm); err != nil {
		t.Fatal(err)
	}
	testenv.Eventually(t, 30*time.Second, "the ConfigMap adopted", func(ctx context.Context) error {
		got, err := kc.CoreV1().ConfigMaps(ns).Get(ctx, "adopt-me", metav1.GetOptions{})
		if err != nil {
			return err
		}
		if got.Annotations[workv1alpha1.AdoptedAnnotation] == "" {
			return fmt.Errorf("annotations %v", got.Annotations)
		}
		return nil
	})
	before, err := kc.CoreV1().ConfigMaps(ns).Get(ctx, "adopt-me", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	// The namespace is deleted in the control plane, the template and the
	// policy with it.
	if err := c.Delete(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}); err != nil {
		t.Fatal(err)
	}
	testenv.Eventually(t, 90*time.Second, "the member's namespace released", func(ctx context.Context) error {
		got, err := kc.CoreV1().Namespaces().Get(ctx, ns, metav1.GetOptions{})
		if err != nil || !got.DeletionTimestamp.IsZero() {
			return fmt.Errorf("the member's namespace is gone or going (err %v)", err)
		}
		if got.Labels[workv1alpha1.ManagedLabel] != "" {
			return fmt.Errorf("not released yet: labels %v", got.Labels)
		}
		return nil
	})
	after, err := kc.CoreV1().ConfigMaps(ns).Get(ctx, "adopt-me", metav1.GetOptions{})
	if err != nil || after.UID != before.UID {
		t.Fatalf("the adopted ConfigMap was deleted (err %v, uid %v, was %s)", err, after, before.UID)
	}
}

// wantRefused fails unless err is the API server refusing (Forbidden, or
// Invalid from admission): what the attacker tried did not happen.
func wantRefused(t *testing.T, what string, err error) {
	t.Helper()
	if err == nil {
		t.Errorf("%s: allowed", what)
	} else if !apierrors.IsForbidden(err) && !apierrors.IsInvalid(err) {
		t.Errorf("%s: want Forbidden or Invalid, got %v", what, err)
	}
}

// A bootstrap token may ask for an agent certificate and nothing else: it
// reads no Cluster, Work or Secret and writes no policy.
func TestBootstrapTokenHoldsNoOtherRight(t *testing.T) {
	ctx := context.Background()
	tc, err := client.New(bootstrapToken(t), client.Options{Scheme: scheme.Scheme})
	if err != nil {
		t.Fatal(err)
	}
	wantRefused(t, "listing Clusters", tc.List(ctx, &clusterv1alpha1.ClusterList{}))
	wantRefused(t, "listing member1's Works", tc.List(ctx, &workv1alpha1.WorkList{}, client.InNamespace(workv1alpha1.ExecutionNamespace("member1"))))
	wantRefused(t, "reading member1's credentials", tc.Get(ctx, client.ObjectKey{Namespace: "karmada-cluster", Name: "member1"}, &corev1.Secret{}))
	wantRefused(t, "creating a Cluster", tc.Create(ctx, &clusterv1alpha1.Cluster{ObjectMeta: metav1.ObjectMeta{Name: "e2e-token-made"},
		Spec: clusterv1alpha1.ClusterSpec{SyncMode: clusterv1alpha1.Pull}}))
	wantRefused(t, "creating a policy", tc.Create(ctx, &policyv1alpha1.ClusterPropagationPolicy{ObjectMeta: metav1.ObjectMeta{Name: "e2e-token-policy"},
		Spec: policyv1alpha1.PropagationSpec{ResourceSelectors: []policyv1alpha1.ResourceSelector{{APIVersion: "v1", Kind: "Namespace"}}}}))
	proxyRefused(t, "a bootstrap token", bootstrapToken(t), "member1")
	searchRefused(t, "a bootstrap token", bootstrapToken(t))
}

// A compromised agent (member3's kubeconfig, as stored in its member) reaches
// nothing of another cluster and nothing of the control plane's: no other
// Cluster, Works, Secrets or policies.
func TestAgentConfinedToItsOwnCluster(t *testing.T) {
	ctx := context.Background()
	s, err := kube(t, "member3").CoreV1().Secrets(agentcert.Namespace).Get(ctx, agentcert.SecretName, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	agent, agentCfg := agentClient(t, s.Data[agentcert.SecretKey])
	// What it may: its own Cluster and Works.
	if err := agent.Get(ctx, client.ObjectKey{Name: "member3"}, &clusterv1alpha1.Cluster{}); err != nil {
		t.Fatalf("the agent reading its own Cluster: %v", err)
	}
	if err := agent.List(ctx, &workv1alpha1.WorkList{}, client.InNamespace(workv1alpha1.ExecutionNamespace("member3"))); err != nil {
		t.Fatalf("the agent listing its own Works: %v", err)
	}
	wantRefused(t, "listing member1's Works", agent.List(ctx, &workv1alpha1.WorkList{}, client.InNamespace(workv1alpha1.ExecutionNamespace("member1"))))
	wantRefused(t, "reading member1's credentials", agent.Get(ctx, client.ObjectKey{Namespace: "karmada-cluster", Name: "member1"}, &corev1.Secret{}))
	wantRefused(t, "listing Secrets", agent.List(ctx, &corev1.SecretList{}))
	wantRefused(t, "labelling member1", agent.Patch(ctx, &clusterv1alpha1.Cluster{ObjectMeta: metav1.ObjectMeta{Name: "member1"}},
		client.RawPatch(types.MergePatchType, []byte(`{"metadata":{"labels":{"e2e-agent":"was-here"}}}`))))
	m1 := getCluster(ctx, t, karmadaClient(t), "member1")
	wantRefused(t, "writing member1's status", agent.Status().Update(ctx, m1))
	wantRefused(t, "creating a Cluster", agent.Create(ctx, &clusterv1alpha1.Cluster{ObjectMeta: metav1.ObjectMeta{Name: "e2e-agent-made"},
		Spec: clusterv1alpha1.ClusterSpec{SyncMode: clusterv1alpha1.Pull}}))
	wantRefused(t, "creating a policy", agent.Create(ctx, &policyv1alpha1.PropagationPolicy{ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: "e2e-agent-policy"},
		Spec: policyv1alpha1.PropagationSpec{ResourceSelectors: []policyv1alpha1.ResourceSelector{{APIVersion: "v1", Kind: "ConfigMap"}}}}))
	if got := getCluster(ctx, t, karmadaClient(t), "member1"); got.Labels["e2e-agent"] != "" {
		t.Errorf("member1 was labelled by member3's agent: %v", got.Labels)
	}
	// It reads the resource interpreter's configuration (it interprets its
	// copies' status), and cannot change it: a customization's Lua runs in
	// the controller manager and in every other agent.
	if err := agent.List(ctx, &configv1alpha1.ResourceInterpreterCustomizationList{}); err != nil {
		t.Fatalf("the agent listing customizations: %v", err)
	}
	if err := agent.List(ctx, &configv1alpha1.ResourceInterpreterWebhookConfigurationList{}); err != nil {
		t.Fatalf("the agent listing interpreter webhooks: %v", err)
	}
	ric := &configv1alpha1.ResourceInterpreterCustomization{ObjectMeta: metav1.ObjectMeta{Name: "e2e-agent-lua"},
		Spec: configv1alpha1.ResourceInterpreterCustomizationSpec{
			// A kind no test uses: this customization must change nothing.
			Target: configv1alpha1.CustomizationTarget{APIVersion: "e2e.example.com/v1", Kind: "AgentProbe"},
			Customizations: configv1alpha1.CustomizationRules{Retention: &configv1alpha1.LocalValueRetention{
				LuaScript: "function Retain(desiredObj, observedObj)\n  return observedObj\nend"}}}}
	wantRefused(t, "creating a customization", agent.Create(ctx, ric))
	admin := karmadaClient(t)
	if err := admin.Create(ctx, ric.DeepCopy()); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { deleteAll(t, admin, ric) })
	wantRefused(t, "rewriting a customization", agent.Patch(ctx, ric.DeepCopy(),
		client.RawPatch(types.MergePatchType, []byte(`{"spec":{"target":{"kind":"Secret","apiVersion":"v1"}}}`))))
	wantRefused(t, "deleting a customization", agent.Delete(ctx, ric.DeepCopy()))
	wantRefused(t, "registering an interpreter webhook", agent.Create(ctx, &configv1alpha1.ResourceInterpreterWebhookConfiguration{
		ObjectMeta: metav1.ObjectMeta{Name: "e2e-agent-hook"},
		Webhooks: []configv1alpha1.ResourceInterpreterWebhook{{Name: "steal.example.com",
			ClientConfig: admissionregistrationv1.WebhookClientConfig{URL: ptr.To("https://attacker.example.com/interpret")},
			Rules: []configv1alpha1.RuleWithOperations{{Operations: []configv1alpha1.InterpreterOperation{configv1alpha1.InterpreterOperationAll},
				Rule: configv1alpha1.Rule{APIGroups: []string{"*"}, APIVersions: []string{"*"}, Kinds: []string{"*"}}}},
			InterpreterContextVersions: []string{"v1alpha1"}}}}))
	// Nor may it reach a member's API through the control plane, another's
	// or its own.
	proxyRefused(t, "member3's agent", agentCfg, "member1")
	proxyRefused(t, "member3's agent", agentCfg, "member3")
	searchRefused(t, "member3's agent", agentCfg)
}

// A tenant with rights in one namespace stays there: its OverridePolicy
// cannot move a copy to another namespace or kind, its policy cannot select
// another namespace's templates, its binding cannot bind the control plane's
// Secrets, and it writes nothing in Karmada's own namespaces or cluster-wide.
func TestTenantStaysInItsNamespace(t *testing.T) {
	ctx := context.Background()
	c := karmadaClient(t)
	ns := "e2e-t2-" + utilrand.String(5)
	createNamespaceUntilCleanup(ctx, t, c, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}})
	tenantCfg := tenantConfig(ctx, t, ns)
	tenant, err := client.New(tenantCfg, client.Options{Scheme: scheme.Scheme})
	if err != nil {
		t.Fatal(err)
	}
	// Its rights in one namespace reach no member through the proxy.
	proxyRefused(t, "a tenant", tenantCfg, "member1")
	searchRefused(t, "a tenant", tenantCfg)
	for _, path := range []string{"/metadata/namespace", "/kind"} {
		op := &policyv1alpha1.OverridePolicy{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "move"}, Spec: policyv1alpha1.OverrideSpec{
			ResourceSelectors: []policyv1alpha1.ResourceSelector{{APIVersion: "v1", Kind: "ConfigMap"}},
			OverrideRules: []policyv1alpha1.RuleWithCluster{{Overriders: policyv1alpha1.Overriders{Plaintext: []policyv1alpha1.PlaintextOverrider{{
				Path: path, Operator: policyv1alpha1.OverriderOpReplace, Value: apiextensionsv1.JSON{Raw: []byte(`"kube-system"`)}}}}}},
		}}
		wantRefused(t, "an override of "+path, tenant.Create(ctx, op))
	}
	wantRefused(t, "a policy selecting default's ConfigMaps", tenant.Create(ctx, &policyv1alpha1.PropagationPolicy{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "reach"},
		Spec: policyv1alpha1.PropagationSpec{ResourceSelectors: []policyv1alpha1.ResourceSelector{{APIVersion: "v1", Kind: "ConfigMap", Namespace: "default"}}}}))
	wantRefused(t, "a binding of member1's credentials", tenant.Create(ctx, &workv1alpha2.ResourceBinding{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "steal"},
		Spec: workv1alpha2.ResourceBindingSpec{Resource: workv1alpha2.ObjectReference{APIVersion: "v1", Kind: "Secret", Namespace: "karmada-cluster", Name: "member1"},
			Clusters: []workv1alpha2.TargetCluster{{Name: "member2"}}}}))
	wantRefused(t, "a policy in karmada-system", tenant.Create(ctx, &policyv1alpha1.PropagationPolicy{ObjectMeta: metav1.ObjectMeta{Namespace: "karmada-system", Name: "reach"},
		Spec: policyv1alpha1.PropagationSpec{ResourceSelectors: []policyv1alpha1.ResourceSelector{{APIVersion: "v1", Kind: "ConfigMap"}}}}))
	wantRefused(t, "a ClusterPropagationPolicy", tenant.Create(ctx, &policyv1alpha1.ClusterPropagationPolicy{ObjectMeta: metav1.ObjectMeta{Name: "e2e-tenant-everything"},
		Spec: policyv1alpha1.PropagationSpec{ResourceSelectors: []policyv1alpha1.ResourceSelector{{APIVersion: "v1", Kind: "Namespace"}}}}))
	wantRefused(t, "tainting member1", tenant.Patch(ctx, &clusterv1alpha1.Cluster{ObjectMeta: metav1.ObjectMeta{Name: "member1"}},
		client.RawPatch(types.MergePatchType, []byte(`{"spec":{"taints":[{"key":"e2e-tenant","effect":"NoExecute"}]}}`))))
	wantRefused(t, "reading member1's credentials", tenant.Get(ctx, client.ObjectKey{Namespace: "karmada-cluster", Name: "member1"}, &corev1.Secret{}))
	if _, err := kube(t, "member2").CoreV1().Secrets("karmada-cluster").Get(ctx, "member1", metav1.GetOptions{}); !apierrors.IsNotFound(err) {
		t.Errorf("member1's credentials reached member2 (err %v)", err)
	}
}

// Failover never deletes the last copy: member2 stops, its workload is
// evicted to member3 where it cannot run (an override pins its pods to no
// node); when the eviction's grace period is over the task is held
// (EvictionBlocked ReplacementUnhealthy), member2's Work is not deleted, and
// when member2 is back its copy is the very one it was.
func TestFailoverNeverDeletesTheLastCopy(t *testing.T) {
	ctx := context.Background()
	c := karmadaClient(t)
	const name = "e2e-last-copy"
	createUntilCleanup(ctx, t, c, &policyv1alpha1.OverridePolicy{
		ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: name + "-pending-in-member3"},
		Spec: policyv1alpha1.OverrideSpec{
			ResourceSelectors: []policyv1alpha1.ResourceSelector{{APIVersion: "apps/v1", Kind: "Deployment", Name: name}},
			OverrideRules: []policyv1alpha1.RuleWithCluster{{
				TargetCluster: &policyv1alpha1.ClusterAffinity{ClusterNames: []string{"member3"}},
				Overriders: policyv1alpha1.Overriders{Plaintext: []policyv1alpha1.PlaintextOverrider{{
					Path: "/spec/template/spec/nodeSelector", Operator: policyv1alpha1.OverriderOpAdd,
					Value: apiextensionsv1.JSON{Raw: []byte(`{"e2e.karmada-go.io/no-such-node":"true"}`)}}}},
			}},
		},
	})
	// It lands on member2 first: member3 cordoned meanwhile.
	if out, err := karmadactl("cordon", "member3"); err != nil {
		t.Fatalf("cordon: %v\n%s", err, out)
	}
	t.Cleanup(func() { _, _ = karmadactl("uncordon", "member3") })
	propagate(ctx, t, deploymentNamed(name, 1), policyv1alpha1.Placement{
		ClusterAffinity:    &policyv1alpha1.ClusterAffinity{ClusterNames: []string{"member2", "member3"}},
		SpreadConstraints:  []policyv1alpha1.SpreadConstraint{{SpreadByField: policyv1alpha1.SpreadByFieldCluster, MaxGroups: 1, MinGroups: 1}},
		ClusterTolerations: []corev1.Toleration{notReadyToleration(5)},
	})
	if got := placementOf(waitScheduled(ctx, t, name, 1)); got != "member2=1" {
		t.Fatalf("placed on %s, want member2", got)
	}
	waitMemberDeployment(ctx, t, "member2", name, 1)
	if out, err := karmadactl("uncordon", "member3"); err != nil {
		t.Fatalf("uncordon: %v\n%s", err, out)
	}
	before, err := kube(t, "member2").AppsV1().Deployments("default").Get(ctx, name, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}

	startMember2 := stopMember(t, "member2")
	testenv.Eventually(t, 3*time.Minute, "evicted from member2 to member3", func(ctx context.Context) error {
		rb, err := getBinding(ctx, c, name)
		if err != nil {
			return err
		}
		if placementOf(rb) != "member3=1" || len(rb.Spec.GracefulEvictionTasks) != 1 || rb.Spec.GracefulEvictionTasks[0].FromCluster != "member2" {
			return fmt.Errorf("placement %s, tasks %+v", placementOf(rb), rb.Spec.GracefulEvictionTasks)
		}
		return nil
	})
	// The grace period is made short (as --graceful-eviction-timeout or a
	// task's own gracePeriodSeconds would make it): 5 s.
	if err := retry.RetryOnConflict(retry.DefaultRetry, func() error {
		rb, err := getBinding(ctx, c, name)
		if err != nil {
			return err
		}
		rb.Spec.GracefulEvictionTasks[0].GracePeriodSeconds = ptr.To[int32](5)
		return c.Update(ctx, rb)
	}); err != nil {
		t.Fatal(err)
	}
	workKey := client.ObjectKey{Namespace: workv1alpha1.ExecutionNamespace("member2"), Name: names.WorkName("Deployment", name, "default")}
	testenv.Eventually(t, 60*time.Second, "the eviction held after its grace period", func(ctx context.Context) error {
		rb, err := getBinding(ctx, c, name)
		if err != nil {
			return err
		}
		cond := meta.FindStatusCondition(rb.Status.Conditions, workv1alpha2.EvictionBlocked)
		if cond == nil || cond.Status != metav1.ConditionTrue || cond.Reason != workv1alpha2.ReasonReplacementUnhealthy {
			return fmt.Errorf("EvictionBlocked %+v, tasks %+v", cond, rb.Spec.GracefulEvictionTasks)
		}
		return nil
	})
	w := &workv1alpha1.Work{}
	if err := c.Get(ctx, workKey, w); err != nil || !w.DeletionTimestamp.IsZero() {
		t.Fatalf("member2's Work is gone or going (err %v): its copy would be deleted when member2 is back", err)
	}

	startMember2()
	testenv.Eventually(t, 2*time.Minute, "member2 Ready again", func(ctx context.Context) error {
		cl := getCluster(ctx, t, c, "member2")
		if !meta.IsStatusConditionTrue(cl.Status.Conditions, clusterv1alpha1.ClusterConditionReady) {
			return fmt.Errorf("conditions %+v", cl.Status.Conditions)
		}
		return nil
	})
	// Back, member2 keeps its copy while member3 still cannot run it.
	testenv.Consistently(t, 10*time.Second, "member2's copy kept", func(ctx context.Context) error {
		d, err := kube(t, "member2").AppsV1().Deployments("default").Get(ctx, name, metav1.GetOptions{})
		if err != nil {
			return err
		}
		if d.UID != before.UID || !d.DeletionTimestamp.IsZero() {
			return fmt.Errorf("re-created or deleting: uid %s (was %s)", d.UID, before.UID)
		}
		return nil
	})
}

// A tenant cannot use propagateDeps to carry another namespace's Secret to
// a member: even through a dependencyInterpretation that names any
// namespace (the platform's customization, the tenant's data), the
// distributor follows only dependencies in the workload's own namespace.
// Nor can a tenant write customizations or interpreter webhooks.
func TestTenantCannotCarryOtherNamespacesDependencies(t *testing.T) {
	ctx := context.Background()
	c := karmadaClient(t)
	ns := "e2e-t3-" + utilrand.String(5)
	createNamespaceUntilCleanup(ctx, t, c, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}})
	tenant := tenantClient(ctx, t, ns)
	wantRefused(t, "a ResourceInterpreterCustomization", tenant.Create(ctx, &configv1alpha1.ResourceInterpreterCustomization{ObjectMeta: metav1.ObjectMeta{Name: "e2e-tenant-ric"},
		Spec: configv1alpha1.ResourceInterpreterCustomizationSpec{Target: configv1alpha1.CustomizationTarget{APIVersion: "v1", Kind: "ConfigMap"},
			Customizations: configv1alpha1.CustomizationRules{HealthInterpretation: &configv1alpha1.HealthInterpretation{LuaScript: "function InterpretHealth(o) return true end"}}}}))
	wantRefused(t, "a ResourceInterpreterWebhookConfiguration", tenant.Create(ctx, &configv1alpha1.ResourceInterpreterWebhookConfiguration{ObjectMeta: metav1.ObjectMeta{Name: "e2e-tenant-riwc"},
		Webhooks: []configv1alpha1.ResourceInterpreterWebhook{{Name: "steal.example.com", ClientConfig: admissionregistrationv1.WebhookClientConfig{URL: ptr.To("https://127.0.0.1:1/x")},
			InterpreterContextVersions: []string{"v1alpha1"}}}}))

	// The platform's customization: a ConfigMap names its dependency in its data.
	ric := &configv1alpha1.ResourceInterpreterCustomization{ObjectMeta: metav1.ObjectMeta{Name: "e2e-configmap-deps"},
		Spec: configv1alpha1.ResourceInterpreterCustomizationSpec{Target: configv1alpha1.CustomizationTarget{APIVersion: "v1", Kind: "ConfigMap"},
			Customizations: configv1alpha1.CustomizationRules{DependencyInterpretation: &configv1alpha1.DependencyInterpretation{LuaScript: `
function GetDependencies(obj)
  if obj.data == nil or obj.data["e2e-dep-name"] == nil then return {} end
  return {{apiVersion = "v1", kind = "Secret", namespace = obj.data["e2e-dep-namespace"], name = obj.data["e2e-dep-name"]}}
end`}}}}
	createUntilCleanup(ctx, t, c, ric)
	// The tenant's ConfigMap names member1's credentials.
	cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "innocent"}, Data: map[string]string{"e2e-dep-namespace": "karmada-cluster", "e2e-dep-name": "member1"}}
	if err := tenant.Create(ctx, cm); err != nil {
		t.Fatal(err)
	}
	if err := tenant.Create(ctx, &policyv1alpha1.PropagationPolicy{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "deps"},
		Spec: policyv1alpha1.PropagationSpec{ResourceSelectors: []policyv1alpha1.ResourceSelector{{APIVersion: "v1", Kind: "ConfigMap", Name: "innocent"}},
			Placement: policyv1alpha1.Placement{ClusterAffinity: &policyv1alpha1.ClusterAffinity{ClusterNames: []string{"member2"}}}, PropagateDeps: true}}); err != nil {
		t.Fatal(err)
	}
	// The distributor saw it and refused it.
	kc := kube(t, "karmada-apiserver")
	if err := wait.PollUntilContextTimeout(ctx, 500*time.Millisecond, 60*time.Second, true, func(ctx context.Context) (bool, error) {
		evs, err := kc.CoreV1().Events(ns).List(ctx, metav1.ListOptions{FieldSelector: "reason=GetDependenciesFailed"})
		if err != nil {
			return false, nil
		}
		for _, e := range evs.Items {
			if strings.Contains(e.Message, "Not propagating Secret karmada-cluster/member1") {
				return true, nil
			}
		}
		return false, nil
	}); err != nil {
		t.Fatal("no event says the other namespace's Secret was refused")
	}
	if _, err := kube(t, "member2").CoreV1().Secrets("karmada-cluster").Get(ctx, "member1", metav1.GetOptions{}); !apierrors.IsNotFound(err) {
		t.Errorf("member1's credentials reached member2 (err %v)", err)
	}
	rbs := &workv1alpha2.ResourceBindingList{}
	if err := c.List(ctx, rbs, client.InNamespace("karmada-cluster")); err != nil || len(rbs.Items) != 0 {
		t.Errorf("bindings in karmada-cluster: %d (%v)", len(rbs.Items), err)
	}
}

// A tenant with rights in one namespace, allowed to proxy to member1 and to
// read its namespace there, cannot use karmadactl promote to take over a
// member's own object: the policy it would write says conflictResolution
// Overwrite, which needs the adopt grant; nothing is created, and the
// member's object is left as it was.
func TestTenantCannotPromoteWithoutAdopt(t *testing.T) {
	ctx := context.Background()
	c := karmadaClient(t)
	ns := "e2e-tpromote-" + utilrand.String(5)
	createNamespaceUntilCleanup(ctx, t, c, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}})
	waitNamespace(ctx, t, "member1", ns, true)
	cfg := tenantConfig(ctx, t, ns)
	user := cfg.Impersonate.UserName
	// clusters/proxy on member1 in the control plane, view of ns in member1.
	proxyRole := &rbacv1.ClusterRole{ObjectMeta: metav1.ObjectMeta{Name: user}, Rules: []rbacv1.PolicyRule{
		{APIGroups: []string{clusterv1alpha1.GroupName}, Resources: []string{"clusters/proxy"}, ResourceNames: []string{"member1"}, Verbs: []string{"get"}}}}
	proxyBinding := &rbacv1.ClusterRoleBinding{ObjectMeta: metav1.ObjectMeta{Name: user},
		RoleRef:  rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: user},
		Subjects: []rbacv1.Subject{{APIGroup: rbacv1.GroupName, Kind: rbacv1.UserKind, Name: user}}}
	createUntilCleanup(ctx, t, c, proxyRole, proxyBinding)
	m1 := kube(t, "member1")
	view := &rbacv1.RoleBinding{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "tenant-view"},
		RoleRef:  rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: "view"},
		Subjects: []rbacv1.Subject{{APIGroup: rbacv1.GroupName, Kind: rbacv1.UserKind, Name: user}}}
	if _, err := m1.RbacV1().RoleBindings(ns).Create(ctx, view, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	own := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "member-own"}, Data: map[string]string{"owner": "member1"}}
	if _, err := m1.CoreV1().ConfigMaps(ns).Create(ctx, own, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	// The tenant's kubeconfig: the fleet's, impersonating the tenant.
	kcfg, err := clientcmd.LoadFromFile(fleet.kubeconfig)
	if err != nil {
		t.Fatal(err)
	}
	ai := kcfg.AuthInfos[kcfg.Contexts["karmada-apiserver"].AuthInfo]
	ai.Impersonate, ai.ImpersonateGroups = user, []string{"system:authenticated"}
	tenantKubeconfig := filepath.Join(t.TempDir(), "tenant.config")
	if err := clientcmd.WriteToFile(*kcfg, tenantKubeconfig); err != nil {
		t.Fatal(err)
	}
	// The tenant can read the member's object through the proxy (once
	// member1's impersonator may act as it: unifiedAuth follows the
	// binding)...
	testenv.Eventually(t, 30*time.Second, "the tenant reading member1's ConfigMap", func(context.Context) error {
		out, errOut, err := kctlWith(t, tenantKubeconfig, "get", "configmap", "member-own", "-n", ns, "--operation-scope", "members", "-C", "member1")
		if err != nil || !strings.Contains(out, "member-own") {
			return fmt.Errorf("%v\n%s%s", err, out, errOut)
		}
		return nil
	})
	// ...but not promote it.
	out, errOut, err := kctlWith(t, tenantKubeconfig, "promote", "configmap", "member-own", "-n", ns, "-C", "member1")
	if err == nil || !strings.Contains(errOut, "adopt") {
		t.Fatalf("the tenant promoting member1's ConfigMap: %v\n%s%s; want refused for want of the adopt right", err, out, errOut)
	}
	if err := c.Get(ctx, client.ObjectKey{Namespace: ns, Name: "member-own"}, &corev1.ConfigMap{}); !apierrors.IsNotFound(err) {
		t.Errorf("a template was created for the refused promote: %v", err)
	}
	if err := c.Get(ctx, client.ObjectKey{Namespace: ns, Name: names.PolicyName(ns, "member-own", corev1.SchemeGroupVersion.WithKind("ConfigMap"))}, &policyv1alpha1.PropagationPolicy{}); !apierrors.IsNotFound(err) {
		t.Errorf("a policy was created for the refused promote: %v", err)
	}
	got, err := m1.CoreV1().ConfigMaps(ns).Get(ctx, "member-own", metav1.GetOptions{})
	if err != nil || got.Labels[workv1alpha1.ManagedLabel] != "" || got.Data["owner"] != "member1" {
		t.Errorf("member1's ConfigMap after the refused promote: %v %+v", err, got)
	}
}

// A tenant with rights to ConfigMaps in one namespace reads, through
// karmada-search, the members' ConfigMaps of that namespace and nothing
// else: another namespace or all of them is Forbidden, and it cannot
// change a member's cached object through the proxy (no clusters/proxy).
func TestTenantReadsOnlyItsNamespaceThroughSearch(t *testing.T) {
	ctx := context.Background()
	c := karmadaClient(t)
	ns := "e2e-tsearch-" + utilrand.String(5)
	createNamespaceUntilCleanup(ctx, t, c, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}})
	waitNamespace(ctx, t, "member1", ns, true)
	m1 := kube(t, "member1")
	if _, err := m1.CoreV1().ConfigMaps(ns).Create(ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "member-data"}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	rr := &searchv1alpha1.ResourceRegistry{ObjectMeta: metav1.ObjectMeta{Name: "e2e-tsearch-" + utilrand.String(5)},
		Spec: searchv1alpha1.ResourceRegistrySpec{
			TargetCluster:     policyv1alpha1.ClusterAffinity{ClusterNames: []string{"member1"}},
			ResourceSelectors: []searchv1alpha1.ResourceSelector{{APIVersion: "v1", Kind: "ConfigMap"}},
		}}
	createUntilCleanup(ctx, t, c, rr)
	admin := kube(t, "karmada-apiserver")
	own := "/apis/search.karmada.io/v1alpha1/search/cache/api/v1/namespaces/" + ns + "/configmaps"
	testenv.Eventually(t, 60*time.Second, "member1's ConfigMaps cached", func(ctx context.Context) error {
		raw, err := admin.Discovery().RESTClient().Get().AbsPath(own).DoRaw(ctx)
		if err != nil {
			return err
		}
		if !strings.Contains(string(raw), `"member-data"`) {
			return fmt.Errorf("not yet: %.200s", raw)
		}
		return nil
	})
	cfg := tenantConfig(ctx, t, ns)
	tenant, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		t.Fatal(err)
	}
	raw, err := tenant.Discovery().RESTClient().Get().AbsPath(own).DoRaw(ctx)
	if err != nil || !strings.Contains(string(raw), `"member-data"`) {
		t.Errorf("the tenant reading its own namespace through the cache: %v %.300s", err, raw)
	}
	for _, p := range []string{
		"/apis/search.karmada.io/v1alpha1/search/cache/api/v1/namespaces/kube-system/configmaps",
		"/apis/search.karmada.io/v1alpha1/search/cache/api/v1/configmaps",
		"/apis/search.karmada.io/v1alpha1/proxying/karmada/proxy/api/v1/configmaps",
	} {
		if err := tenant.Discovery().RESTClient().Get().AbsPath(p).Do(ctx).Error(); !apierrors.IsForbidden(err) {
			t.Errorf("the tenant reading %s: %v; want Forbidden", p, err)
		}
	}
	del := "/apis/search.karmada.io/v1alpha1/proxying/karmada/proxy/api/v1/namespaces/" + ns + "/configmaps/member-data"
	if err := tenant.Discovery().RESTClient().Delete().AbsPath(del).Do(ctx).Error(); !apierrors.IsForbidden(err) || !strings.Contains(err.Error(), "clusters/proxy") {
		t.Errorf("the tenant deleting member1's ConfigMap through the proxy: %v; want Forbidden on clusters/proxy", err)
	}
	if _, err := m1.CoreV1().ConfigMaps(ns).Get(ctx, "member-data", metav1.GetOptions{}); err != nil {
		t.Errorf("member1's ConfigMap after the tenant's attempt: %v", err)
	}
}

// TestEstimatorsAnswerOnlyTheScheduler: the members' estimators answer
// only certificates of their own CA (the scheduler's, the descheduler's):
// not a compromised agent's (signed by the control plane's CA), not the
// control plane's administrator, not an anonymous client, who would learn
// every member's capacity. In its member, the estimator's identity reads
// nodes, pods and quotas, and writes nothing.
func TestEstimatorsAnswerOnlyTheScheduler(t *testing.T) {
	ctx := context.Background()
	state := fleet.stateDir
	caPEM, err := os.ReadFile(filepath.Join(state, "estimator", "pki", "ca.crt"))
	if err != nil {
		t.Fatal(err)
	}
	roots := x509.NewCertPool()
	roots.AppendCertsFromPEM(caPEM)
	addr := fmt.Sprintf("127.0.0.1:%d", fleet.portBase+10*1+6) // member1's estimator slot
	pair := func(cert, key []byte) []tls.Certificate {
		p, err := tls.X509KeyPair(cert, key)
		if err != nil {
			t.Fatal(err)
		}
		return []tls.Certificate{p}
	}
	files := func(cert, key string) []tls.Certificate {
		c, err := os.ReadFile(cert)
		if err != nil {
			t.Fatal(err)
		}
		k, err := os.ReadFile(key)
		if err != nil {
			t.Fatal(err)
		}
		return pair(c, k)
	}
	ask := func(certs []tls.Certificate) error {
		cfg := &tls.Config{RootCAs: roots, ServerName: localup.EstimatorServiceName("member1"), MinVersion: tls.VersionTLS12, Certificates: certs}
		cc, err := grpc.NewClient(addr, grpc.WithTransportCredentials(credentials.NewTLS(cfg)))
		if err != nil {
			return err
		}
		defer cc.Close()
		ctx, cancel := context.WithTimeout(ctx, 5*time.Second)
		defer cancel()
		_, err = service.NewEstimatorClient(cc).MaxAvailableReplicas(ctx, &pb.MaxAvailableReplicasRequest{Cluster: "member1", ReplicaRequirements: &pb.ReplicaRequirements{}})
		return err
	}
	pki := filepath.Join(state, "karmada", "pki")
	if err := ask(nil); err == nil {
		t.Error("an anonymous client was answered")
	}
	if err := ask(files(filepath.Join(pki, "admin.crt"), filepath.Join(pki, "admin.key"))); err == nil {
		t.Error("a certificate of the control plane's CA (system:masters there) was answered")
	}
	s, err := kube(t, "member3").CoreV1().Secrets(agentcert.Namespace).Get(ctx, agentcert.SecretName, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	_, agentCfg := agentClient(t, s.Data[agentcert.SecretKey])
	if err := ask(pair(agentCfg.TLSClientConfig.CertData, agentCfg.TLSClientConfig.KeyData)); err == nil {
		t.Error("member3's agent certificate was answered")
	}
	if err := ask(files(filepath.Join(state, "estimator", "pki", "karmada-scheduler-client.crt"), filepath.Join(state, "estimator", "pki", "karmada-scheduler-client.key"))); err != nil {
		t.Errorf("the scheduler's own certificate was refused: %v", err)
	}

	m1 := kube(t, "member1")
	for _, a := range []authorizationv1.ResourceAttributes{
		{Verb: "get", Resource: "secrets", Namespace: "kube-system"},
		{Verb: "list", Resource: "secrets"},
		{Verb: "create", Resource: "pods", Namespace: "default"},
		{Verb: "delete", Resource: "nodes"},
		{Verb: "update", Group: "apps", Resource: "deployments", Namespace: "default"},
	} {
		r, err := m1.AuthorizationV1().SubjectAccessReviews().Create(ctx, &authorizationv1.SubjectAccessReview{Spec: authorizationv1.SubjectAccessReviewSpec{
			User: localup.EstimatorUser, ResourceAttributes: &a}}, metav1.CreateOptions{})
		if err != nil {
			t.Fatal(err)
		}
		if r.Status.Allowed {
			t.Errorf("the estimator's identity may %s %s in member1", a.Verb, a.Resource)
		}
	}
	r, err := m1.AuthorizationV1().SubjectAccessReviews().Create(ctx, &authorizationv1.SubjectAccessReview{Spec: authorizationv1.SubjectAccessReviewSpec{
		User: localup.EstimatorUser, ResourceAttributes: &authorizationv1.ResourceAttributes{Verb: "watch", Resource: "pods"}}}, metav1.CreateOptions{})
	if err != nil || !r.Status.Allowed {
		t.Errorf("the estimator's identity cannot watch pods (%v): it could not estimate", err)
	}
}

// TestTenantCannotPlacePastItsQuota: a tenant who may write ResourceBindings
// in its namespace writes a placement itself, past the namespace's
// FederatedResourceQuota: karmada-webhook refuses it, as it refuses the
// scheduler's. The tenant can neither raise the quota nor rewrite what its
// status says is used.
func TestTenantCannotPlacePastItsQuota(t *testing.T) {
	ctx := context.Background()
	c := karmadaClient(t)
	ns := "e2e-tenant-quota-" + utilrand.String(5)
	if err := c.Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = c.Delete(context.Background(), &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}) })
	q := &policyv1alpha1.FederatedResourceQuota{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "team"},
		Spec: policyv1alpha1.FederatedResourceQuotaSpec{Overall: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("2")}}}
	if err := c.Create(ctx, q); err != nil {
		t.Fatal(err)
	}
	tenant := tenantClient(ctx, t, ns)
	binding := func(name string, replicas int32) *workv1alpha2.ResourceBinding {
		return &workv1alpha2.ResourceBinding{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name},
			Spec: workv1alpha2.ResourceBindingSpec{
				Resource: workv1alpha2.ObjectReference{APIVersion: "apps/v1", Kind: "Deployment", Namespace: ns, Name: name},
				Replicas: replicas,
				ReplicaRequirements: &workv1alpha2.ReplicaRequirements{Namespace: ns,
					ResourceRequest: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("1")}},
				Clusters: []workv1alpha2.TargetCluster{{Name: "member1", Replicas: replicas}},
			}}
	}
	// Within the quota the same kind of write is admitted: the refusal
	// below is the quota's, not another rule's.
	small := binding("small", 1)
	if err := tenant.Create(ctx, small); err != nil {
		t.Fatalf("a placement within the quota: %v", err)
	}
	t.Cleanup(func() { _ = c.Delete(context.Background(), small) })
	err := tenant.Create(ctx, binding("big", 4))
	if err == nil || !strings.Contains(err.Error(), "FederatedResourceQuota("+ns+"/team) exceeded for resource cpu") {
		t.Fatalf("a tenant's own placement of 4 cpu past 2: %v", err)
	}
	// Nor by growing the admitted one (read again on a conflict: the
	// binding controller writes it too).
	err = retry.RetryOnConflict(retry.DefaultRetry, func() error {
		if err := tenant.Get(ctx, client.ObjectKeyFromObject(small), small); err != nil {
			return err
		}
		small.Spec.Replicas, small.Spec.Clusters[0].Replicas = 3, 3
		return tenant.Update(ctx, small)
	})
	if err == nil || !strings.Contains(err.Error(), "exceeded for resource cpu") {
		t.Fatalf("growing an admitted placement past the quota: %v", err)
	}
	mine := &policyv1alpha1.FederatedResourceQuota{}
	if err := c.Get(ctx, client.ObjectKeyFromObject(q), mine); err != nil {
		t.Fatal(err)
	}
	mine.Spec.Overall[corev1.ResourceCPU] = resource.MustParse("100")
	wantRefused(t, "raising its quota", tenant.Update(ctx, mine))
	mine.Status.OverallUsed = corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("0")}
	wantRefused(t, "rewriting its quota's usage", tenant.Status().Update(ctx, mine))
}

// A tenant cannot run past its FederatedResourceQuota by what the quota did
// not count: an OverridePolicy raising a copy's replicas (2 × 500m admitted
// under 3 cpu, made 30 in member1 = 15 cpu), or a binding of its own that
// declares no replicas for a template of 50. The copies are refused and the
// bindings say why; nothing runs past the quota in the member.
func TestTenantCannotRunPastItsQuota(t *testing.T) {
	ctx := context.Background()
	c := karmadaClient(t)
	ns := "e2e-tenant-run-" + utilrand.String(5)
	createNamespaceUntilCleanup(ctx, t, c, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}})
	if err := c.Create(ctx, &policyv1alpha1.FederatedResourceQuota{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "team"},
		Spec: policyv1alpha1.FederatedResourceQuotaSpec{Overall: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("3")}}}); err != nil {
		t.Fatal(err)
	}
	tenant := tenantClient(ctx, t, ns)
	deployment := func(name string, replicas int32, cpu string) *unstructured.Unstructured {
		d := &unstructured.Unstructured{Object: map[string]any{"apiVersion": "apps/v1", "kind": "Deployment",
			"metadata": map[string]any{"namespace": ns, "name": name},
			"spec": map[string]any{"replicas": int64(replicas), "selector": map[string]any{"matchLabels": map[string]any{"app": name}},
				"template": map[string]any{"metadata": map[string]any{"labels": map[string]any{"app": name}},
					"spec": map[string]any{"containers": []any{map[string]any{"name": "c", "image": "nginx",
						"resources": map[string]any{"requests": map[string]any{"cpu": cpu}}}}}}}}}
		return d
	}
	// The templates are the namespace's (made here as its administrator);
	// what the tenant does is write policies and bindings.
	if err := c.Create(ctx, deployment("web", 2, "500m")); err != nil {
		t.Fatal(err)
	}
	if err := tenant.Create(ctx, &policyv1alpha1.PropagationPolicy{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "web"},
		Spec: policyv1alpha1.PropagationSpec{ResourceSelectors: []policyv1alpha1.ResourceSelector{{APIVersion: "apps/v1", Kind: "Deployment", Name: "web"}},
			Placement: policyv1alpha1.Placement{ClusterAffinity: &policyv1alpha1.ClusterAffinity{ClusterNames: []string{"member1"}}}}}); err != nil {
		t.Fatal(err)
	}
	thirty := &policyv1alpha1.OverridePolicy{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "thirty"}, Spec: policyv1alpha1.OverrideSpec{
		ResourceSelectors: []policyv1alpha1.ResourceSelector{{APIVersion: "apps/v1", Kind: "Deployment", Name: "web"}},
		OverrideRules: []policyv1alpha1.RuleWithCluster{{Overriders: policyv1alpha1.Overriders{Plaintext: []policyv1alpha1.PlaintextOverrider{{
			Path: "/spec/replicas", Operator: policyv1alpha1.OverriderOpReplace, Value: apiextensionsv1.JSON{Raw: []byte(`30`)}}}}}}}}
	if err := tenant.Create(ctx, thirty); err != nil {
		t.Fatal(err)
	}
	refusedWith := func(binding, want string) {
		t.Helper()
		testenv.Eventually(t, 60*time.Second, "binding "+binding+" refusing its copy", func(ctx context.Context) error {
			rb := &workv1alpha2.ResourceBinding{}
			if err := c.Get(ctx, client.ObjectKey{Namespace: ns, Name: binding}, rb); err != nil {
				return err
			}
			cond := meta.FindStatusCondition(rb.Status.Conditions, workv1alpha2.OverridesApplied)
			if cond == nil || cond.Status != metav1.ConditionFalse || !strings.Contains(cond.Message, want) {
				return fmt.Errorf("condition %+v", cond)
			}
			return nil
		})
	}
	// runsIn1 waits until member1 runs name with replicas.
	runsIn1 := func(name string, replicas int32, why string) {
		t.Helper()
		testenv.Eventually(t, 60*time.Second, name+" in member1 "+why, func(ctx context.Context) error {
			d, err := kube(t, "member1").AppsV1().Deployments(ns).Get(ctx, name, metav1.GetOptions{})
			if err != nil {
				return err
			}
			if d.Spec.Replicas == nil || *d.Spec.Replicas != replicas {
				return fmt.Errorf("replicas %v", d.Spec.Replicas)
			}
			return nil
		})
	}
	refusedWith("web-deployment", "the copy for cluster member1 would run cpu 15 (the binding declares 1)")
	if d, err := kube(t, "member1").AppsV1().Deployments(ns).Get(ctx, "web", metav1.GetOptions{}); !apierrors.IsNotFound(err) {
		t.Fatalf("member1 runs web past the quota: %v replicas (err %v)", d.Spec.Replicas, err)
	}
	// Without the override the same template runs as declared: the
	// refusal was the quota's.
	if err := tenant.Delete(ctx, thirty); err != nil {
		t.Fatal(err)
	}
	runsIn1("web", 2, "with the 2 replicas declared")

	// A binding of the tenant's own, declaring nothing for 50 replicas.
	if err := c.Create(ctx, deployment("big", 50, "100m")); err != nil {
		t.Fatal(err)
	}
	if err := tenant.Create(ctx, &workv1alpha2.ResourceBinding{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "big"},
		Spec: workv1alpha2.ResourceBindingSpec{Resource: workv1alpha2.ObjectReference{APIVersion: "apps/v1", Kind: "Deployment", Namespace: ns, Name: "big"},
			Clusters: []workv1alpha2.TargetCluster{{Name: "member1"}}}}); err != nil {
		t.Fatalf("the tenant's binding (it declares nothing: the webhook admits it): %v", err)
	}
	refusedWith("big", "the copy for cluster member1 would run cpu 5 (the binding declares 0)")
	if _, err := kube(t, "member1").AppsV1().Deployments(ns).Get(ctx, "big", metav1.GetOptions{}); !apierrors.IsNotFound(err) {
		t.Fatalf("member1 runs big, which its binding declared nothing of (err %v)", err)
	}
	// The refusal is the quota's: once the platform removes the quota, the
	// binding controller (which watches quotas) lets the copy run, with no
	// change to the binding.
	if err := c.Delete(ctx, &policyv1alpha1.FederatedResourceQuota{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "team"}}); err != nil {
		t.Fatal(err)
	}
	runsIn1("big", 50, "once no quota limits the namespace")
}
