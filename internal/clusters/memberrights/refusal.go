package memberrights

import (
	"errors"
	"fmt"
	"strings"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
)

// Refusal is a member's refusal of a write by Karmada's identity there, and
// what grants it. Its message is the member's, then which flag or command
// grants what was refused, so that the Work's Applied condition, the
// binding's aggregated status and the Work's event all say it.
type Refusal struct {
	Cluster string
	// Pull says the identity is a pull-mode cluster's agent (rights given
	// by karmadactl register) rather than the controller manager's (given
	// by karmadactl join).
	Pull bool
	// Granted is the member's record of the grant (clusterv1alpha1.PropagateKindsAnnotation), ""
	// when it could not be read.
	Granted string
	// Kind is the refused resource, as --propagate-kinds names it.
	Kind Kind
	// Escalation says the member refused an RBAC object granting rights
	// the identity does not hold itself.
	Escalation bool
	Err        error
}

func (r *Refusal) Error() string { return r.Err.Error() + "; " + r.Hint() }

func (r *Refusal) Unwrap() error { return r.Err }

// Hint says which flag or command grants what the member refused.
func (r *Refusal) Hint() string {
	if r.Escalation {
		return fmt.Sprintf("Karmada's identity in cluster %s may grant only the rights it holds itself (and bind %s): an RBAC object that grants more propagates to a cluster given every right with --cluster-admin, e.g. %s",
			r.Cluster, strings.Join(BindableRoles, ", "), r.command("--cluster-admin"))
	}
	if r.Granted == ClusterAdminGrant {
		return fmt.Sprintf("cluster %s was given --cluster-admin, yet refuses it: the member's own RBAC or admission denies it", r.Cluster)
	}
	kinds := r.Kind.String()
	if r.Granted != "" {
		kinds = r.Granted + "," + kinds
	} else {
		kinds = "<the kinds it has>," + kinds
	}
	return fmt.Sprintf("cluster %s does not let Karmada write %s: add it to --propagate-kinds, e.g. %s (or give every right with --cluster-admin)",
		r.Cluster, r.Kind, r.command("--propagate-kinds="+kinds))
}

// command is the command that changes the rights of the cluster's
// identity, with flag: join again (push), or register again from the member
// (pull), both of which keep the registration.
func (r *Refusal) command(flag string) string {
	if r.Pull {
		return fmt.Sprintf("`karmadactl register <control plane host:port> --cluster-name %s --kubeconfig <kubeconfig of %s> %s` (run again for a registered member, it updates only the agent's rights there)", r.Cluster, r.Cluster, flag)
	}
	return fmt.Sprintf("`karmadactl join %s --cluster-kubeconfig <kubeconfig of %s> %s` (joining again keeps the cluster and updates its rights)", r.Cluster, r.Cluster, flag)
}

// Refused reports whether err is the member's authorizer refusing Karmada's
// identity (RBAC): not another Forbidden, such as a quota exceeded, a
// terminating namespace or a pod security violation.
func Refused(err error) (escalation bool, ok bool) {
	var status apierrors.APIStatus
	if !apierrors.IsForbidden(err) || !errors.As(err, &status) {
		return false, false
	}
	msg := status.Status().Message
	switch {
	case strings.Contains(msg, "attempting to grant RBAC permissions not currently held"):
		return true, true
	case strings.Contains(msg, " cannot ") && strings.Contains(msg, `resource "`):
		return false, true
	}
	return false, false
}
