package webhook_test

import (
	"context"
	"encoding/json"
	"testing"

	authenticationv1 "k8s.io/api/authentication/v1"
	authorizationv1 "k8s.io/api/authorization/v1"

	jsonpatch "github.com/evanphx/json-patch/v5"
	admissionv1 "k8s.io/api/admission/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"sigs.k8s.io/controller-runtime/pkg/webhook/admission"

	"github.com/karmada-go/karmada/internal/scheme"
	"github.com/karmada-go/karmada/internal/testenv"
	"github.com/karmada-go/karmada/internal/webhook"
)

// TestCoreObjectsAreAdmitted: the shared fixtures (every field of every
// kind set, used by the API round-trip tests) are valid, so that those
// tests run through the webhook unchanged.
func TestCoreObjectsAreAdmitted(t *testing.T) {
	for _, obj := range testenv.CoreObjects("shop", "-x") {
		gvk, _, err := scheme.Scheme.ObjectKinds(obj)
		if err != nil {
			t.Fatal(err)
		}
		raw, err := json.Marshal(obj)
		if err != nil {
			t.Fatal(err)
		}
		// As the API server does: mutating endpoints first, then validating.
		for _, e := range webhook.EndpointsWith(scheme.Scheme, webhook.Options{Authorizer: allowAll{}}) {
			if e.Kind != gvk[0].Kind {
				continue
			}
			req := admission.Request{AdmissionRequest: admissionv1.AdmissionRequest{
				UID: "1", Kind: metav1.GroupVersionKind{Group: e.GVR.Group, Version: e.GVR.Version, Kind: e.Kind},
				Namespace: obj.GetNamespace(), Operation: admissionv1.Create, Object: runtime.RawExtension{Raw: raw},
			}}
			resp := e.Handler().Handle(context.Background(), req)
			if !resp.Allowed {
				t.Errorf("%s %s denied: %s", e.Kind, obj.GetName(), resp.Result.Message)
				continue
			}
			if len(resp.Patches) == 0 {
				continue
			}
			ops, err := json.Marshal(resp.Patches)
			if err != nil {
				t.Fatal(err)
			}
			patch, err := jsonpatch.DecodePatch(ops)
			if err != nil {
				t.Fatal(err)
			}
			if raw, err = patch.Apply(raw); err != nil {
				t.Fatal(err)
			}
		}
	}
}

type allowAll struct{}

func (allowAll) Allowed(context.Context, authenticationv1.UserInfo, authorizationv1.ResourceAttributes) (bool, error) {
	return true, nil
}
