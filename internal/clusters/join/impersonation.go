package join

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"time"

	authenticationv1 "k8s.io/api/authentication/v1"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apiserver/pkg/authentication/user"
	"k8s.io/client-go/kubernetes"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	clusterv1alpha1 "github.com/karmada-go/karmada/api/cluster/v1alpha1"
)

// proxyResource is the subresource whose RBAC lets a caller through
// clusters/<name>/proxy (karmada-aggregated-apiserver) and through
// karmada-search's proxy, which checks it too.
const proxyResource = "clusters/proxy"

// proxyVerbs are the verbs a request through the cluster proxy is
// authorized as (a connect subresource: the HTTP method's verb). A rule
// granting only list or watch on clusters/proxy lets nobody through.
var proxyVerbs = []string{"get", "create", "update", "patch", "delete"}

// neverImpersonated are the groups the impersonator never acts as: the
// proxy does not forward them (system:masters would make anyone the
// member's administrator whatever its RBAC says; the member adds
// system:authenticated itself).
var neverImpersonated = []string{user.SystemPrivilegedGroup, user.AllAuthenticated, user.AllUnauthenticated}

// ProxySubjects are the subjects the control plane may forward to cluster
// through its proxies: those of ClusterRoleBindings whose ClusterRole
// grants a proxy verb on clusters/proxy for that cluster (by name or for
// every cluster, wildcards included), less the groups never forwarded and
// the anonymous user. Only ClusterRoleBindings count: clusters are
// cluster-scoped, so a RoleBinding cannot grant clusters/proxy.
func ProxySubjects(cluster string, roles []rbacv1.ClusterRole, bindings []rbacv1.ClusterRoleBinding) []rbacv1.Subject {
	granting := map[string]bool{}
	for i := range roles {
		for _, r := range roles[i].Rules {
			if grantsProxy(r, cluster) {
				granting[roles[i].Name] = true
				break
			}
		}
	}
	var out []rbacv1.Subject
	for _, b := range bindings {
		if b.RoleRef.Kind != "ClusterRole" || !granting[b.RoleRef.Name] {
			continue
		}
		for _, s := range b.Subjects {
			switch {
			case s.Kind == rbacv1.GroupKind && slices.Contains(neverImpersonated, s.Name),
				s.Kind == rbacv1.UserKind && s.Name == user.Anonymous,
				s.Name == "":
				continue
			}
			out = append(out, s)
		}
	}
	return out
}

// grantsProxy: the rule grants a proxy verb on clusters/proxy of cluster.
func grantsProxy(r rbacv1.PolicyRule, cluster string) bool {
	if len(r.NonResourceURLs) > 0 && len(r.Resources) == 0 {
		return false
	}
	group := slices.ContainsFunc(r.APIGroups, func(g string) bool { return g == rbacv1.APIGroupAll || g == clusterv1alpha1.GroupName })
	resource := slices.ContainsFunc(r.Resources, func(res string) bool {
		return res == rbacv1.ResourceAll || res == proxyResource || res == "*/proxy" || res == "clusters/*"
	})
	verb := slices.ContainsFunc(r.Verbs, func(v string) bool { return v == rbacv1.VerbAll || slices.Contains(proxyVerbs, v) })
	name := len(r.ResourceNames) == 0 || slices.Contains(r.ResourceNames, cluster)
	return group && resource && verb && name
}

// ImpersonatorRules are the impersonator's rights in the member: to
// impersonate the users, service accounts (by name) and groups of
// subjects (ProxySubjects), and uids and extra (which only qualify the
// user they come with), nothing else. With no subject it can impersonate
// nobody.
func ImpersonatorRules(subjects []rbacv1.Subject) []rbacv1.PolicyRule {
	var users, serviceAccounts, groups []string
	for _, s := range subjects {
		switch s.Kind {
		case rbacv1.UserKind:
			users = append(users, s.Name)
		case rbacv1.ServiceAccountKind:
			serviceAccounts = append(serviceAccounts, s.Name)
		case rbacv1.GroupKind:
			groups = append(groups, s.Name)
		}
	}
	var rules []rbacv1.PolicyRule
	for _, r := range []struct {
		resource string
		names    []string
	}{{"users", users}, {"serviceaccounts", serviceAccounts}, {"groups", groups}} {
		if len(r.names) == 0 {
			continue
		}
		slices.Sort(r.names)
		rules = append(rules, rbacv1.PolicyRule{APIGroups: []string{""}, Resources: []string{r.resource}, ResourceNames: slices.Compact(r.names), Verbs: []string{"impersonate"}})
	}
	// uids and userextras/<key> (RBAC has no prefix wildcard: "*", whose
	// only impersonable resources are these).
	return append(rules, rbacv1.PolicyRule{APIGroups: []string{"authentication.k8s.io"}, Resources: []string{"*"}, Verbs: []string{"impersonate"}})
}

