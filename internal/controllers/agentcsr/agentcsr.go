// Package agentcsr approves the certificate signing requests of pull-mode
// agents: the client certificate a karmada-agent acts as in the control
// plane (user system:karmada:agent:<cluster>, group system:karmada:agents).
//
// Approving a registration makes what the agent needs first: its Cluster
// (pull mode), execution namespace, Lease, and RBAC (AgentRBAC), owned by
// the Cluster.
//
// A request is approved when it asks for exactly that identity, for client
// authentication only, from the kube-apiserver-client signer, and its
// requester may ask for it: a bootstrap token holder for a cluster that is
// not registered yet (create certificatesigningrequests/clusteragent), or
// the agent itself renewing its own certificate (create
// certificatesigningrequests/selfclusteragent). Both rights are RBAC, asked
// with a SubjectAccessReview, as Kubernetes approves kubelets' requests. A
// request that claims an agent identity and fails a rule is denied, saying
// which; requests for other identities are left to other approvers.
package agentcsr

import (
	"context"
	"crypto/x509"
	"encoding/pem"
	"errors"
	"fmt"
	"slices"
	"strings"

	authorizationv1 "k8s.io/api/authorization/v1"
	certificatesv1 "k8s.io/api/certificates/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/record"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller"

	clusterv1alpha1 "github.com/karmada-go/karmada/api/cluster/v1alpha1"
	"github.com/karmada-go/karmada/internal/events"
	"github.com/karmada-go/karmada/internal/names"
)

// ControllerName is Karmada's name for it in --controllers.
const ControllerName = "agentcsrapproving"

// The agent's identity in the control plane, as Karmada names it.
const (
	UserPrefix = "system:karmada:agent:"
	Group      = "system:karmada:agents"
)

// The subresources whose create right a requester needs (RBAC), as Karmada
// names them.
const (
	BootstrapSubresource = "clusteragent"
	RenewalSubresource   = "selfclusteragent"
)

// Decision is what the rules say of a request.
type Decision struct {
	// Ours: the request claims an agent identity (else it is left alone).
	Ours bool
	// Approve, or deny with Reason and Message.
	Approve bool
	Reason  string
	Message string
	// Cluster the certificate is for; Subresource the right the requester
	// needs (checked by the caller).
	Cluster     string
	Subresource string
}

func deny(reason, format string, args ...any) Decision {
	return Decision{Ours: true, Reason: reason, Message: fmt.Sprintf(format, args...)}
}

// Check applies the rules that need no API call to a request.
func Check(csr *certificatesv1.CertificateSigningRequest) Decision {
	block, _ := pem.Decode(csr.Spec.Request)
	if block == nil || block.Type != "CERTIFICATE REQUEST" {
		return Decision{}
	}
	req, err := x509.ParseCertificateRequest(block.Bytes)
	if err != nil {
		return Decision{}
	}
	cn := req.Subject.CommonName
	claims := strings.HasPrefix(cn, UserPrefix) || slices.Contains(req.Subject.Organization, Group)
	if !claims {
		return Decision{}
	}
	if err := req.CheckSignature(); err != nil {
		return deny("BadRequest", "the request's signature does not verify: %v", err)
	}
	if csr.Spec.SignerName != certificatesv1.KubeAPIServerClientSignerName {
		return deny("WrongSigner", "an agent certificate is signed by %s, not %q", certificatesv1.KubeAPIServerClientSignerName, csr.Spec.SignerName)
	}
	cluster, ok := strings.CutPrefix(cn, UserPrefix)
	if !ok {
		return deny("WrongSubject", "subject CN %q: an agent's is %s<cluster>", cn, UserPrefix)
	}
	if errs := names.ClusterNameErrors(cluster); len(errs) > 0 {
		return deny("WrongSubject", "subject CN %q: cluster name %q is invalid: %s", cn, cluster, errs[0])
	}
	if len(req.Subject.Organization) != 1 || req.Subject.Organization[0] != Group {
		return deny("WrongSubject", "subject O %q: an agent's is exactly [%s]", req.Subject.Organization, Group)
	}
	if len(req.DNSNames)+len(req.IPAddresses)+len(req.EmailAddresses)+len(req.URIs) > 0 {
		return deny("WrongSubject", "an agent's client certificate names no DNS name, IP, email or URI")
	}
	allowed := []certificatesv1.KeyUsage{certificatesv1.UsageDigitalSignature, certificatesv1.UsageKeyEncipherment, certificatesv1.UsageClientAuth}
	if !slices.Contains(csr.Spec.Usages, certificatesv1.UsageClientAuth) {
		return deny("WrongUsages", "usages %v: an agent certificate is for client auth", csr.Spec.Usages)
	}
	for _, u := range csr.Spec.Usages {
		if !slices.Contains(allowed, u) {
			return deny("WrongUsages", "usage %q: an agent certificate allows only %v", u, allowed)
		}
	}
	d := Decision{Ours: true, Approve: true, Cluster: cluster, Subresource: BootstrapSubresource}
	if csr.Spec.Username == cn {
		d.Subresource = RenewalSubresource
	}
	return d
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
}

// SetupWithManager registers the controller.
func (r *Reconciler) SetupWithManager(mgr ctrl.Manager) error {
	return ctrl.NewControllerManagedBy(mgr).
		Named(ControllerName).
		For(&certificatesv1.CertificateSigningRequest{}).
		WithOptions(controller.Options{MaxConcurrentReconciles: 1}).
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
	d := Check(csr)
	if !d.Ours {
		return ctrl.Result{}, nil
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
		case d.Subresource == BootstrapSubresource:
			// A token holder registers new clusters; it does not take
			// over one that is registered (unless it is the Cluster this
			// very request's earlier attempt made).
			cl := &clusterv1alpha1.Cluster{}
			err := r.Reader.Get(ctx, client.ObjectKey{Name: d.Cluster}, cl)
			if err == nil && cl.Annotations[RegistrationAnnotation] != csr.Name {
				d = deny("ClusterExists", "cluster %s is already registered: only its agent renews its certificate; run karmadactl unregister %s first to register it again", d.Cluster, d.Cluster)
			} else if err != nil && !apierrors.IsNotFound(err) {
				return ctrl.Result{}, err
			}
		}
	}
	if d.Approve {
		// What the agent will need is there before it gets its identity.
		registration := csr.Name
		if d.Subresource == RenewalSubresource {
			registration = ""
		}
		err := r.provision(ctx, d.Cluster, registration)
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
