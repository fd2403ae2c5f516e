package webhook

import (
	"context"
	"fmt"
	"sort"
	"strings"

	admissionv1 "k8s.io/api/admission/v1"
	authenticationv1 "k8s.io/api/authentication/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	metav1validation "k8s.io/apimachinery/pkg/apis/meta/v1/validation"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/apimachinery/pkg/util/validation/field"
	"k8s.io/client-go/util/jsonpath"

	policyv1alpha1 "github.com/karmada-go/karmada/api/policy/v1alpha1"
	"github.com/karmada-go/karmada/internal/names"
)

// validatePolicyMeta checks what every policy kind shares: its name, its
// namespace, and its permanent id label (idLabel; "" for override policies,
// which have none).
func validatePolicyMeta(meta, old *metav1.ObjectMeta, idLabel string) field.ErrorList {
	var errs field.ErrorList
	path := field.NewPath("metadata")
	// The namespace is checked on create only: it cannot change, and an
	// object made before the webhook existed must stay updatable (to remove
	// a finalizer, say). Any valid object name is a policy's name, as in
	// Karmada: it goes into annotations, never into a label value.
	if old == nil && names.ControlPlaneNamespace(meta.Namespace) {
		errs = append(errs, field.Forbidden(path.Child("namespace"),
			fmt.Sprintf("%q holds the control plane's own objects and member credentials: policies may not be created in karmada-system, karmada-cluster or karmada-es-*", meta.Namespace)))
	}
	if v, ok := meta.Annotations[policyv1alpha1.MinAvailableAnnotation]; ok {
		if _, err := policyv1alpha1.ParseMinAvailable(v, 0); err != nil {
			errs = append(errs, field.Invalid(path.Child("annotations").Key(policyv1alpha1.MinAvailableAnnotation), v,
				"must be a number of replicas (\"4\") or a percentage of the workload's replicas (\"60%\")"))
		}
	}
	if v, ok := meta.Annotations[policyv1alpha1.PlacementNarrowingAnnotation]; ok && v != string(policyv1alpha1.PurgeModeGracefully) && v != string(policyv1alpha1.PurgeModeDirectly) {
		errs = append(errs, field.NotSupported(path.Child("annotations").Key(policyv1alpha1.PlacementNarrowingAnnotation), v, []string{string(policyv1alpha1.PurgeModeGracefully), string(policyv1alpha1.PurgeModeDirectly)}))
	}
	if idLabel == "" {
		return errs
	}
	labels := path.Child("labels").Key(idLabel)
	if old == nil {
		if meta.Labels[idLabel] == "" {
			errs = append(errs, field.Required(labels, "set by the mutating webhook when the policy is created"))
		}
	} else if was, now := old.Labels[idLabel], meta.Labels[idLabel]; was != "" && was != now {
		// (A policy made before the webhook existed gets its id from the
		// detector: only a given id is immutable.)
		errs = append(errs, field.Invalid(labels, now, fmt.Sprintf("immutable: it was %q, given when the policy was created", was)))
	}
	return errs
}

// validatePropagation checks a PropagationPolicy (ns: its namespace) or a
// ClusterPropagationPolicy (ns ""), and on update its old version.
func validatePropagation(spec *policyv1alpha1.PropagationSpec, ns string, old *policyv1alpha1.PropagationSpec) field.ErrorList {
	path := field.NewPath("spec")
	errs := validateResourceSelectors(spec.ResourceSelectors, ns, path.Child("resourceSelectors"))
	if spec.Preemption == policyv1alpha1.PreemptAlways {
		for i, s := range spec.ResourceSelectors {
			if s.Name == "" {
				errs = append(errs, field.Invalid(path.Child("resourceSelectors").Index(i).Child("name"), s.Name,
					"must be set when preemption is Always: a policy without names could take every matching template from other policies"))
			}
		}
	}
	errs = append(errs, validatePlacement(&spec.Placement, path.Child("placement"))...)
	if spec.Failover != nil && spec.Failover.Application != nil && !spec.PropagateDeps {
		errs = append(errs, field.Invalid(path.Child("propagateDeps"), spec.PropagateDeps, "must be true when spec.failover.application is set"))
	}
	errs = append(errs, validateFailover(spec.Failover, path.Child("failover"))...)
	if s := spec.Suspension; s != nil && s.Dispatching != nil && *s.Dispatching && s.DispatchingOnClusters != nil && len(s.DispatchingOnClusters.ClusterNames) > 0 {
		errs = append(errs, field.Invalid(path.Child("suspension", "dispatchingOnClusters", "clusterNames"), s.DispatchingOnClusters.ClusterNames,
			"must be empty when suspension.dispatching is true (dispatching is already suspended on every cluster)"))
	}
	if sp := spec.SchedulePriority; sp != nil && sp.PriorityClassName == "" {
		errs = append(errs, field.Required(path.Child("schedulePriority", "priorityClassName"), "the PriorityClass to take the priority from"))
	}
	for i, name := range spec.DependentOverrides {
		for _, msg := range validation.IsDNS1123Subdomain(name) {
			errs = append(errs, field.Invalid(path.Child("dependentOverrides").Index(i), name, msg))
		}
	}
	if old != nil && spec.SchedulerName != old.SchedulerName {
		errs = append(errs, field.Invalid(path.Child("schedulerName"), spec.SchedulerName, fmt.Sprintf("immutable: it was %q", old.SchedulerName)))
	}
	return errs
}

