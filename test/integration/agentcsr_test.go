package integration

import (
	"context"
	"fmt"
	"testing"
	"time"

	certificatesv1 "k8s.io/api/certificates/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/manager"

	clusterv1alpha1 "github.com/karmada-go/karmada/api/cluster/v1alpha1"
	policyv1alpha1 "github.com/karmada-go/karmada/api/policy/v1alpha1"
	workv1alpha1 "github.com/karmada-go/karmada/api/work/v1alpha1"
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
	kc := startAgentApprover(ctx, t, env)
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
		{"an agent of a cluster no longer registered renewing", "ghost", as(agentcsr.UserPrefix+"ghost", agentcsr.Group), []string{agentcsr.Group}, certificatesv1.KubeAPIServerClientSignerName, certificatesv1.CertificateDenied, "NotRegistered"},
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

// Approving a registration makes the cluster's Cluster, Lease and its
// agent's RBAC; with the agent's identity (impersonated: real requests to
// the real API server), it may do its own work and nothing of another's.
func TestAgentRBAC(t *testing.T) {
	env := testenv.Start(t)
	ctx := context.Background()
	kc := startAgentApprover(ctx, t, env)
	for _, name := range []string{"edge", "other"} {
		registerAgent(ctx, t, kc, env, name)
	}
	// A Work in each cluster's execution namespace.
	for _, name := range []string{"edge", "other"} {
		w := &workv1alpha1.Work{ObjectMeta: metav1.ObjectMeta{Namespace: workv1alpha1.ExecutionNamespace(name), Name: "w"}}
		if err := env.Client.Create(ctx, w); err != nil {
			t.Fatal(err)
		}
	}
	agent := rest.CopyConfig(env.Config)
	agent.Impersonate = rest.ImpersonationConfig{UserName: agentcsr.UserPrefix + "edge", Groups: []string{agentcsr.Group, "system:authenticated"}}
	ac, err := client.New(agent, client.Options{Scheme: env.Client.Scheme()})
	if err != nil {
		t.Fatal(err)
	}
	akc := kubernetes.NewForConfigOrDie(agent)
	allowed := func(what string, err error) {
		t.Helper()
		if err != nil {
			t.Errorf("%s: %v", what, err)
		}
	}
	forbidden := func(what string, err error) {
		t.Helper()
		if !apierrors.IsForbidden(err) {
			t.Errorf("%s: want Forbidden, got %v", what, err)
		}
	}
	edge := &clusterv1alpha1.Cluster{}
	allowed("reading its Cluster", ac.Get(ctx, client.ObjectKey{Name: "edge"}, edge))
	edge.Spec.ID = "its-kube-system-uid"
	allowed("updating its Cluster", ac.Update(ctx, edge))
	setReadyAs := func(c client.Client, cl *clusterv1alpha1.Cluster) error {
		meta.SetStatusCondition(&cl.Status.Conditions, metav1.Condition{Type: clusterv1alpha1.ClusterConditionReady, Status: metav1.ConditionTrue, Reason: "ClusterReady", Message: "agent"})
		return c.Status().Update(ctx, cl)
	}
	allowed("reporting its Cluster's status", setReadyAs(ac, edge))
	works := &workv1alpha1.WorkList{}
	allowed("listing its Works", ac.List(ctx, works, client.InNamespace(workv1alpha1.ExecutionNamespace("edge"))))
	w := &workv1alpha1.Work{}
	allowed("reading its Work", ac.Get(ctx, client.ObjectKey{Namespace: workv1alpha1.ExecutionNamespace("edge"), Name: "w"}, w))
	w.Finalizers = append(w.Finalizers, "example.com/test")
	allowed("updating its Work", ac.Update(ctx, w))
	lease, err := akc.CoordinationV1().Leases("karmada-cluster").Get(ctx, "edge", metav1.GetOptions{})
	allowed("reading its Lease", err)
	if lease != nil {
		now := metav1.NowMicro()
		lease.Spec.RenewTime = &now
		_, err = akc.CoordinationV1().Leases("karmada-cluster").Update(ctx, lease, metav1.UpdateOptions{})
		allowed("renewing its Lease", err)
	}

	forbidden("listing another cluster's Works", ac.List(ctx, &workv1alpha1.WorkList{}, client.InNamespace(workv1alpha1.ExecutionNamespace("other"))))
	_, err = akc.CoreV1().Secrets("karmada-cluster").List(ctx, metav1.ListOptions{})
	forbidden("listing member credentials", err)
	_, err = akc.CoreV1().Secrets("karmada-cluster").Get(ctx, "other", metav1.GetOptions{})
	forbidden("reading a Secret in karmada-cluster", err)
	pp := &policyv1alpha1.PropagationPolicy{ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: "steal"},
		Spec: policyv1alpha1.PropagationSpec{ResourceSelectors: []policyv1alpha1.ResourceSelector{{APIVersion: "v1", Kind: "Secret"}}}}
	forbidden("creating a policy", ac.Create(ctx, pp))
	other := &clusterv1alpha1.Cluster{}
	if err := env.Client.Get(ctx, client.ObjectKey{Name: "other"}, other); err != nil {
		t.Fatal(err)
	}
	other.Labels = map[string]string{"taken": "over"}
	forbidden("updating another Cluster", ac.Update(ctx, other))
	forbidden("reporting another Cluster's status", setReadyAs(ac, other))
	forbidden("creating a Cluster", ac.Create(ctx, &clusterv1alpha1.Cluster{ObjectMeta: metav1.ObjectMeta{Name: "fake"}, Spec: clusterv1alpha1.ClusterSpec{SyncMode: clusterv1alpha1.Pull}}))
	_, err = akc.CoordinationV1().Leases("karmada-cluster").Get(ctx, "other", metav1.GetOptions{})
	forbidden("reading another cluster's Lease", err)
	forbidden("deleting its own Work", ac.Delete(ctx, w))

	// Removing the Cluster removes what was made for its agent (owner
	// references; this test's API server runs no garbage collector, so the
	// references themselves are checked).
	role := &rbacv1.ClusterRole{}
	if err := env.Client.Get(ctx, client.ObjectKey{Name: agentcsr.UserPrefix + "edge"}, role); err != nil {
		t.Fatal(err)
	}
	if len(role.OwnerReferences) != 1 || role.OwnerReferences[0].Name != "edge" || role.OwnerReferences[0].Kind != "Cluster" {
		t.Errorf("the agent's ClusterRole is not owned by its Cluster: %+v", role.OwnerReferences)
	}
}

