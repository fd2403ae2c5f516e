package webhook

import (
	"context"
	"fmt"
	"net/http"

	admissionv1 "k8s.io/api/admission/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"sigs.k8s.io/controller-runtime/pkg/webhook/admission"

	workv1alpha2 "github.com/karmada-go/karmada/api/work/v1alpha2"
)

// DeletionProtectionPath serves resource deletion protection (Karmada's
// path and webhook name).
const DeletionProtectionPath = "/validate-resourcedeletionprotection"

// deletionProtectionEndpoints is resource deletion protection: a DELETE of
// any object of the control plane labelled
// resourcetemplate.karmada.io/deletion-protected: Always is refused. The
// API server sends only deletions of objects that carry the label (the
// registration's object selector), so every other deletion costs nothing.
func deletionProtectionEndpoints(k kindEnv) []Endpoint {
	return []Endpoint{{Path: DeletionProtectionPath, Name: "resourcedeletionprotection.karmada.io",
		GVR: schema.GroupVersionResource{Group: "*", Version: "*", Resource: "*"}, AllScopes: true,
		Operations: []admissionv1.Operation{admissionv1.Delete},
		ObjectSelector: &metav1.LabelSelector{MatchExpressions: []metav1.LabelSelectorRequirement{
			{Key: workv1alpha2.DeletionProtectionLabel, Operator: metav1.LabelSelectorOpExists}}},
		handler: &deletionProtection{dec: k.dec}}}
}

type deletionProtection struct{ dec admission.Decoder }

// protectedMessage is the denial (Karmada's words, which kubectl prints
// after the webhook's name).
var protectedMessage = fmt.Sprintf("This resource is protected, please make sure to remove the label: %s", workv1alpha2.DeletionProtectionLabel)

func (d *deletionProtection) Handle(_ context.Context, req admission.Request) admission.Response {
	if req.Operation != admissionv1.Delete {
		return admission.Allowed("")
	}
	// A collection deletion sends each object in turn; an object without
	// its old version (none is sent for some subresources) is not one
	// this protects.
	if len(req.OldObject.Raw) == 0 {
		return admission.Allowed("")
	}
	obj := &unstructured.Unstructured{}
	if err := d.dec.DecodeRaw(req.OldObject, obj); err != nil {
		return admission.Errored(http.StatusBadRequest, err)
	}
	if obj.GetLabels()[workv1alpha2.DeletionProtectionLabel] == workv1alpha2.DeletionProtectionAlways {
		return admission.Denied(protectedMessage)
	}
	return admission.Allowed("")
}
