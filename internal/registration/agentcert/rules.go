package agentcert

import (
	"crypto/x509"
	"encoding/hex"
	"encoding/pem"
	"fmt"
	"slices"
	"strings"

	certificatesv1 "k8s.io/api/certificates/v1"

	"github.com/karmada-go/karmada/internal/names"
)

// The rules of an agent certificate request that need no API call: what
// the controller manager's approver (agentcsr) applies first, and what
// karmada-webhook holds the controller manager's approvals to.

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
	// Registration is the registration id the request's subject carries;
	// KeyID the id its own key would make.
	Registration string
	KeyID        string
}

func Deny(reason, format string, args ...any) Decision {
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
	claims := strings.HasPrefix(cn, names.AgentUserPrefix) || slices.Contains(req.Subject.Organization, names.AgentGroup)
	if !claims {
		return Decision{}
	}
	if err := req.CheckSignature(); err != nil {
		return Deny("BadRequest", "the request's signature does not verify: %v", err)
	}
	if csr.Spec.SignerName != certificatesv1.KubeAPIServerClientSignerName {
		return Deny("WrongSigner", "an agent certificate is signed by %s, not %q", certificatesv1.KubeAPIServerClientSignerName, csr.Spec.SignerName)
	}
	cluster, ok := strings.CutPrefix(cn, names.AgentUserPrefix)
	if !ok {
		return Deny("WrongSubject", "subject CN %q: an agent's is %s<cluster>", cn, names.AgentUserPrefix)
	}
	if errs := names.ClusterNameErrors(cluster); len(errs) > 0 {
		return Deny("WrongSubject", "subject CN %q: cluster name %q is invalid: %s", cn, cluster, errs[0])
	}
	registration := RegistrationOf(req.Subject.Organization)
	if len(req.Subject.Organization) != 2 || !slices.Contains(req.Subject.Organization, names.AgentGroup) || !validID(registration) {
		return Deny("WrongSubject", "subject O %q: an agent's is exactly [%s %s<registration id>] (karmadactl register and karmada-agent of this version make it)", req.Subject.Organization, names.AgentGroup, names.AgentRegistrationGroupPrefix)
	}
	keyID, err := RegistrationID(req.PublicKey)
	if err != nil {
		return Deny("BadRequest", "the request's public key: %v", err)
	}
	if len(req.DNSNames)+len(req.IPAddresses)+len(req.EmailAddresses)+len(req.URIs) > 0 {
		return Deny("WrongSubject", "an agent's client certificate names no DNS name, IP, email or URI")
	}
	allowed := []certificatesv1.KeyUsage{certificatesv1.UsageDigitalSignature, certificatesv1.UsageKeyEncipherment, certificatesv1.UsageClientAuth}
	if !slices.Contains(csr.Spec.Usages, certificatesv1.UsageClientAuth) {
		return Deny("WrongUsages", "usages %v: an agent certificate is for client auth", csr.Spec.Usages)
	}
	for _, u := range csr.Spec.Usages {
		if !slices.Contains(allowed, u) {
			return Deny("WrongUsages", "usage %q: an agent certificate allows only %v", u, allowed)
		}
	}
	d := Decision{Ours: true, Approve: true, Cluster: cluster, Subresource: BootstrapSubresource, Registration: registration, KeyID: keyID}
	if csr.Spec.Username == cn {
		d.Subresource = RenewalSubresource
	}
	return d
}

// Approvable applies every rule that needs no API call: Check's, and the
// binding of the request to its key — a registration names the id of its
// own key; a renewal names the registration its requester's certificate
// carries (or, for a cluster registered before ids were recorded, its own
// key's). What it does not check needs the API: the requester's right
// (certificatesigningrequests/<Subresource>), the registration recorded on
// the Cluster, the lifetime the controller manager allows. karmada-webhook
// holds the controller manager's approvals to it.
func Approvable(csr *certificatesv1.CertificateSigningRequest) Decision {
	d := Check(csr)
	if !d.Ours || !d.Approve {
		return d
	}
	switch {
	case d.Subresource == BootstrapSubresource && d.Registration != d.KeyID:
		return Deny("WrongSubject", "a registration's group names the id of its own key (%s%s), not %q", names.AgentRegistrationGroupPrefix, d.KeyID, d.Registration)
	case d.Subresource == RenewalSubresource && d.Registration != d.KeyID && !slices.Contains(csr.Spec.Groups, names.AgentRegistrationGroupPrefix+d.Registration):
		return Deny("NotRegistered", "the certificate asking is not of registration %s: it renews nothing", d.Registration)
	}
	return d
}

// validID: 32 lower-case hex digits, as RegistrationID writes them.
func validID(id string) bool {
	if len(id) != 32 {
		return false
	}
	_, err := hex.DecodeString(id)
	return err == nil && strings.ToLower(id) == id
}
