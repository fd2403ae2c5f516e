package webhook

import (
	"context"
	"encoding/json"
	"fmt"
	"math/rand"
	"sort"
	"testing"
	"time"

	admissionv1 "k8s.io/api/admission/v1"
	certificatesv1 "k8s.io/api/certificates/v1"
	corev1 "k8s.io/api/core/v1"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/webhook/admission"
	"sigs.k8s.io/randfill"

	workv1alpha2 "github.com/karmada-go/karmada/api/work/v1alpha2"
)

// fixtures are the valid objects each endpoint starts its fuzzing from.
var fixtures = map[string]func() client.Object{
	"/mutate-propagationpolicy":                         func() client.Object { return validPP() },
	"/mutate-clusterpropagationpolicy":                  func() client.Object { return validCPP() },
	"/mutate-overridepolicy":                            func() client.Object { return validOP() },
	"/mutate-resourcebinding":                           func() client.Object { return validRB() },
	"/mutate-clusterresourcebinding":                    func() client.Object { return validCRB() },
	"/validate-propagationpolicy":                       func() client.Object { return validPP() },
	"/validate-clusterpropagationpolicy":                func() client.Object { return validCPP() },
	"/validate-overridepolicy":                          func() client.Object { return validOP() },
	"/validate-clusteroverridepolicy":                   func() client.Object { return validCOP() },
	"/validate-resourcebinding":                         func() client.Object { return validRB() },
	"/validate-clusterresourcebinding":                  func() client.Object { return validCRB() },
	"/validate-work":                                    func() client.Object { return validWork() },
	"/validate-federatedresourcequota":                  func() client.Object { return validFRQ() },
	"/validate-cluster":                                 func() client.Object { return validCluster() },
	"/validate-clustertaintpolicy":                      func() client.Object { return validCTP() },
	"/validate-resourceinterpretercustomization":        func() client.Object { return validRIC() },
	"/validate-resourceinterpreterwebhookconfiguration": func() client.Object { return validRIWC() },
	"/validate-serviceimport":                           func() client.Object { return validServiceImport() },
	"/validate-multiclusterservice":                     func() client.Object { return validMCS() },
	"/validate-multiclusteringress":                     func() client.Object { return validMCI() },
	"/mutate-federatedhpa":                              func() client.Object { return validFHPA() },
	"/validate-federatedhpa":                            func() client.Object { return validFHPA() },
	"/validate-cronfederatedhpa":                        func() client.Object { return validCronFHPA() },
	DeletionProtectionPath: func() client.Object {
		return &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: "shop", Name: "settings",
			Labels: map[string]string{workv1alpha2.DeletionProtectionLabel: workv1alpha2.DeletionProtectionAlways}}}
	},
	CSRApprovalPath: func() client.Object {
		return &certificatesv1.CertificateSigningRequest{ObjectMeta: metav1.ObjectMeta{Name: "agent"}, Spec: certificatesv1.CertificateSigningRequestSpec{
			SignerName: certificatesv1.KubeAPIServerClientSignerName, Usages: []certificatesv1.KeyUsage{certificatesv1.UsageClientAuth}}}
	},
}

func TestEveryEndpointHasAFixture(t *testing.T) {
	for path := range endpoints {
		if fixtures[path] == nil {
			t.Errorf("endpoint %s has no fixture to fuzz from", path)
		}
	}
}

// checkResponse fails unless resp is an answer the API server can use:
// allowed; denied as undecodable (400); or, from a validating endpoint,
// denied as Invalid (422) with every cause naming a field.
func checkResponse(t *testing.T, e Endpoint, resp admission.Response, input []byte) {
	t.Helper()
	if resp.Allowed {
		return
	}
	r := resp.Result
	switch {
	case r == nil:
		t.Fatalf("%s: denied without a status for %s", e.Path, input)
	case r.Code == 400:
		return
	case e.Mutating:
		t.Fatalf("%s: a mutating endpoint denied (%d %s) for %s", e.Path, r.Code, r.Message, input)
	case r.Code != 422 || r.Details == nil || len(r.Details.Causes) == 0:
		t.Fatalf("%s: denial without causes (%d %s) for %s", e.Path, r.Code, r.Message, input)
	}
	for _, c := range r.Details.Causes {
		if c.Field == "" {
			t.Fatalf("%s: a cause names no field: %+v (input %s)", e.Path, c, input)
		}
	}
}

