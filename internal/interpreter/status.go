package interpreter

import (
	"encoding/json"
	"fmt"
	"slices"
	"strconv"
	"strings"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"

	workv1alpha1 "github.com/karmada-go/karmada/api/work/v1alpha1"
	workv1alpha2 "github.com/karmada-go/karmada/api/work/v1alpha2"
)

// pickStatus is InterpretStatus for workloads: the named fields of the
// status, plus the object's own generation and the template generation it
// was made from (which aggregation compares).
func pickStatus(fields ...string) func(*unstructured.Unstructured) (*runtime.RawExtension, error) {
	return func(obj *unstructured.Unstructured) (*runtime.RawExtension, error) {
		status, found, err := unstructured.NestedMap(obj.Object, "status")
		if err != nil || !found {
			return nil, err
		}
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
		return marshalStatus(picked)
	}
}

// wholeStatus is the default of InterpretStatus: the whole status, nil
// when there is none.
func wholeStatus(obj *unstructured.Unstructured) (*runtime.RawExtension, error) {
	status, found, err := unstructured.NestedMap(obj.Object, "status")
	if err != nil || !found {
		return nil, err
	}
	return marshalStatus(status)
}

func marshalStatus(status map[string]any) (*runtime.RawExtension, error) {
	raw, err := json.Marshal(status)
	if err != nil {
		return nil, err
	}
	return &runtime.RawExtension{Raw: raw}, nil
}

// clusterStatuses decodes every cluster's reflected status (nil for a
// cluster that reported none).
func clusterStatuses(items []workv1alpha2.AggregatedStatusItem) ([]map[string]any, error) {
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
	return statuses, nil
}

// sumStatus is AggregateStatus for workloads: the named fields are added up
// over clusters, and then finish (observedGeneration, or a Job's
// conditions) completes the status.
func sumStatus(finish func(template *unstructured.Unstructured, status map[string]any, statuses []map[string]any, clusters []string), fields ...string) func(*unstructured.Unstructured, []workv1alpha2.AggregatedStatusItem) (*unstructured.Unstructured, error) {
	return func(template *unstructured.Unstructured, items []workv1alpha2.AggregatedStatusItem) (*unstructured.Unstructured, error) {
		statuses, err := clusterStatuses(items)
		if err != nil {
			return nil, err
		}
		out := template.DeepCopy()
		status, _, _ := unstructured.NestedMap(out.Object, "status")
		if status == nil {
			status = map[string]any{}
		}
		for _, f := range fields {
			var sum int64
			for _, s := range statuses {
				sum += toInt64(s[f])
			}
			status[f] = sum
		}
		clusters := make([]string, len(items))
		for i := range items {
			clusters[i] = items[i].ClusterName
		}
		finish(out, status, statuses, clusters)
		if err := unstructured.SetNestedMap(out.Object, status, "status"); err != nil {
			return nil, err
		}
		return out, nil
	}
}

// observedGeneration becomes the template's generation only once every
// cluster runs a copy of that generation and has observed it; until then it
// keeps its previous value.
func observedGeneration(template *unstructured.Unstructured, status map[string]any, statuses []map[string]any, _ []string) {
	if caughtUp(template.GetGeneration(), statuses) {
		status["observedGeneration"] = template.GetGeneration()
	}
}

// aggregateService sets a LoadBalancer Service's ingress points: every
// cluster's, cluster by cluster, as Karmada lists them.
func aggregateService(template *unstructured.Unstructured, items []workv1alpha2.AggregatedStatusItem) (*unstructured.Unstructured, error) {
	statuses, err := clusterStatuses(items)
	if err != nil {
		return nil, err
	}
	out := template.DeepCopy()
	if t, _, _ := unstructured.NestedString(out.Object, "spec", "type"); t == "LoadBalancer" {
		if err := unstructured.SetNestedSlice(out.Object, loadBalancerIngress(statuses), "status", "loadBalancer", "ingress"); err != nil {
			return nil, err
		}
	}
	return out, nil
}

