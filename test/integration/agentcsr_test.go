package integration

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	certificatesv1 "k8s.io/api/certificates/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/manager"

	clusterv1alpha1 "github.com/karmada-go/karmada/api/cluster/v1alpha1"
	policyv1alpha1 "github.com/karmada-go/karmada/api/policy/v1alpha1"
	workv1alpha1 "github.com/karmada-go/karmada/api/work/v1alpha1"
	"github.com/karmada-go/karmada/internal/controlplane"
	"github.com/karmada-go/karmada/internal/names"
	"github.com/karmada-go/karmada/internal/registration/agentcert"
	"github.com/karmada-go/karmada/internal/registration/agentcsr"
	"github.com/karmada-go/karmada/internal/registration/token"
	"github.com/karmada-go/karmada/internal/testenv"
)

// agentRequest is an agent's certificate request for cluster: its
// registration's group names registration, or the id of its own key when
// registration is "" (a new registration); it asks for an hour.
func agentRequest(t *testing.T, name, cluster, registration string) *certificatesv1.CertificateSigningRequest {
	t.Helper()
	req := testenv.KeyedCertificateRequest(t, names.AgentUserPrefix+cluster, func(pub any) []string {
		id := registration
		if id == "" {
			var err error
			if id, err = agentcert.RegistrationID(pub); err != nil {
				t.Fatal(err)
			}
		}
		return []string{names.AgentGroup, names.AgentRegistrationGroupPrefix + id}
	})
	return &certificatesv1.CertificateSigningRequest{ObjectMeta: metav1.ObjectMeta{Name: name},
		Spec: certificatesv1.CertificateSigningRequestSpec{Request: req, SignerName: certificatesv1.KubeAPIServerClientSignerName,
			Usages: []certificatesv1.KeyUsage{certificatesv1.UsageDigitalSignature, certificatesv1.UsageClientAuth}, ExpirationSeconds: ptr.To[int32](3600)}}
}

// decided waits until the request has the condition wanted, with reason.
func decided(ctx context.Context, t *testing.T, kc kubernetes.Interface, what, name string, want certificatesv1.RequestConditionType, reason string) {
	t.Helper()
	testenv.Eventually(t, 20*time.Second, what, func(ctx context.Context) error {
		got, err := kc.CertificatesV1().CertificateSigningRequests().Get(ctx, name, metav1.GetOptions{})
		if err != nil {
			return err
		}
		for _, cond := range got.Status.Conditions {
			if cond.Type == want && cond.Reason == reason && cond.Message != "" {
				return nil
			}
		}
		return fmt.Errorf("conditions %+v, want %s %s", got.Status.Conditions, want, reason)
	})
}

