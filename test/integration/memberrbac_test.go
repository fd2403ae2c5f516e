package integration

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"strings"
	"testing"
	"time"

	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	appsv1 "k8s.io/api/apps/v1"
	authenticationv1 "k8s.io/api/authentication/v1"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/record"
	clocktesting "k8s.io/utils/clock/testing"
	"k8s.io/utils/ptr"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	clusterv1alpha1 "github.com/karmada-go/karmada/api/cluster/v1alpha1"
	workv1alpha1 "github.com/karmada-go/karmada/api/work/v1alpha1"
	"github.com/karmada-go/karmada/internal/clusters/clusterclient"
	"github.com/karmada-go/karmada/internal/clusters/join"
	"github.com/karmada-go/karmada/internal/clusters/memberrights"
	"github.com/karmada-go/karmada/internal/clusters/tokenrenewal"
	"github.com/karmada-go/karmada/internal/karmadactl/unjoin"
	"github.com/karmada-go/karmada/internal/propagation/execution"
	"github.com/karmada-go/karmada/internal/testenv"
)

// memberToken reads the token join stored for a cluster.
func memberToken(ctx context.Context, t *testing.T, cp *testenv.Env, name string) string {
	t.Helper()
	s := &corev1.Secret{}
	if err := cp.Client.Get(ctx, client.ObjectKey{Namespace: join.DefaultClusterNamespace, Name: name}, s); err != nil {
		t.Fatal(err)
	}
	return string(s.Data[clusterclient.SecretTokenKey])
}

// as is a client of the member acting with a token.
func as(t *testing.T, member *testenv.Env, token string) kubernetes.Interface {
	t.Helper()
	cfg := &rest.Config{Host: member.Config.Host, BearerToken: token, TLSClientConfig: rest.TLSClientConfig{CAData: member.Config.CAData}}
	return kubernetes.NewForConfigOrDie(cfg)
}