// ImpersonatorRulesFor reads the control plane's ClusterRoles and
// ClusterRoleBindings and returns the impersonator's rules for cluster
// (ImpersonatorRules of ProxySubjects): what join writes and the
// controller manager's unifiedAuth keeps.
func ImpersonatorRulesFor(ctx context.Context, karmada client.Reader, cluster string) ([]rbacv1.PolicyRule, error) {
	var roles rbacv1.ClusterRoleList
	var bindings rbacv1.ClusterRoleBindingList
	if err := karmada.List(ctx, &roles); err != nil {
		return nil, fmt.Errorf("listing the control plane's ClusterRoles (who may use the cluster proxy): %w", err)
	}
	if err := karmada.List(ctx, &bindings); err != nil {
		return nil, fmt.Errorf("listing the control plane's ClusterRoleBindings (who may use the cluster proxy): %w", err)
	}
	return ImpersonatorRules(ProxySubjects(cluster, roles.Items, bindings.Items)), nil
}

// ImpersonatorNarrowingRule is the member identity's right to keep the
// impersonator's ClusterRole in step with the control plane's RBAC (the
// controller manager's unifiedAuth): update it, with rules the identity
// does not hold itself (escalate), and nothing else — it cannot bind the
// role or mint the impersonator's token.
func ImpersonatorNarrowingRule(cluster string) rbacv1.PolicyRule {
	return rbacv1.PolicyRule{APIGroups: []string{rbacv1.GroupName}, Resources: []string{"clusterroles"},
		ResourceNames: []string{ImpersonatorName(cluster)}, Verbs: []string{"get", "update", "patch", "escalate"}}
}

// WidelyImpersonating: rules let their holder impersonate any group (an
// impersonator set up by an earlier version, before its narrowing).
func WidelyImpersonating(rules []rbacv1.PolicyRule) bool {
	for _, r := range rules {
		group := slices.ContainsFunc(r.APIGroups, func(g string) bool { return g == "" || g == rbacv1.APIGroupAll })
		res := slices.ContainsFunc(r.Resources, func(s string) bool { return s == "groups" || s == rbacv1.ResourceAll })
		verb := slices.ContainsFunc(r.Verbs, func(v string) bool { return v == "impersonate" || v == rbacv1.VerbAll })
		if group && res && verb && len(r.ResourceNames) == 0 {
			return true
		}
	}
	return false
}

// ForwardedGroups are the groups a proxy sends a member as the caller's
// (Impersonate-Group): never system:masters, system:authenticated or
// system:unauthenticated; and none for a service account whose groups are
// only those of every service account of its namespace, which the member
// adds itself when it impersonates the account.
func ForwardedGroups(u user.Info) []string {
	var out []string
	for _, g := range u.GetGroups() {
		if !slices.Contains(neverImpersonated, g) {
			out = append(out, g)
		}
	}
	if ns, ok := strings.CutPrefix(u.GetName(), "system:serviceaccount:"); ok {
		if i := strings.IndexByte(ns, ':'); i > 0 {
			std := []string{"system:serviceaccounts", "system:serviceaccounts:" + ns[:i]}
			if !slices.ContainsFunc(out, func(g string) bool { return !slices.Contains(std, g) }) {
				return nil
			}
		}
	}
	return out
}

