// Package overridemanager applies OverridePolicies and
// ClusterOverridePolicies to the copy of a template made for one cluster.
package overridemanager

import (
	"encoding/json"
	"fmt"
	"slices"
	"sort"
	"strings"

	"k8s.io/apimachinery/pkg/api/equality"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	clusterv1alpha1 "github.com/karmada-go/karmada/api/cluster/v1alpha1"
	policyv1alpha1 "github.com/karmada-go/karmada/api/policy/v1alpha1"
	"github.com/karmada-go/karmada/internal/clusters/clusteraffinity"
	"github.com/karmada-go/karmada/internal/propagation/policymatch"
)

// Policy is an OverridePolicy or a ClusterOverridePolicy, reduced to what
// applying it needs.
type Policy struct {
	// Namespace is empty for a ClusterOverridePolicy.
	Namespace string
	Name      string
	Spec      *policyv1alpha1.OverrideSpec
	// specificity is how precisely the policy selects the template.
	specificity policymatch.Specificity
}

// Key names the policy: "namespace/name" or "name".
func (p Policy) Key() string {
	if p.Namespace != "" {
		return p.Namespace + "/" + p.Name
	}
	return p.Name
}

// Applied is one rule of a policy applied to a manifest, as Karmada records
// it on the Work (one entry per rule applied).
type Applied struct {
	PolicyName string                    `json:"policyName"`
	Overriders policyv1alpha1.Overriders `json:"overriders"`
}

// Matching returns the policies that select the template, in the order they
// apply: every ClusterOverridePolicy before every OverridePolicy (so that a
// namespace's own policy has the last word); within a kind, the less specific
// selectors first (a policy for the whole kind, then by label, then by name,
// so the most specific wins), then by name. A policy without selectors
// selects every template it can see. OverridePolicies only see templates of
// their namespace.
func Matching(template *unstructured.Unstructured, ops []policyv1alpha1.OverridePolicy, cops []policyv1alpha1.ClusterOverridePolicy) []Policy {
	var cluster, namespaced []Policy
	for i := range cops {
		p := &cops[i]
		if !p.DeletionTimestamp.IsZero() {
			continue
		}
		if s, ok := selects(&p.Spec, template, ""); ok {
			cluster = append(cluster, Policy{Name: p.Name, Spec: &p.Spec, specificity: s})
		}
	}
	for i := range ops {
		p := &ops[i]
		if !p.DeletionTimestamp.IsZero() || template.GetNamespace() != p.Namespace {
			continue
		}
		if s, ok := selects(&p.Spec, template, p.Namespace); ok {
			namespaced = append(namespaced, Policy{Namespace: p.Namespace, Name: p.Name, Spec: &p.Spec, specificity: s})
		}
	}
	order := func(ps []Policy) {
		sort.SliceStable(ps, func(i, j int) bool {
			if ps[i].specificity != ps[j].specificity {
				return ps[i].specificity < ps[j].specificity
			}
			return ps[i].Name < ps[j].Name
		})
	}
	order(cluster)
	order(namespaced)
	return append(cluster, namespaced...)
}

func selects(spec *policyv1alpha1.OverrideSpec, obj *unstructured.Unstructured, ns string) (policymatch.Specificity, bool) {
	if len(spec.ResourceSelectors) == 0 {
		// Below every selector's specificity: applies first.
		return policymatch.NoMatch, true
	}
	best := policymatch.NoMatch
	for _, sel := range spec.ResourceSelectors {
		s, err := policymatch.SelectorMatches(sel, obj, ns)
		if err == nil && s > best {
			best = s
		}
	}
	return best, best != policymatch.NoMatch
}

