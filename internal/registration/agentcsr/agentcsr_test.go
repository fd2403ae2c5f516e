package agentcsr

import (
	"testing"

	certificatesv1 "k8s.io/api/certificates/v1"

	"github.com/karmada-go/karmada/internal/names"
	"github.com/karmada-go/karmada/internal/testenv"
)

func TestCheck(t *testing.T) {
	client := []certificatesv1.KeyUsage{certificatesv1.UsageDigitalSignature, certificatesv1.UsageClientAuth}
	csr := func(req []byte, signer, user string, usages ...certificatesv1.KeyUsage) *certificatesv1.CertificateSigningRequest {
		return &certificatesv1.CertificateSigningRequest{Spec: certificatesv1.CertificateSigningRequestSpec{Request: req, SignerName: signer, Username: user, Usages: usages}}
	}
	reg := names.AgentRegistrationGroupPrefix + exampleRegistration
	agent := testenv.CertificateRequest(t, "system:karmada:agent:member3", []string{names.AgentGroup, reg})
	for _, c := range []struct {
		what                string
		csr                 *certificatesv1.CertificateSigningRequest
		ours, approve       bool
		reason, subresource string
	}{
		{"a registration", csr(agent, certificatesv1.KubeAPIServerClientSignerName, "system:bootstrap:abcdef", client...), true, true, "", BootstrapSubresource},
		{"a renewal by the agent itself", csr(agent, certificatesv1.KubeAPIServerClientSignerName, "system:karmada:agent:member3", client...), true, true, "", RenewalSubresource},
		{"another agent's renewal is a registration (its right is checked)", csr(agent, certificatesv1.KubeAPIServerClientSignerName, "system:karmada:agent:member4", client...), true, true, "", BootstrapSubresource},
		{"wrong signer", csr(agent, "kubernetes.io/kube-apiserver-client-kubelet", "system:bootstrap:abcdef", client...), true, false, "WrongSigner", ""},
		{"wrong group", csr(testenv.CertificateRequest(t, "system:karmada:agent:member3", []string{"system:masters"}), certificatesv1.KubeAPIServerClientSignerName, "system:bootstrap:abcdef", client...), true, false, "WrongSubject", ""},
		{"an extra group", csr(testenv.CertificateRequest(t, "system:karmada:agent:member3", []string{names.AgentGroup, reg, "system:masters"}), certificatesv1.KubeAPIServerClientSignerName, "system:bootstrap:abcdef", client...), true, false, "WrongSubject", ""},
		{"no registration group (an earlier version's request)", csr(testenv.CertificateRequest(t, "system:karmada:agent:member3", []string{names.AgentGroup}), certificatesv1.KubeAPIServerClientSignerName, "system:bootstrap:abcdef", client...), true, false, "WrongSubject", ""},
		{"a registration id that is not one", csr(testenv.CertificateRequest(t, "system:karmada:agent:member3", []string{names.AgentGroup, names.AgentRegistrationGroupPrefix + "member3"}), certificatesv1.KubeAPIServerClientSignerName, "system:bootstrap:abcdef", client...), true, false, "WrongSubject", ""},
		{"wrong user (the group, another CN)", csr(testenv.CertificateRequest(t, "admin", []string{names.AgentGroup, reg}), certificatesv1.KubeAPIServerClientSignerName, "system:bootstrap:abcdef", client...), true, false, "WrongSubject", ""},
		{"an invalid cluster name", csr(testenv.CertificateRequest(t, "system:karmada:agent:Member_3", []string{names.AgentGroup, reg}), certificatesv1.KubeAPIServerClientSignerName, "system:bootstrap:abcdef", client...), true, false, "WrongSubject", ""},
		{"DNS names", csr(testenv.CertificateRequest(t, "system:karmada:agent:member3", []string{names.AgentGroup, reg}, "evil.example.com"), certificatesv1.KubeAPIServerClientSignerName, "system:bootstrap:abcdef", client...), true, false, "WrongSubject", ""},
		{"server auth", csr(agent, certificatesv1.KubeAPIServerClientSignerName, "system:bootstrap:abcdef", certificatesv1.UsageClientAuth, certificatesv1.UsageServerAuth), true, false, "WrongUsages", ""},
		{"no client auth", csr(agent, certificatesv1.KubeAPIServerClientSignerName, "system:bootstrap:abcdef", certificatesv1.UsageDigitalSignature), true, false, "WrongUsages", ""},
		{"not an agent's: left alone", csr(testenv.CertificateRequest(t, "someone", []string{"team"}), certificatesv1.KubeAPIServerClientSignerName, "someone", client...), false, false, "", ""},
		{"not a request: left alone", csr([]byte("garbage"), certificatesv1.KubeAPIServerClientSignerName, "someone", client...), false, false, "", ""},
	} {
		d := Check(c.csr)
		if d.Ours != c.ours || d.Approve != c.approve || d.Reason != c.reason || (c.approve && d.Subresource != c.subresource) {
			t.Errorf("%s: %+v, want ours %t approve %t reason %q subresource %q", c.what, d, c.ours, c.approve, c.reason, c.subresource)
		}
		if d.Approve && (d.Cluster != "member3" || d.Registration != exampleRegistration || d.KeyID == "" || d.KeyID == d.Registration) {
			t.Errorf("%s: cluster %q, registration %q, key id %q", c.what, d.Cluster, d.Registration, d.KeyID)
		}
		if d.Ours && !d.Approve && d.Message == "" {
			t.Errorf("%s: denied without a message", c.what)
		}
	}
}
