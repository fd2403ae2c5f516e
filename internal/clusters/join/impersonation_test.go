package join

import (
	"fmt"
	"slices"
	"testing"

	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apiserver/pkg/authentication/user"
)

func role(name string, rules ...rbacv1.PolicyRule) rbacv1.ClusterRole {
	return rbacv1.ClusterRole{ObjectMeta: metav1.ObjectMeta{Name: name}, Rules: rules}
}

func bind(roleKind, roleName string, subjects ...rbacv1.Subject) rbacv1.ClusterRoleBinding {
	return rbacv1.ClusterRoleBinding{ObjectMeta: metav1.ObjectMeta{Name: roleName + "-binding"},
		RoleRef: rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: roleKind, Name: roleName}, Subjects: subjects}
}

func subj(kind, name string) rbacv1.Subject { return rbacv1.Subject{Kind: kind, Name: name} }

// ProxySubjects: the subjects of ClusterRoleBindings whose ClusterRole
// lets a request through clusters/proxy of that cluster, and nobody else.
func TestProxySubjects(t *testing.T) {
	proxy := func(verbs []string, names ...string) rbacv1.PolicyRule {
		return rbacv1.PolicyRule{APIGroups: []string{"cluster.karmada.io"}, Resources: []string{"clusters/proxy"}, ResourceNames: names, Verbs: verbs}
	}
	roles := []rbacv1.ClusterRole{
		role("cluster-admin", rbacv1.PolicyRule{APIGroups: []string{"*"}, Resources: []string{"*"}, Verbs: []string{"*"}}),
		role("member1-proxy", proxy([]string{"get"}, "member1")),
		role("all-proxy", proxy([]string{"*"})),
		role("member2-proxy", proxy([]string{"create"}, "member2")),
		role("list-only", proxy([]string{"list", "watch"})),
		role("clusters-read", rbacv1.PolicyRule{APIGroups: []string{"cluster.karmada.io"}, Resources: []string{"clusters"}, Verbs: []string{"get"}}),
		role("other-group", rbacv1.PolicyRule{APIGroups: []string{"example.com"}, Resources: []string{"*"}, Verbs: []string{"*"}}),
		role("subresources", rbacv1.PolicyRule{APIGroups: []string{"cluster.karmada.io"}, Resources: []string{"clusters/*"}, Verbs: []string{"get"}}),
		role("urls", rbacv1.PolicyRule{NonResourceURLs: []string{"*"}, Verbs: []string{"*"}}),
	}
	bindings := []rbacv1.ClusterRoleBinding{
		bind("ClusterRole", "cluster-admin", subj("Group", user.SystemPrivilegedGroup), subj("User", "root")),
		bind("ClusterRole", "member1-proxy", subj("User", "alice"), subj("Group", "devs"), subj("ServiceAccount", "tom"), subj("Group", user.AllAuthenticated), subj("User", user.Anonymous)),
		bind("ClusterRole", "all-proxy", subj("User", "bob"), subj("Group", user.AllUnauthenticated)),
		bind("ClusterRole", "member2-proxy", subj("User", "carol")),
		bind("ClusterRole", "list-only", subj("User", "dave")),
		bind("ClusterRole", "clusters-read", subj("User", "erin")),
		bind("ClusterRole", "other-group", subj("User", "frank")),
		bind("ClusterRole", "subresources", subj("User", "grace")),
		bind("ClusterRole", "urls", subj("User", "heidi")),
		bind("Role", "member1-proxy", subj("User", "ivan")),
		bind("ClusterRole", "missing", subj("User", "judy")),
	}
	names := func(ss []rbacv1.Subject) []string {
		var out []string
		for _, s := range ss {
			out = append(out, s.Kind+"/"+s.Name)
		}
		slices.Sort(out)
		return out
	}
	for cluster, want := range map[string][]string{
		"member1": {"Group/devs", "ServiceAccount/tom", "User/alice", "User/bob", "User/grace", "User/root"},
		"member2": {"User/bob", "User/carol", "User/grace", "User/root"},
		"member3": {"User/bob", "User/grace", "User/root"},
	} {
		if got := names(ProxySubjects(cluster, roles, bindings)); !slices.Equal(got, want) {
			t.Errorf("%s: %v, want %v", cluster, got, want)
		}
	}
}

// ImpersonatorRules name every subject, sorted and once, and never let
// the impersonator act as anyone else.
func TestImpersonatorRules(t *testing.T) {
	got := ImpersonatorRules([]rbacv1.Subject{subj("User", "bob"), subj("Group", "devs"), subj("User", "alice"), subj("User", "bob"), subj("ServiceAccount", "tom")})
	want := []rbacv1.PolicyRule{
		{APIGroups: []string{""}, Resources: []string{"users"}, ResourceNames: []string{"alice", "bob"}, Verbs: []string{"impersonate"}},
		{APIGroups: []string{""}, Resources: []string{"serviceaccounts"}, ResourceNames: []string{"tom"}, Verbs: []string{"impersonate"}},
		{APIGroups: []string{""}, Resources: []string{"groups"}, ResourceNames: []string{"devs"}, Verbs: []string{"impersonate"}},
		{APIGroups: []string{"authentication.k8s.io"}, Resources: []string{"*"}, Verbs: []string{"impersonate"}},
	}
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("rules\n got %v\nwant %v", got, want)
	}
	if WidelyImpersonating(got) {
		t.Error("narrowed rules taken for an earlier version's")
	}
	none := ImpersonatorRules(nil)
	if len(none) != 1 || none[0].APIGroups[0] != "authentication.k8s.io" {
		t.Errorf("with no subject: %v, want uids and extra only", none)
	}
	old := []rbacv1.PolicyRule{{APIGroups: []string{""}, Resources: []string{"users", "groups", "serviceaccounts"}, Verbs: []string{"impersonate"}}}
	if !WidelyImpersonating(old) {
		t.Error("an earlier version's rules not recognised")
	}
}

// ForwardedGroups never carry system:masters or the groups the member
// adds itself.
func TestForwardedGroups(t *testing.T) {
	for _, c := range []struct {
		name   string
		groups []string
		want   []string
	}{
		{"alice", []string{"devs", user.SystemPrivilegedGroup, user.AllAuthenticated}, []string{"devs"}},
		{"root", []string{user.SystemPrivilegedGroup}, nil},
		{"system:serviceaccount:team:tom", []string{"system:serviceaccounts", "system:serviceaccounts:team", user.AllAuthenticated}, nil},
		{"system:serviceaccount:team:tom", []string{"system:serviceaccounts", "system:serviceaccounts:team", "extra"}, []string{"system:serviceaccounts", "system:serviceaccounts:team", "extra"}},
		// Another namespace's group is not one the member would add.
		{"system:serviceaccount:team:tom", []string{"system:serviceaccounts", "system:serviceaccounts:other"}, []string{"system:serviceaccounts", "system:serviceaccounts:other"}},
	} {
		got := ForwardedGroups(&user.DefaultInfo{Name: c.name, Groups: c.groups})
		if !slices.Equal(got, c.want) {
			t.Errorf("%s %v: %v, want %v", c.name, c.groups, got, c.want)
		}
	}
}