// fuzzEndpoint fuzzes one endpoint with JSON documents: the fixture, and
// whatever the fuzzer makes of it, as a create and as an update.
func fuzzEndpoint(f *testing.F, path string) {
	e := endpoints[path]
	fixture, err := jsonOf(fixtures[path]())
	if err != nil {
		f.Fatal(err)
	}
	f.Add(fixture, []byte(nil))
	f.Add(fixture, fixture)
	f.Add([]byte(`{}`), []byte(nil))
	f.Add([]byte(`{"metadata":{"name":"x","labels":{"a":"b"}},"spec":{"resourceSelectors":[{}],"placement":{"spreadConstraints":[{}]},"overrideRules":[{"overriders":{"plaintext":[{"path":"~"}]}}]}}`), fixture)
	f.Fuzz(func(t *testing.T, raw, old []byte) {
		req := admission.Request{AdmissionRequest: admissionv1.AdmissionRequest{
			UID: "1", Kind: metav1.GroupVersionKind{Group: e.GVR.Group, Version: e.GVR.Version, Kind: e.Kind},
			Namespace: "shop", Operation: admissionv1.Create, Object: runtime.RawExtension{Raw: raw},
		}}
		if old != nil {
			req.Operation, req.OldObject = admissionv1.Update, runtime.RawExtension{Raw: old}
		}
		done := make(chan admission.Response, 1)
		go func() { done <- e.Handler().Handle(context.Background(), req) }()
		select {
		case resp := <-done:
			checkResponse(t, e, resp, raw)
		case <-time.After(2 * time.Second):
			t.Fatalf("%s: no answer within 2s for %q (old %q)", e.Path, raw, old)
		}
	})
}

func jsonOf(obj client.Object) ([]byte, error) { return json.Marshal(obj) }

func FuzzMutatePropagationPolicy(f *testing.F) { fuzzEndpoint(f, "/mutate-propagationpolicy") }
func FuzzMutateClusterPropagationPolicy(f *testing.F) {
	fuzzEndpoint(f, "/mutate-clusterpropagationpolicy")
}
func FuzzMutateOverridePolicy(f *testing.F)  { fuzzEndpoint(f, "/mutate-overridepolicy") }
func FuzzMutateResourceBinding(f *testing.F) { fuzzEndpoint(f, "/mutate-resourcebinding") }
func FuzzMutateClusterResourceBinding(f *testing.F) {
	fuzzEndpoint(f, "/mutate-clusterresourcebinding")
}
func FuzzValidatePropagationPolicy(f *testing.F) { fuzzEndpoint(f, "/validate-propagationpolicy") }
func FuzzValidateClusterPropagationPolicy(f *testing.F) {
	fuzzEndpoint(f, "/validate-clusterpropagationpolicy")
}
func FuzzValidateOverridePolicy(f *testing.F) { fuzzEndpoint(f, "/validate-overridepolicy") }
func FuzzValidateClusterOverridePolicy(f *testing.F) {
	fuzzEndpoint(f, "/validate-clusteroverridepolicy")
}
func FuzzValidateResourceBinding(f *testing.F) { fuzzEndpoint(f, "/validate-resourcebinding") }
func FuzzValidateClusterResourceBinding(f *testing.F) {
	fuzzEndpoint(f, "/validate-clusterresourcebinding")
}
func FuzzValidateWork(f *testing.F) { fuzzEndpoint(f, "/validate-work") }
func FuzzValidateFederatedResourceQuota(f *testing.F) {
	fuzzEndpoint(f, "/validate-federatedresourcequota")
}
func FuzzValidateCluster(f *testing.F) { fuzzEndpoint(f, "/validate-cluster") }
func FuzzValidateClusterTaintPolicy(f *testing.F) {
	fuzzEndpoint(f, "/validate-clustertaintpolicy")
}
func FuzzValidateResourceInterpreterCustomization(f *testing.F) {
	fuzzEndpoint(f, "/validate-resourceinterpretercustomization")
}
func FuzzValidateServiceImport(f *testing.F)       { fuzzEndpoint(f, "/validate-serviceimport") }
func FuzzValidateMultiClusterService(f *testing.F) { fuzzEndpoint(f, "/validate-multiclusterservice") }
func FuzzValidateFederatedHPA(f *testing.F)        { fuzzEndpoint(f, "/validate-federatedhpa") }
func FuzzValidateCronFederatedHPA(f *testing.F)    { fuzzEndpoint(f, "/validate-cronfederatedhpa") }
func FuzzValidateMultiClusterIngress(f *testing.F) { fuzzEndpoint(f, "/validate-multiclusteringress") }
func FuzzValidateResourceInterpreterWebhookConfiguration(f *testing.F) {
	fuzzEndpoint(f, "/validate-resourceinterpreterwebhookconfiguration")
}

