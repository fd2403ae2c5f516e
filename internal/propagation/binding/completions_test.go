package binding

import (
	"testing"

	"k8s.io/apimachinery/pkg/api/equality"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	workv1alpha2 "github.com/karmada-go/karmada/api/work/v1alpha2"
)

func TestDivideCompletions(t *testing.T) {
	targets := func(kv ...any) []workv1alpha2.TargetCluster {
		var out []workv1alpha2.TargetCluster
		for i := 0; i < len(kv); i += 2 {
			out = append(out, workv1alpha2.TargetCluster{Name: kv[i].(string), Replicas: int32(kv[i+1].(int))})
		}
		return out
	}
	job := func(spec map[string]any) *unstructured.Unstructured {
		return &unstructured.Unstructured{Object: map[string]any{"apiVersion": "batch/v1", "kind": "Job", "metadata": map[string]any{"name": "j"}, "spec": spec}}
	}
	cases := []struct {
		name        string
		completions int64
		targets     []workv1alpha2.TargetCluster
		want        map[string]int64
	}{
		{"in proportion", 10, targets("m1", 2, "m2", 3), map[string]int64{"m1": 4, "m2": 6}},
		{"what is left over goes to the heaviest, then by name", 10, targets("m1", 1, "m2", 1, "m3", 1), map[string]int64{"m1": 4, "m2": 3, "m3": 3}},
		{"fewer completions than clusters", 1, targets("m1", 1, "m2", 2), map[string]int64{"m1": 0, "m2": 1}},
		{"a cluster not among the targets", 4, targets("m1", 1), map[string]int64{"m1": 4, "m9": 0}},
	}
	for _, c := range cases {
		in := job(map[string]any{"parallelism": int64(5), "completions": c.completions})
		var sum int64
		for cluster, want := range c.want {
			out, err := divideCompletions(in, c.targets, cluster)
			if err != nil {
				t.Fatalf("%s: %v", c.name, err)
			}
			got, _, _ := unstructured.NestedInt64(out.Object, "spec", "completions")
			if got != want {
				t.Errorf("%s: %s completes %d, want %d", c.name, cluster, got, want)
			}
			sum += got
		}
		if sum != c.completions {
			t.Errorf("%s: %d completions in all, want %d", c.name, sum, c.completions)
		}
		if n, _, _ := unstructured.NestedInt64(in.Object, "spec", "completions"); n != c.completions {
			t.Errorf("%s: the template was changed", c.name)
		}
	}
	// Jobs without completions, and other kinds, are left as they are.
	for _, in := range []*unstructured.Unstructured{job(map[string]any{"parallelism": int64(5)}),
		{Object: map[string]any{"apiVersion": "apps/v1", "kind": "Deployment", "metadata": map[string]any{"name": "d"}, "spec": map[string]any{"replicas": int64(5)}}}} {
		out, err := divideCompletions(in, targets("m1", 1, "m2", 1), "m1")
		if err != nil || !equality.Semantic.DeepEqual(in, out) {
			t.Errorf("%s changed: %v (err %v)", in.GetKind(), out.Object, err)
		}
	}
	if _, err := divideCompletions(job(map[string]any{"completions": "ten"}), targets("m1", 1), "m1"); err == nil {
		t.Error("completions that are not a number were divided")
	}
}
