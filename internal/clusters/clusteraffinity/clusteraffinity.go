// Package clusteraffinity decides whether a Cluster is selected by a
// ClusterAffinity: names, exclusions, labels, and fields (provider, region,
// zone).
package clusteraffinity

import (
	"fmt"
	"slices"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"

	clusterv1alpha1 "github.com/karmada-go/karmada/api/cluster/v1alpha1"
	policyv1alpha1 "github.com/karmada-go/karmada/api/policy/v1alpha1"
)

// Keys a FieldSelector may test.
const (
	ProviderField = "provider"
	RegionField   = "region"
	ZoneField     = "zone"
)

// Matches reports whether the affinity selects the cluster: every criterion
// that is set must hold, and an excluded cluster never matches. A nil or
// empty affinity selects every cluster.
func Matches(a *policyv1alpha1.ClusterAffinity, c *clusterv1alpha1.Cluster) bool {
	ok, _ := Explain(a, c)
	return ok
}

// Explain is Matches with the reason a cluster is not selected.
func Explain(a *policyv1alpha1.ClusterAffinity, c *clusterv1alpha1.Cluster) (bool, string) {
	if a == nil {
		return true, ""
	}
	if slices.Contains(a.Exclude, c.Name) {
		return false, "cluster is excluded"
	}
	if len(a.ClusterNames) > 0 && !slices.Contains(a.ClusterNames, c.Name) {
		return false, "cluster is not in clusterNames"
	}
	if a.LabelSelector != nil {
		sel, err := metav1.LabelSelectorAsSelector(a.LabelSelector)
		if err != nil {
			return false, fmt.Sprintf("invalid labelSelector: %v", err)
		}
		if !sel.Matches(labels.Set(c.Labels)) {
			return false, "cluster labels do not match labelSelector"
		}
	}
	if a.FieldSelector != nil {
		for _, req := range a.FieldSelector.MatchExpressions {
			if ok, why := fieldMatches(req, c); !ok {
				return false, why
			}
		}
	}
	return true, ""
}

func fieldValues(key string, c *clusterv1alpha1.Cluster) ([]string, bool) {
	var vals []string
	add := func(v string) {
		if v != "" && !slices.Contains(vals, v) {
			vals = append(vals, v)
		}
	}
	switch key {
	case ProviderField:
		add(c.Spec.Provider)
	case RegionField:
		add(c.Spec.Region)
	case ZoneField:
		add(c.Spec.Zone)
		for _, z := range c.Spec.Zones {
			add(z)
		}
	default:
		return nil, false
	}
	return vals, true
}

func fieldMatches(req corev1.NodeSelectorRequirement, c *clusterv1alpha1.Cluster) (bool, string) {
	vals, known := fieldValues(req.Key, c)
	if !known {
		return false, fmt.Sprintf("fieldSelector key %q is not one of provider, region, zone", req.Key)
	}
	anyIn := false
	for _, v := range vals {
		if slices.Contains(req.Values, v) {
			anyIn = true
		}
	}
	var ok bool
	switch req.Operator {
	case corev1.NodeSelectorOpIn:
		ok = anyIn
	case corev1.NodeSelectorOpNotIn:
		ok = !anyIn
	case corev1.NodeSelectorOpExists:
		ok = len(vals) > 0
	case corev1.NodeSelectorOpDoesNotExist:
		ok = len(vals) == 0
	default:
		return false, fmt.Sprintf("fieldSelector operator %q is not one of In, NotIn, Exists, DoesNotExist", req.Operator)
	}
	if !ok {
		return false, fmt.Sprintf("cluster %s %v does not satisfy %s %s %v", req.Key, vals, req.Key, req.Operator, req.Values)
	}
	return true, ""
}
