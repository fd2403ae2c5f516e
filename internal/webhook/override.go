package webhook

import (
	"fmt"
	"regexp"
	"strings"

	admissionv1 "k8s.io/api/admission/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	apivalidation "k8s.io/apimachinery/pkg/api/validation"
	metav1validation "k8s.io/apimachinery/pkg/apis/meta/v1/validation"
	"k8s.io/apimachinery/pkg/util/validation/field"

	policyv1alpha1 "github.com/karmada-go/karmada/api/policy/v1alpha1"
	"github.com/karmada-go/karmada/internal/propagation/overridemanager"
)

// validateOverride checks an OverridePolicy (ns: its namespace) or a
// ClusterOverridePolicy (ns "").
func validateOverride(spec *policyv1alpha1.OverrideSpec, ns string) field.ErrorList {
	path := field.NewPath("spec")
	errs := validateResourceSelectors(spec.ResourceSelectors, ns, path.Child("resourceSelectors"))
	if spec.TargetCluster != nil && len(spec.OverrideRules) > 0 {
		errs = append(errs, field.Forbidden(path.Child("targetCluster"), "may not be set together with overrideRules: put the target cluster in each rule"))
	}
	if !emptyOverriders(&spec.Overriders) && len(spec.OverrideRules) > 0 {
		errs = append(errs, field.Forbidden(path.Child("overriders"), "may not be set together with overrideRules: put the overriders in each rule"))
	}
	errs = append(errs, validateClusterAffinity(spec.TargetCluster, path.Child("targetCluster"))...)
	errs = append(errs, validateOverriders(&spec.Overriders, path.Child("overriders"))...)
	for i := range spec.OverrideRules {
		rule := &spec.OverrideRules[i]
		p := path.Child("overrideRules").Index(i)
		errs = append(errs, validateClusterAffinity(rule.TargetCluster, p.Child("targetCluster"))...)
		errs = append(errs, validateOverriders(&rule.Overriders, p.Child("overriders"))...)
	}
	return errs
}

func emptyOverriders(o *policyv1alpha1.Overriders) bool {
	return len(o.Plaintext) == 0 && len(o.ImageOverrider) == 0 && len(o.CommandOverrider) == 0 && len(o.ArgsOverrider) == 0 &&
		len(o.LabelsOverrider) == 0 && len(o.AnnotationsOverrider) == 0 && len(o.FieldOverrider) == 0
}

var (
	allOperators     = []string{"add", "remove", "replace"}
	commandOperators = []string{"add", "remove"}
	imageComponents  = []string{"Registry", "Repository", "Tag"}
)