// aggregateIngress sets an Ingress's load-balancer ingress points: every
// cluster's, cluster by cluster, as Karmada lists them.
func aggregateIngress(template *unstructured.Unstructured, items []workv1alpha2.AggregatedStatusItem) (*unstructured.Unstructured, error) {
	statuses, err := clusterStatuses(items)
	if err != nil {
		return nil, err
	}
	out := template.DeepCopy()
	ingress := loadBalancerIngress(statuses)
	if len(ingress) == 0 {
		// As the Ingress API writes it: an empty load balancer.
		unstructured.RemoveNestedField(out.Object, "status", "loadBalancer", "ingress")
		return out, unstructured.SetNestedField(out.Object, map[string]any{}, "status", "loadBalancer")
	}
	return out, unstructured.SetNestedSlice(out.Object, ingress, "status", "loadBalancer", "ingress")
}

// disruptedPods gathers a PodDisruptionBudget's disrupted pods of every
// cluster, each named <cluster>/<pod> (as Karmada names them), so that pods
// of one name in two clusters stay apart.
func disruptedPods(_ *unstructured.Unstructured, status map[string]any, statuses []map[string]any, clusters []string) {
	pods := map[string]any{}
	for i, s := range statuses {
		d, _ := s["disruptedPods"].(map[string]any)
		for pod, at := range d {
			pods[clusters[i]+"/"+pod] = at
		}
	}
	if len(pods) == 0 {
		delete(status, "disruptedPods")
		return
	}
	status["disruptedPods"] = pods
}

// aggregatePod sets a Pod's phase from every cluster's.
func aggregatePod(template *unstructured.Unstructured, items []workv1alpha2.AggregatedStatusItem) (*unstructured.Unstructured, error) {
	statuses, err := clusterStatuses(items)
	if err != nil {
		return nil, err
	}
	out := template.DeepCopy()
	if err := unstructured.SetNestedField(out.Object, podPhase(statuses), "status", "phase"); err != nil {
		return nil, err
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

// unlessFinished leaves a Job that is finished (Complete or Failed) as it
// is, as Karmada does: its status is final.
func unlessFinished(aggregate func(*unstructured.Unstructured, []workv1alpha2.AggregatedStatusItem) (*unstructured.Unstructured, error)) func(*unstructured.Unstructured, []workv1alpha2.AggregatedStatusItem) (*unstructured.Unstructured, error) {
	return func(template *unstructured.Unstructured, items []workv1alpha2.AggregatedStatusItem) (*unstructured.Unstructured, error) {
		conds, _, _ := unstructured.NestedSlice(template.Object, "status", "conditions")
		for _, c := range conds {
			cm, _ := c.(map[string]any)
			if (cm["type"] == "Complete" || cm["type"] == "Failed") && cm["status"] == "True" {
				return template, nil
			}
		}
		return aggregate(template, items)
	}
}

// aggregateJob sets the Job's conditions and times as Karmada does:
// Complete once every cluster completed, Failed (naming the clusters) once
// any failed; startTime is the earliest, completionTime the latest when all
// completed.
func aggregateJob(_ *unstructured.Unstructured, status map[string]any, statuses []map[string]any, clusters []string) {
	complete := len(statuses) > 0
	var failed []string
	var start, end, failedAt string
	for i, s := range statuses {
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
				if !slices.Contains(failed, clusters[i]) {
					failed = append(failed, clusters[i])
				}
				if at, _ := cm["lastTransitionTime"].(string); at > failedAt {
					failedAt = at
				}
			}
		}
		complete = complete && done
	}
	if start != "" {
		status["startTime"] = start
	}
	// The API server admits Complete only after SuccessCriteriaMet, and
	// Failed only after FailureTarget (Kubernetes 1.31 and later).
	// Their times are the members' (the last completion, the last
	// failure), so that the same statuses always aggregate alike.
	cond := func(typ, reason, msg, at string) map[string]any {
		c := map[string]any{"type": typ, "status": "True", "reason": reason, "message": msg}
		if at != "" {
			c["lastProbeTime"], c["lastTransitionTime"] = at, at
		}
		return c
	}
	var conds []any
	if complete {
		conds = append(conds, cond("SuccessCriteriaMet", "Completed", "Job completed", end), cond("Complete", "Completed", "Job completed", end))
		if end != "" {
			status["completionTime"] = end
		}
	}
	if len(failed) > 0 {
		msg := "Job executed failed in member clusters " + strings.Join(failed, ",")
		conds = append(conds, cond("FailureTarget", "JobFailed", msg, failedAt), cond("Failed", "JobFailed", msg, failedAt))
	}
	if conds != nil {
		status["conditions"] = conds
	} else {
		delete(status, "conditions")
	}
}