// validateResourceSelectors checks selectors; ns is the namespace of a
// namespaced policy, whose selectors may select nothing outside it.
func validateResourceSelectors(selectors []policyv1alpha1.ResourceSelector, ns string, path *field.Path) field.ErrorList {
	var errs field.ErrorList
	for i, s := range selectors {
		p := path.Index(i)
		if s.APIVersion == "" {
			errs = append(errs, field.Required(p.Child("apiVersion"), "the API version of the templates, e.g. apps/v1"))
		} else if _, err := schema.ParseGroupVersion(s.APIVersion); err != nil {
			errs = append(errs, field.Invalid(p.Child("apiVersion"), s.APIVersion, "must be <group>/<version> or <version>"))
		}
		if s.Kind == "" {
			errs = append(errs, field.Required(p.Child("kind"), "the kind of the templates, e.g. Deployment"))
		}
		if ns != "" && s.Namespace != "" && s.Namespace != ns {
			errs = append(errs, field.Invalid(p.Child("namespace"), s.Namespace,
				fmt.Sprintf("must be empty or %q: a namespaced policy selects templates of its own namespace only", ns)))
		}
		if s.LabelSelector != nil {
			errs = append(errs, metav1validation.ValidateLabelSelector(s.LabelSelector, metav1validation.LabelSelectorValidationOptions{}, p.Child("labelSelector"))...)
		}
	}
	return errs
}

func validatePlacement(pl *policyv1alpha1.Placement, path *field.Path) field.ErrorList {
	var errs field.ErrorList
	if pl.ClusterAffinity != nil && len(pl.ClusterAffinities) > 0 {
		errs = append(errs, field.Forbidden(path.Child("clusterAffinities"), "may not be set together with clusterAffinity: use one or the other"))
	}
	errs = append(errs, validateClusterAffinity(pl.ClusterAffinity, path.Child("clusterAffinity"))...)
	names := map[string]int{}
	for i := range pl.ClusterAffinities {
		term := &pl.ClusterAffinities[i]
		p := path.Child("clusterAffinities").Index(i)
		errs = append(errs, validateAffinityName(term.AffinityName, names, i, path.Child("clusterAffinities"), p.Child("affinityName"))...)
		errs = append(errs, validateClusterAffinity(&term.ClusterAffinity, p)...)
		errs = append(errs, validateOverflow(term, pl.ReplicaScheduling, p)...)
	}
	for i, t := range pl.ClusterTolerations {
		errs = append(errs, validateToleration(t, path.Child("clusterTolerations").Index(i))...)
	}
	errs = append(errs, validateSpreadConstraints(pl.SpreadConstraints, path.Child("spreadConstraints"))...)
	errs = append(errs, validateReplicaScheduling(pl.ReplicaScheduling, path.Child("replicaScheduling"))...)
	if wa := pl.WorkloadAffinity; wa != nil {
		for name, term := range map[string]*policyv1alpha1.WorkloadAffinityTerm{"affinity": wa.Affinity, "antiAffinity": wa.AntiAffinity} {
			if term == nil {
				continue
			}
			p := path.Child("workloadAffinity", name, "groupByLabelKey")
			for _, msg := range validation.IsQualifiedName(term.GroupByLabelKey) {
				errs = append(errs, field.Invalid(p, term.GroupByLabelKey, msg))
			}
		}
	}
	return errs
}

