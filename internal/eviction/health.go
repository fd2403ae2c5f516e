package eviction

import (
	"encoding/json"

	workv1alpha1 "github.com/karmada-go/karmada/api/work/v1alpha1"
	workv1alpha2 "github.com/karmada-go/karmada/api/work/v1alpha2"
)

// The verdicts of workv1alpha1.EvictedCopyVerdictAnnotation.
const (
	// VerdictDelete: the workload is healthy where it went, or its binding
	// is gone: the copy is deleted.
	VerdictDelete = "Delete"
	// VerdictKeep: the copy's cluster is placed again: the copy stays for
	// the Work that replaces this one.
	VerdictKeep = "Keep"
	// VerdictHold: the workload is not healthy where it went: the copy is
	// held.
	VerdictHold = "Hold"
)

// CopyHealthy reports whether a cluster's copy is healthy (its cluster
// Ready, applied, not Unhealthy, and with at least want replicas available
// when its status counts them), and how many replicas it has available
// (healthy or not; none when its cluster is not Ready: that count is stale,
// and the copy's state unknown).
func CopyHealthy(item *workv1alpha2.AggregatedStatusItem, want int32, ready bool) (bool, int32) {
	if item == nil || !ready || !item.Applied {
		return false, 0
	}
	available, counted := availableReplicas(item)
	// Unknown health, once applied, is a kind without a health
	// interpretation (a ConfigMap): applied is all there is to know.
	if item.Health == workv1alpha1.ResourceUnhealthy {
		// What runs counts for the budget all the same.
		return false, available
	}
	if !counted {
		return true, want
	}
	return available >= want, available
}

// PlacementHealthy reports whether every cluster of a binding's placement
// runs the workload healthy (CopyHealthy), and names those that do not. An
// empty placement runs nothing: it is not healthy.
func PlacementHealthy(spec *workv1alpha2.ResourceBindingSpec, status *workv1alpha2.ResourceBindingStatus, ready func(cluster string) bool) (bool, []string) {
	items := map[string]*workv1alpha2.AggregatedStatusItem{}
	for i := range status.AggregatedStatus {
		items[status.AggregatedStatus[i].ClusterName] = &status.AggregatedStatus[i]
	}
	var not []string
	for _, t := range spec.Clusters {
		if ok, _ := CopyHealthy(items[t.Name], t.Replicas, ready(t.Name)); !ok {
			not = append(not, t.Name)
		}
	}
	return len(spec.Clusters) > 0 && len(not) == 0, not
}

// availableReplicas reads status.availableReplicas of a reflected status.
func availableReplicas(item *workv1alpha2.AggregatedStatusItem) (int32, bool) {
	if item.Status == nil || len(item.Status.Raw) == 0 {
		return 0, false
	}
	var s struct {
		AvailableReplicas *int32 `json:"availableReplicas"`
	}
	if err := json.Unmarshal(item.Status.Raw, &s); err != nil || s.AvailableReplicas == nil {
		return 0, false
	}
	return *s.AvailableReplicas, true
}
