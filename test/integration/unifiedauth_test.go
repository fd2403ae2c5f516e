package integration

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	authenticationv1 "k8s.io/api/authentication/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/record"
	ctrl "sigs.k8s.io/controller-runtime"

	clusterv1alpha1 "github.com/karmada-go/karmada/api/cluster/v1alpha1"
	"github.com/karmada-go/karmada/internal/clusters/clusterclient"
	"github.com/karmada-go/karmada/internal/clusters/join"
	"github.com/karmada-go/karmada/internal/clusters/unifiedauth"
	"github.com/karmada-go/karmada/internal/events"
	"github.com/karmada-go/karmada/internal/testenv"
)

// impersonatorAs is a client of the member acting with token as user in
// groups.
func impersonatorAs(t *testing.T, member *testenv.Env, token, user string, groups ...string) kubernetes.Interface {
	t.Helper()
	cfg := &rest.Config{Host: member.Config.Host, BearerToken: token, TLSClientConfig: rest.TLSClientConfig{CAData: member.Config.CAData},
		Impersonate: rest.ImpersonationConfig{UserName: user, Groups: groups}}
	return kubernetes.NewForConfigOrDie(cfg)
}

// whoAmI asks the member who the client is.
func whoAmI(ctx context.Context, kc kubernetes.Interface) (authenticationv1.UserInfo, error) {
	r, err := kc.AuthenticationV1().SelfSubjectReviews().Create(ctx, &authenticationv1.SelfSubjectReview{}, metav1.CreateOptions{})
	if err != nil {
		return authenticationv1.UserInfo{}, err
	}
	return r.Status.UserInfo, nil
}