// validateOverflow checks a term's overflowAffinities (Karmada 1.18): they
// extend a primary group the term names (its inline clusterAffinity), only
// for replicas divided by what the clusters can take (dynamicWeight or
// Aggregated), and each group's name is its own within the term.
func validateOverflow(term *policyv1alpha1.ClusterAffinityTerm, rs *policyv1alpha1.ReplicaSchedulingStrategy, p *field.Path) field.ErrorList {
	if len(term.OverflowAffinities) == 0 {
		return nil
	}
	var errs field.ErrorList
	op := p.Child("overflowAffinities")
	if a := term.ClusterAffinity; a.LabelSelector == nil && a.FieldSelector == nil && len(a.ClusterNames) == 0 && len(a.Exclude) == 0 {
		errs = append(errs, field.Required(p.Child("clusterNames"),
			"overflowAffinities extend the term's primary group: select it with clusterNames, labelSelector, fieldSelector or exclude"))
	}
	if rs == nil || rs.ReplicaSchedulingType != policyv1alpha1.ReplicaSchedulingTypeDivided ||
		(rs.ReplicaDivisionPreference != policyv1alpha1.ReplicaDivisionPreferenceAggregated && (rs.WeightPreference == nil || rs.WeightPreference.DynamicWeight == "")) {
		errs = append(errs, field.Forbidden(op, "overflowAffinities need replicaScheduling Divided by what the clusters can take: "+
			"weightPreference.dynamicWeight AvailableReplicas, or replicaDivisionPreference Aggregated"))
	}
	names := map[string]int{}
	for j := range term.OverflowAffinities {
		o := &term.OverflowAffinities[j]
		jp := op.Index(j)
		switch first, seen := names[o.AffinityName]; {
		case o.AffinityName == term.AffinityName && o.AffinityName != "":
			errs = append(errs, field.Duplicate(jp.Child("affinityName"), o.AffinityName+" (already the name of the term)"))
		case seen:
			errs = append(errs, field.Duplicate(jp.Child("affinityName"), fmt.Sprintf("%s (already the name of %s)", o.AffinityName, op.Index(first))))
		default:
			names[o.AffinityName] = j
		}
		for _, msg := range validation.IsQualifiedName(o.AffinityName) {
			errs = append(errs, field.Invalid(jp.Child("affinityName"), o.AffinityName, msg))
		}
		errs = append(errs, validateClusterAffinity(&o.ClusterAffinity, jp)...)
	}
	return errs
}

// validateAffinityName checks that a cluster affinity term's name is a
// qualified name used once in the list.
func validateAffinityName(name string, seen map[string]int, i int, list, path *field.Path) field.ErrorList {
	var errs field.ErrorList
	if name == "" {
		return field.ErrorList{field.Required(path, "each cluster affinity term needs a name")}
	}
	for _, msg := range validation.IsQualifiedName(name) {
		errs = append(errs, field.Invalid(path, name, msg))
	}
	if first, ok := seen[name]; ok {
		errs = append(errs, field.Duplicate(path, fmt.Sprintf("%s (already the name of %s)", name, list.Index(first))))
	} else {
		seen[name] = i
	}
	return errs
}

// spreadFields are the cluster fields a field selector may match.
var spreadFields = []string{"provider", "region", "zone"}

func validateClusterAffinity(a *policyv1alpha1.ClusterAffinity, path *field.Path) field.ErrorList {
	if a == nil {
		return nil
	}
	var errs field.ErrorList
	if a.LabelSelector != nil {
		errs = append(errs, metav1validation.ValidateLabelSelector(a.LabelSelector, metav1validation.LabelSelectorValidationOptions{}, path.Child("labelSelector"))...)
	}
	if a.FieldSelector != nil {
		for i, req := range a.FieldSelector.MatchExpressions {
			p := path.Child("fieldSelector", "matchExpressions").Index(i)
			switch req.Key {
			case "provider", "region", "zone":
			default:
				errs = append(errs, field.NotSupported(p.Child("key"), req.Key, spreadFields))
			}
			switch req.Operator {
			case corev1.NodeSelectorOpIn, corev1.NodeSelectorOpNotIn:
			default:
				errs = append(errs, field.NotSupported(p.Child("operator"), req.Operator, []string{string(corev1.NodeSelectorOpIn), string(corev1.NodeSelectorOpNotIn)}))
			}
		}
	}
	errs = append(errs, validateClusterNames(a.ClusterNames, path.Child("clusterNames"))...)
	errs = append(errs, validateClusterNames(a.Exclude, path.Child("exclude"))...)
	return errs
}

