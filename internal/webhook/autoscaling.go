package webhook

import (
	"context"
	"fmt"
	"strings"

	admissionv1 "k8s.io/api/admission/v1"
	authenticationv1 "k8s.io/api/authentication/v1"
	authorizationv1 "k8s.io/api/authorization/v1"
	autoscalingv2 "k8s.io/api/autoscaling/v2"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/validation/path"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/sets"
	"k8s.io/apimachinery/pkg/util/validation/field"
	"k8s.io/utils/ptr"

	autoscalingv1alpha1 "github.com/karmada-go/karmada/api/autoscaling/v1alpha1"
	"github.com/karmada-go/karmada/internal/autoscaling/hpa"
	"github.com/karmada-go/karmada/internal/autoscaling/schedule"
)

var autoscalingResource = autoscalingv1alpha1.SchemeGroupVersion.WithResource

// Bounds of an HPA's behaviour, as Kubernetes sets them.
const (
	maxPeriodSeconds              = 1800
	maxStabilizationWindowSeconds = 3600
)

var (
	metricSourceTypes = []string{string(autoscalingv2.ContainerResourceMetricSourceType), string(autoscalingv2.ExternalMetricSourceType),
		string(autoscalingv2.ObjectMetricSourceType), string(autoscalingv2.PodsMetricSourceType), string(autoscalingv2.ResourceMetricSourceType)}
	metricTargetTypes = []string{string(autoscalingv2.AverageValueMetricType), string(autoscalingv2.UtilizationMetricType), string(autoscalingv2.ValueMetricType)}
	selectPolicies    = []string{string(autoscalingv2.DisabledPolicySelect), string(autoscalingv2.MaxChangePolicySelect), string(autoscalingv2.MinChangePolicySelect)}
	policyTypes       = []string{string(autoscalingv2.PercentScalingPolicy), string(autoscalingv2.PodsScalingPolicy)}
)

// ScaleTargets says whether a kind can be scaled: it serves a scale
// subresource; and its resource name ("" for a kind not served).
type ScaleTargets interface {
	Scalable(ctx context.Context, apiVersion, kind string) (resource string, scalable bool, err error)
}

// defaultFederatedHPA applies autoscaling/v2's defaults, as Karmada's
// webhook does: minReplicas 1, cpu at 80 % of the requests without
// metrics, and a behaviour given is completed (scale up: no window, the
// larger of 4 pods and 100 % per 15 s; scale down: a 300 s window, 100 %
// per 15 s; selectPolicy Max). Without a behaviour it stays unset (the
// controller's no-behaviour rules apply).
func defaultFederatedHPA(f *autoscalingv1alpha1.FederatedHPA) {
	if f.Spec.MinReplicas == nil {
		f.Spec.MinReplicas = ptr.To[int32](1)
	}
	if len(f.Spec.Metrics) == 0 {
		f.Spec.Metrics = []autoscalingv2.MetricSpec{{Type: autoscalingv2.ResourceMetricSourceType, Resource: &autoscalingv2.ResourceMetricSource{
			Name: corev1.ResourceCPU, Target: autoscalingv2.MetricTarget{Type: autoscalingv2.UtilizationMetricType, AverageUtilization: ptr.To[int32](80)}}}}
	}
	if f.Spec.Behavior != nil {
		f.Spec.Behavior = hpa.DefaultBehavior(f.Spec.Behavior)
	}
}

