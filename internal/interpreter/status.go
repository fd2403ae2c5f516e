package interpreter

import (
	"encoding/json"
	"fmt"
	"sort"
	"strconv"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"

	workv1alpha1 "github.com/karmada-go/karmada/api/work/v1alpha1"
	workv1alpha2 "github.com/karmada-go/karmada/api/work/v1alpha2"
)

// Status fields reflected from members, per kind. Kinds not listed reflect
// their whole status.
var reflectedFields = map[string][]string{
	"apps/Deployment":  {"replicas", "updatedReplicas", "readyReplicas", "availableReplicas", "unavailableReplicas", "observedGeneration"},
	"apps/StatefulSet": {"replicas", "readyReplicas", "currentReplicas", "updatedReplicas", "availableReplicas", "observedGeneration"},
	"apps/ReplicaSet":  {"replicas", "readyReplicas", "availableReplicas", "fullyLabeledReplicas", "observedGeneration"},
	"apps/DaemonSet": {"currentNumberScheduled", "numberMisscheduled", "desiredNumberScheduled", "numberReady",
		"updatedNumberScheduled", "numberAvailable", "numberUnavailable", "observedGeneration"},
}

func kindKey(obj *unstructured.Unstructured) string {
	gk := groupKind(obj)
	return gk.Group + "/" + gk.Kind
}

// ReflectStatus returns what of a member object's status is recorded in its
// Work: selected fields for workloads, plus the object's own generation and
// the template generation it was made from; the whole status otherwise. No
// status gives nil.
func ReflectStatus(obj *unstructured.Unstructured) (*runtime.RawExtension, error) {
	status, found, err := unstructured.NestedMap(obj.Object, "status")
	if err != nil || !found {
		return nil, err
	}
	if fields, ok := reflectedFields[kindKey(obj)]; ok {
		picked := map[string]any{}
		for _, f := range fields {
			if v, ok := status[f]; ok {
				picked[f] = v
			}
		}
		picked["generation"] = obj.GetGeneration()
		if g, err := strconv.ParseInt(obj.GetAnnotations()[workv1alpha2.ResourceTemplateGenerationAnnotation], 10, 64); err == nil {
			picked["resourceTemplateGeneration"] = g
		}
		status = picked
	}
	raw, err := json.Marshal(status)
	if err != nil {
		return nil, err
	}
	return &runtime.RawExtension{Raw: raw}, nil
}

// observingKinds are the kinds whose controllers report, in
// status.observedGeneration, which generation their status describes.
var observingKinds = map[string]bool{"apps/Deployment": true, "apps/StatefulSet": true, "apps/ReplicaSet": true, "apps/DaemonSet": true}

// Unobserved reports whether a member's copy carries no status of its
// current generation yet: a workload whose controller reports
// status.observedGeneration, and has not observed the object's generation
// (a copy just created or just changed). Such a status says nothing about
// the current spec; reflecting it would only add a write.
func Unobserved(obj *unstructured.Unstructured) bool {
	if !observingKinds[kindKey(obj)] {
		return false
	}
	observed, _, _ := unstructured.NestedInt64(obj.Object, "status", "observedGeneration")
	return observed < obj.GetGeneration()
}

// summedFields are added up over clusters when aggregating, per kind.
var summedFields = map[string][]string{
	"apps/Deployment":  {"replicas", "updatedReplicas", "readyReplicas", "availableReplicas", "unavailableReplicas"},
	"apps/StatefulSet": {"replicas", "readyReplicas", "currentReplicas", "updatedReplicas", "availableReplicas"},
	"apps/ReplicaSet":  {"replicas", "readyReplicas", "availableReplicas", "fullyLabeledReplicas"},
	"apps/DaemonSet": {"currentNumberScheduled", "numberMisscheduled", "desiredNumberScheduled", "numberReady",
		"updatedNumberScheduled", "numberAvailable", "numberUnavailable"},
	"batch/Job": {"active", "succeeded", "failed"},
}