func validateClusterNames(clusters []string, path *field.Path) field.ErrorList {
	var errs field.ErrorList
	for i, n := range clusters {
		for _, msg := range names.ClusterNameErrors(n) {
			errs = append(errs, field.Invalid(path.Index(i), n, msg))
		}
	}
	return errs
}

var (
	tolerationOperators = []string{string(corev1.TolerationOpExists), string(corev1.TolerationOpEqual)}
	taintEffects        = []string{string(corev1.TaintEffectNoSchedule), string(corev1.TaintEffectPreferNoSchedule), string(corev1.TaintEffectNoExecute)}
)

func validateToleration(t corev1.Toleration, path *field.Path) field.ErrorList {
	var errs field.ErrorList
	if t.Key != "" {
		for _, msg := range validation.IsQualifiedName(t.Key) {
			errs = append(errs, field.Invalid(path.Child("key"), t.Key, msg))
		}
	}
	switch t.Operator {
	case corev1.TolerationOpExists:
		if t.Value != "" {
			errs = append(errs, field.Invalid(path.Child("value"), t.Value, "must be empty when operator is Exists"))
		}
	case corev1.TolerationOpEqual, "":
		if t.Key == "" {
			errs = append(errs, field.Invalid(path.Child("operator"), t.Operator, "must be Exists when key is empty (a toleration of every taint)"))
		}
	default:
		errs = append(errs, field.NotSupported(path.Child("operator"), t.Operator, tolerationOperators))
	}
	switch t.Effect {
	case "", corev1.TaintEffectNoSchedule, corev1.TaintEffectPreferNoSchedule, corev1.TaintEffectNoExecute:
	default:
		errs = append(errs, field.NotSupported(path.Child("effect"), t.Effect, taintEffects))
	}
	if t.TolerationSeconds != nil && t.Effect != corev1.TaintEffectNoExecute {
		errs = append(errs, field.Invalid(path.Child("tolerationSeconds"), *t.TolerationSeconds, "must be empty unless effect is NoExecute"))
	}
	return errs
}

func validateSpreadConstraints(constraints []policyv1alpha1.SpreadConstraint, path *field.Path) field.ErrorList {
	var errs field.ErrorList
	byField := map[policyv1alpha1.SpreadFieldValue]int{}
	for i, c := range constraints {
		p := path.Index(i)
		switch {
		case c.SpreadByField != "" && c.SpreadByLabel != "":
			errs = append(errs, field.Invalid(p.Child("spreadByLabel"), c.SpreadByLabel, "must be empty when spreadByField is set: a constraint spreads by a field or by a label, not both"))
		case c.SpreadByField == "" && c.SpreadByLabel == "":
			errs = append(errs, field.Required(p.Child("spreadByField"), "one of spreadByField or spreadByLabel"))
		}
		switch c.SpreadByField {
		case "", policyv1alpha1.SpreadByFieldCluster, policyv1alpha1.SpreadByFieldRegion, policyv1alpha1.SpreadByFieldZone, policyv1alpha1.SpreadByFieldProvider:
		default:
			errs = append(errs, field.NotSupported(p.Child("spreadByField"), c.SpreadByField, []string{"cluster", "region", "zone", "provider"}))
		}
		if c.SpreadByLabel != "" {
			for _, msg := range validation.IsQualifiedName(c.SpreadByLabel) {
				errs = append(errs, field.Invalid(p.Child("spreadByLabel"), c.SpreadByLabel, msg))
			}
		}
		if c.MinGroups < 0 {
			errs = append(errs, field.Invalid(p.Child("minGroups"), c.MinGroups, "must be greater than or equal to 0"))
		}
		if c.MaxGroups < 0 {
			errs = append(errs, field.Invalid(p.Child("maxGroups"), c.MaxGroups, "must be greater than or equal to 0"))
		}
		if c.MaxGroups > 0 && c.MaxGroups < c.MinGroups {
			errs = append(errs, field.Invalid(p.Child("maxGroups"), c.MaxGroups, fmt.Sprintf("must be greater than or equal to minGroups (%d)", c.MinGroups)))
		}
		if c.SpreadByField != "" {
			if first, ok := byField[c.SpreadByField]; ok {
				errs = append(errs, field.Duplicate(p.Child("spreadByField"), fmt.Sprintf("%s (already spread by in %s)", c.SpreadByField, path.Index(first))))
			} else {
				byField[c.SpreadByField] = i
			}
		}
	}
	if _, ok := byField[policyv1alpha1.SpreadByFieldCluster]; len(byField) > 0 && !ok {
		errs = append(errs, field.Invalid(path, fieldList(byField),
			"a constraint with spreadByField: cluster is required when spreading by region, zone or provider (it says how many clusters to choose)"))
	}
	return errs
}