// autoscalingEndpoints admit FederatedHPAs and CronFederatedHPAs.
func autoscalingEndpoints(k kindEnv) []Endpoint {
	dec := k.dec
	return []Endpoint{
		{Path: "/mutate-federatedhpa", Mutating: true, GVR: autoscalingResource("federatedhpas"), Kind: "FederatedHPA", Namespaced: true,
			handler: &mutating[*autoscalingv1alpha1.FederatedHPA]{dec: dec, new: func() *autoscalingv1alpha1.FederatedHPA { return &autoscalingv1alpha1.FederatedHPA{} },
				mutate: func(f *autoscalingv1alpha1.FederatedHPA, _ admissionv1.Operation, _ string) { defaultFederatedHPA(f) }}},
		{Path: "/validate-federatedhpa", GVR: autoscalingResource("federatedhpas"), Kind: "FederatedHPA", Namespaced: true,
			handler: &validating[*autoscalingv1alpha1.FederatedHPA]{dec: dec, new: func() *autoscalingv1alpha1.FederatedHPA { return &autoscalingv1alpha1.FederatedHPA{} },
				validate: func(f, _ *autoscalingv1alpha1.FederatedHPA) field.ErrorList { return validateFederatedHPA(f) },
				authorize: func(ctx context.Context, user authenticationv1.UserInfo, f, old *autoscalingv1alpha1.FederatedHPA) (field.ErrorList, error) {
					var was *autoscalingv2.CrossVersionObjectReference
					if old != nil {
						was = &old.Spec.ScaleTargetRef
					}
					return k.o.mayScale(ctx, user, f.Namespace, f.Spec.ScaleTargetRef, was)
				}}},
		{Path: "/validate-cronfederatedhpa", GVR: autoscalingResource("cronfederatedhpas"), Kind: "CronFederatedHPA", Namespaced: true,
			handler: &validating[*autoscalingv1alpha1.CronFederatedHPA]{dec: dec, new: func() *autoscalingv1alpha1.CronFederatedHPA { return &autoscalingv1alpha1.CronFederatedHPA{} },
				validate: func(c, _ *autoscalingv1alpha1.CronFederatedHPA) field.ErrorList { return validateCronFederatedHPA(c) },
				authorize: func(ctx context.Context, user authenticationv1.UserInfo, c, old *autoscalingv1alpha1.CronFederatedHPA) (field.ErrorList, error) {
					var was *autoscalingv2.CrossVersionObjectReference
					if old != nil {
						was = &old.Spec.ScaleTargetRef
					}
					return k.o.mayScale(ctx, user, c.Namespace, c.Spec.ScaleTargetRef, was)
				}}},
	}
}

// mayScale refuses an autoscaler whose target's kind has no scale
// subresource, and one whose author may not do what it will have the
// controller manager do: update the target's scale (or, for a
// CronFederatedHPA of a FederatedHPA, the FederatedHPA) in its namespace.
// Without that check a user allowed only to create autoscalers would scale
// any workload of the namespace with the controller manager's rights
// (Karmada does not check; only authors lacking the right they would need
// to scale by hand are refused). An update is checked only when it changes
// the target. A kind not served yet is left to the controllers; without
// ScaleTargets and an Authorizer (no --kubeconfig) nothing is checked.
func (o Options) mayScale(ctx context.Context, user authenticationv1.UserInfo, namespace string, ref autoscalingv2.CrossVersionObjectReference, old *autoscalingv2.CrossVersionObjectReference) (field.ErrorList, error) {
	if o.ScaleTargets == nil || ref.Kind == "" || (old != nil && *old == ref) {
		return nil, nil
	}
	path := field.NewPath("spec", "scaleTargetRef")
	gv, err := schema.ParseGroupVersion(ref.APIVersion)
	if err != nil {
		return nil, nil // validation reports it
	}
	attrs := authorizationv1.ResourceAttributes{Group: gv.Group, Version: gv.Version, Namespace: namespace, Name: ref.Name, Verb: "update"}
	if targetsFederatedHPA(ref) {
		attrs.Resource = "federatedhpas"
	} else {
		resource, ok, err := o.ScaleTargets.Scalable(ctx, ref.APIVersion, ref.Kind)
		if err != nil {
			return nil, err
		}
		if !ok {
			return field.ErrorList{field.Invalid(path.Child("kind"), ref.Kind,
				fmt.Sprintf("%s %s has no scale subresource: only kinds that serve one (Deployments, StatefulSets, ...) can be scaled", ref.APIVersion, ref.Kind))}, nil
		}
		if resource == "" {
			return nil, nil
		}
		attrs.Resource, attrs.Subresource = resource, "scale"
	}
	if o.Authorizer == nil {
		return nil, nil
	}
	allowed, err := o.Authorizer.Allowed(ctx, user, attrs)
	if err != nil {
		return nil, fmt.Errorf("asking whether %s may scale %s: %w", user.Username, ref.Name, err)
	}
	if allowed {
		return nil, nil
	}
	what := attrs.Resource
	if attrs.Subresource != "" {
		what += "/" + attrs.Subresource
	}
	if gv.Group != "" {
		what += "." + gv.Group
	}
	return field.ErrorList{field.Forbidden(path, fmt.Sprintf("%s may not update %s %q in namespace %s: the autoscaler would have the controller manager do it, so its author needs that right", user.Username, what, ref.Name, namespace))}, nil
}

