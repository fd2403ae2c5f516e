// Package agentcsr approves the certificate signing requests of pull-mode
// agents: the client certificate a karmada-agent acts as in the control
// plane (user system:karmada:agent:<cluster>, group system:karmada:agents).
//
// Approving a registration makes what the agent needs first: its Cluster
// (pull mode), execution namespace, Lease, and RBAC (AgentRBAC), owned by
// the Cluster.
//
// A request is approved when it asks for exactly that identity, for client
// authentication only, from the kube-apiserver-client signer, for no longer
// than the largest lifetime allowed, and its requester may ask for it: a
// bootstrap token holder for a cluster that is not registered yet (create
// certificatesigningrequests/clusteragent), or the agent itself renewing
// its own certificate (create certificatesigningrequests/selfclusteragent).
// Both rights are RBAC, asked with a SubjectAccessReview, as Kubernetes
// approves kubelets' requests. A request that claims an agent identity and
// fails a rule is denied, saying which; requests for other identities are
// left to other approvers.
//
// A registration is bound to a secret, not a name: its id is derived from
// the public key of the request that registered it (which only the
// requester's private key can sign for), recorded on the Cluster, and
// carried in every certificate of that registration as the group
// names.AgentRegistrationGroupPrefix+id, to which the agent's rights are bound. A
// token holder cannot present another registration's key, and a
// certificate of a registration that was removed, or replaced by a new one
// under the same name, has no rights.
package agentcsr

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	authorizationv1 "k8s.io/api/authorization/v1"
	certificatesv1 "k8s.io/api/certificates/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/record"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	clusterv1alpha1 "github.com/karmada-go/karmada/api/cluster/v1alpha1"
	"github.com/karmada-go/karmada/internal/events"
	"github.com/karmada-go/karmada/internal/names"
	"github.com/karmada-go/karmada/internal/queues"
	"github.com/karmada-go/karmada/internal/registration/agentcert"
)

// ControllerName is Karmada's name for it in --controllers.
const ControllerName = "agentcsrapproving"

// recordedID is the registration id a Cluster records, "" for a Cluster
// registered by an earlier version (which recorded a request's name).
func recordedID(cl *clusterv1alpha1.Cluster) string {
	id, ok := strings.CutPrefix(cl.Annotations[clusterv1alpha1.RegistrationAnnotation], registrationValuePrefix)
	if !ok {
		return ""
	}
	return id
}

// DefaultMaxLifetime is the longest lifetime an agent certificate is
// approved for, unless --agent-certificate-max-lifetime says otherwise.
const DefaultMaxLifetime = agentcert.DefaultMaxLifetime

// The rules live with the agent certificate (agentcert), where
// karmada-webhook reads them too.
type Decision = agentcert.Decision

// Check applies the rules that need no API call to a request.
func Check(csr *certificatesv1.CertificateSigningRequest) Decision { return agentcert.Check(csr) }

// The subresources whose create right a requester needs.
const (
	BootstrapSubresource = agentcert.BootstrapSubresource
	RenewalSubresource   = agentcert.RenewalSubresource
)

func deny(reason, format string, args ...any) Decision {
	return agentcert.Deny(reason, format, args...)
}

// Reconciler approves or denies agent requests.
type Reconciler struct {
	Client client.Client
	// Reader reads Clusters uncached: a decision must not rest on a cache
	// that has not seen the Cluster yet.
	Reader client.Reader
	// Kube writes approvals and asks SubjectAccessReviews.
	Kube     kubernetes.Interface
	Recorder record.EventRecorder
	// MaxLifetime is the longest lifetime approved (DefaultMaxLifetime when
	// 0): a request asking for more, or for no lifetime, is denied.
	MaxLifetime time.Duration
}

// SetupWithManager registers the controller.
func (r *Reconciler) SetupWithManager(mgr ctrl.Manager) error {
	return ctrl.NewControllerManagedBy(mgr).
		Named(ControllerName).
		For(&certificatesv1.CertificateSigningRequest{}).
		WithOptions(queues.Options(1)).
		Complete(r)
}

