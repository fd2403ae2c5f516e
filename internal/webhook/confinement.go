package webhook

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"slices"
	"strings"

	authorizationv1 "k8s.io/api/authorization/v1"
)

// The controller manager's confinement. RBAC only adds rights, and the
// controller manager must update (claim) resource templates of every group
// a user may propagate: its ClusterRole grants update on */*, which would
// reach what widens its own rights. What admission cannot guard (webhook
// configurations, admission policies and their bindings are exempt from
// admission), an authorization webhook placed before RBAC does: the
// karmada-apiserver asks it (its configuration's matchConditions) only
// about the controller manager's writes to ConfinedGroups, and it denies
// them. Everything else never reaches it, so that its outage changes nothing
// but those writes (failurePolicy Deny).

// ConfinementPath is the authorization webhook's path on karmada-webhook.
const ConfinementPath = "/authorize-controller-manager"

// ControllerManagerUser is karmada-controller-manager's identity in the
// karmada-apiserver.
const ControllerManagerUser = "system:karmada:karmada-controller-manager"

// ConfinedGroups are the API groups whose objects the controller manager
// may not create, change or delete: admission configuration (its own
// ValidatingAdmissionPolicyBindings among them), the aggregation layer's
// APIServices, API Priority and Fairness, and the resource interpreter's
// configuration (Lua every controller and agent runs, webhooks they call).
var ConfinedGroups = []string{"admissionregistration.k8s.io", "apiregistration.k8s.io", "flowcontrol.apiserver.k8s.io", "config.karmada.io"}

// confinedVerbs are the writes denied.
var confinedVerbs = []string{"create", "update", "patch", "delete", "deletecollection"}

// confined reports whether the review asks for a write the confinement
// denies, and says why.
func confined(spec authorizationv1.SubjectAccessReviewSpec) (string, bool) {
	a := spec.ResourceAttributes
	if spec.User != ControllerManagerUser || a == nil || !slices.Contains(confinedVerbs, a.Verb) || !slices.Contains(ConfinedGroups, a.Group) {
		return "", false
	}
	r := a.Resource
	if a.Subresource != "" {
		r += "/" + a.Subresource
	}
	return fmt.Sprintf("karmada-controller-manager may not %s %s.%s: its rights stop short of admission configuration, APIServices, API Priority and Fairness and the resource interpreter's configuration (karmada-webhook %s)", a.Verb, r, a.Group, ConfinementPath), true
}

// Confinement serves the authorization webhook: a SubjectAccessReview
// (authorization.k8s.io/v1) is denied when it asks for a confined write,
// and gets no opinion otherwise (the next authorizer, RBAC, decides).
func Confinement() http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method != http.MethodPost {
			http.Error(w, "POST a SubjectAccessReview", http.StatusMethodNotAllowed)
			return
		}
		var review authorizationv1.SubjectAccessReview
		if err := json.NewDecoder(io.LimitReader(r.Body, 1<<20)).Decode(&review); err != nil || review.Kind != "SubjectAccessReview" {
			http.Error(w, fmt.Sprintf("a SubjectAccessReview (authorization.k8s.io/v1) is expected: %v", err), http.StatusBadRequest)
			return
		}
		reason, deny := confined(review.Spec)
		out := authorizationv1.SubjectAccessReview{TypeMeta: review.TypeMeta,
			Status: authorizationv1.SubjectAccessReviewStatus{Denied: deny, Reason: reason}}
		w.Header().Set("Content-Type", "application/json")
		_ = json.NewEncoder(w).Encode(out)
	})
}

// AuthorizationConfiguration is the karmada-apiserver's
// --authorization-config: the confinement webhook (reached with the
// kubeconfig at webhookKubeconfig), then RBAC.
func AuthorizationConfiguration(webhookKubeconfig string) string {
	quote := func(s []string) string {
		q := make([]string, len(s))
		for i, v := range s {
			q[i] = "'" + v + "'"
		}
		return "[" + strings.Join(q, ", ") + "]"
	}
	return fmt.Sprintf(`apiVersion: apiserver.config.k8s.io/v1
kind: AuthorizationConfiguration
authorizers:
# karmada-controller-manager's writes to what would widen its own rights are
# denied (karmada-webhook %s); nothing else is sent there.
- type: Webhook
  name: karmada-controller-manager-confinement
  webhook:
    timeout: 3s
    subjectAccessReviewVersion: v1
    matchConditionSubjectAccessReviewVersion: v1
    failurePolicy: Deny
    authorizedTTL: 10s
    unauthorizedTTL: 10s
    connectionInfo:
      type: KubeConfigFile
      kubeConfigFile: %s
    matchConditions:
    - expression: request.user == '%s'
    - expression: has(request.resourceAttributes)
    - expression: request.resourceAttributes.verb in %s
    - expression: request.resourceAttributes.group in %s
- type: RBAC
  name: rbac
`, ConfinementPath, webhookKubeconfig, ControllerManagerUser, quote(confinedVerbs), quote(ConfinedGroups))
}