func validateOverriders(o *policyv1alpha1.Overriders, path *field.Path) field.ErrorList {
	var errs field.ErrorList
	for i, pt := range o.Plaintext {
		p := path.Child("plaintext").Index(i)
		errs = append(errs, validatePointer(pt.Path, p.Child("path"), true)...)
		errs = append(errs, validateOperatorValue(pt.Operator, pt.Value.Raw, p)...)
	}
	for i, im := range o.ImageOverrider {
		errs = append(errs, validateImageOverrider(im, path.Child("imageOverrider").Index(i))...)
	}
	for name, list := range map[string][]policyv1alpha1.CommandArgsOverrider{"commandOverrider": o.CommandOverrider, "argsOverrider": o.ArgsOverrider} {
		for i, c := range list {
			p := path.Child(name).Index(i)
			if c.ContainerName == "" {
				errs = append(errs, field.Required(p.Child("containerName"), "the container whose "+strings.TrimSuffix(name, "Overrider")+" to change"))
			}
			switch c.Operator {
			case policyv1alpha1.OverriderOpAdd, policyv1alpha1.OverriderOpRemove:
			default:
				errs = append(errs, field.NotSupported(p.Child("operator"), c.Operator, commandOperators))
			}
		}
	}
	for i, l := range o.LabelsOverrider {
		p := path.Child("labelsOverrider").Index(i)
		errs = append(errs, validateMapOperator(l.Operator, p)...)
		errs = append(errs, metav1validation.ValidateLabels(l.Value, p.Child("value"))...)
	}
	for i, a := range o.AnnotationsOverrider {
		p := path.Child("annotationsOverrider").Index(i)
		errs = append(errs, validateMapOperator(a.Operator, p)...)
		errs = append(errs, apivalidation.ValidateAnnotations(a.Value, p.Child("value"))...)
	}
	for i, f := range o.FieldOverrider {
		p := path.Child("fieldOverrider").Index(i)
		errs = append(errs, validatePointer(f.FieldPath, p.Child("fieldPath"), true)...)
		if len(f.JSON) > 0 && len(f.YAML) > 0 {
			errs = append(errs, field.Forbidden(p.Child("yaml"), "may not be set together with json: a field holds either JSON or YAML"))
		}
		if len(f.JSON) == 0 && len(f.YAML) == 0 {
			errs = append(errs, field.Required(p.Child("json"), "the patch operations (json or yaml)"))
		}
		for name, ops := range map[string][]policyv1alpha1.PatchOperation{"json": f.JSON, "yaml": f.YAML} {
			for j, op := range ops {
				q := p.Child(name).Index(j)
				errs = append(errs, validatePointer(op.SubPath, q.Child("subPath"), false)...)
				errs = append(errs, validateOperatorValue(op.Operator, op.Value.Raw, q)...)
			}
		}
	}
	return errs
}

func validateMapOperator(op policyv1alpha1.OverriderOperator, path *field.Path) field.ErrorList {
	switch op {
	case policyv1alpha1.OverriderOpAdd, policyv1alpha1.OverriderOpRemove, policyv1alpha1.OverriderOpReplace:
		return nil
	}
	return field.ErrorList{field.NotSupported(path.Child("operator"), op, allOperators)}
}

// validateOperatorValue: add and replace need a value, remove takes none.
func validateOperatorValue(op policyv1alpha1.OverriderOperator, value []byte, path *field.Path) field.ErrorList {
	hasValue := len(value) > 0
	switch op {
	case policyv1alpha1.OverriderOpAdd, policyv1alpha1.OverriderOpReplace:
		if !hasValue {
			return field.ErrorList{field.Required(path.Child("value"), fmt.Sprintf("the value to %s", op))}
		}
	case policyv1alpha1.OverriderOpRemove:
		if hasValue {
			return field.ErrorList{field.Invalid(path.Child("value"), string(value), "must be empty when operator is remove")}
		}
	default:
		return field.ErrorList{field.NotSupported(path.Child("operator"), op, allOperators)}
	}
	return nil
}

// validatePointer checks a JSON pointer (RFC 6901): empty, or a "/" then
// tokens in which "~" is followed by 0 or 1. A pointer into a manifest
// (manifest true) may not touch the fields that say which object it is.
func validatePointer(p string, path *field.Path, manifest bool) field.ErrorList {
	if p == "" && !manifest {
		return nil
	}
	if !strings.HasPrefix(p, "/") {
		return field.ErrorList{field.Invalid(path, p, `must be a JSON pointer starting with "/", e.g. /spec/replicas`)}
	}
	for i := 0; i < len(p); i++ {
		if p[i] == '~' && (i+1 == len(p) || (p[i+1] != '0' && p[i+1] != '1')) {
			return field.ErrorList{field.Invalid(path, p, `"~" must be followed by 0 (for "~") or 1 (for "/") in a JSON pointer`)}
		}
	}
	if manifest {
		if f := overridemanager.IdentityField(p); f != "" {
			return field.ErrorList{field.Forbidden(path, fmt.Sprintf("%q would change %s: overriders may not change apiVersion, kind, metadata.name, metadata.namespace, metadata.generateName, metadata.uid or metadata.ownerReferences (the member object must be the template's)", p, f))}
		}
	}
	return nil
}