// The impersonator acts only as the subjects the control plane grants
// clusters/proxy on that cluster (never system:masters), follows the
// control plane's RBAC as it changes, and a member joined by an earlier
// version (an impersonator that may act as anyone, a member identity
// that may not narrow it) is moved by the controller manager.
func TestImpersonatorNarrowedToProxySubjects(t *testing.T) {
	t.Parallel()
	cp, member, _ := joinedWithShortTokens(t)
	ctx := context.Background()
	impToken := memberToken(ctx, t, cp, join.ImpersonatorSecretName("member1"))
	refused := func(when, user string, groups ...string) {
		t.Helper()
		if _, err := whoAmI(ctx, impersonatorAs(t, member, impToken, user, groups...)); !apierrors.IsForbidden(err) {
			t.Errorf("%s: the impersonator acting as %s %v: %v; want Forbidden", when, user, groups, err)
		}
	}
	refused("after join", "mallory", "system:masters")
	refused("after join", "alice")

	// The control plane grants alice and group devs clusters/proxy on
	// member1 (only), carol on member2.
	grant := func(name, cluster string, subjects ...rbacv1.Subject) {
		role := &rbacv1.ClusterRole{ObjectMeta: metav1.ObjectMeta{Name: name}, Rules: []rbacv1.PolicyRule{{APIGroups: []string{clusterv1alpha1.GroupName},
			Resources: []string{"clusters/proxy"}, ResourceNames: []string{cluster}, Verbs: []string{"get", "create"}}}}
		binding := &rbacv1.ClusterRoleBinding{ObjectMeta: metav1.ObjectMeta{Name: name}, RoleRef: rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: name}, Subjects: subjects}
		if err := cp.Client.Create(ctx, role); err != nil {
			t.Fatal(err)
		}
		if err := cp.Client.Create(ctx, binding); err != nil {
			t.Fatal(err)
		}
	}
	grant("alice-proxy", "member1", rbacv1.Subject{APIGroup: rbacv1.GroupName, Kind: "User", Name: "alice"}, rbacv1.Subject{APIGroup: rbacv1.GroupName, Kind: "Group", Name: "devs"},
		rbacv1.Subject{APIGroup: rbacv1.GroupName, Kind: "Group", Name: "system:masters"})
	grant("carol-proxy", "member2", rbacv1.Subject{APIGroup: rbacv1.GroupName, Kind: "User", Name: "carol"})

	members := clusterclient.NewCache(cp.Client, clusterclient.Options{})
	t.Cleanup(members.Close)
	rec := record.NewFakeRecorder(10)
	r := &unifiedauth.Reconciler{Client: cp.Client, Reader: cp.Client, Members: members, Recorder: rec}
	req := ctrl.Request{NamespacedName: types.NamespacedName{Name: "member1"}}
	if _, err := r.Reconcile(ctx, req); err != nil {
		t.Fatal(err)
	}
	if ev := <-rec.Events; !strings.Contains(ev, events.SyncImpersonationConfigSucceed) || !strings.Contains(ev, "Sync impersonation config succeed.") {
		t.Errorf("event %q, want Karmada's %s", ev, events.SyncImpersonationConfigSucceed)
	}
	testenv.Eventually(t, 10*time.Second, "the member seeing alice in devs", func(ctx context.Context) error {
		u, err := whoAmI(ctx, impersonatorAs(t, member, impToken, "alice", "devs"))
		if err != nil {
			return err
		}
		if u.Username != "alice" || !slices.Contains(u.Groups, "devs") {
			return fmt.Errorf("the member saw %+v", u)
		}
		return nil
	})
	// Named in a binding or not, system:masters is never impersonated;
	// nor a group or user not granted, nor member2's user.
	refused("granted", "alice", "devs", "system:masters")
	refused("granted", "alice", "ops")
	refused("granted", "carol")
	// Nothing changed: no member request, no event.
	if _, err := r.Reconcile(ctx, req); err != nil {
		t.Fatal(err)
	}
	select {
	case ev := <-rec.Events:
		t.Errorf("an event with nothing changed: %q", ev)
	default:
	}

	// The member identity may rewrite the impersonator's rules, but not
	// bind them to itself.
	memberID := as(t, member, memberToken(ctx, t, cp, "member1"))
	_, err := memberID.RbacV1().ClusterRoleBindings().Create(ctx, &rbacv1.ClusterRoleBinding{ObjectMeta: metav1.ObjectMeta{Name: "steal"},
		RoleRef:  rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: join.ImpersonatorName("member1")},
		Subjects: []rbacv1.Subject{{Kind: "ServiceAccount", Namespace: join.MemberNamespace, Name: join.ServiceAccountName("member1")}}}, metav1.CreateOptions{})
	if !apierrors.IsForbidden(err) {
		t.Errorf("the member identity binding the impersonator's ClusterRole to itself: %v; want Forbidden", err)
	}
	// Nor in a namespace (it may write RoleBindings: RBAC is among join's
	// default kinds), even after widening the role it may rewrite.
	imp, err := memberID.RbacV1().ClusterRoles().Get(ctx, join.ImpersonatorName("member1"), metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	imp.Rules = append(imp.Rules, rbacv1.PolicyRule{APIGroups: []string{"*"}, Resources: []string{"*"}, Verbs: []string{"*"}})
	if _, err := memberID.RbacV1().ClusterRoles().Update(ctx, imp, metav1.UpdateOptions{}); err != nil {
		t.Fatalf("the member identity rewriting the impersonator's rules (its narrowing right): %v", err)
	}
	_, err = memberID.RbacV1().RoleBindings("default").Create(ctx, &rbacv1.RoleBinding{ObjectMeta: metav1.ObjectMeta{Name: "steal"},
		RoleRef:  rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: join.ImpersonatorName("member1")},
		Subjects: []rbacv1.Subject{{Kind: "ServiceAccount", Namespace: join.MemberNamespace, Name: join.ServiceAccountName("member1")}}}, metav1.CreateOptions{})
	if !apierrors.IsForbidden(err) {
		t.Errorf("the member identity binding the widened impersonator role to itself in a namespace: %v; want Forbidden", err)
	}
	if _, err := memberID.CoreV1().ServiceAccounts(join.MemberNamespace).CreateToken(ctx, join.ImpersonatorName("member1"), &authenticationv1.TokenRequest{}, metav1.CreateOptions{}); !apierrors.IsForbidden(err) {
		t.Errorf("the member identity minting the impersonator's token: %v; want Forbidden", err)
	}
	// The controller manager puts the rules back at its next look.
	r.Resync = time.Nanosecond
	if _, err := r.Reconcile(ctx, req); err != nil {
		t.Fatal(err)
	}
	r.Resync = 0
	if back, err := memberID.RbacV1().ClusterRoles().Get(ctx, join.ImpersonatorName("member1"), metav1.GetOptions{}); err != nil ||
		slices.ContainsFunc(back.Rules, func(p rbacv1.PolicyRule) bool {
			return slices.Contains(p.Resources, "*") && slices.Contains(p.APIGroups, "*")
		}) {
		t.Errorf("the widened impersonator role was not put back (%v): %v", err, back)
	}

	// An earlier version's member: a wide impersonator, a member identity
	// without the narrowing rule.
	admin := kubernetes.NewForConfigOrDie(member.Config)
	imp, err = admin.RbacV1().ClusterRoles().Get(ctx, join.ImpersonatorName("member1"), metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	imp.Rules = []rbacv1.PolicyRule{{APIGroups: []string{""}, Resources: []string{"users", "groups", "serviceaccounts"}, Verbs: []string{"impersonate"}},
		{APIGroups: []string{"authentication.k8s.io"}, Resources: []string{"*"}, Verbs: []string{"impersonate"}}}
	if _, err := admin.RbacV1().ClusterRoles().Update(ctx, imp, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	own, err := admin.RbacV1().ClusterRoles().Get(ctx, join.ClusterRoleName("member1"), metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	narrowing := join.ImpersonatorNarrowingRule("member1")
	own.Rules = slices.DeleteFunc(own.Rules, func(r rbacv1.PolicyRule) bool { return equality.Semantic.DeepEqual(r, narrowing) })
	if _, err := admin.RbacV1().ClusterRoles().Update(ctx, own, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	testenv.Eventually(t, 10*time.Second, "the earlier version's impersonator acting as system:masters", func(ctx context.Context) error {
		_, err := whoAmI(ctx, impersonatorAs(t, member, impToken, "mallory", "system:masters"))
		return err
	})
	// A new process (nothing applied yet) moves it.
	r = &unifiedauth.Reconciler{Client: cp.Client, Reader: cp.Client, Members: members, Recorder: record.NewFakeRecorder(10)}
	testenv.Eventually(t, 20*time.Second, "the earlier version's member moved", func(ctx context.Context) error {
		if _, err := r.Reconcile(ctx, req); err != nil {
			return err
		}
		if _, err := whoAmI(ctx, impersonatorAs(t, member, impToken, "mallory", "system:masters")); !apierrors.IsForbidden(err) {
			return fmt.Errorf("the impersonator acting as system:masters: %v; want Forbidden", err)
		}
		return nil
	})
	own, err = admin.RbacV1().ClusterRoles().Get(ctx, join.ClusterRoleName("member1"), metav1.GetOptions{})
	if err != nil || !slices.ContainsFunc(own.Rules, func(r rbacv1.PolicyRule) bool { return equality.Semantic.DeepEqual(r, narrowing) }) {
		t.Errorf("the member identity's ClusterRole after the move lacks the narrowing rule (%v): %v", err, own.Rules)
	}
	if _, err := whoAmI(ctx, impersonatorAs(t, member, impToken, "alice", "devs")); err != nil {
		t.Errorf("alice after the move: %v", err)
	}

	// A hand edit of the impersonator's ClusterRole in the member is
	// undone at the next resync.
	imp, err = admin.RbacV1().ClusterRoles().Get(ctx, join.ImpersonatorName("member1"), metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	imp.Rules = append(imp.Rules, rbacv1.PolicyRule{APIGroups: []string{""}, Resources: []string{"groups"}, ResourceNames: []string{"system:masters"}, Verbs: []string{"impersonate"}})
	if _, err := admin.RbacV1().ClusterRoles().Update(ctx, imp, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	testenv.Eventually(t, 10*time.Second, "the hand edit in force", func(ctx context.Context) error {
		_, err := whoAmI(ctx, impersonatorAs(t, member, impToken, "alice", "devs", "system:masters"))
		return err
	})
	if res, err := r.Reconcile(ctx, req); err != nil || res.RequeueAfter <= 0 {
		t.Fatalf("reconciling within the resync period: %+v %v; want a requeue at its end", res, err)
	}
	r.Resync = time.Nanosecond
	testenv.Eventually(t, 10*time.Second, "the hand edit undone", func(ctx context.Context) error {
		if _, err := r.Reconcile(ctx, req); err != nil {
			return err
		}
		if _, err := whoAmI(ctx, impersonatorAs(t, member, impToken, "alice", "devs", "system:masters")); !apierrors.IsForbidden(err) {
			return fmt.Errorf("the impersonator acting as alice in system:masters: %v; want Forbidden", err)
		}
		return nil
	})

	// The grant withdrawn, alice is impersonated no more.
	if err := cp.Client.Delete(ctx, &rbacv1.ClusterRoleBinding{ObjectMeta: metav1.ObjectMeta{Name: "alice-proxy"}}); err != nil {
		t.Fatal(err)
	}
	testenv.Eventually(t, 10*time.Second, "alice no longer impersonated", func(ctx context.Context) error {
		if _, err := r.Reconcile(ctx, req); err != nil {
			return err
		}
		if _, err := whoAmI(ctx, impersonatorAs(t, member, impToken, "alice")); !apierrors.IsForbidden(err) {
			return fmt.Errorf("the impersonator acting as alice: %v; want Forbidden", err)
		}
		return nil
	})
}