// filler makes random typed objects of every kind: strings are short and
// drawn from values the rules care about as often as from noise.
func filler(seed int64) *randfill.Filler {
	words := []string{"", "a", "member1", "shop", "karmada-system", "/spec/replicas", "/metadata/namespace", "~2", "Registry", "Tag",
		"cluster", "region", "Duplicated", "Divided", "Weighted", "Aggregated", "add", "remove", "replace", "Gracefully", "Directly", "Push", "Pull",
		"NoSchedule", "NoExecute", "apps/v1", "Deployment", "In", "Exists", "https://127.0.0.1:6443", "{.replicas}"}
	return randfill.NewWithSeed(seed).NilChance(0.3).NumElements(0, 3).MaxDepth(10).Funcs(
		func(s *string, c randfill.Continue) {
			if c.Bool() {
				*s = words[c.Intn(len(words))]
			} else {
				*s = c.String(8)
			}
		},
		func(t *metav1.Time, c randfill.Continue) {
			*t = metav1.NewTime(time.Unix(int64(c.Intn(2000000000)), 0).UTC())
		},
		func(q *resource.Quantity, c randfill.Continue) {
			*q = *resource.NewQuantity(int64(c.Intn(100))-10, resource.DecimalSI)
		},
		func(r *runtime.RawExtension, c randfill.Continue) {
			r.Raw = []byte(fmt.Sprintf(`{"apiVersion":%q,"kind":%q,"metadata":{"name":%q}}`, words[c.Intn(len(words))], words[c.Intn(len(words))], c.String(4)))
		},
		func(j *apiextensionsv1.JSON, c randfill.Continue) {
			if c.Bool() {
				j.Raw = []byte(fmt.Sprintf(`%q`, c.String(4)))
			}
		},
		func(m *metav1.ObjectMeta, c randfill.Continue) {
			c.Fill(&m.Name)
			c.Fill(&m.Namespace)
			c.Fill(&m.Labels)
			c.Fill(&m.Annotations)
		},
	)
}

// TestAdmissionRandomObjects sends 300 random typed objects of its kind to
// every endpoint, as creates and as updates of another random object.
func TestAdmissionRandomObjects(t *testing.T) {
	seed := time.Now().UnixNano()
	t.Logf("seed %d", seed)
	r := rand.New(rand.NewSource(seed))
	paths := make([]string, 0, len(endpoints))
	for p := range endpoints {
		paths = append(paths, p)
	}
	sort.Strings(paths)
	for _, path := range paths {
		e := endpoints[path]
		for i := 0; i < 300; i++ {
			f := filler(r.Int63())
			obj, old := fixtures[path](), fixtures[path]()
			f.Fill(obj)
			f.Fill(old)
			raw, err := jsonOf(obj)
			if err != nil {
				t.Fatal(err)
			}
			req := request(t, e, obj, nil)
			checkResponse(t, e, e.Handler().Handle(context.Background(), req), raw)
			req = request(t, e, obj, old)
			checkResponse(t, e, e.Handler().Handle(context.Background(), req), raw)
		}
	}
}