var (
	// A registry host, with an optional port.
	registryRE = regexp.MustCompile(`^[a-zA-Z0-9]([a-zA-Z0-9.-]*[a-zA-Z0-9])?(:[0-9]+)?$`)
	// Repository path components, separated by "/".
	repositoryRE = regexp.MustCompile(`^[a-z0-9]+(([._]|__|-+)[a-z0-9]+)*(/[a-z0-9]+(([._]|__|-+)[a-z0-9]+)*)*$`)
	tagRE        = regexp.MustCompile(`^[a-zA-Z0-9_][a-zA-Z0-9_.-]{0,127}$`)
	// What add appends to a registry or a repository.
	registrySuffixRE   = regexp.MustCompile(`^[a-zA-Z0-9.:-]+$`)
	repositorySuffixRE = regexp.MustCompile(`^[a-z0-9._/-]+$`)
)

func validateImageOverrider(im policyv1alpha1.ImageOverrider, path *field.Path) field.ErrorList {
	var errs field.ErrorList
	if im.Predicate != nil {
		errs = append(errs, validatePointer(im.Predicate.Path, path.Child("predicate", "path"), false)...)
	}
	switch im.Operator {
	case policyv1alpha1.OverriderOpAdd, policyv1alpha1.OverriderOpReplace:
		if im.Value == "" {
			errs = append(errs, field.Required(path.Child("value"), fmt.Sprintf("the %s to %s", strings.ToLower(string(im.Component)), im.Operator)))
		}
	case policyv1alpha1.OverriderOpRemove:
	default:
		errs = append(errs, field.NotSupported(path.Child("operator"), im.Operator, allOperators))
	}
	var re *regexp.Regexp
	var what string
	switch im.Component {
	case policyv1alpha1.Registry:
		re, what = registryRE, "a registry host with an optional port, e.g. registry.example.com:5000"
		if im.Operator == policyv1alpha1.OverriderOpAdd {
			re, what = registrySuffixRE, "letters, digits, '.', ':' and '-' (appended to the registry)"
		}
	case policyv1alpha1.Repository:
		re, what = repositoryRE, "lower-case path components separated by '/', e.g. library/nginx"
		if im.Operator == policyv1alpha1.OverriderOpAdd {
			re, what = repositorySuffixRE, "lower-case letters, digits, '.', '_', '-' and '/' (appended to the repository)"
		}
	case policyv1alpha1.Tag:
		re, what = tagRE, "a tag: up to 128 letters, digits, '_', '.' and '-', not starting with '.' or '-'"
	default:
		errs = append(errs, field.NotSupported(path.Child("component"), im.Component, imageComponents))
	}
	if re != nil && im.Value != "" && im.Operator != policyv1alpha1.OverriderOpRemove && !re.MatchString(im.Value) {
		errs = append(errs, field.Invalid(path.Child("value"), im.Value, "must be "+what))
	}
	return errs
}

// overrideEndpoints are the admission endpoints of OverridePolicies and
// ClusterOverridePolicies: defaults and validation.
func overrideEndpoints(k kindEnv) []Endpoint {
	dec := k.dec
	return []Endpoint{
		{Path: "/mutate-overridepolicy", Mutating: true, GVR: policyResource("overridepolicies"), Kind: "OverridePolicy", Namespaced: true,
			handler: &mutating[*policyv1alpha1.OverridePolicy]{dec: dec, new: func() *policyv1alpha1.OverridePolicy { return &policyv1alpha1.OverridePolicy{} },
				mutate: func(p *policyv1alpha1.OverridePolicy, _ admissionv1.Operation, ns string) {
					if p.Namespace == "" {
						p.Namespace = ns
					}
					defaultOverride(&p.Spec, p.Namespace)
				}}},
		{Path: "/validate-overridepolicy", GVR: policyResource("overridepolicies"), Kind: "OverridePolicy", Namespaced: true,
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
		{Path: "/validate-clusteroverridepolicy", GVR: policyResource("clusteroverridepolicies"), Kind: "ClusterOverridePolicy",
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
	}
}
