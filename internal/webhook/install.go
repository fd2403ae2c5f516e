package webhook

import (
	"context"
	"fmt"
	"strings"

	admissionv1 "k8s.io/api/admission/v1"
	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// Names of the objects that register the webhook with the API server, as
// Karmada names them.
const (
	MutatingConfigurationName   = "mutating-config"
	ValidatingConfigurationName = "validating-config"
	// ConvertPath serves the CRD conversion of bindings.
	ConvertPath = "/convert"
	// timeoutSeconds bounds each call; failurePolicy Fail makes a call that
	// times out deny the request.
	timeoutSeconds = 5
)

// ConvertedCRDs are the CRDs whose versions the webhook converts.
var ConvertedCRDs = []string{"resourcebindings.work.karmada.io", "clusterresourcebindings.work.karmada.io"}

// Configurations returns the registrations of every endpoint of Endpoints
// at baseURL (https://host:port), trusted through caBundle (PEM). Each has
// failurePolicy Fail: when the webhook is down, writes of Karmada kinds are
// refused rather than admitted unchecked; reads never go through it.
func Configurations(scheme *runtime.Scheme, baseURL string, caBundle []byte) (*admissionregistrationv1.MutatingWebhookConfiguration, *admissionregistrationv1.ValidatingWebhookConfiguration) {
	mutating := &admissionregistrationv1.MutatingWebhookConfiguration{ObjectMeta: metav1.ObjectMeta{Name: MutatingConfigurationName, Labels: map[string]string{"app": "karmada-webhook"}}}
	validating := &admissionregistrationv1.ValidatingWebhookConfiguration{ObjectMeta: metav1.ObjectMeta{Name: ValidatingConfigurationName, Labels: map[string]string{"app": "karmada-webhook"}}}
	for _, e := range Endpoints(scheme) {
		ops := e.Operations
		if ops == nil {
			ops = []admissionv1.Operation{admissionv1.Create, admissionv1.Update}
		}
		resource := e.GVR.Resource
		if e.Subresource != "" {
			resource += "/" + e.Subresource
		}
		rule := admissionregistrationv1.RuleWithOperations{
			Rule: admissionregistrationv1.Rule{
				APIGroups: []string{e.GVR.Group}, APIVersions: []string{e.GVR.Version}, Resources: []string{resource},
				Scope: ptr.To(admissionregistrationv1.ClusterScope),
			},
		}
		if e.Namespaced {
			rule.Scope = ptr.To(admissionregistrationv1.NamespacedScope)
		}
		if e.AllScopes {
			rule.Scope = ptr.To(admissionregistrationv1.AllScopes)
		}
		for _, op := range ops {
			rule.Operations = append(rule.Operations, admissionregistrationv1.OperationType(op))
		}
		// Karmada's names: the kind and karmada.io (resourcebinding.karmada.io),
		// which API servers print in a denial ("admission webhook
		// \"resourcebinding.karmada.io\" denied the request: ...").
		name := strings.ToLower(e.Kind) + ".karmada.io"
		if e.Name != "" {
			name = e.Name
		}
		cc := admissionregistrationv1.WebhookClientConfig{URL: ptr.To(baseURL + e.Path), CABundle: caBundle}
		// Equivalent: a write through another version of the resource (a
		// v1alpha1 binding) is converted and admitted as this one.
		match := ptr.To(admissionregistrationv1.Equivalent)
		if e.Mutating {
			mutating.Webhooks = append(mutating.Webhooks, admissionregistrationv1.MutatingWebhook{
				Name: name, ClientConfig: cc, Rules: []admissionregistrationv1.RuleWithOperations{rule},
				FailurePolicy: ptr.To(admissionregistrationv1.Fail), MatchPolicy: match,
				SideEffects: ptr.To(admissionregistrationv1.SideEffectClassNone), AdmissionReviewVersions: []string{"v1"},
				TimeoutSeconds: ptr.To[int32](timeoutSeconds), ReinvocationPolicy: ptr.To(admissionregistrationv1.NeverReinvocationPolicy),
			})
			continue
		}
		validating.Webhooks = append(validating.Webhooks, admissionregistrationv1.ValidatingWebhook{
			Name: name, ClientConfig: cc, Rules: []admissionregistrationv1.RuleWithOperations{rule},
			FailurePolicy: ptr.To(admissionregistrationv1.Fail), MatchPolicy: match, MatchConditions: e.MatchConditions, ObjectSelector: e.ObjectSelector,
			SideEffects: ptr.To(admissionregistrationv1.SideEffectClassNone), AdmissionReviewVersions: []string{"v1"},
			TimeoutSeconds: ptr.To[int32](timeoutSeconds),
		})
	}
	return mutating, validating
}

// Conversion is the conversion of a CRD served by the webhook at baseURL.
func Conversion(baseURL string, caBundle []byte) *apiextensionsv1.CustomResourceConversion {
	return &apiextensionsv1.CustomResourceConversion{
		Strategy: apiextensionsv1.WebhookConverter,
		Webhook: &apiextensionsv1.WebhookConversion{
			ClientConfig:             &apiextensionsv1.WebhookClientConfig{URL: ptr.To(baseURL + ConvertPath), CABundle: caBundle},
			ConversionReviewVersions: []string{"v1"},
		},
	}
}

// SetConversion points the CRD's conversion at the webhook when it is one
// of ConvertedCRDs; it reports whether it did.
func SetConversion(crd *apiextensionsv1.CustomResourceDefinition, baseURL string, caBundle []byte) bool {
	for _, name := range ConvertedCRDs {
		if crd.Name == name {
			crd.Spec.Conversion = Conversion(baseURL, caBundle)
			return true
		}
	}
	return false
}

// Register creates or updates the two webhook configurations. It is
// idempotent: run it at every start, with the webhook's current address
// and CA.
func Register(ctx context.Context, c client.Client, scheme *runtime.Scheme, baseURL string, caBundle []byte) error {
	mutating, validating := Configurations(scheme, baseURL, caBundle)
	for _, want := range []client.Object{mutating, validating} {
		got := want.DeepCopyObject().(client.Object)
		err := c.Get(ctx, client.ObjectKeyFromObject(want), got)
		switch {
		case apierrors.IsNotFound(err):
			if err := c.Create(ctx, want); err != nil {
				return fmt.Errorf("creating %T %s: %w", want, want.GetName(), err)
			}
		case err != nil:
			return fmt.Errorf("reading %T %s: %w", want, want.GetName(), err)
		default:
			want.SetResourceVersion(got.GetResourceVersion())
			if err := c.Update(ctx, want); err != nil {
				return fmt.Errorf("updating %T %s: %w", want, want.GetName(), err)
			}
		}
	}
	return nil
}
