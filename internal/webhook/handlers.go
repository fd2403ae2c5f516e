// Package webhook is karmada-webhook's admission: validation of every
// Karmada kind with messages naming the field, the value and what is
// allowed; Karmada's defaulting; and the tenancy boundary a namespaced
// policy or binding cannot cross. It also serves the conversion of
// ResourceBinding and ClusterResourceBinding between v1alpha1 and v1alpha2.
package webhook

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"

	admissionv1 "k8s.io/api/admission/v1"
	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	authenticationv1 "k8s.io/api/authentication/v1"
	authorizationv1 "k8s.io/api/authorization/v1"
	certificatesv1 "k8s.io/api/certificates/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/validation/field"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/webhook/admission"

	clusterv1alpha1 "github.com/karmada-go/karmada/api/cluster/v1alpha1"
	configv1alpha1 "github.com/karmada-go/karmada/api/config/v1alpha1"
	policyv1alpha1 "github.com/karmada-go/karmada/api/policy/v1alpha1"
	workv1alpha1 "github.com/karmada-go/karmada/api/work/v1alpha1"
	workv1alpha2 "github.com/karmada-go/karmada/api/work/v1alpha2"
	"github.com/karmada-go/karmada/internal/clusters/clustervalidation"
)

// Endpoint is one admission path of the server and the resource it admits.
type Endpoint struct {
	// Path on the webhook server, as Karmada names it.
	Path string
	// Mutating or validating.
	Mutating bool
	// Resource, its version and whether it is namespaced, for the rule
	// registered with the API server.
	GVR        schema.GroupVersionResource
	Kind       string
	Namespaced bool
	// Operations admitted: CREATE and UPDATE unless set.
	Operations []admissionv1.Operation
	// Subresource, when set, is admitted instead of the resource itself.
	Subresource string
	// MatchConditions narrow the requests sent (CEL, as the API server
	// evaluates them).
	MatchConditions []admissionregistrationv1.MatchCondition

	handler admission.Handler
}

// Options tune the checks of the endpoints.
type Options struct {
	// Clusters, when set, is read by the checks that need other objects
	// (nil: those checks are off): a Cluster may not take the spec.id
	// another Cluster has, the same member under a second name; a
	// ResourceInterpreterCustomization may not define an operation another
	// defines for the same kind.
	Clusters client.Reader
	// AllowNoExecuteTaintPolicy admits ClusterTaintPolicies with NoExecute
	// taints (--allow-no-execute-taint-policy).
	AllowNoExecuteTaintPolicy bool
	// Authorizer, when set, asks the API server whether a user may do
	// something (a SubjectAccessReview): conflictResolution Overwrite needs
	// the author's adopt right. Without it such policies are refused.
	Authorizer Authorizer
	// DefaultNotReadyTolerationSeconds and
	// DefaultUnreachableTolerationSeconds, when set, are the seconds of the
	// NoExecute tolerations of the not-ready and unreachable taints given to
	// policies that have none.
	DefaultNotReadyTolerationSeconds    *int64
	DefaultUnreachableTolerationSeconds *int64
	// Quotas, when set, enforces FederatedResourceQuotas' overall limits
	// on the placements of ResourceBindings (FederatedQuotaEnforcement):
	// it records in their status what an admitted placement adds.
	// QuotaReader lists them (an informer's cache; Quotas when nil): a
	// stale copy only costs a conflict and a fresh read.
	Quotas      client.Client
	QuotaReader client.Reader
}

// Authorizer answers whether a user may do something.
type Authorizer interface {
	Allowed(ctx context.Context, user authenticationv1.UserInfo, attrs authorizationv1.ResourceAttributes) (bool, error)
}

// Endpoints are every admission path, mutating ones first, with the
// default options.
func Endpoints(scheme *runtime.Scheme) []Endpoint { return EndpointsWith(scheme, Options{}) }

