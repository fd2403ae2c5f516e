// Package clustervalidation holds the rules a Cluster's fields must follow:
// karmada-webhook applies them at admission, karmada-aggregated-apiserver in
// its storage (as the Cluster CRD's schema did).
package clustervalidation

import (
	"fmt"
	"math"
	"net/url"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/apimachinery/pkg/util/validation/field"

	clusterv1alpha1 "github.com/karmada-go/karmada/api/cluster/v1alpha1"
	"github.com/karmada-go/karmada/internal/names"
)

var (
	syncModes = []string{string(clusterv1alpha1.Push), string(clusterv1alpha1.Pull)}
	// TaintEffects are the effects a Cluster's taint may have.
	TaintEffects   = []string{string(corev1.TaintEffectNoSchedule), string(corev1.TaintEffectNoExecute)}
	modelResources = []string{string(corev1.ResourceCPU), string(corev1.ResourceMemory), string(corev1.ResourceStorage), string(corev1.ResourceEphemeralStorage)}
)

// Validate checks a Cluster's fields, and on update (old non-nil) what may
// not change: karmada-webhook's rules and karmada-aggregated-apiserver's
// validation both.
func Validate(c, old *clusterv1alpha1.Cluster) field.ErrorList {
	var errs field.ErrorList
	if old == nil {
		// (A name cannot change: a Cluster named before this rule stays
		// updatable.)
		for _, msg := range names.ClusterNameErrors(c.Name) {
			errs = append(errs, field.Invalid(field.NewPath("metadata", "name"), c.Name, msg))
		}
	}
	spec := field.NewPath("spec")
	switch c.Spec.SyncMode {
	case clusterv1alpha1.Push, clusterv1alpha1.Pull:
	case "":
		errs = append(errs, field.Required(spec.Child("syncMode"), "Push or Pull"))
	default:
		errs = append(errs, field.NotSupported(spec.Child("syncMode"), c.Spec.SyncMode, syncModes))
	}
	if c.Spec.APIEndpoint != "" {
		errs = append(errs, validateEndpoint(c.Spec.APIEndpoint, spec.Child("apiEndpoint"))...)
	}
	for name, ref := range map[string]*clusterv1alpha1.LocalSecretReference{"secretRef": c.Spec.SecretRef, "impersonatorSecretRef": c.Spec.ImpersonatorSecretRef} {
		if ref == nil {
			continue
		}
		switch ref.Namespace {
		case names.ClusterNamespace:
		case "":
			errs = append(errs, field.Required(spec.Child(name, "namespace"), "the namespace of the Secret: "+names.ClusterNamespace))
		default:
			// Otherwise whoever may write Clusters could have the controller
			// manager send any Secret's token to an endpoint of theirs.
			errs = append(errs, field.NotSupported(spec.Child(name, "namespace"), ref.Namespace, []string{names.ClusterNamespace}))
		}
		if ref.Name == "" {
			errs = append(errs, field.Required(spec.Child(name, "name"), "the name of the Secret"))
		}
	}
	if c.Spec.ProxyURL != "" {
		if u, err := url.Parse(c.Spec.ProxyURL); err != nil {
			errs = append(errs, field.Invalid(spec.Child("proxyURL"), c.Spec.ProxyURL, "must be a URL: "+err.Error()))
		} else if u.Scheme != "http" && u.Scheme != "https" && u.Scheme != "socks5" {
			errs = append(errs, field.Invalid(spec.Child("proxyURL"), c.Spec.ProxyURL, fmt.Sprintf("unsupported scheme %q: must be http, https or socks5", u.Scheme)))
		}
	}
	errs = append(errs, ValidateTaints(c.Spec.Taints, spec.Child("taints"), "")...)
	errs = append(errs, validateResourceModels(c.Spec.ResourceModels, spec.Child("resourceModels"))...)
	if old != nil {
		if old.Spec.ID != "" && c.Spec.ID != old.Spec.ID {
			errs = append(errs, field.Invalid(spec.Child("id"), c.Spec.ID, fmt.Sprintf("immutable: it was %q, the member's identity (unjoin the cluster and join it again to change it)", old.Spec.ID)))
		}
		if old.Spec.SyncMode != "" && c.Spec.SyncMode != old.Spec.SyncMode {
			errs = append(errs, field.Invalid(spec.Child("syncMode"), c.Spec.SyncMode, fmt.Sprintf("immutable: it was %s (unjoin or unregister the cluster and join or register it again to change it)", old.Spec.SyncMode)))
		}
	}
	return errs
}

