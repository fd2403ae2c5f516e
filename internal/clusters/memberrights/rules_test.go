package memberrights

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
	if _, err := ParseKinds(DefaultKinds); err != nil {
		t.Errorf("the default kinds do not parse: %v", err)
	}
}

// The rules are checked with Kubernetes' own rule comparison (the real API
// server checks them in test/integration).
func TestRules(t *testing.T) {
	resources := []*metav1.APIResourceList{
		{GroupVersion: "v1", APIResources: []metav1.APIResource{{Name: "pods"}, {Name: "pods/log"}, {Name: "secrets"}, {Name: "nodes"}, {Name: "namespaces"}, {Name: "configmaps"}}},
		{GroupVersion: "apps/v1", APIResources: []metav1.APIResource{{Name: "deployments"}}},
		{GroupVersion: "example.com/v1", APIResources: []metav1.APIResource{{Name: "widgets"}}},
	}
	kinds, err := ParseKinds([]string{"deployments.apps", "configmaps"})
	if err != nil {
		t.Fatal(err)
	}
	rules := Rules(resources, kinds)
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
}

// With the default kinds, Karmada may write what users propagate on a fresh
// fleet (Pods, Secrets, RBAC, CRDs), bind admin, edit and view, and still
// not escalate, impersonate, or write nodes or webhook configurations.
func TestDefaultKindsRules(t *testing.T) {
	resources := []*metav1.APIResourceList{
		{GroupVersion: "v1", APIResources: []metav1.APIResource{{Name: "pods"}, {Name: "secrets"}, {Name: "nodes"}, {Name: "namespaces"}}},
		{GroupVersion: "rbac.authorization.k8s.io/v1", APIResources: []metav1.APIResource{{Name: "clusterroles"}}},
		{GroupVersion: "admissionregistration.k8s.io/v1", APIResources: []metav1.APIResource{{Name: "mutatingwebhookconfigurations"}}},
	}
	kinds, err := ParseKinds(DefaultKinds)
	if err != nil {
		t.Fatal(err)
	}
	rules := Rules(resources, kinds)
	allowed := func(verb, group, res, name string) bool {
		r := rbacv1.PolicyRule{Verbs: []string{verb}, APIGroups: []string{group}, Resources: []string{res}}
		if name != "" {
			r.ResourceNames = []string{name}
		}
		ok, _ := validation.Covers(rules, []rbacv1.PolicyRule{r})
		return ok
	}
	for _, c := range []struct {
		verb, group, res, name string
		want                   bool
	}{
		{"patch", "", "pods", "", true},
		{"patch", "", "secrets", "", true},
		{"list", "", "secrets", "", true},
		{"create", "rbac.authorization.k8s.io", "roles", "", true},
		{"create", "rbac.authorization.k8s.io", "rolebindings", "", true},
		{"create", "rbac.authorization.k8s.io", "clusterroles", "", true},
		{"create", "rbac.authorization.k8s.io", "clusterrolebindings", "", true},
		{"create", "apiextensions.k8s.io", "customresourcedefinitions", "", true},
		{"bind", "rbac.authorization.k8s.io", "clusterroles", "edit", true},
		{"bind", "rbac.authorization.k8s.io", "clusterroles", "view", true},
		{"bind", "rbac.authorization.k8s.io", "clusterroles", "cluster-admin", false},
		{"escalate", "rbac.authorization.k8s.io", "clusterroles", "", false},
		{"impersonate", "", "serviceaccounts", "", false},
		{"patch", "", "nodes", "", false},
		{"create", "admissionregistration.k8s.io", "mutatingwebhookconfigurations", "", false},
		{"update", "multicluster.x-k8s.io", "serviceexports/status", "", true},
		{"update", "", "pods/status", "", false},
		{"update", "apps", "deployments/status", "", false},
	} {
		if got := allowed(c.verb, c.group, c.res, c.name); got != c.want {
			t.Errorf("%s %s.%s %q: allowed %t, want %t", c.verb, c.res, c.group, c.name, got, c.want)
		}
	}
	// Without RBAC kinds, nothing may be bound.
	narrow, _ := ParseKinds([]string{"deployments.apps"})
	if ok, _ := validation.Covers(Rules(resources, narrow), []rbacv1.PolicyRule{{Verbs: []string{"update"}, APIGroups: []string{"multicluster.x-k8s.io"}, Resources: []string{"serviceexports/status"}}}); ok {
		t.Error("an identity that may not write ServiceExports may write their status")
	}
	if ok, _ := validation.Covers(Rules(resources, narrow), []rbacv1.PolicyRule{{Verbs: []string{"bind"}, APIGroups: []string{"rbac.authorization.k8s.io"}, Resources: []string{"clusterroles"}, ResourceNames: []string{"view"}}}); ok {
		t.Error("bind allowed without role binding kinds")
	}
}
