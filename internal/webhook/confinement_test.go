package webhook

import (
	"bytes"
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509/pkix"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	authenticationv1 "k8s.io/api/authentication/v1"
	authorizationv1 "k8s.io/api/authorization/v1"
	certificatesv1 "k8s.io/api/certificates/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	certutil "k8s.io/client-go/util/cert"
	"sigs.k8s.io/yaml"

	"github.com/karmada-go/karmada/internal/names"
	"github.com/karmada-go/karmada/internal/registration/agentcert"
	"github.com/karmada-go/karmada/internal/scheme"
)

func review(t *testing.T, spec authorizationv1.SubjectAccessReviewSpec) authorizationv1.SubjectAccessReviewStatus {
	t.Helper()
	body, _ := json.Marshal(authorizationv1.SubjectAccessReview{TypeMeta: metav1.TypeMeta{APIVersion: "authorization.k8s.io/v1", Kind: "SubjectAccessReview"}, Spec: spec})
	rec := httptest.NewRecorder()
	Confinement().ServeHTTP(rec, httptest.NewRequest(http.MethodPost, ConfinementPath, bytes.NewReader(body)))
	if rec.Code != http.StatusOK {
		t.Fatalf("answered %d %s", rec.Code, rec.Body)
	}
	var out authorizationv1.SubjectAccessReview
	if err := json.Unmarshal(rec.Body.Bytes(), &out); err != nil || out.Kind != "SubjectAccessReview" || out.APIVersion != "authorization.k8s.io/v1" {
		t.Fatalf("answered %s (%v)", rec.Body, err)
	}
	if out.Status.Allowed {
		t.Fatalf("the confinement allowed something: %+v", spec)
	}
	return out.Status
}

// The confinement denies the controller manager's writes to the confined
// groups, and has no opinion on anything else (RBAC decides).
func TestConfinementDeniesOnlyTheControllerManagersConfinedWrites(t *testing.T) {
	cm := ControllerManagerUser
	for _, c := range []struct {
		user, verb, group, resource string
		denied                      bool
	}{
		{cm, "update", "admissionregistration.k8s.io", "validatingadmissionpolicybindings", true},
		{cm, "delete", "admissionregistration.k8s.io", "validatingwebhookconfigurations", true},
		{cm, "patch", "apiregistration.k8s.io", "apiservices", true},
		{cm, "create", "config.karmada.io", "resourceinterpretercustomizations", true},
		{cm, "deletecollection", "flowcontrol.apiserver.k8s.io", "flowschemas", true},
		{cm, "get", "admissionregistration.k8s.io", "validatingadmissionpolicybindings", false},
		{cm, "list", "config.karmada.io", "resourceinterpretercustomizations", false},
		{cm, "update", "apps", "deployments", false},
		{cm, "update", "", "configmaps", false},
		{"admin", "update", "admissionregistration.k8s.io", "validatingadmissionpolicybindings", false},
		{"system:karmada:karmada-scheduler", "create", "config.karmada.io", "resourceinterpretercustomizations", false},
	} {
		st := review(t, authorizationv1.SubjectAccessReviewSpec{User: c.user, ResourceAttributes: &authorizationv1.ResourceAttributes{Verb: c.verb, Group: c.group, Resource: c.resource}})
		if st.Denied != c.denied {
			t.Errorf("%s %s %s.%s: denied %v, want %v (%s)", c.user, c.verb, c.resource, c.group, st.Denied, c.denied, st.Reason)
		}
		if c.denied && !strings.Contains(st.Reason, "karmada-controller-manager may not "+c.verb) {
			t.Errorf("reason %q", st.Reason)
		}
	}
	if st := review(t, authorizationv1.SubjectAccessReviewSpec{User: cm, NonResourceAttributes: &authorizationv1.NonResourceAttributes{Verb: "get", Path: "/metrics"}}); st.Denied {
		t.Error("a non-resource request was denied")
	}
	rec := httptest.NewRecorder()
	Confinement().ServeHTTP(rec, httptest.NewRequest(http.MethodPost, ConfinementPath, strings.NewReader(`{"kind":"Pod"}`)))
	if rec.Code != http.StatusBadRequest {
		t.Errorf("a Pod answered %d", rec.Code)
	}
}

// The configuration asks the webhook only what it denies, then RBAC.
func TestAuthorizationConfiguration(t *testing.T) {
	var cfg struct {
		APIVersion, Kind string
		Authorizers      []struct {
			Type, Name string
			Webhook    *struct {
				FailurePolicy   string                          `json:"failurePolicy"`
				ConnectionInfo  struct{ KubeConfigFile string } `json:"connectionInfo"`
				MatchConditions []struct{ Expression string }   `json:"matchConditions"`
			}
		}
	}
	if err := yaml.Unmarshal([]byte(AuthorizationConfiguration("/state/webhook.kubeconfig")), &cfg); err != nil {
		t.Fatal(err)
	}
	if cfg.Kind != "AuthorizationConfiguration" || len(cfg.Authorizers) != 2 || cfg.Authorizers[0].Type != "Webhook" || cfg.Authorizers[1].Type != "RBAC" {
		t.Fatalf("%+v", cfg)
	}
	w := cfg.Authorizers[0].Webhook
	if w.FailurePolicy != "Deny" || w.ConnectionInfo.KubeConfigFile != "/state/webhook.kubeconfig" || len(w.MatchConditions) != 4 {
		t.Fatalf("%+v", w)
	}
	all := ""
	for _, m := range w.MatchConditions {
		all += m.Expression + "\n"
	}
	for _, g := range ConfinedGroups {
		if !strings.Contains(all, "'"+g+"'") {
			t.Errorf("group %s not matched: %s", g, all)
		}
	}
	if !strings.Contains(all, "request.user == '"+ControllerManagerUser+"'") {
		t.Errorf("not narrowed to the controller manager: %s", all)
	}
}

