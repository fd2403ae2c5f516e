// Package quota enforces FederatedResourceQuotas: what the workloads of a
// namespace request across every member (overall, checked when a binding's
// placement is written), and the ResourceQuotas a quota sets in chosen
// members (staticAssignments).
package quota

import (
	"fmt"
	"sort"
	"strings"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"

	policyv1alpha1 "github.com/karmada-go/karmada/api/policy/v1alpha1"
	workv1alpha2 "github.com/karmada-go/karmada/api/work/v1alpha2"
)

// Usage is what a binding's placement requests: for each cluster, its
// replicas times one replica's request (each component's for a
// multi-component workload), summed; pods counts the replicas.
func Usage(spec *workv1alpha2.ResourceBindingSpec) corev1.ResourceList {
	out := corev1.ResourceList{}
	add := func(req corev1.ResourceList, replicas int32) {
		if replicas <= 0 {
			return
		}
		addMilli(out, corev1.ResourcePods, int64(replicas)*1000, resource.DecimalSI)
		for n, q := range req {
			if n != corev1.ResourcePods {
				addMilli(out, n, q.MilliValue()*int64(replicas), q.Format)
			}
		}
	}
	for _, t := range spec.Clusters {
		if len(t.Components) > 0 {
			for _, tc := range t.Components {
				for _, c := range spec.Components {
					if c.Name == tc.Name && c.ReplicaRequirements != nil {
						add(c.ReplicaRequirements.ResourceRequest, tc.Replicas)
					} else if c.Name == tc.Name {
						add(nil, tc.Replicas)
					}
				}
			}
			continue
		}
		var req corev1.ResourceList
		if spec.ReplicaRequirements != nil {
			req = spec.ReplicaRequirements.ResourceRequest
		}
		add(req, t.Replicas)
	}
	return out
}

// addMilli adds to rl[n], keeping the format it has (or format).
func addMilli(rl corev1.ResourceList, n corev1.ResourceName, milli int64, format resource.Format) {
	cur, ok := rl[n]
	if ok && cur.Format != "" {
		format = cur.Format
	}
	if format == "" {
		format = resource.DecimalSI
	}
	sum := resource.NewMilliQuantity(cur.MilliValue()+milli, format)
	if sum.MilliValue()%1000 == 0 {
		// Whole units print as such (3Gi, not 3072Mi's milli form).
		sum = resource.NewQuantity(sum.Value(), format)
	}
	rl[n] = *sum
}

// Sub is a - b, resource by resource (negative where b is larger).
func Sub(a, b corev1.ResourceList) corev1.ResourceList {
	out := corev1.ResourceList{}
	for n, q := range a {
		out[n] = q.DeepCopy()
	}
	for n, q := range b {
		addMilli(out, n, -q.MilliValue(), q.Format)
	}
	return out
}

// Add is a + b.
func Add(a, b corev1.ResourceList) corev1.ResourceList {
	out := corev1.ResourceList{}
	for n, q := range a {
		out[n] = q.DeepCopy()
	}
	for n, q := range b {
		addMilli(out, n, q.MilliValue(), q.Format)
	}
	return out
}

// Requested is the request an overall limit's name limits: cpu and
// requests.cpu limit cpu requests; pods and count/pods the replicas.
func Requested(name corev1.ResourceName) corev1.ResourceName {
	switch {
	case name == "count/pods":
		return corev1.ResourcePods
	case strings.HasPrefix(string(name), "requests."):
		return corev1.ResourceName(strings.TrimPrefix(string(name), "requests."))
	}
	return name
}

// UsedUnder is used under the names of the overall limit (requests.cpu
// reports cpu requests), keeping only what is requested, as Karmada does;
// nil when nothing is.
func UsedUnder(used, overall corev1.ResourceList) corev1.ResourceList {
	var out corev1.ResourceList
	for n := range overall {
		u, ok := used[Requested(n)]
		if !ok || u.Sign() <= 0 {
			continue
		}
		if out == nil {
			out = corev1.ResourceList{}
		}
		out[n] = u.DeepCopy()
	}
	return out
}

// ExceededError is a placement that would take a namespace past a
// FederatedResourceQuota's overall limit.
type ExceededError struct {
	Quota                  string // namespace/name
	Resource               corev1.ResourceName
	Used, Requested, Limit resource.Quantity
}

// Error is Karmada's message: the sum the namespace would request.
func (e *ExceededError) Error() string {
	sum := Add(corev1.ResourceList{e.Resource: e.Used}, corev1.ResourceList{e.Resource: e.Requested})[e.Resource]
	return fmt.Sprintf("FederatedResourceQuota(%s) exceeded for resource %s: requested sum %s, limit %s.",
		e.Quota, e.Resource, sum.String(), e.Limit.String())
}

// Check says whether a placement asking delta more fits a quota whose
// namespace uses used: every resource of spec.overall, in name order,
// must stay within its limit.
func Check(q *policyv1alpha1.FederatedResourceQuota, used, delta corev1.ResourceList) error {
	names := make([]string, 0, len(q.Spec.Overall))
	for n := range q.Spec.Overall {
		names = append(names, string(n))
	}
	sort.Strings(names)
	for _, n := range names {
		limit := q.Spec.Overall[corev1.ResourceName(n)]
		r := Requested(corev1.ResourceName(n))
		d := delta[r]
		if d.Sign() <= 0 {
			continue
		}
		u := used[r]
		if u.MilliValue()+d.MilliValue() > limit.MilliValue() {
			return &ExceededError{Quota: q.Namespace + "/" + q.Name, Resource: corev1.ResourceName(n), Used: u, Requested: d, Limit: limit}
		}
	}
	return nil
}

// IsExceeded says whether err is karmada-webhook refusing a placement for
// a FederatedResourceQuota (an API error carrying ExceededError's words).
func IsExceeded(err error) bool {
	return err != nil && strings.Contains(err.Error(), "FederatedResourceQuota(") && strings.Contains(err.Error(), ") exceeded for resource ")
}

// Reasons and markers.
const ()