// EndpointsWith are Endpoints with these options.
func EndpointsWith(scheme *runtime.Scheme, o Options) []Endpoint {
	clusters := o.Clusters
	dec := admission.NewDecoder(scheme)
	pp := policyv1alpha1.SchemeGroupVersion.WithResource
	cl := clusterv1alpha1.SchemeGroupVersion.WithResource
	w1 := workv1alpha1.SchemeGroupVersion.WithResource
	w2 := workv1alpha2.SchemeGroupVersion.WithResource
	cfg := configv1alpha1.SchemeGroupVersion.WithResource
	create := []admissionv1.Operation{admissionv1.Create}
	return []Endpoint{
		{Path: "/mutate-propagationpolicy", Mutating: true, GVR: pp("propagationpolicies"), Kind: "PropagationPolicy", Namespaced: true,
			handler: &mutating[*policyv1alpha1.PropagationPolicy]{dec: dec, new: func() *policyv1alpha1.PropagationPolicy { return &policyv1alpha1.PropagationPolicy{} },
				mutate: func(p *policyv1alpha1.PropagationPolicy, op admissionv1.Operation, ns string) {
					if p.Namespace == "" {
						p.Namespace = ns
					}
					defaultPropagation(&p.Spec, p.Namespace, o)
					if op == admissionv1.Create {
						p.Labels = ensureLabel(p.Labels, policyv1alpha1.PropagationPolicyPermanentIDLabel)
					}
				}}},
		{Path: "/mutate-clusterpropagationpolicy", Mutating: true, GVR: pp("clusterpropagationpolicies"), Kind: "ClusterPropagationPolicy",
			handler: &mutating[*policyv1alpha1.ClusterPropagationPolicy]{dec: dec, new: func() *policyv1alpha1.ClusterPropagationPolicy { return &policyv1alpha1.ClusterPropagationPolicy{} },
				mutate: func(p *policyv1alpha1.ClusterPropagationPolicy, op admissionv1.Operation, _ string) {
					defaultPropagation(&p.Spec, "", o)
					if op == admissionv1.Create {
						p.Labels = ensureLabel(p.Labels, policyv1alpha1.ClusterPropagationPolicyPermanentIDLabel)
					}
				}}},
		{Path: "/mutate-overridepolicy", Mutating: true, GVR: pp("overridepolicies"), Kind: "OverridePolicy", Namespaced: true,
			handler: &mutating[*policyv1alpha1.OverridePolicy]{dec: dec, new: func() *policyv1alpha1.OverridePolicy { return &policyv1alpha1.OverridePolicy{} },
				mutate: func(p *policyv1alpha1.OverridePolicy, _ admissionv1.Operation, ns string) {
					if p.Namespace == "" {
						p.Namespace = ns
					}
					defaultOverride(&p.Spec, p.Namespace)
				}}},
		{Path: "/mutate-resourcebinding", Mutating: true, GVR: w2("resourcebindings"), Kind: "ResourceBinding", Namespaced: true, Operations: create,
			handler: &mutating[*workv1alpha2.ResourceBinding]{dec: dec, new: func() *workv1alpha2.ResourceBinding { return &workv1alpha2.ResourceBinding{} },
				mutate: func(b *workv1alpha2.ResourceBinding, _ admissionv1.Operation, _ string) {
					b.Labels = ensureLabel(b.Labels, workv1alpha2.ResourceBindingPermanentIDLabel)
				}}},
		{Path: "/mutate-clusterresourcebinding", Mutating: true, GVR: w2("clusterresourcebindings"), Kind: "ClusterResourceBinding", Operations: create,
			handler: &mutating[*workv1alpha2.ClusterResourceBinding]{dec: dec, new: func() *workv1alpha2.ClusterResourceBinding { return &workv1alpha2.ClusterResourceBinding{} },
				mutate: func(b *workv1alpha2.ClusterResourceBinding, _ admissionv1.Operation, _ string) {
					b.Labels = ensureLabel(b.Labels, workv1alpha2.ClusterResourceBindingPermanentIDLabel)
				}}},

		{Path: "/validate-propagationpolicy", GVR: pp("propagationpolicies"), Kind: "PropagationPolicy", Namespaced: true,
			handler: &validating[*policyv1alpha1.PropagationPolicy]{dec: dec, new: func() *policyv1alpha1.PropagationPolicy { return &policyv1alpha1.PropagationPolicy{} },
				validate: func(p, old *policyv1alpha1.PropagationPolicy) field.ErrorList {
					if old == nil {
						return append(validatePolicyMeta(&p.ObjectMeta, nil, policyv1alpha1.PropagationPolicyPermanentIDLabel), validatePropagation(&p.Spec, p.Namespace, nil)...)
					}
					errs := validatePolicyMeta(&p.ObjectMeta, &old.ObjectMeta, policyv1alpha1.PropagationPolicyPermanentIDLabel)
					if equality.Semantic.DeepEqual(p.Spec, old.Spec) {
						return errs
					}
					return append(errs, validatePropagation(&p.Spec, p.Namespace, &old.Spec)...)
				},
				authorize: func(ctx context.Context, user authenticationv1.UserInfo, p, old *policyv1alpha1.PropagationPolicy) (field.ErrorList, error) {
					var before *policyv1alpha1.PropagationSpec
					if old != nil {
						before = &old.Spec
					}
					return o.policyAdoption(ctx, user, "propagationpolicies", p.Namespace, &p.Spec, before)
				}}},
		{Path: "/validate-clusterpropagationpolicy", GVR: pp("clusterpropagationpolicies"), Kind: "ClusterPropagationPolicy",
			handler: &validating[*policyv1alpha1.ClusterPropagationPolicy]{dec: dec, new: func() *policyv1alpha1.ClusterPropagationPolicy { return &policyv1alpha1.ClusterPropagationPolicy{} },
				validate: func(p, old *policyv1alpha1.ClusterPropagationPolicy) field.ErrorList {
					if old == nil {
						return append(validatePolicyMeta(&p.ObjectMeta, nil, policyv1alpha1.ClusterPropagationPolicyPermanentIDLabel), validatePropagation(&p.Spec, "", nil)...)
					}
					errs := validatePolicyMeta(&p.ObjectMeta, &old.ObjectMeta, policyv1alpha1.ClusterPropagationPolicyPermanentIDLabel)
					if equality.Semantic.DeepEqual(p.Spec, old.Spec) {
						return errs
					}
					return append(errs, validatePropagation(&p.Spec, "", &old.Spec)...)
				},
				authorize: func(ctx context.Context, user authenticationv1.UserInfo, p, old *policyv1alpha1.ClusterPropagationPolicy) (field.ErrorList, error) {
					var before *policyv1alpha1.PropagationSpec
					if old != nil {
						before = &old.Spec
					}
					return o.policyAdoption(ctx, user, "clusterpropagationpolicies", "", &p.Spec, before)
				}}},
		{Path: "/validate-federatedresourcequota", GVR: pp("federatedresourcequotas"), Kind: "FederatedResourceQuota", Namespaced: true,
			handler: &validating[*policyv1alpha1.FederatedResourceQuota]{dec: dec, new: func() *policyv1alpha1.FederatedResourceQuota { return &policyv1alpha1.FederatedResourceQuota{} },
				validate: func(q, _ *policyv1alpha1.FederatedResourceQuota) field.ErrorList {
					return validateFederatedResourceQuota(q)
				}}},
		{Path: "/validate-overridepolicy", GVR: pp("overridepolicies"), Kind: "OverridePolicy", Namespaced: true,
			handler: &validating[*policyv1alpha1.OverridePolicy]{dec: dec, new: func() *policyv1alpha1.OverridePolicy { return &policyv1alpha1.OverridePolicy{} },
				validate: func(p, old *policyv1alpha1.OverridePolicy) field.ErrorList {
					if old == nil {
						return append(validatePolicyMeta(&p.ObjectMeta, nil, ""), validateOverride(&p.Spec, p.Namespace)...)
					}
					errs := validatePolicyMeta(&p.ObjectMeta, &old.ObjectMeta, "")
					if equality.Semantic.DeepEqual(p.Spec, old.Spec) {
						return errs
					}
					return append(errs, validateOverride(&p.Spec, p.Namespace)...)
				}}},
		{Path: "/validate-clusteroverridepolicy", GVR: pp("clusteroverridepolicies"), Kind: "ClusterOverridePolicy",
			handler: &validating[*policyv1alpha1.ClusterOverridePolicy]{dec: dec, new: func() *policyv1alpha1.ClusterOverridePolicy { return &policyv1alpha1.ClusterOverridePolicy{} },
				validate: func(p, old *policyv1alpha1.ClusterOverridePolicy) field.ErrorList {
					if old == nil {
						return append(validatePolicyMeta(&p.ObjectMeta, nil, ""), validateOverride(&p.Spec, "")...)
					}
					errs := validatePolicyMeta(&p.ObjectMeta, &old.ObjectMeta, "")
					if equality.Semantic.DeepEqual(p.Spec, old.Spec) {
						return errs
					}
					return append(errs, validateOverride(&p.Spec, "")...)
				}}},
		{Path: "/validate-resourcebinding", GVR: w2("resourcebindings"), Kind: "ResourceBinding", Namespaced: true,
			handler: &validating[*workv1alpha2.ResourceBinding]{dec: dec, new: func() *workv1alpha2.ResourceBinding { return &workv1alpha2.ResourceBinding{} },
				validate: func(b, old *workv1alpha2.ResourceBinding) field.ErrorList {
					if old == nil {
						return validateBinding(&b.ObjectMeta, &b.Spec, b.Namespace, nil, nil, workv1alpha2.ResourceBindingPermanentIDLabel)
					}
					return validateBinding(&b.ObjectMeta, &b.Spec, b.Namespace, &old.ObjectMeta, &old.Spec, workv1alpha2.ResourceBindingPermanentIDLabel)
				},
				authorize: func(ctx context.Context, user authenticationv1.UserInfo, b, old *workv1alpha2.ResourceBinding) (field.ErrorList, error) {
					var before *workv1alpha2.ResourceBindingSpec
					if old != nil {
						before = &old.Spec
					}
					errs, err := o.bindingAdoption(ctx, user, "resourcebindings", b.Namespace, &b.Spec, before)
					if err != nil || len(errs) > 0 {
						return errs, err
					}
					return o.quotaCheck(ctx, b.Namespace, &b.Spec, before)
				}}},
		{Path: "/validate-clusterresourcebinding", GVR: w2("clusterresourcebindings"), Kind: "ClusterResourceBinding",
			handler: &validating[*workv1alpha2.ClusterResourceBinding]{dec: dec, new: func() *workv1alpha2.ClusterResourceBinding { return &workv1alpha2.ClusterResourceBinding{} },
				validate: func(b, old *workv1alpha2.ClusterResourceBinding) field.ErrorList {
					if old == nil {
						return validateBinding(&b.ObjectMeta, &b.Spec, "", nil, nil, workv1alpha2.ClusterResourceBindingPermanentIDLabel)
					}
					return validateBinding(&b.ObjectMeta, &b.Spec, "", &old.ObjectMeta, &old.Spec, workv1alpha2.ClusterResourceBindingPermanentIDLabel)
				},
				authorize: func(ctx context.Context, user authenticationv1.UserInfo, b, old *workv1alpha2.ClusterResourceBinding) (field.ErrorList, error) {
					var before *workv1alpha2.ResourceBindingSpec
					if old != nil {
						before = &old.Spec
					}
					return o.bindingAdoption(ctx, user, "clusterresourcebindings", "", &b.Spec, before)
				}}},
		{Path: "/validate-work", GVR: w1("works"), Kind: "Work", Namespaced: true,
			handler: &validating[*workv1alpha1.Work]{dec: dec, new: func() *workv1alpha1.Work { return &workv1alpha1.Work{} },
				validate: func(w, old *workv1alpha1.Work) field.ErrorList {
					if old != nil && equality.Semantic.DeepEqual(w.Spec, old.Spec) {
						return nil
					}
					return validateWork(w)
				}}},
		{Path: "/validate-cluster", GVR: cl("clusters"), Kind: "Cluster",
			handler: &validating[*clusterv1alpha1.Cluster]{dec: dec, new: func() *clusterv1alpha1.Cluster { return &clusterv1alpha1.Cluster{} },
				validate: func(c, old *clusterv1alpha1.Cluster) field.ErrorList {
					if old != nil && equality.Semantic.DeepEqual(c.Spec, old.Spec) {
						return nil
					}
					errs := clustervalidation.Validate(c, old)
					if clusters != nil && c.Spec.ID != "" && (old == nil || old.Spec.ID != c.Spec.ID) {
						errs = append(errs, uniqueClusterID(clusters, c)...)
					}
					return errs
				},
				authorize: func(_ context.Context, user authenticationv1.UserInfo, c, old *clusterv1alpha1.Cluster) (field.ErrorList, error) {
					return agentClusterChange(user, c, old), nil
				}}},
		{Path: "/validate-resourceinterpretercustomization", GVR: cfg("resourceinterpretercustomizations"), Kind: "ResourceInterpreterCustomization",
			handler: &validating[*configv1alpha1.ResourceInterpreterCustomization]{dec: dec, new: func() *configv1alpha1.ResourceInterpreterCustomization {
				return &configv1alpha1.ResourceInterpreterCustomization{}
			},
				validate: func(c, old *configv1alpha1.ResourceInterpreterCustomization) field.ErrorList {
					if old != nil && equality.Semantic.DeepEqual(c.Spec, old.Spec) {
						return nil
					}
					return validateCustomization(c, clusters)
				}}},
		{Path: "/validate-resourceinterpreterwebhookconfiguration", GVR: cfg("resourceinterpreterwebhookconfigurations"), Kind: "ResourceInterpreterWebhookConfiguration",
			handler: &validating[*configv1alpha1.ResourceInterpreterWebhookConfiguration]{dec: dec, new: func() *configv1alpha1.ResourceInterpreterWebhookConfiguration {
				return &configv1alpha1.ResourceInterpreterWebhookConfiguration{}
			},
				validate: func(c, _ *configv1alpha1.ResourceInterpreterWebhookConfiguration) field.ErrorList {
					return validateInterpreterWebhooks(c)
				}}},
		{Path: "/validate-clustertaintpolicy", GVR: pp("clustertaintpolicies"), Kind: "ClusterTaintPolicy",
			handler: &validating[*policyv1alpha1.ClusterTaintPolicy]{dec: dec, new: func() *policyv1alpha1.ClusterTaintPolicy { return &policyv1alpha1.ClusterTaintPolicy{} },
				validate: func(p, _ *policyv1alpha1.ClusterTaintPolicy) field.ErrorList {
					return validateClusterTaintPolicy(p, o.AllowNoExecuteTaintPolicy)
				}}},
		// Ours, not Karmada's: the controller manager's approvals only.
		{Path: CSRApprovalPath, GVR: certificatesv1.SchemeGroupVersion.WithResource("certificatesigningrequests"), Subresource: "approval",
			Kind: "CertificateSigningRequest", Operations: []admissionv1.Operation{admissionv1.Update},
			MatchConditions: []admissionregistrationv1.MatchCondition{{Name: "karmada-controller-manager", Expression: "request.userInfo.username == '" + ControllerManagerUser + "'"}},
			handler: &validating[*certificatesv1.CertificateSigningRequest]{dec: dec, new: func() *certificatesv1.CertificateSigningRequest { return &certificatesv1.CertificateSigningRequest{} },
				validate: func(_, _ *certificatesv1.CertificateSigningRequest) field.ErrorList { return nil },
				authorize: func(ctx context.Context, user authenticationv1.UserInfo, csr, old *certificatesv1.CertificateSigningRequest) (field.ErrorList, error) {
					return checkCSRApproval(ctx, o.Authorizer, user, csr, old)
				}}},
	}
}