func fieldList(m map[policyv1alpha1.SpreadFieldValue]int) string {
	names := make([]string, 0, len(m))
	for f := range m {
		names = append(names, string(f))
	}
	sort.Strings(names)
	return "spreadByField " + strings.Join(names, ", ")
}

func validateReplicaScheduling(rs *policyv1alpha1.ReplicaSchedulingStrategy, path *field.Path) field.ErrorList {
	if rs == nil {
		return nil
	}
	var errs field.ErrorList
	switch rs.ReplicaSchedulingType {
	case policyv1alpha1.ReplicaSchedulingTypeDuplicated:
		if rs.ReplicaDivisionPreference != "" {
			errs = append(errs, field.Invalid(path.Child("replicaDivisionPreference"), rs.ReplicaDivisionPreference, "must be empty when replicaSchedulingType is Duplicated (replicas are copied, not divided)"))
		}
		if rs.WeightPreference != nil {
			errs = append(errs, field.Forbidden(path.Child("weightPreference"), "must be empty when replicaSchedulingType is Duplicated (replicas are copied, not divided)"))
		}
	case policyv1alpha1.ReplicaSchedulingTypeDivided, "":
		switch rs.ReplicaDivisionPreference {
		case policyv1alpha1.ReplicaDivisionPreferenceAggregated:
			if rs.WeightPreference != nil {
				errs = append(errs, field.Forbidden(path.Child("weightPreference"), "must be empty when replicaDivisionPreference is Aggregated (weights apply to Weighted division)"))
			}
		case policyv1alpha1.ReplicaDivisionPreferenceWeighted, "":
		default:
			errs = append(errs, field.NotSupported(path.Child("replicaDivisionPreference"), rs.ReplicaDivisionPreference, []string{"Aggregated", "Weighted"}))
		}
	default:
		errs = append(errs, field.NotSupported(path.Child("replicaSchedulingType"), rs.ReplicaSchedulingType, []string{"Duplicated", "Divided"}))
	}
	if wp := rs.WeightPreference; wp != nil {
		switch wp.DynamicWeight {
		case "", policyv1alpha1.DynamicWeightByAvailableReplicas:
		default:
			errs = append(errs, field.NotSupported(path.Child("weightPreference", "dynamicWeight"), wp.DynamicWeight, []string{string(policyv1alpha1.DynamicWeightByAvailableReplicas)}))
		}
		for i := range wp.StaticWeightList {
			w := &wp.StaticWeightList[i]
			p := path.Child("weightPreference", "staticWeightList").Index(i)
			if w.Weight < 1 {
				errs = append(errs, field.Invalid(p.Child("weight"), w.Weight, "must be greater than or equal to 1"))
			}
			errs = append(errs, validateClusterAffinity(&w.TargetCluster, p.Child("targetCluster"))...)
		}
	}
	return errs
}