// loadBalancerIngress is every cluster's load-balancer ingress points,
// cluster by cluster (the statuses come in the clusters' order).
func loadBalancerIngress(statuses []map[string]any) []any {
	out := []any{}
	for _, s := range statuses {
		lb, _ := s["loadBalancer"].(map[string]any)
		ing, _ := lb["ingress"].([]any)
		out = append(out, ing...)
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

// specReplicas is spec.replicas, 1 when absent.
func specReplicas(obj *unstructured.Unstructured) int64 {
	if r, found, _ := nestedInt(obj.Object, "spec", "replicas"); found {
		return r
	}
	return 1
}

// observed returns the status and whether it describes the object's
// current generation.
func observed(obj *unstructured.Unstructured) (map[string]any, bool) {
	status, _, _ := unstructured.NestedMap(obj.Object, "status")
	return status, toInt64(status["observedGeneration"]) == obj.GetGeneration()
}

func healthy(ok bool) workv1alpha1.ResourceHealth {
	if ok {
		return workv1alpha1.ResourceHealthy
	}
	return workv1alpha1.ResourceUnhealthy
}

// Health of built-in kinds: a workload is healthy once its controller has
// observed the current generation and every replica is updated and
// available (ready for a StatefulSet); a Pod once Running or Succeeded; a
// LoadBalancer Service once it has an ingress; a PVC once Bound.

func deploymentHealth(obj *unstructured.Unstructured) workv1alpha1.ResourceHealth {
	status, cur := observed(obj)
	updated, available := toInt64(status["updatedReplicas"]), toInt64(status["availableReplicas"])
	return healthy(cur && updated == specReplicas(obj) && available == updated)
}

func statefulSetHealth(obj *unstructured.Unstructured) workv1alpha1.ResourceHealth {
	status, cur := observed(obj)
	updated, ready := toInt64(status["updatedReplicas"]), toInt64(status["readyReplicas"])
	return healthy(cur && updated == specReplicas(obj) && ready == updated)
}

func replicaSetHealth(obj *unstructured.Unstructured) workv1alpha1.ResourceHealth {
	status, cur := observed(obj)
	return healthy(cur && toInt64(status["availableReplicas"]) == specReplicas(obj))
}

func daemonSetHealth(obj *unstructured.Unstructured) workv1alpha1.ResourceHealth {
	status, cur := observed(obj)
	desired, updated, available := toInt64(status["desiredNumberScheduled"]), toInt64(status["updatedNumberScheduled"]), toInt64(status["numberAvailable"])
	return healthy(cur && updated == desired && available == updated)
}

func podHealth(obj *unstructured.Unstructured) workv1alpha1.ResourceHealth {
	phase, _, _ := unstructured.NestedString(obj.Object, "status", "phase")
	return healthy(phase == "Running" || phase == "Succeeded")
}

func serviceHealth(obj *unstructured.Unstructured) workv1alpha1.ResourceHealth {
	if t, _, _ := unstructured.NestedString(obj.Object, "spec", "type"); t != "LoadBalancer" {
		return workv1alpha1.ResourceHealthy
	}
	ing, _, _ := unstructured.NestedSlice(obj.Object, "status", "loadBalancer", "ingress")
	return healthy(len(ing) > 0)
}

// ingressHealth: an Ingress is healthy once a load balancer serves it.
func ingressHealth(obj *unstructured.Unstructured) workv1alpha1.ResourceHealth {
	ing, _, _ := unstructured.NestedSlice(obj.Object, "status", "loadBalancer", "ingress")
	return healthy(len(ing) > 0)
}

// pdbHealth: a PodDisruptionBudget is healthy while it has as many healthy
// pods as it wants.
func pdbHealth(obj *unstructured.Unstructured) workv1alpha1.ResourceHealth {
	current, _, _ := nestedInt(obj.Object, "status", "currentHealthy")
	desired, _, _ := nestedInt(obj.Object, "status", "desiredHealthy")
	return healthy(current >= desired)
}

func pvcHealth(obj *unstructured.Unstructured) workv1alpha1.ResourceHealth {
	phase, _, _ := unstructured.NestedString(obj.Object, "status", "phase")
	return healthy(phase == "Bound")
}
