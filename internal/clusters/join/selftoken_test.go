package join

import (
	"testing"

	rbacv1 "k8s.io/api/rbac/v1"
	"k8s.io/component-helpers/auth/rbac/validation"
)

// The identity may request tokens for its own ServiceAccount only (not its
// impersonator's: that token acts as anyone it names); the impersonator for
// its own only.
func TestSelfTokenRules(t *testing.T) {
	self := SelfTokenRules("member1")
	tok := func(name string) bool {
		ok, _ := validation.Covers(self, []rbacv1.PolicyRule{{Verbs: []string{"create"}, APIGroups: []string{""}, Resources: []string{"serviceaccounts/token"}, ResourceNames: []string{name}}})
		return ok
	}
	if !tok("karmada-member1") || tok("karmada-member1-impersonator") || tok("karmada-member2") || tok("karmada-member2-impersonator") || tok("default") {
		t.Errorf("token rules %+v: own %t, its impersonator's %t, another cluster's %t, default %t", self, tok("karmada-member1"), tok("karmada-member1-impersonator"), tok("karmada-member2"), tok("default"))
	}
	role, binding := ImpersonatorSelfRenewal("member1")
	impTok := func(name string) bool {
		ok, _ := validation.Covers(role.Rules, []rbacv1.PolicyRule{{Verbs: []string{"create"}, APIGroups: []string{""}, Resources: []string{"serviceaccounts/token"}, ResourceNames: []string{name}}})
		return ok
	}
	if !impTok("karmada-member1-impersonator") || impTok("karmada-member1") || impTok("karmada-member2-impersonator") {
		t.Errorf("impersonator's token rules %+v", role.Rules)
	}
	if len(binding.Subjects) != 1 || binding.Subjects[0].Name != "karmada-member1-impersonator" || binding.RoleRef.Name != role.Name {
		t.Errorf("impersonator's binding %+v", binding)
	}
}