// Handler is the endpoint's admission handler.
func (e Endpoint) Handler() admission.Handler { return e.handler }

// mutating defaults an object of one kind and answers with the JSON patch.
type mutating[T client.Object] struct {
	dec    admission.Decoder
	new    func() T
	mutate func(obj T, op admissionv1.Operation, namespace string)
}

func (m *mutating[T]) Handle(_ context.Context, req admission.Request) admission.Response {
	if req.Operation != admissionv1.Create && req.Operation != admissionv1.Update {
		return admission.Allowed("")
	}
	obj := m.new()
	if err := m.dec.DecodeRaw(req.Object, obj); err != nil {
		return admission.Errored(http.StatusBadRequest, err)
	}
	m.mutate(obj, req.Operation, req.Namespace)
	data, err := json.Marshal(obj)
	if err != nil {
		return admission.Errored(http.StatusInternalServerError, err)
	}
	return admission.PatchResponseFromRaw(req.Object.Raw, data)
}

// validating checks an object of one kind (and its old version on update)
// and denies with the API server's Invalid status: every cause names a
// field path, the value and what is allowed.
type validating[T client.Object] struct {
	dec admission.Decoder
	new func() T
	// validate gets old nil on create.
	validate func(obj, old T) field.ErrorList
	// authorize, when set, checks what depends on who asks (old nil on
	// create); an error is the check failing, not a denial.
	authorize func(ctx context.Context, user authenticationv1.UserInfo, obj, old T) (field.ErrorList, error)
}

