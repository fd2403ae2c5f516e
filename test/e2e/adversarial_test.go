//go:build e2e

package e2e

// The adversarial suite: each test acts as an attacker with the attacker's
// own credentials (a bootstrap token, an agent's kubeconfig, a tenant's
// namespaced rights) and asserts that the boundary docs/security.md
// promises holds and that nothing was changed or deleted.

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	authenticationv1 "k8s.io/api/authentication/v1"
	certificatesv1 "k8s.io/api/certificates/v1"
	corev1 "k8s.io/api/core/v1"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	utilrand "k8s.io/apimachinery/pkg/util/rand"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/util/retry"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	clusterv1alpha1 "github.com/karmada-go/karmada/api/cluster/v1alpha1"
	policyv1alpha1 "github.com/karmada-go/karmada/api/policy/v1alpha1"
	remedyv1alpha1 "github.com/karmada-go/karmada/api/remedy/v1alpha1"
	workv1alpha1 "github.com/karmada-go/karmada/api/work/v1alpha1"
	workv1alpha2 "github.com/karmada-go/karmada/api/work/v1alpha2"
	"github.com/karmada-go/karmada/internal/names"
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
	out2 := &rest.Config{Host: cfg.Host, BearerToken: tok, TLSClientConfig: rest.TLSClientConfig{CAData: cfg.CAData}, Timeout: 10 * time.Second}
	// The API server's token authenticator reads the token's Secret from
	// its informer: a token just made may be unknown for a moment. Wait
	// until it is known (any identity may review itself), so that what
	// the tests see is the authorizer's answer, not that.
	kc, err := kubernetes.NewForConfig(out2)
	if err != nil {
		t.Fatal(err)
	}
	testenv.Eventually(t, 30*time.Second, "the bootstrap token known to the API server", func(ctx context.Context) error {
		_, err := kc.AuthenticationV1().SelfSubjectReviews().Create(ctx, &authenticationv1.SelfSubjectReview{}, metav1.CreateOptions{})
		return err
	})
	return out2
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
	wantRefused(t, "creating a Remedy", tc.Create(ctx, &remedyv1alpha1.Remedy{ObjectMeta: metav1.ObjectMeta{Name: "e2e-token-remedy"},
		Spec: remedyv1alpha1.RemedySpec{Actions: []remedyv1alpha1.RemedyAction{remedyv1alpha1.TrafficControl}}}))
	proxyRefused(t, "a bootstrap token", bootstrapToken(t), "member1")
	searchRefused(t, "a bootstrap token", bootstrapToken(t))
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