// AggregateStatus returns the template with its status set from the status
// reflected by every cluster. For workloads, observedGeneration becomes the
// template's generation only once every cluster runs a copy of that
// generation and has observed it; until then it keeps its previous value.
// Kinds without aggregation return the template unchanged.
func AggregateStatus(template *unstructured.Unstructured, items []workv1alpha2.AggregatedStatusItem) (*unstructured.Unstructured, error) {
	out := template.DeepCopy()
	statuses := make([]map[string]any, 0, len(items))
	for _, it := range items {
		if it.Status == nil || len(it.Status.Raw) == 0 {
			statuses = append(statuses, nil)
			continue
		}
		m := map[string]any{}
		if err := json.Unmarshal(it.Status.Raw, &m); err != nil {
			return nil, fmt.Errorf("status of cluster %s: %w", it.ClusterName, err)
		}
		statuses = append(statuses, m)
	}
	key := kindKey(out)
	switch {
	case summedFields[key] != nil:
		status, _, _ := unstructured.NestedMap(out.Object, "status")
		if status == nil {
			status = map[string]any{}
		}
		for _, f := range summedFields[key] {
			var sum int64
			for _, s := range statuses {
				sum += toInt64(s[f])
			}
			status[f] = sum
		}
		if key != "batch/Job" {
			if caughtUp(out.GetGeneration(), statuses) {
				status["observedGeneration"] = out.GetGeneration()
			}
		} else {
			aggregateJob(status, statuses)
		}
		if err := unstructured.SetNestedMap(out.Object, status, "status"); err != nil {
			return nil, err
		}
	case key == "/Service":
		if t, _, _ := unstructured.NestedString(out.Object, "spec", "type"); t == "LoadBalancer" {
			if err := unstructured.SetNestedSlice(out.Object, loadBalancerIngress(statuses), "status", "loadBalancer", "ingress"); err != nil {
				return nil, err
			}
		}
	case key == "/Pod":
		if err := unstructured.SetNestedField(out.Object, podPhase(statuses), "status", "phase"); err != nil {
			return nil, err
		}
	}
	return out, nil
}

// caughtUp reports whether every cluster reports a copy made from the
// template's generation, observed by the member's controller.
func caughtUp(generation int64, statuses []map[string]any) bool {
	if len(statuses) == 0 {
		return false
	}
	for _, s := range statuses {
		if s == nil || toInt64(s["resourceTemplateGeneration"]) != generation || toInt64(s["observedGeneration"]) != toInt64(s["generation"]) {
			return false
		}
	}
	return true
}

// aggregateJob sets the Job's conditions and times: Complete once every
// cluster completed, Failed once any failed; startTime is the earliest,
// completionTime the latest when all completed.
func aggregateJob(status map[string]any, statuses []map[string]any) {
	complete, failed := len(statuses) > 0, false
	var start, end string
	for _, s := range statuses {
		if s == nil {
			complete = false
			continue
		}
		if st, _ := s["startTime"].(string); st != "" && (start == "" || st < start) {
			start = st
		}
		if ct, _ := s["completionTime"].(string); ct != "" && ct > end {
			end = ct
		}
		conds, _ := s["conditions"].([]any)
		done := false
		for _, c := range conds {
			cm, _ := c.(map[string]any)
			if cm["status"] != "True" {
				continue
			}
			switch cm["type"] {
			case "Complete":
				done = true
			case "Failed":
				failed = true
			}
		}
		complete = complete && done
	}
	if start != "" {
		status["startTime"] = start
	}
	var conds []any
	if complete {
		conds = append(conds, map[string]any{"type": "Complete", "status": "True", "reason": "Completed", "message": "Job completed in every cluster"})
		if end != "" {
			status["completionTime"] = end
		}
	}
	if failed {
		conds = append(conds, map[string]any{"type": "Failed", "status": "True", "reason": "JobFailed", "message": "Job failed in at least one cluster"})
	}
	if conds != nil {
		status["conditions"] = conds
	} else {
		delete(status, "conditions")
	}
}