func validateFailover(f *policyv1alpha1.FailoverBehavior, path *field.Path) field.ErrorList {
	if f == nil {
		return nil
	}
	var errs field.ErrorList
	if a := f.Application; a != nil {
		p := path.Child("application")
		if ts := a.DecisionConditions.TolerationSeconds; ts != nil && *ts < 0 {
			errs = append(errs, field.Invalid(p.Child("decisionConditions", "tolerationSeconds"), *ts, "must be greater than or equal to 0"))
		}
		switch a.PurgeMode {
		case policyv1alpha1.PurgeModeGracefully, "":
			// The mutating webhook defaults it; without it the old copy
			// would wait for ever.
			if a.PurgeMode != "" && a.GracePeriodSeconds == nil {
				errs = append(errs, field.Required(p.Child("gracePeriodSeconds"), "how long to wait for the new copy when purgeMode is Gracefully"))
			}
		case policyv1alpha1.PurgeModeDirectly, policyv1alpha1.PurgeModeNever:
			if a.GracePeriodSeconds != nil {
				errs = append(errs, field.Invalid(p.Child("gracePeriodSeconds"), *a.GracePeriodSeconds, "must be empty unless purgeMode is Gracefully"))
			}
		default:
			errs = append(errs, field.NotSupported(p.Child("purgeMode"), a.PurgeMode, []string{"Directly", "Gracefully", "Never"}))
		}
		if g := a.GracePeriodSeconds; g != nil && *g <= 0 {
			errs = append(errs, field.Invalid(p.Child("gracePeriodSeconds"), *g, "must be greater than 0"))
		}
		errs = append(errs, validateStatePreservation(a.StatePreservation, p.Child("statePreservation"))...)
	}
	if c := f.Cluster; c != nil {
		p := path.Child("cluster")
		switch c.PurgeMode {
		case "", policyv1alpha1.PurgeModeDirectly, policyv1alpha1.PurgeModeGracefully:
		default:
			errs = append(errs, field.NotSupported(p.Child("purgeMode"), c.PurgeMode, []string{"Directly", "Gracefully"}))
		}
		errs = append(errs, validateStatePreservation(c.StatePreservation, p.Child("statePreservation"))...)
	}
	return errs
}

func validateStatePreservation(sp *policyv1alpha1.StatePreservation, path *field.Path) field.ErrorList {
	if sp == nil {
		return nil
	}
	var errs field.ErrorList
	if len(sp.Rules) == 0 {
		errs = append(errs, field.Required(path.Child("rules"), "at least one rule"))
	}
	for i, r := range sp.Rules {
		p := path.Child("rules").Index(i)
		for _, msg := range validation.IsQualifiedName(r.AliasLabelName) {
			errs = append(errs, field.Invalid(p.Child("aliasLabelName"), r.AliasLabelName, msg))
		}
		if r.JSONPath == "" {
			errs = append(errs, field.Required(p.Child("jsonPath"), "a JSONPath into the resource's status, e.g. {.replicas}"))
		} else if _, err := jsonpath.Parse("state", r.JSONPath); err != nil {
			errs = append(errs, field.Invalid(p.Child("jsonPath"), r.JSONPath, "must be a JSONPath expression: "+err.Error()))
		}
	}
	return errs
}

// propagationEndpoints are the admission endpoints of PropagationPolicies
// and ClusterPropagationPolicies: defaults and the permanent id on create;
// validation, and the adoption of templates the user may not write.
func propagationEndpoints(k kindEnv) []Endpoint {
	dec, o := k.dec, k.o
	return []Endpoint{
		{Path: "/mutate-propagationpolicy", Mutating: true, GVR: policyResource("propagationpolicies"), Kind: "PropagationPolicy", Namespaced: true,
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
		{Path: "/mutate-clusterpropagationpolicy", Mutating: true, GVR: policyResource("clusterpropagationpolicies"), Kind: "ClusterPropagationPolicy",
			handler: &mutating[*policyv1alpha1.ClusterPropagationPolicy]{dec: dec, new: func() *policyv1alpha1.ClusterPropagationPolicy { return &policyv1alpha1.ClusterPropagationPolicy{} },
				mutate: func(p *policyv1alpha1.ClusterPropagationPolicy, op admissionv1.Operation, _ string) {
					defaultPropagation(&p.Spec, "", o)
					if op == admissionv1.Create {
						p.Labels = ensureLabel(p.Labels, policyv1alpha1.ClusterPropagationPolicyPermanentIDLabel)
					}
				}}},
		{Path: "/validate-propagationpolicy", GVR: policyResource("propagationpolicies"), Kind: "PropagationPolicy", Namespaced: true,
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
		{Path: "/validate-clusterpropagationpolicy", GVR: policyResource("clusterpropagationpolicies"), Kind: "ClusterPropagationPolicy",
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
	}
}
