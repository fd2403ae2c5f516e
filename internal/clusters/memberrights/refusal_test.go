package memberrights

import (
	"errors"
	"fmt"
	"strings"
	"testing"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

func TestRefused(t *testing.T) {
	pods := schema.GroupResource{Resource: "pods"}
	for _, c := range []struct {
		name           string
		err            error
		ok, escalation bool
	}{
		{"RBAC denies the verb", apierrors.NewForbidden(pods, "p", errors.New(`User "system:serviceaccount:karmada-cluster:karmada-member1" cannot patch resource "pods" in API group "" in the namespace "default"`)), true, false},
		{"RBAC escalation", apierrors.NewForbidden(schema.GroupResource{Group: "rbac.authorization.k8s.io", Resource: "clusterroles"}, "r",
			errors.New(`user "system:serviceaccount:karmada-cluster:karmada-member1" (groups=["system:serviceaccounts"]) is attempting to grant RBAC permissions not currently held:`)), true, true},
		{"wrapped", fmt.Errorf("applying Pod default/p: %w", apierrors.NewForbidden(pods, "p", errors.New(`User "u" cannot create resource "pods" in API group ""`))), true, false},
		{"a quota exceeded", apierrors.NewForbidden(pods, "p", errors.New("exceeded quota: compute, requested: pods=1, used: pods=2, limited: pods=2")), false, false},
		{"a terminating namespace", apierrors.NewForbidden(pods, "p", errors.New("unable to create new content in namespace shop because it is being terminated")), false, false},
		{"not forbidden", apierrors.NewNotFound(pods, "p"), false, false},
	} {
		escalation, ok := Refused(c.err)
		if ok != c.ok || escalation != c.escalation {
			t.Errorf("%s: Refused = (%t, %t), want (%t, %t)", c.name, escalation, ok, c.escalation, c.ok)
		}
	}
}

// A refusal says which flag and command grant what was refused, with the
// kinds the cluster has already.
func TestRefusalHint(t *testing.T) {
	err := errors.New(`pods "p" is forbidden`)
	for _, c := range []struct {
		name string
		r    Refusal
		want []string
	}{
		{"push", Refusal{Cluster: "member1", Granted: "configmaps,deployments.apps", Kind: Kind{Resource: "pods"}, Err: err},
			[]string{`pods "p" is forbidden; cluster member1 does not let Karmada write pods`, "karmadactl join member1 --cluster-kubeconfig <kubeconfig of member1> --propagate-kinds=configmaps,deployments.apps,pods", "--cluster-admin"}},
		{"pull", Refusal{Cluster: "member3", Pull: true, Granted: "configmaps", Kind: Kind{Group: "example.com", Resource: "widgets"}, Err: err},
			[]string{"karmadactl register <control plane host:port> --cluster-name member3 --kubeconfig <kubeconfig of member3> --propagate-kinds=configmaps,widgets.example.com"}},
		{"grant unknown", Refusal{Cluster: "member1", Kind: Kind{Resource: "secrets"}, Err: err},
			[]string{"--propagate-kinds=<the kinds it has>,secrets"}},
		{"escalation", Refusal{Cluster: "member1", Escalation: true, Kind: Kind{Group: "rbac.authorization.k8s.io", Resource: "clusterroles"}, Err: err},
			[]string{"may grant only the rights it holds itself (and bind admin, edit, view)", "karmadactl join member1 --cluster-kubeconfig <kubeconfig of member1> --cluster-admin"}},
		{"cluster admin", Refusal{Cluster: "member1", Granted: ClusterAdminGrant, Kind: Kind{Resource: "pods"}, Err: err},
			[]string{"was given --cluster-admin, yet refuses it"}},
	} {
		got := c.r.Error()
		for _, w := range c.want {
			if !strings.Contains(got, w) {
				t.Errorf("%s: %q lacks %q", c.name, got, w)
			}
		}
		if !errors.Is(&c.r, err) {
			t.Errorf("%s: the member's error is not wrapped", c.name)
		}
	}
}