func loadBalancerIngress(statuses []map[string]any) []any {
	seen := map[string]bool{}
	var out []any
	for _, s := range statuses {
		lb, _ := s["loadBalancer"].(map[string]any)
		ing, _ := lb["ingress"].([]any)
		for _, i := range ing {
			raw, _ := json.Marshal(i)
			if !seen[string(raw)] {
				seen[string(raw)] = true
				out = append(out, i)
			}
		}
	}
	sort.SliceStable(out, func(a, b int) bool {
		ra, _ := json.Marshal(out[a])
		rb, _ := json.Marshal(out[b])
		return string(ra) < string(rb)
	})
	if out == nil {
		out = []any{}
	}
	return out
}

// podPhase is the fleet-wide phase: Failed if any failed, else Pending if
// any is pending or unknown, else Running if any runs, else Succeeded.
func podPhase(statuses []map[string]any) string {
	if len(statuses) == 0 {
		return "Pending"
	}
	phases := map[string]bool{}
	for _, s := range statuses {
		p, _ := s["phase"].(string)
		if p == "" {
			p = "Pending"
		}
		phases[p] = true
	}
	switch {
	case phases["Failed"]:
		return "Failed"
	case phases["Pending"] || phases["Unknown"]:
		return "Pending"
	case phases["Running"]:
		return "Running"
	}
	return "Succeeded"
}

func toInt64(v any) int64 {
	switch n := v.(type) {
	case int64:
		return n
	case float64:
		return int64(n)
	case int:
		return int64(n)
	case json.Number:
		i, _ := n.Int64()
		return i
	}
	return 0
}

// Health judges a member object's health from its status.
func Health(obj *unstructured.Unstructured) workv1alpha1.ResourceHealth {
	status, _, _ := unstructured.NestedMap(obj.Object, "status")
	gen := obj.GetGeneration()
	observed := toInt64(status["observedGeneration"])
	specReplicas := int64(1)
	if r, found, _ := nestedInt(obj.Object, "spec", "replicas"); found {
		specReplicas = r
	}
	healthy := func(ok bool) workv1alpha1.ResourceHealth {
		if ok {
			return workv1alpha1.ResourceHealthy
		}
		return workv1alpha1.ResourceUnhealthy
	}
	switch groupKind(obj) {
	case deploymentKind:
		updated, available := toInt64(status["updatedReplicas"]), toInt64(status["availableReplicas"])
		return healthy(observed == gen && updated == specReplicas && available == updated)
	case statefulSetKind:
		updated, ready := toInt64(status["updatedReplicas"]), toInt64(status["readyReplicas"])
		return healthy(observed == gen && updated == specReplicas && ready == updated)
	case replicaSetKind:
		return healthy(observed == gen && toInt64(status["availableReplicas"]) == specReplicas)
	case daemonSetKind:
		desired, updated, available := toInt64(status["desiredNumberScheduled"]), toInt64(status["updatedNumberScheduled"]), toInt64(status["numberAvailable"])
		return healthy(observed == gen && updated == desired && available == updated)
	case podKind:
		phase, _ := status["phase"].(string)
		return healthy(phase == "Running" || phase == "Succeeded")
	case serviceKind:
		if t, _, _ := unstructured.NestedString(obj.Object, "spec", "type"); t != "LoadBalancer" {
			return workv1alpha1.ResourceHealthy
		}
		ing, _, _ := unstructured.NestedSlice(obj.Object, "status", "loadBalancer", "ingress")
		return healthy(len(ing) > 0)
	case pvcKind:
		phase, _ := status["phase"].(string)
		return healthy(phase == "Bound")
	}
	return workv1alpha1.ResourceUnknownHealth
}
