package webhook

import (
	"context"
	"net/http"
	"testing"

	admissionv1 "k8s.io/api/admission/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"sigs.k8s.io/controller-runtime/pkg/webhook/admission"

	workv1alpha2 "github.com/karmada-go/karmada/api/work/v1alpha2"
	"github.com/karmada-go/karmada/internal/scheme"
)

func TestDeletionProtection(t *testing.T) {
	e := endpoints[DeletionProtectionPath]
	labelled := func(value string) []byte {
		cm := &corev1.ConfigMap{TypeMeta: metav1.TypeMeta{APIVersion: "v1", Kind: "ConfigMap"}, ObjectMeta: metav1.ObjectMeta{Namespace: "shop", Name: "settings"}}
		if value != "" {
			cm.Labels = map[string]string{workv1alpha2.DeletionProtectionLabel: value}
		}
		return mustJSON(t, cm)
	}
	for _, tc := range []struct {
		name    string
		op      admissionv1.Operation
		old     []byte
		allowed bool
		code    int32
	}{
		{"Always: deletion refused", admissionv1.Delete, labelled("Always"), false, http.StatusForbidden},
		{"another value protects nothing", admissionv1.Delete, labelled("always"), true, http.StatusOK},
		{"no label", admissionv1.Delete, labelled(""), true, http.StatusOK},
		{"an update of a protected object is no deletion", admissionv1.Update, labelled("Always"), true, http.StatusOK},
		{"no old object sent", admissionv1.Delete, nil, true, http.StatusOK},
		{"an old object that is no object", admissionv1.Delete, []byte("[1]"), false, http.StatusBadRequest},
	} {
		t.Run(tc.name, func(t *testing.T) {
			req := admission.Request{AdmissionRequest: admissionv1.AdmissionRequest{UID: "1", Operation: tc.op,
				Kind: metav1.GroupVersionKind{Version: "v1", Kind: "ConfigMap"}, Namespace: "shop", Name: "settings",
				OldObject: runtime.RawExtension{Raw: tc.old}}}
			resp := e.Handler().Handle(context.Background(), req)
			if resp.Allowed != tc.allowed || resp.Result.Code != tc.code {
				t.Fatalf("allowed %v code %d (%s), want allowed %v code %d", resp.Allowed, resp.Result.Code, resp.Result.Message, tc.allowed, tc.code)
			}
			if tc.code == http.StatusForbidden && resp.Result.Message != "This resource is protected, please make sure to remove the label: resourcetemplate.karmada.io/deletion-protected" {
				t.Errorf("message %q: not Karmada's", resp.Result.Message)
			}
		})
	}
}

// The registration sends the webhook deletions only, of every resource in
// every scope, and only of objects carrying the label: Karmada's.
func TestDeletionProtectionRegistration(t *testing.T) {
	_, validating := Configurations(scheme.Scheme, "https://webhook.example", nil)
	for _, w := range validating.Webhooks {
		if w.Name != "resourcedeletionprotection.karmada.io" {
			continue
		}
		r := w.Rules[0]
		if len(w.Rules) != 1 || len(r.Operations) != 1 || r.Operations[0] != "DELETE" || r.APIGroups[0] != "*" || r.Resources[0] != "*" || *r.Scope != "*" {
			t.Errorf("rules %+v", w.Rules)
		}
		if s := w.ObjectSelector; s == nil || len(s.MatchExpressions) != 1 || s.MatchExpressions[0].Key != workv1alpha2.DeletionProtectionLabel || s.MatchExpressions[0].Operator != metav1.LabelSelectorOpExists {
			t.Errorf("object selector %+v", w.ObjectSelector)
		}
		if *w.ClientConfig.URL != "https://webhook.example/validate-resourcedeletionprotection" {
			t.Errorf("URL %s", *w.ClientConfig.URL)
		}
		return
	}
	t.Fatal("no resourcedeletionprotection.karmada.io registration")
}