func validateEndpoint(endpoint string, path *field.Path) field.ErrorList {
	const form = "; e.g. https://host:6443"
	u, err := url.Parse(endpoint)
	if err != nil {
		return field.ErrorList{field.Invalid(path, endpoint, "must be a URL: "+err.Error()+form)}
	}
	var errs field.ErrorList
	if u.Host == "" {
		errs = append(errs, field.Invalid(path, endpoint, "must name a host"+form))
	}
	if u.User != nil {
		errs = append(errs, field.Invalid(path, endpoint, "may not hold user information"))
	}
	if u.Fragment != "" || u.RawQuery != "" {
		errs = append(errs, field.Invalid(path, endpoint, "may not hold a query or a fragment"))
	}
	return errs
}

// ValidateTaints checks cluster taints (a Cluster's, a ClusterTaintPolicy's):
// qualified keys, label values as values, NoSchedule or NoExecute effects,
// no key and effect twice. refuseNoExecute, when not empty, is why a
// NoExecute taint is refused here.
func ValidateTaints(taints []corev1.Taint, path *field.Path, refuseNoExecute string) field.ErrorList {
	var errs field.ErrorList
	seen := map[string]int{}
	for i, t := range taints {
		p := path.Index(i)
		for _, msg := range validation.IsQualifiedName(t.Key) {
			errs = append(errs, field.Invalid(p.Child("key"), t.Key, msg))
		}
		for _, msg := range validation.IsValidLabelValue(t.Value) {
			errs = append(errs, field.Invalid(p.Child("value"), t.Value, msg))
		}
		switch t.Effect {
		case corev1.TaintEffectNoSchedule:
		case corev1.TaintEffectNoExecute:
			if refuseNoExecute != "" {
				errs = append(errs, field.Forbidden(p.Child("effect"), refuseNoExecute))
			}
		default:
			errs = append(errs, field.NotSupported(p.Child("effect"), t.Effect, TaintEffects))
		}
		k := t.Key + ":" + string(t.Effect)
		if first, ok := seen[k]; ok {
			errs = append(errs, field.Duplicate(p, fmt.Sprintf("%s (the same key and effect as %s)", k, path.Index(first))))
		} else {
			seen[k] = i
		}
	}
	return errs
}

// validateResourceModels checks the grades of a cluster's resource models:
// distinct grades, the same resources in the same order in each, and
// ranges that start at 0, follow each other without gap or overlap and end
// at the largest quantity.
func validateResourceModels(models []clusterv1alpha1.ResourceModel, path *field.Path) field.ErrorList {
	var errs field.ErrorList
	for i, m := range models {
		p := path.Index(i)
		if i > 0 && m.Grade <= models[i-1].Grade {
			errs = append(errs, field.Invalid(p.Child("grade"), m.Grade, fmt.Sprintf("must be greater than the grade before it (%d)", models[i-1].Grade)))
		}
		if i > 0 && len(m.Ranges) != len(models[i-1].Ranges) {
			errs = append(errs, field.Invalid(p.Child("ranges"), len(m.Ranges), fmt.Sprintf("every model must have the same resources (%s has %d)", path.Index(i-1), len(models[i-1].Ranges))))
			continue
		}
		for j, r := range m.Ranges {
			q := p.Child("ranges").Index(j)
			switch r.Name {
			case corev1.ResourceCPU, corev1.ResourceMemory, corev1.ResourceStorage, corev1.ResourceEphemeralStorage:
			default:
				errs = append(errs, field.NotSupported(q.Child("name"), r.Name, modelResources))
			}
			if r.Max.Cmp(r.Min) <= 0 {
				errs = append(errs, field.Invalid(q.Child("max"), r.Max.String(), fmt.Sprintf("must be greater than min (%s)", r.Min.String())))
			}
			switch {
			case i == 0 && !r.Min.IsZero():
				errs = append(errs, field.Invalid(q.Child("min"), r.Min.String(), "must be 0 in the first model"))
			case i > 0 && models[i-1].Ranges[j].Name != r.Name:
				errs = append(errs, field.Invalid(q.Child("name"), r.Name, fmt.Sprintf("must be %s, as in the model before", models[i-1].Ranges[j].Name)))
			case i > 0 && models[i-1].Ranges[j].Max.Cmp(r.Min) != 0:
				errs = append(errs, field.Invalid(q.Child("min"), r.Min.String(), fmt.Sprintf("must be %s, the max of the model before (ranges may not overlap or leave gaps)", models[i-1].Ranges[j].Max.String())))
			}
			if i == len(models)-1 && r.Max.Value() != math.MaxInt64 {
				errs = append(errs, field.Invalid(q.Child("max"), r.Max.String(), fmt.Sprintf("must be %d in the last model", int64(math.MaxInt64))))
			}
		}
	}
	return errs
}
