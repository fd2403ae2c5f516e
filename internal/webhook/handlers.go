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
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
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
	// Name, when set, is the registration's name (otherwise the kind's:
	// kind.karmada.io).
	Name string
	// AllScopes registers the rule for namespaced and cluster-scoped
	// resources alike (GVR wildcards: every resource).
	AllScopes bool
	// ObjectSelector narrows the requests sent to objects with these
	// labels.
	ObjectSelector *metav1.LabelSelector

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
	// ScaleTargets, when set, says which kinds serve a scale subresource:
	// a FederatedHPA or CronFederatedHPA of another kind is refused.
	ScaleTargets ScaleTargets
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
	k := kindEnv{dec: admission.NewDecoder(scheme), o: o}
	// The mutating endpoints first, then the validating ones, each in the
	// registry's order (the order of the webhook configurations' entries).
	var mutating, validating []Endpoint
	for _, kind := range admittedKinds {
		for _, e := range kind(k) {
			if e.Mutating {
				mutating = append(mutating, e)
			} else {
				validating = append(validating, e)
			}
		}
	}
	return append(mutating, validating...)
}

// The resources the endpoints admit, by group.
var (
	policyResource  = policyv1alpha1.SchemeGroupVersion.WithResource
	clusterResource = clusterv1alpha1.SchemeGroupVersion.WithResource
	workResource    = workv1alpha1.SchemeGroupVersion.WithResource
	bindingResource = workv1alpha2.SchemeGroupVersion.WithResource
	configResource  = configv1alpha1.SchemeGroupVersion.WithResource
	onCreate        = []admissionv1.Operation{admissionv1.Create}
)

// kindEnv is what each kind's endpoints are built with.
type kindEnv struct {
	dec admission.Decoder
	o   Options
}

// admittedKinds is the registry of admission endpoints: one function per
// kind (or pair of kinds), each in that kind's file.
var admittedKinds = []func(kindEnv) []Endpoint{
	propagationEndpoints,
	quotaEndpoints,
	overrideEndpoints,
	bindingEndpoints,
	workEndpoints,
	clusterEndpoints,
	interpreterEndpoints,
	taintPolicyEndpoints,
	csrApprovalEndpoints,
	serviceEndpoints,
	autoscalingEndpoints,
	deletionProtectionEndpoints,
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