// Apply applies the policies' rules that target the cluster to obj, in
// order, and returns what was applied, split into cluster-wide and
// namespaced policies. An invalid overrider fails with the policy, the
// overrider and the path in the error.
func Apply(obj *unstructured.Unstructured, cluster *clusterv1alpha1.Cluster, policies []Policy) (clusterApplied, applied []Applied, err error) {
	for _, p := range policies {
		var used []Applied
		for i, rule := range rules(p.Spec) {
			if rule.TargetCluster != nil && !clusteraffinity.Matches(rule.TargetCluster, cluster) {
				continue
			}
			before := Identity(obj)
			err := applyOverriders(obj, &rule.Overriders)
			if err == nil {
				err = identityKept(before, Identity(obj))
			}
			if err != nil {
				kind := "OverridePolicy"
				if p.Namespace == "" {
					kind = "ClusterOverridePolicy"
				}
				return nil, nil, fmt.Errorf("%s %s, overrideRules[%d]: %w", kind, p.Key(), i, err)
			}
			used = append(used, Applied{PolicyName: p.Key(), Overriders: rule.Overriders})
		}
		if p.Namespace == "" {
			clusterApplied = append(clusterApplied, used...)
		} else {
			applied = append(applied, used...)
		}
	}
	return clusterApplied, applied, nil
}

// identityFields are the fields that say which object a manifest is, and
// who owns it: no overrider may change them. An override that moved a copy
// to another namespace, or made it another kind or name, would let whoever
// may write override policies create any object in any member (and leave
// the copy made before behind, unmanaged).
var identityFields = [][]string{
	{"apiVersion"}, {"kind"}, {"metadata", "name"}, {"metadata", "namespace"},
	{"metadata", "generateName"}, {"metadata", "uid"}, {"metadata", "ownerReferences"},
}

// IdentityField reports the identity field a JSON pointer touches: the
// field itself, a field inside it (/metadata/ownerReferences/0/uid), or an
// object that holds one ("" and /metadata replace every field in them). It
// returns the field's dotted path, or "" when the pointer touches none.
func IdentityField(pointer string) string {
	if pointer == "" {
		return "apiVersion"
	}
	parts, err := splitPointer(pointer)
	if err != nil {
		return ""
	}
	for _, f := range identityFields {
		n := min(len(parts), len(f))
		if slices.Equal(parts[:n], f[:n]) {
			return strings.Join(f, ".")
		}
	}
	return ""
}

// Identity returns the identity fields of obj, by their paths.
func Identity(obj *unstructured.Unstructured) map[string]any {
	out := make(map[string]any, len(identityFields))
	for _, f := range identityFields {
		if v, ok, _ := unstructured.NestedFieldNoCopy(obj.Object, f...); ok {
			out[strings.Join(f, ".")] = v
		}
	}
	return out
}

// identityKept fails, naming the field, its value before and after, when
// an overrider changed an identity field.
func identityKept(before, after map[string]any) error {
	for _, f := range identityFields {
		path := strings.Join(f, ".")
		b, a := before[path], after[path]
		if !equality.Semantic.DeepEqual(b, a) {
			return fmt.Errorf("%s: changed from %s to %s: overriders may not change apiVersion, kind, metadata.name, metadata.namespace, metadata.generateName, metadata.uid or metadata.ownerReferences", path, show(b), show(a))
		}
	}
	return nil
}

func show(v any) string {
	if v == nil {
		return "unset"
	}
	b, err := json.Marshal(v)
	if err != nil {
		return fmt.Sprint(v)
	}
	return string(b)
}

// rules are the policy's overrideRules, or its deprecated
// targetCluster+overriders pair as one rule.
func rules(spec *policyv1alpha1.OverrideSpec) []policyv1alpha1.RuleWithCluster {
	if len(spec.OverrideRules) > 0 {
		return spec.OverrideRules
	}
	if empty(&spec.Overriders) {
		return nil
	}
	return []policyv1alpha1.RuleWithCluster{{TargetCluster: spec.TargetCluster, Overriders: spec.Overriders}}
}

func empty(o *policyv1alpha1.Overriders) bool {
	return len(o.Plaintext) == 0 && len(o.ImageOverrider) == 0 && len(o.CommandOverrider) == 0 && len(o.ArgsOverrider) == 0 &&
		len(o.LabelsOverrider) == 0 && len(o.AnnotationsOverrider) == 0 && len(o.FieldOverrider) == 0
}

// AnnotationValue is the JSON recorded on the Work, "" for none.
func AnnotationValue(applied []Applied) (string, error) {
	if len(applied) == 0 {
		return "", nil
	}
	b, err := json.Marshal(applied)
	return string(b), err
}