// The identity join makes in the member can do what the controllers need
// and no more, checked with real requests against the member's API server.
func TestJoinGrantsLeastPrivilege(t *testing.T) {
	t.Parallel()
	cp, member := testenv.Start(t), testenv.StartMember(t)
	ctx := context.Background()
	admin := kubernetes.NewForConfigOrDie(member.Config)
	if _, err := admin.CoreV1().Secrets("kube-system").Create(ctx, &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: "member-own"}, StringData: map[string]string{"k": "v"}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	opts := join.Options{ClusterName: "member1", ClusterNamespace: join.DefaultClusterNamespace}
	if err := join.Run(ctx, cp.Client, member.Config, opts, io.Discard); err != nil {
		t.Fatal(err)
	}
	token := memberToken(ctx, t, cp, "member1")
	claims, ok := tokenrenewal.ParseToken(token)
	if !ok || claims.Expiry-claims.IssuedAt != int64(join.DefaultTokenTTL/time.Second) {
		t.Errorf("the stored token is not a bound token lasting %s: %+v (parsed %t)", join.DefaultTokenTTL, claims, ok)
	}
	kc := as(t, member, token)
	forbidden := func(what string, err error) {
		t.Helper()
		if !apierrors.IsForbidden(err) {
			t.Errorf("%s: want Forbidden, got %v", what, err)
		}
	}
	allowed := func(what string, err error) {
		t.Helper()
		if err != nil {
			t.Errorf("%s: %v", what, err)
		}
	}
	// The default kinds: what Karmada users propagate (Secrets, Pods, RBAC)...
	_, err := kc.CoreV1().Secrets("kube-system").Get(ctx, "member-own", metav1.GetOptions{})
	allowed("reading a Secret (Secrets are propagated by default)", err)
	_, err = kc.CoreV1().Secrets("default").Create(ctx, &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: "s"}}, metav1.CreateOptions{})
	allowed("creating a Secret", err)
	_, err = kc.CoreV1().Pods("default").Create(ctx, &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "p"}, Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "c", Image: "i"}}}}, metav1.CreateOptions{})
	allowed("creating a Pod", err)
	_, err = kc.RbacV1().ClusterRoles().Create(ctx, &rbacv1.ClusterRole{ObjectMeta: metav1.ObjectMeta{Name: "reader"},
		Rules: []rbacv1.PolicyRule{{APIGroups: []string{"apps"}, Resources: []string{"deployments"}, Verbs: []string{"get", "list"}}}}, metav1.CreateOptions{})
	allowed("creating a ClusterRole granting rights it holds", err)
	_, err = kc.RbacV1().RoleBindings("default").Create(ctx, &rbacv1.RoleBinding{ObjectMeta: metav1.ObjectMeta{Name: "team-edit"},
		RoleRef: rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: "edit"}, Subjects: []rbacv1.Subject{{APIGroup: rbacv1.GroupName, Kind: rbacv1.GroupKind, Name: "team-a"}}}, metav1.CreateOptions{})
	allowed("binding edit to a team", err)
	// ... and no more: no escalation, no cluster-admin, no nodes, webhooks
	// or impersonation.
	_, err = kc.RbacV1().ClusterRoles().Create(ctx, &rbacv1.ClusterRole{ObjectMeta: metav1.ObjectMeta{Name: "everything"},
		Rules: []rbacv1.PolicyRule{{APIGroups: []string{"*"}, Resources: []string{"*"}, Verbs: []string{"*"}}}}, metav1.CreateOptions{})
	forbidden("creating a ClusterRole granting every right", err)
	if escalation, ok := memberrights.Refused(err); !ok || !escalation {
		t.Errorf("the member's refusal %v is not told apart as an escalation", err)
	}
	_, err = kc.RbacV1().ClusterRoleBindings().Create(ctx, &rbacv1.ClusterRoleBinding{ObjectMeta: metav1.ObjectMeta{Name: "mine"},
		RoleRef: rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: "cluster-admin"}, Subjects: []rbacv1.Subject{{Kind: rbacv1.ServiceAccountKind, Namespace: join.MemberNamespace, Name: join.ServiceAccountName("member1")}}}, metav1.CreateOptions{})
	forbidden("binding cluster-admin to itself", err)
	_, err = kc.CoreV1().Nodes().Patch(ctx, "any", types.MergePatchType, []byte(`{"metadata":{"labels":{"a":"b"}}}`), metav1.PatchOptions{})
	forbidden("patching a node", err)
	_, err = kc.AdmissionregistrationV1().MutatingWebhookConfigurations().Create(ctx, &admissionregistrationv1.MutatingWebhookConfiguration{ObjectMeta: metav1.ObjectMeta{Name: "w"}}, metav1.CreateOptions{})
	forbidden("creating a mutating webhook configuration", err)
	_, err = kc.CoreV1().ServiceAccounts("kube-system").CreateToken(ctx, "default", &authenticationv1.TokenRequest{}, metav1.CreateOptions{})
	forbidden("a token for another ServiceAccount", err)
	_, err = kc.CoreV1().Nodes().List(ctx, metav1.ListOptions{})
	allowed("listing nodes", err)
	_, err = kc.CoreV1().Pods("").List(ctx, metav1.ListOptions{})
	allowed("listing pods", err)
	_, err = kc.CoreV1().Namespaces().Get(ctx, "kube-system", metav1.GetOptions{})
	allowed("reading kube-system (the identity check)", err)
	_, err = kc.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "propagated"}}, metav1.CreateOptions{})
	allowed("creating a namespace", err)
	dep := &appsv1.Deployment{ObjectMeta: metav1.ObjectMeta{Name: "d"}, Spec: appsv1.DeploymentSpec{
		Selector: &metav1.LabelSelector{MatchLabels: map[string]string{"a": "b"}},
		Template: corev1.PodTemplateSpec{ObjectMeta: metav1.ObjectMeta{Labels: map[string]string{"a": "b"}}, Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "c", Image: "i"}}}}}}
	_, err = kc.AppsV1().Deployments("propagated").Create(ctx, dep, metav1.CreateOptions{})
	allowed("creating a Deployment", err)
	_, err = kc.CoreV1().ServiceAccounts(join.MemberNamespace).CreateToken(ctx, join.ServiceAccountName("member1"), &authenticationv1.TokenRequest{Spec: authenticationv1.TokenRequestSpec{ExpirationSeconds: ptr.To[int64](600)}}, metav1.CreateOptions{})
	allowed("renewing its own token", err)
	if _, _, err := kc.Discovery().ServerGroupsAndResources(); err != nil {
		t.Errorf("discovery: %v", err)
	}

	// --cluster-admin grants everything, with a warning; joining again
	// without it narrows the role back.
	var out bytes.Buffer
	opts.ClusterAdmin = true
	if err := join.Run(ctx, cp.Client, member.Config, opts, &out); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(out.String(), "warning: --cluster-admin") {
		t.Errorf("no warning for --cluster-admin: %q", out.String())
	}
	kc = as(t, member, memberToken(ctx, t, cp, "member1"))
	testenv.Eventually(t, 10*time.Second, "Secrets readable with --cluster-admin", func(ctx context.Context) error {
		_, err := kc.CoreV1().Secrets("kube-system").Get(ctx, "member-own", metav1.GetOptions{})
		return err
	})
	// Joining again without either flag keeps the earlier grant; naming
	// the kinds narrows it.
	opts.ClusterAdmin = false
	out.Reset()
	if err := join.Run(ctx, cp.Client, member.Config, opts, &out); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(out.String(), "keeping --cluster-admin from the earlier join") {
		t.Errorf("joining again did not say it keeps --cluster-admin: %q", out.String())
	}
	narrow := []string{"deployments.apps", "configmaps"}
	opts.PropagateKinds = narrow
	if err := join.Run(ctx, cp.Client, member.Config, opts, io.Discard); err != nil {
		t.Fatal(err)
	}
	opts.PropagateKinds = nil
	out.Reset()
	if err := join.Run(ctx, cp.Client, member.Config, opts, &out); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(out.String(), "keeping --propagate-kinds="+strings.Join(narrow, ",")) {
		t.Errorf("joining again did not say it keeps the kinds: %q", out.String())
	}
	testenv.Eventually(t, 10*time.Second, "Secrets unreadable again", func(ctx context.Context) error {
		if _, err := kc.CoreV1().Secrets("kube-system").Get(ctx, "member-own", metav1.GetOptions{}); !apierrors.IsForbidden(err) {
			return fmt.Errorf("want Forbidden, got %v", err)
		}
		return nil
	})
	// Narrowed to Deployments and ConfigMaps: no Secrets, Pods or RBAC.
	_, err = kc.CoreV1().Secrets("").List(ctx, metav1.ListOptions{})
	forbidden("listing Secrets, narrowed", err)
	_, err = kc.CoreV1().Pods("default").Create(ctx, &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "p2"}, Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "c", Image: "i"}}}}, metav1.CreateOptions{})
	forbidden("creating a Pod, narrowed", err)
	_, err = kc.RbacV1().ClusterRoles().Create(ctx, &rbacv1.ClusterRole{ObjectMeta: metav1.ObjectMeta{Name: "r2"}}, metav1.CreateOptions{})
	forbidden("creating a ClusterRole, narrowed", err)
	if escalation, ok := memberrights.Refused(err); !ok || escalation {
		t.Errorf("the member's refusal %v is not told apart as a kind not granted", err)
	}
	_, err = kc.RbacV1().RoleBindings("default").Create(ctx, &rbacv1.RoleBinding{ObjectMeta: metav1.ObjectMeta{Name: "team-view"},
		RoleRef: rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: "view"}, Subjects: []rbacv1.Subject{{APIGroup: rbacv1.GroupName, Kind: rbacv1.GroupKind, Name: "team-a"}}}, metav1.CreateOptions{})
	forbidden("binding view, narrowed", err)

	// unjoin removes the identity: its tokens stop working at once.
	if err := unjoin.Run(ctx, cp.Client, member.Config, unjoin.Options{ClusterName: "member1"}, io.Discard); err != nil {
		t.Fatal(err)
	}
	name := join.ClusterRoleName("member1")
	if _, err := admin.RbacV1().Roles(join.MemberNamespace).Get(ctx, name, metav1.GetOptions{}); !apierrors.IsNotFound(err) {
		t.Errorf("the token Role is still there (err %v)", err)
	}
	if _, err := admin.RbacV1().RoleBindings(join.MemberNamespace).Get(ctx, name, metav1.GetOptions{}); !apierrors.IsNotFound(err) {
		t.Errorf("the token RoleBinding is still there (err %v)", err)
	}
	testenv.Eventually(t, 10*time.Second, "the token refused", func(ctx context.Context) error {
		if _, err := kc.CoreV1().Nodes().List(ctx, metav1.ListOptions{}); !apierrors.IsUnauthorized(err) {
			return fmt.Errorf("want Unauthorized, got %v", err)
		}
		return nil
	})
}