// startAgentApprover applies deploy/rbac and runs the agentcsrapproving
// controller on env; it returns an admin clientset.
func startAgentApprover(ctx context.Context, t *testing.T, env *testenv.Env) kubernetes.Interface {
	t.Helper()
	if err := localup.ApplyComponentRBAC(ctx, env.Client); err != nil {
		t.Fatal(err)
	}
	kc := kubernetes.NewForConfigOrDie(env.Config)
	env.RunManager(t, func(ctx context.Context, mgr manager.Manager) error {
		return (&agentcsr.Reconciler{Client: mgr.GetClient(), Reader: mgr.GetAPIReader(), Kube: kc}).SetupWithManager(mgr)
	})
	return kc
}

// registerAgent requests, as a bootstrap token of Karmada's group would, the
// certificate of cluster name's agent, and waits for the approval (which
// comes after the Cluster, Lease and RBAC are made).
func registerAgent(ctx context.Context, t *testing.T, kc kubernetes.Interface, env *testenv.Env, name string) {
	t.Helper()
	boot := rest.CopyConfig(env.Config)
	boot.Impersonate = rest.ImpersonationConfig{UserName: "system:bootstrap:abcdef", Groups: []string{"system:bootstrappers", token.DefaultGroup, "system:authenticated"}}
	csr := &certificatesv1.CertificateSigningRequest{ObjectMeta: metav1.ObjectMeta{Name: "register-" + name},
		Spec: certificatesv1.CertificateSigningRequestSpec{Request: testenv.CertificateRequest(t, agentcsr.UserPrefix+name, []string{agentcsr.Group}),
			SignerName: certificatesv1.KubeAPIServerClientSignerName, Usages: []certificatesv1.KeyUsage{certificatesv1.UsageDigitalSignature, certificatesv1.UsageClientAuth}}}
	if _, err := kubernetes.NewForConfigOrDie(boot).CertificatesV1().CertificateSigningRequests().Create(ctx, csr, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	testenv.Eventually(t, 20*time.Second, "the registration of "+name+" approved", func(ctx context.Context) error {
		got, err := kc.CertificatesV1().CertificateSigningRequests().Get(ctx, csr.Name, metav1.GetOptions{})
		if err != nil || len(got.Status.Conditions) == 0 || got.Status.Conditions[0].Type != certificatesv1.CertificateApproved {
			return fmt.Errorf("%+v (%v)", got.Status.Conditions, err)
		}
		cl := &clusterv1alpha1.Cluster{}
		if err := env.Client.Get(ctx, client.ObjectKey{Name: name}, cl); err != nil || cl.Spec.SyncMode != clusterv1alpha1.Pull {
			return fmt.Errorf("Cluster %s: %v (%+v)", name, err, cl.Spec)
		}
		return nil
	})
}