// targetsFederatedHPA reports whether a CronFederatedHPA acts on a
// FederatedHPA (its bounds) rather than on a workload (its replicas).
func targetsFederatedHPA(ref autoscalingv2.CrossVersionObjectReference) bool {
	return ref.APIVersion == autoscalingv1alpha1.SchemeGroupVersion.String()
}

// validateFederatedHPA checks a FederatedHPA as Kubernetes checks an HPA:
// the target named, bounds in order (minReplicas at least 1: no scale to
// zero), each metric one complete source, behaviours within bounds.
func validateFederatedHPA(f *autoscalingv1alpha1.FederatedHPA) field.ErrorList {
	spec := field.NewPath("spec")
	errs := validateScaleTargetRef(f.Spec.ScaleTargetRef, spec.Child("scaleTargetRef"))
	if f.Spec.MinReplicas != nil && *f.Spec.MinReplicas < 1 {
		errs = append(errs, field.Invalid(spec.Child("minReplicas"), *f.Spec.MinReplicas, "must be greater than or equal to 1"))
	}
	if f.Spec.MaxReplicas < 1 {
		errs = append(errs, field.Invalid(spec.Child("maxReplicas"), f.Spec.MaxReplicas, "must be greater than 0"))
	}
	if f.Spec.MinReplicas != nil && f.Spec.MaxReplicas < *f.Spec.MinReplicas {
		errs = append(errs, field.Invalid(spec.Child("maxReplicas"), f.Spec.MaxReplicas, "must be greater than or equal to `minReplicas`"))
	}
	for i, m := range f.Spec.Metrics {
		errs = append(errs, validateMetric(m, spec.Child("metrics").Index(i))...)
	}
	if b := f.Spec.Behavior; b != nil {
		errs = append(errs, validateScalingRules(b.ScaleUp, spec.Child("behavior", "scaleUp"))...)
		errs = append(errs, validateScalingRules(b.ScaleDown, spec.Child("behavior", "scaleDown"))...)
	}
	return errs
}

func validateScaleTargetRef(ref autoscalingv2.CrossVersionObjectReference, p *field.Path) field.ErrorList {
	var errs field.ErrorList
	if ref.Kind == "" {
		errs = append(errs, field.Required(p.Child("kind"), ""))
	}
	for _, msg := range path.IsValidPathSegmentName(ref.Kind) {
		errs = append(errs, field.Invalid(p.Child("kind"), ref.Kind, msg))
	}
	if ref.Name == "" {
		errs = append(errs, field.Required(p.Child("name"), ""))
	}
	for _, msg := range path.IsValidPathSegmentName(ref.Name) {
		errs = append(errs, field.Invalid(p.Child("name"), ref.Name, msg))
	}
	return errs
}

// validateMetric checks one metric: a known type whose source, and only
// that one, is set, with a valid target.
func validateMetric(m autoscalingv2.MetricSpec, p *field.Path) field.ErrorList {
	var errs field.ErrorList
	set := map[autoscalingv2.MetricSourceType]bool{
		autoscalingv2.ObjectMetricSourceType: m.Object != nil, autoscalingv2.PodsMetricSourceType: m.Pods != nil,
		autoscalingv2.ResourceMetricSourceType: m.Resource != nil, autoscalingv2.ContainerResourceMetricSourceType: m.ContainerResource != nil,
		autoscalingv2.ExternalMetricSourceType: m.External != nil,
	}
	if m.Type == "" {
		return append(errs, field.Required(p.Child("type"), "must specify a metric source type"))
	}
	present, known := set[m.Type]
	if !known {
		return append(errs, field.NotSupported(p.Child("type"), m.Type, metricSourceTypes))
	}
	if !present {
		errs = append(errs, field.Required(p.Child(sourceField(m.Type)), "must populate information for the given metric source"))
	}
	for t, on := range set {
		if on && t != m.Type {
			errs = append(errs, field.Forbidden(p.Child(sourceField(t)), "must populate the given metric source only"))
		}
	}
	switch {
	case m.Resource != nil && m.Type == autoscalingv2.ResourceMetricSourceType:
		if m.Resource.Name == "" {
			errs = append(errs, field.Required(p.Child("resource", "name"), "must specify a resource name"))
		}
		errs = append(errs, validateMetricTarget(m.Resource.Target, p.Child("resource", "target"), true)...)
	case m.ContainerResource != nil && m.Type == autoscalingv2.ContainerResourceMetricSourceType:
		if m.ContainerResource.Name == "" {
			errs = append(errs, field.Required(p.Child("containerResource", "name"), "must specify a resource name"))
		}
		if m.ContainerResource.Container == "" {
			errs = append(errs, field.Required(p.Child("containerResource", "container"), "must specify a container"))
		}
		errs = append(errs, validateMetricTarget(m.ContainerResource.Target, p.Child("containerResource", "target"), true)...)
	case m.Pods != nil && m.Type == autoscalingv2.PodsMetricSourceType:
		errs = append(errs, validateMetricName(m.Pods.Metric, p.Child("pods", "metric"))...)
		errs = append(errs, validateMetricTarget(m.Pods.Target, p.Child("pods", "target"), false)...)
	case m.Object != nil && m.Type == autoscalingv2.ObjectMetricSourceType:
		errs = append(errs, validateScaleTargetRef(m.Object.DescribedObject, p.Child("object", "describedObject"))...)
		errs = append(errs, validateMetricName(m.Object.Metric, p.Child("object", "metric"))...)
		errs = append(errs, validateMetricTarget(m.Object.Target, p.Child("object", "target"), false)...)
	case m.External != nil && m.Type == autoscalingv2.ExternalMetricSourceType:
		errs = append(errs, validateMetricName(m.External.Metric, p.Child("external", "metric"))...)
		errs = append(errs, validateMetricTarget(m.External.Target, p.Child("external", "target"), false)...)
	}
	return errs
}