// joinedWithShortTokens is a control plane and a member joined to it as
// member1 with tokens of the shortest lifetime, and the join's options.
func joinedWithShortTokens(t *testing.T) (*testenv.Env, *testenv.Env, join.Options) {
	t.Helper()
	cp, member := testenv.Start(t), testenv.StartMember(t)
	opts := join.Options{ClusterName: "member1", ClusterNamespace: join.DefaultClusterNamespace, TokenTTL: join.MinTokenTTL}
	if err := join.Run(context.Background(), cp.Client, member.Config, opts, io.Discard); err != nil {
		t.Fatal(err)
	}
	return cp, member, opts
}

// The controller manager renews a member token at 80% of its lifetime, with
// the token itself, and the new one is stored and works.
func TestTokenRenewal(t *testing.T) {
	t.Parallel()
	cp, member, _ := joinedWithShortTokens(t)
	ctx := context.Background()
	old := memberToken(ctx, t, cp, "member1")
	oldClaims, _ := tokenrenewal.ParseToken(old)
	members := clusterclient.NewCache(cp.Client, clusterclient.Options{})
	t.Cleanup(members.Close)
	issued := time.Unix(oldClaims.IssuedAt, 0)
	r := &tokenrenewal.Reconciler{Client: cp.Client, Reader: cp.Client, Members: members}
	req := ctrl.Request{NamespacedName: types.NamespacedName{Name: "member1"}}

	// Before 80% of its lifetime: nothing, and a look again later.
	r.Clock = clocktesting.NewFakePassiveClock(issued.Add(7 * time.Minute))
	res, err := r.Reconcile(ctx, req)
	if err != nil || res.RequeueAfter <= 0 || memberToken(ctx, t, cp, "member1") != old {
		t.Fatalf("before the renewal time: result %+v, err %v, token changed %t", res, err, memberToken(ctx, t, cp, "member1") != old)
	}
	m, err := members.Get(ctx, mustCluster(ctx, t, cp, "member1"))
	if err != nil {
		t.Fatal(err)
	}

	// Past it: renewed, for the same lifetime.
	r.Clock = clocktesting.NewFakePassiveClock(issued.Add(9 * time.Minute))
	if _, err := r.Reconcile(ctx, req); err != nil {
		t.Fatal(err)
	}
	renewed := memberToken(ctx, t, cp, "member1")
	claims, ok := tokenrenewal.ParseToken(renewed)
	if renewed == old || !ok || claims.Expiry-claims.IssuedAt != oldClaims.Expiry-oldClaims.IssuedAt || claims.Subject != oldClaims.Subject {
		t.Fatalf("not renewed as it should: old %+v, new %+v (changed %t)", oldClaims, claims, renewed != old)
	}
	if _, err := as(t, member, renewed).CoreV1().Namespaces().Get(ctx, "kube-system", metav1.GetOptions{}); err != nil {
		t.Errorf("the renewed token does not work: %v", err)
	}
	// The member's clients take the new token and keep their connection.
	if again, err := members.Get(ctx, mustCluster(ctx, t, cp, "member1")); err != nil || again != m {
		t.Errorf("the member's clients were rebuilt for a renewed token (err %v)", err)
	}

	// Expired: it cannot renew itself; nothing is written.
	r.Clock = clocktesting.NewFakePassiveClock(time.Unix(claims.Expiry+1, 0))
	if _, err := r.Reconcile(ctx, req); err != nil {
		t.Fatal(err)
	}
	if memberToken(ctx, t, cp, "member1") != renewed {
		t.Error("an expired token was replaced")
	}
}