// Agent certificate requests are approved for the right requester only,
// with the RBAC of deploy/rbac, asked through SubjectAccessReviews of the
// real API server, and bound to the registration: its id comes from the
// registering request's key and is recorded on the Cluster; a renewal must
// come from a certificate of that registration. The others are denied,
// saying why.
func TestAgentCSRApproval(t *testing.T) {
	t.Parallel()
	env := testenv.Start(t)
	ctx := context.Background()
	kc := startAgentApprover(ctx, t, env)
	// "taken" was registered by an earlier version: it records a request's
	// name, as those did.
	if err := env.Client.Create(ctx, &clusterv1alpha1.Cluster{ObjectMeta: metav1.ObjectMeta{Name: "taken", Annotations: map[string]string{clusterv1alpha1.RegistrationAnnotation: "agent-taken-abcde"}},
		Spec: clusterv1alpha1.ClusterSpec{SyncMode: clusterv1alpha1.Pull}}); err != nil {
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
	try := func(what string, requester kubernetes.Interface, csr *certificatesv1.CertificateSigningRequest, want certificatesv1.RequestConditionType, reason string) {
		t.Helper()
		if _, err := requester.CertificatesV1().CertificateSigningRequests().Create(ctx, csr, metav1.CreateOptions{}); err != nil {
			t.Fatalf("%s: creating the request: %v", what, err)
		}
		decided(ctx, t, kc, what, csr.Name, want, reason)
	}

	try("a bootstrap token registering a new cluster", bootstrap, agentRequest(t, "register-member3", "member3", ""), certificatesv1.CertificateApproved, "AutoApproved")
	cl := &clusterv1alpha1.Cluster{}
	if err := env.Client.Get(ctx, client.ObjectKey{Name: "member3"}, cl); err != nil {
		t.Fatal(err)
	}
	id, ok := strings.CutPrefix(cl.Annotations[clusterv1alpha1.RegistrationAnnotation], "sha256:")
	if !ok || len(id) != 32 {
		t.Fatalf("member3 records registration %q, want sha256:<32 hex digits>", cl.Annotations[clusterv1alpha1.RegistrationAnnotation])
	}
	agent := as(names.AgentUserPrefix+"member3", names.AgentGroup, names.AgentRegistrationGroupPrefix+id)
	try("the agent renewing within its registration", agent, agentRequest(t, "renew-member3", "member3", id), certificatesv1.CertificateApproved, "AutoApproved")
	other := strings.Repeat("0", 32)
	try("a certificate of another registration renewing", as(names.AgentUserPrefix+"member3", names.AgentGroup, names.AgentRegistrationGroupPrefix+other),
		agentRequest(t, "renew-old-member3", "member3", other), certificatesv1.CertificateDenied, "NotRegistered")
	try("the agent asking for another registration's group", agent, agentRequest(t, "renew-other-member3", "member3", other), certificatesv1.CertificateDenied, "NotRegistered")
	try("a bootstrap token re-registering member3 with its own key", bootstrap, agentRequest(t, "takeover-member3", "member3", ""), certificatesv1.CertificateDenied, "ClusterExists")
	try("a bootstrap token presenting member3's registration", bootstrap, agentRequest(t, "takeover2-member3", "member3", id), certificatesv1.CertificateDenied, "WrongSubject")
	try("a bootstrap token taking over a cluster an earlier version registered", bootstrap, agentRequest(t, "agent-taken-abcde", "taken", ""), certificatesv1.CertificateDenied, "ClusterExists")
	try("an agent of a cluster no longer registered renewing", as(names.AgentUserPrefix+"ghost", names.AgentGroup, names.AgentRegistrationGroupPrefix+id),
		agentRequest(t, "renew-ghost", "ghost", id), certificatesv1.CertificateDenied, "NotRegistered")
	try("an agent asking for another cluster's", as(names.AgentUserPrefix+"member4", names.AgentGroup), agentRequest(t, "steal-member3", "member3", ""), certificatesv1.CertificateDenied, "NotAllowed")
	try("a user without the agent rights", as("intruder"), agentRequest(t, "intruder-member5", "member5", ""), certificatesv1.CertificateDenied, "NotAllowed")
	wrongSigner := agentRequest(t, "signer-member5", "member5", "")
	wrongSigner.Spec.SignerName = "example.com/other"
	try("the wrong signer", bootstrap, wrongSigner, certificatesv1.CertificateDenied, "WrongSigner")
	wrongGroup := agentRequest(t, "group-member5", "member5", "")
	wrongGroup.Spec.Request = testenv.CertificateRequest(t, names.AgentUserPrefix+"member5", []string{"karmada-admins"})
	try("the wrong group", bootstrap, wrongGroup, certificatesv1.CertificateDenied, "WrongSubject")
	forever := agentRequest(t, "forever-member5", "member5", "")
	forever.Spec.ExpirationSeconds = ptr.To[int32](365 * 24 * 3600)
	try("a year's certificate", bootstrap, forever, certificatesv1.CertificateDenied, "WrongLifetime")
	noLifetime := agentRequest(t, "nolife-member5", "member5", "")
	noLifetime.Spec.ExpirationSeconds = nil
	try("a certificate without a lifetime (the signer's year)", bootstrap, noLifetime, certificatesv1.CertificateDenied, "WrongLifetime")

	// The agent of "taken" (an earlier version's certificate, without a
	// registration group) renews: its registration starts with that
	// request's key, and its rights follow the new group.
	legacy := as(names.AgentUserPrefix+"taken", names.AgentGroup)
	try("an earlier version's agent renewing", legacy, agentRequest(t, "renew-taken", "taken", ""), certificatesv1.CertificateApproved, "AutoApproved")
	if err := env.Client.Get(ctx, client.ObjectKey{Name: "taken"}, cl); err != nil {
		t.Fatal(err)
	}
	takenID, ok := strings.CutPrefix(cl.Annotations[clusterv1alpha1.RegistrationAnnotation], "sha256:")
	if !ok || len(takenID) != 32 {
		t.Fatalf("taken records %q after its agent's renewal, want its new registration", cl.Annotations[clusterv1alpha1.RegistrationAnnotation])
	}
	crb, err := kc.RbacV1().ClusterRoleBindings().Get(ctx, names.AgentUserPrefix+"taken", metav1.GetOptions{})
	if err != nil || len(crb.Subjects) != 1 || crb.Subjects[0].Kind != rbacv1.GroupKind || crb.Subjects[0].Name != names.AgentRegistrationGroupPrefix+takenID {
		t.Errorf("taken's agent rights are bound to %+v (%v), want the group of its registration", crb, err)
	}
	try("the earlier certificate renewing again", legacy, agentRequest(t, "renew-taken-again", "taken", ""), certificatesv1.CertificateDenied, "NotRegistered")
}

// Approving a registration makes the cluster's Cluster, Lease and its
// agent's RBAC; with the agent's identity (impersonated: real requests to
// the real API server), it may do its own work and nothing of another's.
func TestAgentRBAC(t *testing.T) {
	t.Parallel()
	env := testenv.Start(t)
	ctx := context.Background()
	kc := startAgentApprover(ctx, t, env)
	identities := map[string]rest.ImpersonationConfig{}
	for _, name := range []string{"edge", "other"} {
		identities[name] = registerAgent(ctx, t, kc, env, name)
	}
	// A Work in each cluster's execution namespace.
	for _, name := range []string{"edge", "other"} {
		w := &workv1alpha1.Work{ObjectMeta: metav1.ObjectMeta{Namespace: workv1alpha1.ExecutionNamespace(name), Name: "w"}}
		if err := env.Client.Create(ctx, w); err != nil {
			t.Fatal(err)
		}
	}
	agent := rest.CopyConfig(env.Config)
	agent.Impersonate = identities["edge"]
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
	// It may delete Works in its own namespace (those holding its exported
	// Services' EndpointSlices), never another cluster's.
	forbidden("deleting another cluster's Work", ac.Delete(ctx, &workv1alpha1.Work{ObjectMeta: metav1.ObjectMeta{Namespace: workv1alpha1.ExecutionNamespace("other"), Name: w.Name}}))
	forbidden("creating a Work for another cluster", ac.Create(ctx, &workv1alpha1.Work{ObjectMeta: metav1.ObjectMeta{Namespace: workv1alpha1.ExecutionNamespace("other"), Name: "forged"}}))

	// Removing the Cluster removes what was made for its agent (owner
	// references; this test's API server runs no garbage collector, so the
	// references themselves are checked).
	role := &rbacv1.ClusterRole{}
	if err := env.Client.Get(ctx, client.ObjectKey{Name: names.AgentUserPrefix + "edge"}, role); err != nil {
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
	if err := controlplane.ApplyComponentRBAC(ctx, env.Client); err != nil {
		t.Fatal(err)
	}
	kc := kubernetes.NewForConfigOrDie(env.Config)
	env.RunManager(t, func(ctx context.Context, mgr manager.Manager) error {
		return (&agentcsr.Reconciler{Client: mgr.GetClient(), Reader: mgr.GetAPIReader(), Kube: kc}).SetupWithManager(mgr)
	})
	return kc
}

// registerAgent requests, as a bootstrap token of Karmada's group would, the
// certificate of cluster name's agent, waits for the approval (which comes
// after the Cluster, Lease and RBAC are made), and returns how to act as
// that agent: its user and the groups its certificate carries (its
// registration's included).
func registerAgent(ctx context.Context, t *testing.T, kc kubernetes.Interface, env *testenv.Env, name string) rest.ImpersonationConfig {
	t.Helper()
	boot := rest.CopyConfig(env.Config)
	boot.Impersonate = rest.ImpersonationConfig{UserName: "system:bootstrap:abcdef", Groups: []string{"system:bootstrappers", token.DefaultGroup, "system:authenticated"}}
	csr := agentRequest(t, "register-"+name, name, "")
	if _, err := kubernetes.NewForConfigOrDie(boot).CertificatesV1().CertificateSigningRequests().Create(ctx, csr, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	var id string
	testenv.Eventually(t, 20*time.Second, "the registration of "+name+" approved", func(ctx context.Context) error {
		got, err := kc.CertificatesV1().CertificateSigningRequests().Get(ctx, csr.Name, metav1.GetOptions{})
		if err != nil || len(got.Status.Conditions) == 0 || got.Status.Conditions[0].Type != certificatesv1.CertificateApproved {
			return fmt.Errorf("%+v (%v)", got.Status.Conditions, err)
		}
		cl := &clusterv1alpha1.Cluster{}
		if err := env.Client.Get(ctx, client.ObjectKey{Name: name}, cl); err != nil || cl.Spec.SyncMode != clusterv1alpha1.Pull {
			return fmt.Errorf("Cluster %s: %v (%+v)", name, err, cl.Spec)
		}
		id = strings.TrimPrefix(cl.Annotations[clusterv1alpha1.RegistrationAnnotation], "sha256:")
		return nil
	})
	return rest.ImpersonationConfig{UserName: names.AgentUserPrefix + name, Groups: []string{names.AgentGroup, names.AgentRegistrationGroupPrefix + id, "system:authenticated"}}
}