// sourceField is the MetricSpec field of a source type.
func sourceField(t autoscalingv2.MetricSourceType) string {
	s := string(t)
	return strings.ToLower(s[:1]) + s[1:]
}

func validateMetricName(m autoscalingv2.MetricIdentifier, p *field.Path) field.ErrorList {
	if m.Name == "" {
		return field.ErrorList{field.Required(p.Child("name"), "must specify a metric name")}
	}
	var errs field.ErrorList
	for _, msg := range path.IsValidPathSegmentName(m.Name) {
		errs = append(errs, field.Invalid(p.Child("name"), m.Name, msg))
	}
	return errs
}

// validateMetricTarget checks a target: a known type with its value set
// and positive; utilization only for resources.
func validateMetricTarget(t autoscalingv2.MetricTarget, p *field.Path, resource bool) field.ErrorList {
	var errs field.ErrorList
	switch t.Type {
	case "":
		return append(errs, field.Required(p.Child("type"), "must specify a metric target type"))
	case autoscalingv2.UtilizationMetricType:
		if !resource {
			errs = append(errs, field.Invalid(p.Child("type"), t.Type, "utilization is a target of resource metrics only"))
		}
		if t.AverageUtilization == nil {
			errs = append(errs, field.Required(p.Child("averageUtilization"), "must set a target utilization for the Utilization type"))
		}
	case autoscalingv2.ValueMetricType:
		if t.Value == nil {
			errs = append(errs, field.Required(p.Child("value"), "must set a target value for the Value type"))
		}
	case autoscalingv2.AverageValueMetricType:
		if t.AverageValue == nil {
			errs = append(errs, field.Required(p.Child("averageValue"), "must set a target average value for the AverageValue type"))
		}
	default:
		errs = append(errs, field.NotSupported(p.Child("type"), t.Type, metricTargetTypes))
	}
	if t.AverageUtilization != nil && *t.AverageUtilization < 1 {
		errs = append(errs, field.Invalid(p.Child("averageUtilization"), *t.AverageUtilization, "must be greater than 0"))
	}
	if t.Value != nil && t.Value.Sign() != 1 {
		errs = append(errs, field.Invalid(p.Child("value"), t.Value.String(), "must be positive"))
	}
	if t.AverageValue != nil && t.AverageValue.Sign() != 1 {
		errs = append(errs, field.Invalid(p.Child("averageValue"), t.AverageValue.String(), "must be positive"))
	}
	return errs
}