// The impersonator's token is renewed with the impersonator's own token:
// the member identity may not request one (it would act as anyone it
// names, system:masters included). A member joined by an earlier version,
// whose member identity could, is moved by the controller manager.
func TestImpersonatorRenewsItsOwnToken(t *testing.T) {
	t.Parallel()
	cp, member, opts := joinedWithShortTokens(t)
	ctx := context.Background()
	admin := kubernetes.NewForConfigOrDie(member.Config)
	imp := join.ImpersonatorName("member1")
	mintRefused := func(when string) {
		t.Helper()
		_, err := as(t, member, memberToken(ctx, t, cp, "member1")).CoreV1().ServiceAccounts(join.MemberNamespace).CreateToken(ctx, imp, &authenticationv1.TokenRequest{}, metav1.CreateOptions{})
		if !apierrors.IsForbidden(err) {
			t.Fatalf("%s: the member identity requesting the impersonator's token: %v; want Forbidden", when, err)
		}
	}
	mintRefused("after join")

	// An earlier version's grant: the member identity may request both.
	own, err := admin.RbacV1().Roles(join.MemberNamespace).Get(ctx, join.ClusterRoleName("member1"), metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	own.Rules[0].ResourceNames = append(own.Rules[0].ResourceNames, imp)
	if _, err := admin.RbacV1().Roles(join.MemberNamespace).Update(ctx, own, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	if err := admin.RbacV1().RoleBindings(join.MemberNamespace).Delete(ctx, imp, metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	if err := admin.RbacV1().Roles(join.MemberNamespace).Delete(ctx, imp, metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}

	members := clusterclient.NewCache(cp.Client, clusterclient.Options{})
	t.Cleanup(members.Close)
	old := memberToken(ctx, t, cp, join.ImpersonatorSecretName("member1"))
	oldClaims, _ := tokenrenewal.ParseToken(old)
	r := &tokenrenewal.Reconciler{Client: cp.Client, Reader: cp.Client, Members: members, Recorder: record.NewFakeRecorder(10),
		Clock: clocktesting.NewFakePassiveClock(time.Unix(oldClaims.IssuedAt, 0).Add(9 * time.Minute))}
	if _, err := r.Reconcile(ctx, ctrl.Request{NamespacedName: types.NamespacedName{Name: "member1"}}); err != nil {
		t.Fatal(err)
	}
	// Moved: the member identity's grant narrowed, the impersonator's own.
	testenv.Eventually(t, 10*time.Second, "the member identity narrowed", func(ctx context.Context) error {
		_, err := as(t, member, memberToken(ctx, t, cp, "member1")).CoreV1().ServiceAccounts(join.MemberNamespace).CreateToken(ctx, imp, &authenticationv1.TokenRequest{}, metav1.CreateOptions{})
		if !apierrors.IsForbidden(err) {
			return fmt.Errorf("requesting the impersonator's token: %v; want Forbidden", err)
		}
		return nil
	})
	renewed := memberToken(ctx, t, cp, join.ImpersonatorSecretName("member1"))
	claims, ok := tokenrenewal.ParseToken(renewed)
	if renewed == old || !ok || claims.Subject != oldClaims.Subject {
		t.Fatalf("the impersonator's token was not renewed: old %+v, new %+v", oldClaims, claims)
	}
	impClient := as(t, member, renewed)
	// It still impersonates, and it may renew itself but not the member
	// identity.
	if _, err := impClient.CoreV1().ServiceAccounts(join.MemberNamespace).CreateToken(ctx, imp, &authenticationv1.TokenRequest{}, metav1.CreateOptions{}); err != nil {
		t.Errorf("the impersonator requesting its own token: %v", err)
	}
	if _, err := impClient.CoreV1().ServiceAccounts(join.MemberNamespace).CreateToken(ctx, join.ServiceAccountName("member1"), &authenticationv1.TokenRequest{}, metav1.CreateOptions{}); !apierrors.IsForbidden(err) {
		t.Errorf("the impersonator requesting the member identity's token: %v; want Forbidden", err)
	}
	// Joining again keeps it so (idempotent).
	if err := join.Run(ctx, cp.Client, member.Config, opts, io.Discard); err != nil {
		t.Fatal(err)
	}
	mintRefused("after joining again")
}

func mustCluster(ctx context.Context, t *testing.T, cp *testenv.Env, name string) *clusterv1alpha1.Cluster {
	t.Helper()
	c := &clusterv1alpha1.Cluster{}
	if err := cp.Client.Get(ctx, client.ObjectKey{Name: name}, c); err != nil {
		t.Fatal(err)
	}
	return c
}

// Granted kinds without Secrets (--propagate-kinds), Karmada may not list
// Secrets in a member: a namespace it created is deleted only once the
// member's quota controller counted none there; one holding a Secret of the
// member's is released.
// (This test's member runs no kube-controller-manager: the test writes the
// quota's status as the quota controller would. The e2e suite runs the
// real one.)
func TestNamespaceDeletionCountsUnlistedKinds(t *testing.T) {
	t.Parallel()
	cp, member := testenv.Start(t), testenv.StartMember(t)
	ctx := context.Background()
	if err := join.Run(ctx, cp.Client, member.Config, join.Options{ClusterName: "member1", ClusterNamespace: join.DefaultClusterNamespace,
		PropagateKinds: []string{"deployments.apps", "configmaps"}}, io.Discard); err != nil {
		t.Fatal(err)
	}
	setReady(ctx, t, cp.Client, "member1", metav1.ConditionTrue)
	createNamespace(ctx, t, cp.Client, workv1alpha1.ExecutionNamespace("member1"))
	runMemberControllers(t, cp)
	admin := kubernetes.NewForConfigOrDie(member.Config)

	namespaceWork := func(name string) *workv1alpha1.Work {
		raw, _ := json.Marshal(map[string]any{"apiVersion": "v1", "kind": "Namespace", "metadata": map[string]any{"name": name}})
		w := &workv1alpha1.Work{ObjectMeta: metav1.ObjectMeta{Namespace: workv1alpha1.ExecutionNamespace("member1"), Name: "ns-" + name},
			Spec: workv1alpha1.WorkSpec{Workload: workv1alpha1.WorkloadTemplate{Manifests: []workv1alpha1.Manifest{{RawExtension: runtime.RawExtension{Raw: raw}}}}}}
		if err := cp.Client.Create(ctx, w); err != nil {
			t.Fatal(err)
		}
		testenv.Eventually(t, 20*time.Second, "namespace "+name+" in the member", func(ctx context.Context) error {
			_, err := admin.CoreV1().Namespaces().Get(ctx, name, metav1.GetOptions{})
			return err
		})
		return w
	}
	// count plays the member's quota controller.
	count := func(ns string, secrets string) {
		t.Helper()
		var q *corev1.ResourceQuota
		testenv.Eventually(t, 20*time.Second, "the count quota in "+ns, func(ctx context.Context) error {
			var err error
			q, err = admin.CoreV1().ResourceQuotas(ns).Get(ctx, execution.CountQuotaName, metav1.GetOptions{})
			return err
		})
		if _, ok := q.Spec.Hard["count/secrets"]; !ok || q.Labels[workv1alpha1.ManagedLabel] != "true" {
			t.Fatalf("the count quota does not count Secrets or is not marked as Karmada's: %+v", q)
		}
		q.Status.Hard = q.Spec.Hard
		q.Status.Used = corev1.ResourceList{"count/secrets": resource.MustParse(secrets)}
		if _, err := admin.CoreV1().ResourceQuotas(ns).UpdateStatus(ctx, q, metav1.UpdateOptions{}); err != nil {
			t.Fatal(err)
		}
	}

	empty := namespaceWork("counted-empty")
	if err := cp.Client.Delete(ctx, empty); err != nil {
		t.Fatal(err)
	}
	count("counted-empty", "0")
	testenv.Eventually(t, 20*time.Second, "the empty namespace deleted", func(ctx context.Context) error {
		ns, err := admin.CoreV1().Namespaces().Get(ctx, "counted-empty", metav1.GetOptions{})
		if apierrors.IsNotFound(err) || (err == nil && !ns.DeletionTimestamp.IsZero()) {
			return nil
		}
		return fmt.Errorf("still there (err %v)", err)
	})

	holding := namespaceWork("holding-secret")
	if _, err := admin.CoreV1().Secrets("holding-secret").Create(ctx, &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: "member-own"}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	if err := cp.Client.Delete(ctx, holding); err != nil {
		t.Fatal(err)
	}
	count("holding-secret", "1")
	testenv.Eventually(t, 20*time.Second, "the Work gone, its namespace released", func(ctx context.Context) error {
		if err := cp.Client.Get(ctx, client.ObjectKeyFromObject(holding), &workv1alpha1.Work{}); !apierrors.IsNotFound(err) {
			return fmt.Errorf("the Work is still there (err %v)", err)
		}
		return nil
	})
	ns, err := admin.CoreV1().Namespaces().Get(ctx, "holding-secret", metav1.GetOptions{})
	if err != nil || !ns.DeletionTimestamp.IsZero() || ns.Labels[workv1alpha1.ManagedLabel] != "" {
		t.Fatalf("the namespace holding the member's Secret was deleted or not released: %+v (err %v)", ns, err)
	}
	if _, err := admin.CoreV1().Secrets("holding-secret").Get(ctx, "member-own", metav1.GetOptions{}); err != nil {
		t.Errorf("the member's Secret: %v", err)
	}
	if _, err := admin.CoreV1().ResourceQuotas("holding-secret").Get(ctx, execution.CountQuotaName, metav1.GetOptions{}); !apierrors.IsNotFound(err) {
		t.Errorf("the count quota was left in the released namespace (err %v)", err)
	}
}

// A kind the member does not let Karmada write is reported on the Work
// (Applied False) with the command that grants it, the kinds granted
// already included; granting it (joining again with the kind added) lets
// the same Work apply, with nothing written to it.
func TestRefusedKindNamesTheGrant(t *testing.T) {
	t.Parallel()
	cp, member := testenv.Start(t), testenv.StartMember(t)
	ctx := context.Background()
	opts := join.Options{ClusterName: "member1", ClusterNamespace: join.DefaultClusterNamespace, PropagateKinds: []string{"deployments.apps", "configmaps"}}
	if err := join.Run(ctx, cp.Client, member.Config, opts, io.Discard); err != nil {
		t.Fatal(err)
	}
	setReady(ctx, t, cp.Client, "member1", metav1.ConditionTrue)
	createNamespace(ctx, t, cp.Client, workv1alpha1.ExecutionNamespace("member1"))
	runMemberControllers(t, cp)
	admin := kubernetes.NewForConfigOrDie(member.Config)

	raw, _ := json.Marshal(map[string]any{"apiVersion": "v1", "kind": "Pod", "metadata": map[string]any{"namespace": "default", "name": "probe-pod"},
		"spec": map[string]any{"containers": []any{map[string]any{"name": "c", "image": "busybox"}}}})
	work := &workv1alpha1.Work{ObjectMeta: metav1.ObjectMeta{Namespace: workv1alpha1.ExecutionNamespace("member1"), Name: "probe-pod-work"},
		Spec: workv1alpha1.WorkSpec{Workload: workv1alpha1.WorkloadTemplate{Manifests: []workv1alpha1.Manifest{{RawExtension: runtime.RawExtension{Raw: raw}}}}}}
	if err := cp.Client.Create(ctx, work); err != nil {
		t.Fatal(err)
	}
	want := "karmadactl join member1 --cluster-kubeconfig <kubeconfig of member1> --propagate-kinds=deployments.apps,configmaps,pods"
	testenv.Eventually(t, 20*time.Second, "Applied False naming the grant", func(ctx context.Context) error {
		_, cond, err := appliedCondition(ctx, cp.Client, client.ObjectKeyFromObject(work))
		if err != nil {
			return err
		}
		if cond == nil || cond.Status != metav1.ConditionFalse || !strings.Contains(cond.Message, want) || !strings.Contains(cond.Message, `cannot patch resource "pods"`) {
			return fmt.Errorf("condition %+v", cond)
		}
		return nil
	})
	before := &workv1alpha1.Work{}
	if err := cp.Client.Get(ctx, client.ObjectKeyFromObject(work), before); err != nil {
		t.Fatal(err)
	}
	opts.PropagateKinds = append(opts.PropagateKinds, "pods")
	if err := join.Run(ctx, cp.Client, member.Config, opts, io.Discard); err != nil {
		t.Fatal(err)
	}
	testenv.Eventually(t, 30*time.Second, "the Pod in the member once granted", func(ctx context.Context) error {
		_, err := admin.CoreV1().Pods("default").Get(ctx, "probe-pod", metav1.GetOptions{})
		return err
	})
	after := &workv1alpha1.Work{}
	if err := cp.Client.Get(ctx, client.ObjectKeyFromObject(work), after); err != nil {
		t.Fatal(err)
	}
	if after.Generation != before.Generation {
		t.Errorf("the Work's spec was written (generation %d, was %d): the grant alone should let it apply", after.Generation, before.Generation)
	}
}
