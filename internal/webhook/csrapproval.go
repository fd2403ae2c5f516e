package webhook

import (
	"context"
	"fmt"

	admissionv1 "k8s.io/api/admission/v1"
	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	authenticationv1 "k8s.io/api/authentication/v1"
	authorizationv1 "k8s.io/api/authorization/v1"
	certificatesv1 "k8s.io/api/certificates/v1"
	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/karmada-go/karmada/internal/registration/agentcert"
)

// CSRApprovalPath admits the controller manager's approvals of
// certificate signing requests.
const CSRApprovalPath = "/validate-certificatesigningrequest-approval"

// approved reports whether c carries an Approved condition.
func approved(c *certificatesv1.CertificateSigningRequest) bool {
	for _, cond := range c.Status.Conditions {
		if cond.Type == certificatesv1.CertificateApproved {
			return true
		}
	}
	return false
}

// checkCSRApproval: the controller manager may approve (it holds approve
// on the kube-apiserver-client signer, whose certificates authenticate as
// anyone named in them) only a request shaped as an agent certificate for
// its requester's own key (agentcert.Approvable), from a requester who may
// ask for one (create certificatesigningrequests/clusteragent, or
// selfclusteragent for an agent's renewal). Anyone else's approvals are
// RBAC's business.
func checkCSRApproval(ctx context.Context, authz Authorizer, user authenticationv1.UserInfo, csr, old *certificatesv1.CertificateSigningRequest) (field.ErrorList, error) {
	if user.Username != ControllerManagerUser || !approved(csr) || old != nil && approved(old) {
		return nil, nil
	}
	path := field.NewPath("status", "conditions")
	d := agentcert.Approvable(csr)
	switch {
	case !d.Ours:
		return field.ErrorList{field.Forbidden(path, fmt.Sprintf("karmada-controller-manager approves only karmada-agent certificates (subject CN system:karmada:agent:<cluster>); request %s asks for another identity", csr.Name))}, nil
	case !d.Approve:
		return field.ErrorList{field.Forbidden(path, fmt.Sprintf("karmada-controller-manager may not approve request %s: %s: %s", csr.Name, d.Reason, d.Message))}, nil
	case authz == nil:
		return field.ErrorList{field.Forbidden(path, "karmada-webhook runs without --kubeconfig: it cannot check the requester's right, so the controller manager's approvals are refused")}, nil
	}
	extra := map[string]authenticationv1.ExtraValue{}
	for k, v := range csr.Spec.Extra {
		extra[k] = authenticationv1.ExtraValue(v)
	}
	requester := authenticationv1.UserInfo{Username: csr.Spec.Username, UID: csr.Spec.UID, Groups: csr.Spec.Groups, Extra: extra}
	ok, err := authz.Allowed(ctx, requester, authorizationv1.ResourceAttributes{Verb: "create", Group: certificatesv1.GroupName, Resource: "certificatesigningrequests", Subresource: d.Subresource})
	if err != nil {
		return nil, fmt.Errorf("asking whether %s may request an agent certificate: %w", csr.Spec.Username, err)
	}
	if !ok {
		return field.ErrorList{field.Forbidden(path, fmt.Sprintf("karmada-controller-manager may not approve request %s: its requester %s may not create certificatesigningrequests/%s", csr.Name, csr.Spec.Username, d.Subresource))}, nil
	}
	return nil, nil
}

// csrApprovalEndpoints are the admission endpoints of the controller
// manager's approvals of agents' certificates (ours, not Karmada's).
func csrApprovalEndpoints(k kindEnv) []Endpoint {
	dec, o := k.dec, k.o
	return []Endpoint{
		// Ours, not Karmada's: the controller manager's approvals only.
		{Path: CSRApprovalPath, GVR: certificatesv1.SchemeGroupVersion.WithResource("certificatesigningrequests"), Subresource: "approval",
			Kind: "CertificateSigningRequest", Operations: []admissionv1.Operation{admissionv1.Update},
			MatchConditions: []admissionregistrationv1.MatchCondition{{Name: "karmada-controller-manager", Expression: "request.userInfo.username == '" + ControllerManagerUser + "'"}},
			handler: &validating[*certificatesv1.CertificateSigningRequest]{dec: dec, new: func() *certificatesv1.CertificateSigningRequest { return &certificatesv1.CertificateSigningRequest{} },
				validate: func(_, _ *certificatesv1.CertificateSigningRequest) field.ErrorList { return nil },
				authorize: func(ctx context.Context, user authenticationv1.UserInfo, csr, old *certificatesv1.CertificateSigningRequest) (field.ErrorList, error) {
					return checkCSRApproval(ctx, o.Authorizer, user, csr, old)
				}}},
	}
}