// validateScalingRules checks one direction's behaviour.
func validateScalingRules(r *autoscalingv2.HPAScalingRules, p *field.Path) field.ErrorList {
	if r == nil {
		return nil
	}
	var errs field.ErrorList
	if w := r.StabilizationWindowSeconds; w != nil && (*w < 0 || *w > maxStabilizationWindowSeconds) {
		errs = append(errs, field.Invalid(p.Child("stabilizationWindowSeconds"), *w, fmt.Sprintf("must be between 0 and %d", maxStabilizationWindowSeconds)))
	}
	if s := r.SelectPolicy; s != nil && !sets.New(selectPolicies...).Has(string(*s)) {
		errs = append(errs, field.NotSupported(p.Child("selectPolicy"), *s, selectPolicies))
	}
	if t := r.Tolerance; t != nil && t.Sign() < 0 {
		errs = append(errs, field.Invalid(p.Child("tolerance"), t.String(), "must be greater than or equal to zero"))
	}
	disabled := r.SelectPolicy != nil && *r.SelectPolicy == autoscalingv2.DisabledPolicySelect
	if len(r.Policies) == 0 && !disabled {
		errs = append(errs, field.Required(p.Child("policies"), "must specify at least one Policy"))
	}
	for i, pol := range r.Policies {
		pp := p.Child("policies").Index(i)
		if !sets.New(policyTypes...).Has(string(pol.Type)) {
			errs = append(errs, field.NotSupported(pp.Child("type"), pol.Type, policyTypes))
		}
		if pol.Value <= 0 {
			errs = append(errs, field.Invalid(pp.Child("value"), pol.Value, "must be greater than zero"))
		}
		if pol.PeriodSeconds <= 0 || pol.PeriodSeconds > maxPeriodSeconds {
			errs = append(errs, field.Invalid(pp.Child("periodSeconds"), pol.PeriodSeconds, fmt.Sprintf("must be between 1 and %d", maxPeriodSeconds)))
		}
	}
	return errs
}

// validateCronFederatedHPA checks a CronFederatedHPA as Karmada does: a
// FederatedHPA target (autoscaling.karmada.io) gets min/max bounds, any
// other target replicas; rule names unique, schedules cron expressions,
// time zones of the tz database.
func validateCronFederatedHPA(c *autoscalingv1alpha1.CronFederatedHPA) field.ErrorList {
	spec := field.NewPath("spec")
	ref := c.Spec.ScaleTargetRef
	errs := validateScaleTargetRef(ref, spec.Child("scaleTargetRef"))
	fhpa := targetsFederatedHPA(ref)
	if fhpa && ref.Kind != "FederatedHPA" {
		return append(errs, field.Invalid(spec.Child("scaleTargetRef", "kind"), ref.Kind,
			fmt.Sprintf("invalid scaleTargetRef kind: %s, only support FederatedHPA", ref.Kind)))
	}
	if len(c.Spec.Rules) == 0 {
		errs = append(errs, field.Required(spec.Child("rules"), "at least one rule"))
	}
	seen := sets.New[string]()
	for i, r := range c.Spec.Rules {
		p := spec.Child("rules").Index(i)
		if seen.Has(r.Name) {
			errs = append(errs, field.Duplicate(p.Child("name"), r.Name))
		}
		seen.Insert(r.Name)
		if _, err := schedule.Parse(r.Schedule); err != nil {
			errs = append(errs, field.Invalid(p.Child("schedule"), r.Schedule, "invalid cron format: "+err.Error()))
		}
		if r.TimeZone != nil {
			if _, err := schedule.Location(r.TimeZone); err != nil {
				errs = append(errs, field.Invalid(p.Child("timeZone"), *r.TimeZone, err.Error()))
			}
		}
		for _, n := range []struct {
			name string
			v    *int32
		}{{"targetReplicas", r.TargetReplicas}, {"targetMinReplicas", r.TargetMinReplicas}, {"targetMaxReplicas", r.TargetMaxReplicas}} {
			if n.v != nil && *n.v < 0 {
				errs = append(errs, field.Invalid(p.Child(n.name), *n.v, "must be greater than or equal to 0"))
			}
		}
		if fhpa {
			if r.TargetMinReplicas == nil && r.TargetMaxReplicas == nil {
				errs = append(errs, field.Invalid(p, "", "targetMinReplicas and targetMaxReplicas cannot be nil at the same time if you want to scale FederatedHPA"))
			}
			if r.TargetMinReplicas != nil && *r.TargetMinReplicas < 1 {
				errs = append(errs, field.Invalid(p.Child("targetMinReplicas"), *r.TargetMinReplicas, "must be greater than or equal to 1"))
			}
			if r.TargetMinReplicas != nil && r.TargetMaxReplicas != nil && *r.TargetMaxReplicas < *r.TargetMinReplicas {
				errs = append(errs, field.Invalid(p.Child("targetMaxReplicas"), *r.TargetMaxReplicas, "must be greater than or equal to targetMinReplicas"))
			}
			continue
		}
		if r.TargetReplicas == nil {
			errs = append(errs, field.Invalid(p, "", fmt.Sprintf("targetReplicas cannot be nil if you want to scale %s", ref.Kind)))
		}
	}
	return errs
}
