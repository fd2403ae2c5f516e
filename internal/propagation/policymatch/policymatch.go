// Package policymatch decides which propagation policy holds a resource
// template: which selectors match it and how precisely, which policy wins
// (preemption, priority, specificity), and the claim labels and annotations
// that record the choice. It is pure: the detector, the override manager,
// karmadactl and the webhook share it.
package policymatch

import (
	"fmt"
	"sort"

	"k8s.io/apimachinery/pkg/types"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/labels"

	policyv1alpha1 "github.com/karmada-go/karmada/api/policy/v1alpha1"
)

// Specificity ranks how precisely a selector picks a template: a name beats a
// label selector, which beats the whole kind.
type Specificity int

// Specificities, lowest first; NoMatch means the selector does not match.
const (
	NoMatch Specificity = iota
	MatchKind
	MatchLabelSelector
	MatchName
)

// SelectorMatches says how specifically sel picks obj. A selector without a
// namespace matches, for a PropagationPolicy, only its own namespace (the
// caller passes it as defaultNamespace) and, for a ClusterPropagationPolicy,
// every namespace (defaultNamespace "").
func SelectorMatches(sel policyv1alpha1.ResourceSelector, obj *unstructured.Unstructured, defaultNamespace string) (Specificity, error) {
	if sel.APIVersion != obj.GetAPIVersion() || sel.Kind != obj.GetKind() {
		return NoMatch, nil
	}
	ns := sel.Namespace
	if ns == "" {
		ns = defaultNamespace
	}
	if ns != "" && ns != obj.GetNamespace() {
		return NoMatch, nil
	}
	if sel.Name != "" {
		if sel.Name == obj.GetName() {
			return MatchName, nil
		}
		return NoMatch, nil
	}
	if sel.LabelSelector != nil {
		s, err := metav1.LabelSelectorAsSelector(sel.LabelSelector)
		if err != nil {
			return NoMatch, fmt.Errorf("invalid labelSelector: %w", err)
		}
		if s.Matches(labels.Set(obj.GetLabels())) {
			return MatchLabelSelector, nil
		}
		return NoMatch, nil
	}
	return MatchKind, nil
}

// bestSpecificity is the most specific match among a policy's selectors.
func bestSpecificity(spec *policyv1alpha1.PropagationSpec, obj *unstructured.Unstructured, defaultNamespace string) (Specificity, error) {
	best := NoMatch
	for _, sel := range spec.ResourceSelectors {
		s, err := SelectorMatches(sel, obj, defaultNamespace)
		if err != nil {
			return NoMatch, err
		}
		if s > best {
			best = s
		}
	}
	return best, nil
}

// Candidate is a policy that matches a template.
type Candidate struct {
	// Namespaced is true for a PropagationPolicy, false for a
	// ClusterPropagationPolicy.
	Namespaced bool
	Namespace  string
	Name       string
	// PermanentID is the policy's permanent-id label: a UID that, unlike
	// the object's, survives the policy being deleted and re-created from
	// the same manifest only if the label is kept in it.
	PermanentID string
	// UID is the policy object's.
	UID types.UID
	// Created is when the policy was created (a Lazy policy activates at
	// once only for templates created since).
	Created     metav1.Time
	Priority    int32
	Specificity Specificity
	Preemption  policyv1alpha1.PreemptionBehavior
	Spec        *policyv1alpha1.PropagationSpec
	// Annotations are the policy's annotations copied onto its bindings
	// (policyv1alpha1.CopiedAnnotations).
	Annotations map[string]string
}

// Key names the policy, "namespace/name" or "name".
func (c Candidate) Key() string {
	if c.Namespaced {
		return c.Namespace + "/" + c.Name
	}
	return c.Name
}

// Candidates returns the policies that match obj. Namespaced policies only
// see templates of their own namespace; cluster-scoped templates only match
// ClusterPropagationPolicies. Policies being deleted are left out.
func Candidates(obj *unstructured.Unstructured, pps []policyv1alpha1.PropagationPolicy, cpps []policyv1alpha1.ClusterPropagationPolicy) []Candidate {
	var out []Candidate
	if obj.GetNamespace() != "" {
		for i := range pps {
			p := &pps[i]
			if p.Namespace != obj.GetNamespace() || !p.DeletionTimestamp.IsZero() {
				continue
			}
			if s, err := bestSpecificity(&p.Spec, obj, p.Namespace); err == nil && s != NoMatch {
				out = append(out, Candidate{Namespaced: true, Namespace: p.Namespace, Name: p.Name, PermanentID: p.Labels[policyv1alpha1.PropagationPolicyPermanentIDLabel], UID: p.UID, Created: p.CreationTimestamp, Priority: priority(p.Spec.Priority), Specificity: s, Preemption: p.Spec.Preemption, Spec: &p.Spec, Annotations: policyv1alpha1.ExtensionAnnotations(p.Annotations)})
			}
		}
	}
	for i := range cpps {
		p := &cpps[i]
		if !p.DeletionTimestamp.IsZero() {
			continue
		}
		if s, err := bestSpecificity(&p.Spec, obj, ""); err == nil && s != NoMatch {
			out = append(out, Candidate{Name: p.Name, PermanentID: p.Labels[policyv1alpha1.ClusterPropagationPolicyPermanentIDLabel], UID: p.UID, Created: p.CreationTimestamp, Priority: priority(p.Spec.Priority), Specificity: s, Preemption: p.Spec.Preemption, Spec: &p.Spec, Annotations: policyv1alpha1.ExtensionAnnotations(p.Annotations)})
		}
	}
	return out
}