func (v *validating[T]) Handle(ctx context.Context, req admission.Request) admission.Response {
	if req.Operation != admissionv1.Create && req.Operation != admissionv1.Update {
		return admission.Allowed("")
	}
	obj := v.new()
	if err := v.dec.DecodeRaw(req.Object, obj); err != nil {
		return admission.Errored(http.StatusBadRequest, err)
	}
	var old T
	if req.Operation == admissionv1.Update {
		old = v.new()
		if err := v.dec.DecodeRaw(req.OldObject, old); err != nil {
			return admission.Errored(http.StatusBadRequest, err)
		}
	}
	errs := v.validate(obj, old)
	if v.authorize != nil {
		more, err := v.authorize(ctx, req.UserInfo, obj, old)
		var denied *denial
		if errors.As(err, &denied) {
			return admission.Denied(denied.message)
		}
		if err != nil {
			return admission.Errored(http.StatusInternalServerError, err)
		}
		errs = append(errs, more...)
	}
	if len(errs) == 0 {
		return admission.Allowed("")
	}
	gk := schema.GroupKind{Group: req.Kind.Group, Kind: req.Kind.Kind}
	status := apierrors.NewInvalid(gk, obj.GetName(), errs).Status()
	return admission.Response{AdmissionResponse: admissionv1.AdmissionResponse{Allowed: false, Result: &status}}
}

// denial is a refusal answered with its message alone (Forbidden), not as
// field errors: Karmada's words where tools match them (a
// FederatedResourceQuota exceeded).
type denial struct{ message string }

func (d *denial) Error() string { return d.message }