// Reconcile decides one request.
func (r *Reconciler) Reconcile(ctx context.Context, req ctrl.Request) (ctrl.Result, error) {
	csr := &certificatesv1.CertificateSigningRequest{}
	if err := r.Client.Get(ctx, req.NamespacedName, csr); err != nil {
		return ctrl.Result{}, client.IgnoreNotFound(err)
	}
	for _, c := range csr.Status.Conditions {
		if c.Type == certificatesv1.CertificateApproved || c.Type == certificatesv1.CertificateDenied || c.Type == certificatesv1.CertificateFailed {
			return ctrl.Result{}, nil
		}
	}
	// The static rules, the key binding included (karmada-webhook holds the
	// approval to the same), then those that need the API.
	d := agentcert.Approvable(csr)
	if !d.Ours {
		return ctrl.Result{}, nil
	}
	if d.Approve {
		d = r.checkLifetime(csr, d)
	}
	if d.Approve {
		allowed, err := r.mayRequest(ctx, csr, d.Subresource)
		if err != nil {
			return ctrl.Result{}, err
		}
		switch {
		case !allowed && d.Subresource == RenewalSubresource:
			d = deny("NotAllowed", "%s may not renew its own agent certificate (create certificatesigningrequests/%s)", csr.Spec.Username, RenewalSubresource)
		case !allowed:
			d = deny("NotAllowed", "%s may not request an agent certificate (create certificatesigningrequests/%s; bootstrap tokens of group system:bootstrappers:karmada:default-cluster-token may)", csr.Spec.Username, BootstrapSubresource)
		default:
			var err error
			if d, err = r.checkRegistration(ctx, csr, d); err != nil {
				return ctrl.Result{}, err
			}
		}
	}
	if d.Approve {
		// What the agent will need is there before it gets its identity.
		err := r.provision(ctx, d.Cluster, d.Registration, d.Subresource == BootstrapSubresource)
		if errors.Is(err, errNotRegistered) {
			d = deny("NotRegistered", "cluster %s is not registered (any more): its agent's certificate is not renewed", d.Cluster)
		} else if err != nil {
			return ctrl.Result{}, fmt.Errorf("provisioning cluster %s for its agent: %w", d.Cluster, err)
		}
	}
	cond := certificatesv1.CertificateSigningRequestCondition{Type: certificatesv1.CertificateDenied, Status: corev1.ConditionTrue, Reason: d.Reason, Message: d.Message}
	if d.Approve {
		cond = certificatesv1.CertificateSigningRequestCondition{Type: certificatesv1.CertificateApproved, Status: corev1.ConditionTrue, Reason: "AutoApproved",
			Message: fmt.Sprintf("Auto approving the karmada-agent certificate of cluster %s (%s)", d.Cluster, map[string]string{BootstrapSubresource: "registration", RenewalSubresource: "renewal"}[d.Subresource])}
	}
	csr.Status.Conditions = append(csr.Status.Conditions, cond)
	if _, err := r.Kube.CertificatesV1().CertificateSigningRequests().UpdateApproval(ctx, csr.Name, csr, metav1.UpdateOptions{}); err != nil {
		return ctrl.Result{}, client.IgnoreNotFound(err)
	}
	ctrl.LoggerFrom(ctx).Info("Decided an agent certificate request", "csr", csr.Name, "requester", csr.Spec.Username, "decision", cond.Type, "reason", cond.Reason, "message", cond.Message)
	if d.Approve {
		events.Normal(r.Recorder, csr, "AgentCSRApproved", "%s", cond.Message)
	} else {
		events.Warning(r.Recorder, csr, "AgentCSRDenied", "%s: %s", cond.Reason, cond.Message)
	}
	return ctrl.Result{}, nil
}

