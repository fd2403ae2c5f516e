package server

import (
	"fmt"
	"slices"
	"strings"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
)

func resourceQuantity(n int64) *resource.Quantity { return resource.NewQuantity(n, resource.DecimalSI) }

// addTimes adds k times each quantity of add to sum (milli-units).
func addTimes(sum, add corev1.ResourceList, k int64) {
	for n, q := range add {
		v := sum[n]
		sum[n] = *resource.NewMilliQuantity(v.MilliValue()+q.MilliValue()*k, q.Format)
	}
}

// quotaLimit is how many units (a replica with its pod, or a whole set)
// the namespace's ResourceQuotas still allow: for every quota that applies
// to pods of this priority class, and every resource it limits that a unit
// requests, (hard - used - what assumed workloads take) / the unit's
// request. Quotas on limits.* and object counts other than pods do not
// limit replicas by requests and are ignored.
func (e *Estimator) quotaLimit(namespace, priorityClass string, unit, assumed corev1.ResourceList) (int64, error) {
	if e.Quotas == nil || namespace == "" {
		return unlimited, nil
	}
	quotas, err := e.Quotas(namespace)
	if err != nil {
		return 0, fmt.Errorf("listing ResourceQuotas of %s: %w", namespace, err)
	}
	bestEffort := true
	for n, q := range unit {
		if n != corev1.ResourcePods && !q.IsZero() {
			bestEffort = false
		}
	}
	limit := int64(unlimited)
	for _, rq := range quotas {
		if !quotaApplies(rq, priorityClass, bestEffort) {
			continue
		}
		// A quota its controller has not counted yet limits by its spec.
		hard := rq.Status.Hard
		if len(hard) == 0 {
			hard = rq.Spec.Hard
		}
		for name, h := range hard {
			res, ok := requestedBy(name)
			if !ok {
				continue
			}
			per, a := unit[res], assumed[res]
			if per.MilliValue() <= 0 {
				continue
			}
			used := rq.Status.Used[name]
			avail := h.MilliValue() - used.MilliValue() - a.MilliValue()
			limit = min(limit, max(avail, 0)/per.MilliValue())
		}
	}
	return limit, nil
}

// requestedBy maps a quota's resource name to the request it limits:
// requests.cpu and cpu limit cpu requests, pods and count/pods limit pods.
func requestedBy(hard corev1.ResourceName) (corev1.ResourceName, bool) {
	switch {
	case hard == corev1.ResourcePods || hard == "count/pods":
		return corev1.ResourcePods, true
	case strings.HasPrefix(string(hard), "requests."):
		return corev1.ResourceName(strings.TrimPrefix(string(hard), "requests.")), true
	case hard == corev1.ResourceCPU || hard == corev1.ResourceMemory || hard == corev1.ResourceEphemeralStorage:
		return hard, true
	}
	return "", false
}

// quotaApplies says whether a quota's scopes select pods of the priority
// class (BestEffort when they request nothing). A quota for Terminating
// pods (activeDeadlineSeconds) or cross-namespace affinity does not apply
// to a workload's replicas.
func quotaApplies(rq *corev1.ResourceQuota, priorityClass string, bestEffort bool) bool {
	match := func(scope corev1.ResourceQuotaScope, op corev1.ScopeSelectorOperator, values []string) bool {
		switch scope {
		case corev1.ResourceQuotaScopeTerminating, corev1.ResourceQuotaScopeCrossNamespacePodAffinity:
			return false
		case corev1.ResourceQuotaScopeNotTerminating:
			return true
		case corev1.ResourceQuotaScopeBestEffort:
			return bestEffort
		case corev1.ResourceQuotaScopeNotBestEffort:
			return !bestEffort
		case corev1.ResourceQuotaScopePriorityClass:
			switch op {
			case corev1.ScopeSelectorOpIn:
				return slices.Contains(values, priorityClass)
			case corev1.ScopeSelectorOpNotIn:
				return !slices.Contains(values, priorityClass)
			case corev1.ScopeSelectorOpDoesNotExist:
				return priorityClass == ""
			default: // Exists, and the plain scope
				return priorityClass != ""
			}
		}
		return false
	}
	for _, s := range rq.Spec.Scopes {
		if !match(s, corev1.ScopeSelectorOpExists, nil) {
			return false
		}
	}
	if rq.Spec.ScopeSelector != nil {
		for _, r := range rq.Spec.ScopeSelector.MatchExpressions {
			if !match(r.ScopeName, r.Operator, r.Values) {
				return false
			}
		}
	}
	return true
}