// keyedRequest is a PEM request of a new key for cn, its organizations
// made from the key.
func keyedRequest(t *testing.T, cn string, orgs func(pub any) []string) []byte {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	req, err := certutil.MakeCSR(key, &pkix.Name{CommonName: cn, Organization: orgs(key.Public())}, nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	return req
}

// agentRequest is a CSR for an agent of cluster, for its own key.
func agentRequest(t *testing.T, cluster string) *certificatesv1.CertificateSigningRequest {
	req := keyedRequest(t, names.AgentUserPrefix+cluster, func(pub any) []string {
		id, err := agentcert.RegistrationID(pub)
		if err != nil {
			t.Fatal(err)
		}
		return []string{names.AgentGroup, names.AgentRegistrationGroupPrefix + id}
	})
	return &certificatesv1.CertificateSigningRequest{ObjectMeta: metav1.ObjectMeta{Name: "csr-" + cluster}, Spec: certificatesv1.CertificateSigningRequestSpec{
		Request: req, SignerName: certificatesv1.KubeAPIServerClientSignerName, Username: "system:bootstrap:abcdef",
		Groups: []string{"system:bootstrappers", "system:authenticated"},
		Usages: []certificatesv1.KeyUsage{certificatesv1.UsageDigitalSignature, certificatesv1.UsageClientAuth}}}
}

type fixedAuthorizer struct {
	allowed bool
	asked   []authorizationv1.ResourceAttributes
}

func (f *fixedAuthorizer) Allowed(_ context.Context, _ authenticationv1.UserInfo, a authorizationv1.ResourceAttributes) (bool, error) {
	f.asked = append(f.asked, a)
	return f.allowed, nil
}

func approve(c *certificatesv1.CertificateSigningRequest) *certificatesv1.CertificateSigningRequest {
	c = c.DeepCopy()
	c.Status.Conditions = append(c.Status.Conditions, certificatesv1.CertificateSigningRequestCondition{Type: certificatesv1.CertificateApproved, Status: corev1.ConditionTrue})
	return c
}

// The controller manager approves only agent requests for their own keys
// from requesters who may ask for them.
func TestControllerManagerApprovesOnlyAgentRequests(t *testing.T) {
	ctx := context.Background()
	cm := authenticationv1.UserInfo{Username: ControllerManagerUser}
	agent := agentRequest(t, "member9")
	admin := agent.DeepCopy()
	admin.Spec.Request = keyedRequest(t, "kubernetes-admin", func(any) []string { return []string{"system:masters"} })
	// A registration group that is not its key's.
	stolen := agent.DeepCopy()
	stolen.Spec.Request = keyedRequest(t, names.AgentUserPrefix+"member9", func(any) []string {
		return []string{names.AgentGroup, names.AgentRegistrationGroupPrefix + "0123456789abcdef0123456789abcdef"}
	})
	serverAuth := agent.DeepCopy()
	serverAuth.Spec.Usages = append(serverAuth.Spec.Usages, certificatesv1.UsageServerAuth)
	for _, c := range []struct {
		name    string
		csr     *certificatesv1.CertificateSigningRequest
		user    authenticationv1.UserInfo
		allowed bool
		refused string
	}{
		{"an agent's registration", agent, cm, true, ""},
		{"an administrator's certificate", admin, cm, true, "approves only karmada-agent certificates"},
		{"another key's registration", stolen, cm, true, "WrongSubject"},
		{"a serving certificate", serverAuth, cm, true, "WrongUsages"},
		{"a requester without the right", agent, cm, false, "may not create certificatesigningrequests/clusteragent"},
		{"an administrator approving anything", admin, authenticationv1.UserInfo{Username: "admin", Groups: []string{"system:masters"}}, false, ""},
	} {
		authz := &fixedAuthorizer{allowed: c.allowed}
		errs, err := checkCSRApproval(ctx, authz, c.user, approve(c.csr), c.csr)
		if err != nil {
			t.Fatalf("%s: %v", c.name, err)
		}
		switch {
		case c.refused == "" && len(errs) > 0:
			t.Errorf("%s: refused: %v", c.name, errs)
		case c.refused != "" && (len(errs) == 0 || !strings.Contains(errs.ToAggregate().Error(), c.refused)):
			t.Errorf("%s: %v; want a refusal saying %q", c.name, errs, c.refused)
		}
	}
	// A denial, or an update of an approved request, is not an approval.
	if errs, _ := checkCSRApproval(ctx, nil, cm, admin, admin); len(errs) > 0 {
		t.Errorf("a request left undecided was refused: %v", errs)
	}
	if errs, _ := checkCSRApproval(ctx, nil, cm, approve(admin), approve(admin)); len(errs) > 0 {
		t.Errorf("an already approved request's update was refused: %v", errs)
	}
}

// The approval endpoint is registered on the approval subresource, for the
// controller manager only.
func TestCSRApprovalRegistered(t *testing.T) {
	_, validating := Configurations(scheme.Scheme, "https://webhook", []byte("ca"))
	for _, w := range validating.Webhooks {
		if !strings.HasSuffix(*w.ClientConfig.URL, CSRApprovalPath) {
			continue
		}
		r := w.Rules[0]
		if r.Resources[0] != "certificatesigningrequests/approval" || r.Operations[0] != admissionregistrationv1.Update || len(w.MatchConditions) != 1 ||
			!strings.Contains(w.MatchConditions[0].Expression, ControllerManagerUser) {
			t.Errorf("%+v", w)
		}
		return
	}
	t.Error("no webhook for the approvals")
}