// checkLifetime denies a request asking for a longer lifetime than the
// largest allowed, or for none (the signer's default is a year).
func (r *Reconciler) checkLifetime(csr *certificatesv1.CertificateSigningRequest, d Decision) Decision {
	max := r.MaxLifetime
	if max <= 0 {
		max = DefaultMaxLifetime
	}
	if csr.Spec.ExpirationSeconds == nil || time.Duration(*csr.Spec.ExpirationSeconds)*time.Second > max {
		asked := "no lifetime (the signer's default)"
		if csr.Spec.ExpirationSeconds != nil {
			asked = (time.Duration(*csr.Spec.ExpirationSeconds) * time.Second).String()
		}
		return deny("WrongLifetime", "the request asks for %s: an agent certificate lives at most %s (spec.expirationSeconds; the controller manager's --agent-certificate-max-lifetime), and the agent renews it itself", asked, max)
	}
	return d
}

// checkRegistration binds the request to the cluster's registration:
//   - a registration (a token holder's) must carry the id of its own key,
//     and is approved only for a cluster not registered yet, or for the one
//     this very key registered (its approval retried);
//   - a renewal (the agent's own) must carry the registration recorded on
//     the Cluster, and come from a certificate of that registration: one
//     issued before an unregister or a new registration cannot renew. A
//     Cluster an earlier version registered (no id recorded) starts its
//     registration id with its agent's next renewal, the id of that
//     request's key.
func (r *Reconciler) checkRegistration(ctx context.Context, csr *certificatesv1.CertificateSigningRequest, d Decision) (Decision, error) {
	cl := &clusterv1alpha1.Cluster{}
	err := r.Reader.Get(ctx, client.ObjectKey{Name: d.Cluster}, cl)
	if err != nil && !apierrors.IsNotFound(err) {
		return d, err
	}
	exists := err == nil
	if d.Subresource == BootstrapSubresource {
		// (Its group naming its own key's id: agentcert.Approvable.)
		if exists && recordedID(cl) != d.Registration {
			return deny("ClusterExists", "cluster %s is already registered: only its agent renews its certificate; run karmadactl unregister %s first to register it again", d.Cluster, d.Cluster), nil
		}
		return d, nil
	}
	if !exists {
		return deny("NotRegistered", "cluster %s is not registered (any more): its agent's certificate is not renewed", d.Cluster), nil
	}
	recorded := recordedID(cl)
	if recorded == "" {
		if d.Registration != d.KeyID {
			return deny("WrongSubject", "cluster %s records no registration id yet: the renewal's group names the id of its own key (%s%s)", d.Cluster, names.AgentRegistrationGroupPrefix, d.KeyID), nil
		}
		return d, nil
	}
	if d.Registration != recorded || !slices.Contains(csr.Spec.Groups, names.AgentRegistrationGroupPrefix+recorded) {
		return deny("NotRegistered", "the certificate asking is not of cluster %s's current registration (it was unregistered or registered again since): it renews nothing", d.Cluster), nil
	}
	return d, nil
}

// mayRequest asks the API server whether the requester may create the
// certificatesigningrequests subresource that grants this request.
func (r *Reconciler) mayRequest(ctx context.Context, csr *certificatesv1.CertificateSigningRequest, subresource string) (bool, error) {
	extra := map[string]authorizationv1.ExtraValue{}
	for k, v := range csr.Spec.Extra {
		extra[k] = authorizationv1.ExtraValue(v)
	}
	sar := &authorizationv1.SubjectAccessReview{Spec: authorizationv1.SubjectAccessReviewSpec{
		User: csr.Spec.Username, UID: csr.Spec.UID, Groups: csr.Spec.Groups, Extra: extra,
		ResourceAttributes: &authorizationv1.ResourceAttributes{Group: certificatesv1.GroupName, Resource: "certificatesigningrequests", Subresource: subresource, Verb: "create"},
	}}
	res, err := r.Kube.AuthorizationV1().SubjectAccessReviews().Create(ctx, sar, metav1.CreateOptions{})
	if err != nil {
		return false, fmt.Errorf("asking whether %s may request an agent certificate: %w", csr.Spec.Username, err)
	}
	return res.Status.Allowed, nil
}
