package join

import (
	"testing"

	rbacv1 "k8s.io/api/rbac/v1"
	"k8s.io/component-helpers/auth/rbac/validation"
)

// The identity may request tokens for its own ServiceAccount and its
// impersonator's only.
func TestSelfTokenRules(t *testing.T) {
	self := SelfTokenRules("member1")
	tok := func(name string) bool {
		ok, _ := validation.Covers(self, []rbacv1.PolicyRule{{Verbs: []string{"create"}, APIGroups: []string{""}, Resources: []string{"serviceaccounts/token"}, ResourceNames: []string{name}}})
		return ok
	}
	if !tok("karmada-member1") || !tok("karmada-member1-impersonator") || tok("karmada-member2") || tok("karmada-member2-impersonator") || tok("default") {
		t.Errorf("token rules %+v: own %t, its impersonator's %t, another cluster's %t, default %t", self, tok("karmada-member1"), tok("karmada-member1-impersonator"), tok("karmada-member2"), tok("default"))
	}
}
