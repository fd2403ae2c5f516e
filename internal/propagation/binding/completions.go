package binding

import (
	"fmt"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"

	workv1alpha2 "github.com/karmada-go/karmada/api/work/v1alpha2"
	"github.com/karmada-go/karmada/internal/division"
)

var jobKind = schema.GroupKind{Group: "batch", Kind: "Job"}

// divideCompletions gives a divided Job's copy for cluster its share of the
// template's completions, divided as its replicas are (as Karmada divides
// them): weighted by the replicas each target runs, so a Job of 10
// completions divided 2:3 completes 4 in one cluster and 6 in the other.
// Objects other than Jobs, and Jobs without completions, are returned as
// they are.
func divideCompletions(obj *unstructured.Unstructured, targets []workv1alpha2.TargetCluster, cluster string) (*unstructured.Unstructured, error) {
	if obj.GroupVersionKind().GroupKind() != jobKind {
		return obj, nil
	}
	completions, found, err := unstructured.NestedFieldNoCopy(obj.Object, "spec", "completions")
	if err != nil || !found {
		return obj, err
	}
	total, ok := completions.(int64)
	if f, isFloat := completions.(float64); isFloat {
		total, ok = int64(f), true
	}
	if !ok || total < 0 || total > 1<<31-1 {
		return nil, fmt.Errorf("spec.completions %v is not a count of completions", completions)
	}
	weights := make([]division.WeightedCluster, 0, len(targets))
	for _, t := range targets {
		weights = append(weights, division.WeightedCluster{Name: t.Name, Weight: int64(t.Replicas)})
	}
	var share int64
	for _, t := range division.DivideByWeight(int32(total), weights) {
		if t.Name == cluster {
			share = int64(t.Replicas)
		}
	}
	out := obj.DeepCopy()
	return out, unstructured.SetNestedField(out.Object, share, "spec", "completions")
}
