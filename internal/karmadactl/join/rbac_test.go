package join

import (
	"slices"
	"strings"
	"testing"

	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/component-helpers/auth/rbac/validation"
)

func TestParseKinds(t *testing.T) {
	got, err := ParseKinds([]string{"deployments.apps", " configmaps ", "*.example.com", ""})
	if err != nil {
		t.Fatal(err)
	}
	want := []Kind{{Group: "apps", Resource: "deployments"}, {Resource: "configmaps"}, {Group: "example.com", Resource: "*"}}
	if !slices.Equal(got, want) {
		t.Errorf("got %v, want %v", got, want)
	}
	for _, c := range []struct{ in, want string }{
		{"Deployments.apps", `resource "Deployments"`},
		{"*", "--cluster-admin"},
		{"deployments.Apps_", `group "Apps_"`},
	} {
		if _, err := ParseKinds([]string{c.in}); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("ParseKinds(%q) = %v, want an error naming %s", c.in, err, c.want)
		}
	}
	if _, err := ParseKinds(nil); err == nil {
		t.Error("an empty list was accepted")
	}
	if _, err := ParseKinds(DefaultPropagateKinds); err != nil {
		t.Errorf("the default kinds do not parse: %v", err)
	}
}

// The rules are checked with Kubernetes' own rule comparison (the real API
// server checks them in test/integration).
func TestMemberRules(t *testing.T) {
	resources := []*metav1.APIResourceList{
		{GroupVersion: "v1", APIResources: []metav1.APIResource{{Name: "pods"}, {Name: "pods/log"}, {Name: "secrets"}, {Name: "nodes"}, {Name: "namespaces"}, {Name: "configmaps"}}},
		{GroupVersion: "apps/v1", APIResources: []metav1.APIResource{{Name: "deployments"}}},
		{GroupVersion: "example.com/v1", APIResources: []metav1.APIResource{{Name: "widgets"}}},
	}
	kinds, err := ParseKinds([]string{"deployments.apps", "configmaps"})
	if err != nil {
		t.Fatal(err)
	}
	rules := MemberRules(resources, kinds)
	allowed := func(verb, group, res, _ string) bool {
		ok, _ := validation.Covers(rules, []rbacv1.PolicyRule{{Verbs: []string{verb}, APIGroups: []string{group}, Resources: []string{res}}})
		return ok
	}
	for _, c := range []struct {
		verb, group, res, ns string
		want                 bool
	}{
		{"list", "", "pods", "", true},
		{"watch", "", "nodes", "", true},
		{"get", "", "secrets", "kube-system", false},
		{"list", "", "secrets", "", false},
		{"create", "", "secrets", "default", false},
		{"create", "apps", "deployments", "default", true},
		{"delete", "apps", "deployments", "default", true},
		{"patch", "", "configmaps", "default", true},
		{"create", "", "pods", "default", false},
		{"delete", "", "namespaces", "", true},
		{"list", "example.com", "widgets", "", true},
		{"create", "example.com", "widgets", "default", false},
		{"create", "", "resourcequotas", "default", true},
		{"escalate", "rbac.authorization.k8s.io", "clusterroles", "", false},
		{"impersonate", "", "users", "", false},
		{"list", "rbac.authorization.k8s.io", "clusterroles", "", false}, // a group the member did not serve at join
	} {
		if got := allowed(c.verb, c.group, c.res, c.ns); got != c.want {
			t.Errorf("%s %s.%s in %q: allowed %t, want %t", c.verb, c.res, c.group, c.ns, got, c.want)
		}
	}
	for _, r := range rules {
		if slices.Contains(r.Resources, "pods/log") {
			t.Errorf("a subresource is readable: %+v", r)
		}
	}
	// --cluster-admin is everything.
	if ok, _ := validation.Covers(AdminRules(), []rbacv1.PolicyRule{{Verbs: []string{"get"}, APIGroups: []string{""}, Resources: []string{"secrets"}}}); !ok {
		t.Error("AdminRules do not allow reading Secrets")
	}
	self := SelfTokenRules("member1")
	tok := func(name string) bool {
		ok, _ := validation.Covers(self, []rbacv1.PolicyRule{{Verbs: []string{"create"}, APIGroups: []string{""}, Resources: []string{"serviceaccounts/token"}, ResourceNames: []string{name}}})
		return ok
	}
	if !tok("karmada-member1") || tok("karmada-member2") || tok("default") {
		t.Errorf("token rules %+v: own %t, another cluster's %t, default %t", self, tok("karmada-member1"), tok("karmada-member2"), tok("default"))
	}
}