func priority(p *int32) int32 {
	if p == nil {
		return 0
	}
	return *p
}

// Better reports whether a should win over b: a namespaced policy over a
// cluster one, then the higher priority, then the more specific selector,
// then the name in alphabetical order.
func Better(a, b Candidate) bool {
	if a.Namespaced != b.Namespaced {
		return a.Namespaced
	}
	if a.Priority != b.Priority {
		return a.Priority > b.Priority
	}
	if a.Specificity != b.Specificity {
		return a.Specificity > b.Specificity
	}
	return a.Key() < b.Key()
}

// Best returns the winning candidate, or false when there is none.
func Best(cands []Candidate) (Candidate, bool) {
	if len(cands) == 0 {
		return Candidate{}, false
	}
	sorted := append([]Candidate(nil), cands...)
	sort.SliceStable(sorted, func(i, j int) bool { return Better(sorted[i], sorted[j]) })
	return sorted[0], true
}

// Claim names the policy that currently holds a template, read from the
// template's annotations.
type Claim struct {
	Namespaced bool
	Namespace  string
	Name       string
}

// ClaimOf reads the claim recorded on a template, if any.
func ClaimOf(obj *unstructured.Unstructured) (Claim, bool) {
	a := obj.GetAnnotations()
	if name := a[policyv1alpha1.PropagationPolicyNameAnnotation]; name != "" {
		return Claim{Namespaced: true, Namespace: a[policyv1alpha1.PropagationPolicyNamespaceAnnotation], Name: name}, true
	}
	if name := a[policyv1alpha1.ClusterPropagationPolicyAnnotation]; name != "" {
		return Claim{Name: name}, true
	}
	return Claim{}, false
}

// Choose decides which policy holds a template, given the current claim (if
// any) and the matching candidates. A claim stays while its policy still
// matches: a template is not taken from one policy merely because another
// appeared. Only a candidate with preemption Always takes it, and only from
// a ClusterPropagationPolicy (when the candidate is namespaced) or from a
// policy of its own kind with lower priority, and only when preemption is
// on (--feature-gates=PropagationPolicyPreemption=true, as Karmada). A claim
// whose policy no longer matches is released, and the best candidate takes
// the template.
func Choose(current Claim, claimed bool, cands []Candidate, preemption bool) (Candidate, bool) {
	best, ok := Best(cands)
	if !claimed || !ok {
		return best, ok
	}
	var holder *Candidate
	for i := range cands {
		c := cands[i]
		if c.Namespaced == current.Namespaced && c.Name == current.Name && (!c.Namespaced || c.Namespace == current.Namespace) {
			holder = &c
			break
		}
	}
	switch {
	case holder == nil:
		return best, true
	case best.Key() == holder.Key() && best.Namespaced == holder.Namespaced:
		return *holder, true
	case !preemption || best.Preemption != policyv1alpha1.PreemptAlways:
		return *holder, true
	case best.Namespaced && !holder.Namespaced:
		return best, true
	case best.Namespaced == holder.Namespaced && best.Priority > holder.Priority:
		return best, true
	}
	return *holder, true
}

// ClaimChanges returns the annotation and label values a template (or its
// binding) must carry for claim c (nil: no claim); a nil value means the key
// must be absent.
func ClaimChanges(c *Candidate) (annotations, labels map[string]*string) {
	annotations = map[string]*string{
		policyv1alpha1.PropagationPolicyNamespaceAnnotation: nil, policyv1alpha1.PropagationPolicyNameAnnotation: nil, policyv1alpha1.ClusterPropagationPolicyAnnotation: nil,
	}
	labels = map[string]*string{policyv1alpha1.PropagationPolicyPermanentIDLabel: nil, policyv1alpha1.ClusterPropagationPolicyPermanentIDLabel: nil}
	switch {
	case c == nil:
	case c.Namespaced:
		annotations[policyv1alpha1.PropagationPolicyNamespaceAnnotation], annotations[policyv1alpha1.PropagationPolicyNameAnnotation] = &c.Namespace, &c.Name
		if c.PermanentID != "" {
			labels[policyv1alpha1.PropagationPolicyPermanentIDLabel] = &c.PermanentID
		}
	default:
		annotations[policyv1alpha1.ClusterPropagationPolicyAnnotation] = &c.Name
		if c.PermanentID != "" {
			labels[policyv1alpha1.ClusterPropagationPolicyPermanentIDLabel] = &c.PermanentID
		}
	}
	return annotations, labels
}

// MergePatch returns the part of want that differs from have, as a JSON
// merge patch map (nil values delete), or nil when nothing differs.
func MergePatch(have map[string]string, want map[string]*string) map[string]any {
	patch := map[string]any{}
	for k, v := range want {
		cur, has := have[k]
		switch {
		case v == nil && has:
			patch[k] = nil
		case v != nil && (!has || cur != *v):
			patch[k] = *v
		}
	}
	if len(patch) == 0 {
		return nil
	}
	return patch
}