// ensureImpersonator creates, in the member, the impersonator's
// ServiceAccount and its right to impersonate the subjects the control
// plane lets through its proxies (ImpersonatorRules of ProxySubjects), and
// returns a bound token of it lasting o.TokenTTL (renewed by the controller
// manager as the member token is).
func ensureImpersonator(ctx context.Context, karmada client.Client, mc kubernetes.Interface, o Options) ([]byte, error) {
	rules, err := ImpersonatorRulesFor(ctx, karmada, o.ClusterName)
	if err != nil {
		return nil, err
	}
	labels := map[string]string{clusterv1alpha1.ManagedByLabel: clusterv1alpha1.ManagedByKarmadactl, clusterv1alpha1.ClusterNameLabel: o.ClusterName}
	name := ImpersonatorName(o.ClusterName)
	sa := &corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Namespace: MemberNamespace, Name: name, Labels: labels}}
	if _, err := mc.CoreV1().ServiceAccounts(MemberNamespace).Create(ctx, sa, metav1.CreateOptions{}); err != nil && !apierrors.IsAlreadyExists(err) {
		return nil, fmt.Errorf("creating ServiceAccount %s/%s in the member: %w", MemberNamespace, name, err)
	}
	role := &rbacv1.ClusterRole{ObjectMeta: metav1.ObjectMeta{Name: name, Labels: labels}, Rules: rules}
	if _, err := mc.RbacV1().ClusterRoles().Create(ctx, role, metav1.CreateOptions{}); apierrors.IsAlreadyExists(err) {
		if _, err := mc.RbacV1().ClusterRoles().Update(ctx, role, metav1.UpdateOptions{}); err != nil {
			return nil, fmt.Errorf("updating ClusterRole %s in the member: %w", name, err)
		}
	} else if err != nil {
		return nil, fmt.Errorf("creating ClusterRole %s in the member: %w", name, err)
	}
	binding := &rbacv1.ClusterRoleBinding{
		ObjectMeta: metav1.ObjectMeta{Name: name, Labels: labels},
		RoleRef:    rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: name},
		Subjects:   []rbacv1.Subject{{Kind: rbacv1.ServiceAccountKind, Namespace: MemberNamespace, Name: name}},
	}
	if _, err := mc.RbacV1().ClusterRoleBindings().Create(ctx, binding, metav1.CreateOptions{}); err != nil && !apierrors.IsAlreadyExists(err) {
		return nil, fmt.Errorf("creating ClusterRoleBinding %s in the member: %w", name, err)
	}
	// The impersonator renews its own token: the member identity may not
	// mint one (it would then act as anyone it names).
	selfRole, selfBinding := ImpersonatorSelfRenewal(o.ClusterName)
	if err := ensureRoleAndBinding(ctx, mc, selfRole, selfBinding); err != nil {
		return nil, err
	}
	tr := &authenticationv1.TokenRequest{Spec: authenticationv1.TokenRequestSpec{ExpirationSeconds: ptr.To(int64(o.TokenTTL / time.Second))}}
	tr, err = mc.CoreV1().ServiceAccounts(MemberNamespace).CreateToken(ctx, name, tr, metav1.CreateOptions{})
	if err != nil {
		return nil, fmt.Errorf("requesting a token for ServiceAccount %s/%s in the member: %w", MemberNamespace, name, err)
	}
	return []byte(tr.Status.Token), nil
}

// ImpersonatorSelfRenewal is the Role and RoleBinding (in MemberNamespace,
// named like the impersonator) that let the impersonator, and nobody else,
// request new tokens of its own ServiceAccount: the controller manager
// renews the impersonator's token with the impersonator's token.
func ImpersonatorSelfRenewal(cluster string) (*rbacv1.Role, *rbacv1.RoleBinding) {
	labels := map[string]string{clusterv1alpha1.ManagedByLabel: clusterv1alpha1.ManagedByKarmadactl, clusterv1alpha1.ClusterNameLabel: cluster}
	name := ImpersonatorName(cluster)
	role := &rbacv1.Role{ObjectMeta: metav1.ObjectMeta{Namespace: MemberNamespace, Name: name, Labels: labels},
		Rules: []rbacv1.PolicyRule{{APIGroups: []string{""}, Resources: []string{"serviceaccounts/token"}, ResourceNames: []string{name}, Verbs: []string{"create"}}}}
	binding := &rbacv1.RoleBinding{ObjectMeta: metav1.ObjectMeta{Namespace: MemberNamespace, Name: name, Labels: labels},
		RoleRef:  rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "Role", Name: name},
		Subjects: []rbacv1.Subject{{Kind: rbacv1.ServiceAccountKind, Namespace: MemberNamespace, Name: name}}}
	return role, binding
}

// EnsureImpersonatorSelfRenewal creates or updates the impersonator's
// self-renewal Role and RoleBinding in the member (ImpersonatorSelfRenewal).
func EnsureImpersonatorSelfRenewal(ctx context.Context, mc kubernetes.Interface, cluster string) error {
	role, binding := ImpersonatorSelfRenewal(cluster)
	return ensureRoleAndBinding(ctx, mc, role, binding)
}

// ensureRoleAndBinding creates or updates a Role and its RoleBinding in the
// member (a binding's roleRef cannot change: it is created once).
func ensureRoleAndBinding(ctx context.Context, mc kubernetes.Interface, role *rbacv1.Role, binding *rbacv1.RoleBinding) error {
	if _, err := mc.RbacV1().Roles(role.Namespace).Create(ctx, role, metav1.CreateOptions{}); apierrors.IsAlreadyExists(err) {
		if _, err := mc.RbacV1().Roles(role.Namespace).Update(ctx, role, metav1.UpdateOptions{}); err != nil {
			return fmt.Errorf("updating Role %s/%s in the member: %w", role.Namespace, role.Name, err)
		}
	} else if err != nil {
		return fmt.Errorf("creating Role %s/%s in the member: %w", role.Namespace, role.Name, err)
	}
	if _, err := mc.RbacV1().RoleBindings(binding.Namespace).Create(ctx, binding, metav1.CreateOptions{}); err != nil && !apierrors.IsAlreadyExists(err) {
		return fmt.Errorf("creating RoleBinding %s/%s in the member: %w", binding.Namespace, binding.Name, err)
	}
	return nil
}
