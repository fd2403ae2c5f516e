package integration

import (
	"context"
	"fmt"
	"testing"
	"time"

	certificatesv1 "k8s.io/api/certificates/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/manager"

	clusterv1alpha1 "github.com/karmada-go/karmada/api/cluster/v1alpha1"
	"github.com/karmada-go/karmada/internal/controllers/agentcsr"
	"github.com/karmada-go/karmada/internal/karmadactl/token"
	"github.com/karmada-go/karmada/internal/localup"
	"github.com/karmada-go/karmada/internal/testenv"
)

// Agent certificate requests are approved for the right requester only,
// with the RBAC of deploy/rbac, asked through SubjectAccessReviews of the
// real API server; the others are denied, saying why.
func TestAgentCSRApproval(t *testing.T) {
	env := testenv.Start(t)
	ctx := context.Background()
	if err := localup.ApplyComponentRBAC(ctx, env.Client); err != nil {
		t.Fatal(err)
	}
	kc := kubernetes.NewForConfigOrDie(env.Config)
	env.RunManager(t, func(ctx context.Context, mgr manager.Manager) error {
		return (&agentcsr.Reconciler{Client: mgr.GetClient(), Kube: kc}).SetupWithManager(mgr)
	})
	if err := env.Client.Create(ctx, &clusterv1alpha1.Cluster{ObjectMeta: metav1.ObjectMeta{Name: "taken"}, Spec: clusterv1alpha1.ClusterSpec{SyncMode: clusterv1alpha1.Pull}}); err != nil {
		t.Fatal(err)
	}
	// "intruder" may create CSRs, but holds neither agent right.
	if _, err := kc.RbacV1().ClusterRoleBindings().Create(ctx, &rbacv1.ClusterRoleBinding{ObjectMeta: metav1.ObjectMeta{Name: "intruder-csr"},
		RoleRef:  rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: "system:node-bootstrapper"},
		Subjects: []rbacv1.Subject{{APIGroup: rbacv1.GroupName, Kind: "User", Name: "intruder"}}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	as := func(user string, groups ...string) kubernetes.Interface {
		cfg := rest.CopyConfig(env.Config)
		cfg.Impersonate = rest.ImpersonationConfig{UserName: user, Groups: append(groups, "system:authenticated")}
		return kubernetes.NewForConfigOrDie(cfg)
	}
	bootstrap := as("system:bootstrap:abcdef", "system:bootstrappers", token.DefaultGroup)
	usages := []certificatesv1.KeyUsage{certificatesv1.UsageDigitalSignature, certificatesv1.UsageClientAuth}
	for i, c := range []struct {
		what, cluster string
		requester     kubernetes.Interface
		orgs          []string
		signer        string
		want          certificatesv1.RequestConditionType
		reason        string
	}{
		{"a bootstrap token registering a new cluster", "member3", bootstrap, []string{agentcsr.Group}, certificatesv1.KubeAPIServerClientSignerName, certificatesv1.CertificateApproved, "AutoApproved"},
		{"an agent renewing its own certificate", "member3", as(agentcsr.UserPrefix+"member3", agentcsr.Group), []string{agentcsr.Group}, certificatesv1.KubeAPIServerClientSignerName, certificatesv1.CertificateApproved, "AutoApproved"},
		{"an agent asking for another cluster's", "member3", as(agentcsr.UserPrefix+"member4", agentcsr.Group), []string{agentcsr.Group}, certificatesv1.KubeAPIServerClientSignerName, certificatesv1.CertificateDenied, "NotAllowed"},
		{"a user without the agent rights", "member3", as("intruder"), []string{agentcsr.Group}, certificatesv1.KubeAPIServerClientSignerName, certificatesv1.CertificateDenied, "NotAllowed"},
		{"a bootstrap token taking over a registered cluster", "taken", bootstrap, []string{agentcsr.Group}, certificatesv1.KubeAPIServerClientSignerName, certificatesv1.CertificateDenied, "ClusterExists"},
		{"the wrong signer", "member5", bootstrap, []string{agentcsr.Group}, "example.com/other", certificatesv1.CertificateDenied, "WrongSigner"},
		{"the wrong group", "member5", bootstrap, []string{"karmada-admins"}, certificatesv1.KubeAPIServerClientSignerName, certificatesv1.CertificateDenied, "WrongSubject"},
	} {
		name := fmt.Sprintf("agent-csr-%d", i)
		csr := &certificatesv1.CertificateSigningRequest{ObjectMeta: metav1.ObjectMeta{Name: name},
			Spec: certificatesv1.CertificateSigningRequestSpec{Request: testenv.CertificateRequest(t, agentcsr.UserPrefix+c.cluster, c.orgs), SignerName: c.signer, Usages: usages}}
		if _, err := c.requester.CertificatesV1().CertificateSigningRequests().Create(ctx, csr, metav1.CreateOptions{}); err != nil {
			t.Fatalf("%s: creating the request: %v", c.what, err)
		}
		testenv.Eventually(t, 20*time.Second, c.what, func(ctx context.Context) error {
			got, err := kc.CertificatesV1().CertificateSigningRequests().Get(ctx, name, metav1.GetOptions{})
			if err != nil {
				return err
			}
			for _, cond := range got.Status.Conditions {
				if cond.Type == c.want && cond.Reason == c.reason && cond.Message != "" {
					return nil
				}
			}
			return fmt.Errorf("conditions %+v, want %s %s", got.Status.Conditions, c.want, c.reason)
		})
	}
}
