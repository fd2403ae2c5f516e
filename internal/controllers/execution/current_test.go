package execution

import (
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	workv1alpha1 "github.com/karmada-go/karmada/api/work/v1alpha1"
)

func TestContains(t *testing.T) {
	live := map[string]any{
		"apiVersion": "apps/v1",
		"kind":       "Deployment",
		"metadata": map[string]any{
			"name": "web", "namespace": "default", "resourceVersion": "12",
			"labels": map[string]any{"app": "web", "karmada.io/managed": "true"},
		},
		"spec": map[string]any{
			"replicas": int64(3),
			"template": map[string]any{"spec": map[string]any{"containers": []any{
				map[string]any{"name": "app", "image": "nginx:1.27", "imagePullPolicy": "IfNotPresent"},
			}}},
		},
		"status": map[string]any{"availableReplicas": int64(3)},
	}
	cases := []struct {
		name    string
		desired any
		want    bool
	}{
		{"the same fields", map[string]any{"kind": "Deployment", "spec": map[string]any{"replicas": int64(3)}}, true},
		{"a number of another Go type", map[string]any{"spec": map[string]any{"replicas": float64(3)}}, true},
		{"a list element holding fewer fields", map[string]any{"spec": map[string]any{"template": map[string]any{"spec": map[string]any{"containers": []any{map[string]any{"name": "app", "image": "nginx:1.27"}}}}}}, true},
		{"null matches anything", map[string]any{"metadata": map[string]any{"creationTimestamp": nil}}, true},
		{"another value", map[string]any{"spec": map[string]any{"replicas": int64(2)}}, false},
		{"a field live lacks", map[string]any{"metadata": map[string]any{"labels": map[string]any{"tier": "front"}}}, false},
		{"a list of another length", map[string]any{"spec": map[string]any{"template": map[string]any{"spec": map[string]any{"containers": []any{map[string]any{"name": "app"}, map[string]any{"name": "sidecar"}}}}}}, false},
		{"a changed list element", map[string]any{"spec": map[string]any{"template": map[string]any{"spec": map[string]any{"containers": []any{map[string]any{"name": "app", "image": "nginx:1.28"}}}}}}, false},
		{"a map where live has a scalar", map[string]any{"kind": map[string]any{"x": "y"}}, false},
		{"a number where live has a string", map[string]any{"kind": int64(1)}, false},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			if got := Contains(live, c.desired); got != c.want {
				t.Errorf("Contains = %v, want %v", got, c.want)
			}
		})
	}
}

func TestAppliedAtGeneration(t *testing.T) {
	work := &workv1alpha1.Work{ObjectMeta: metav1.ObjectMeta{Generation: 4}}
	if appliedAtGeneration(work) {
		t.Error("a Work without an Applied condition counts as applied")
	}
	work.Status.Conditions = []metav1.Condition{{Type: workv1alpha1.WorkApplied, Status: metav1.ConditionTrue, ObservedGeneration: 3}}
	if appliedAtGeneration(work) {
		t.Error("a Work applied at an older generation counts as applied")
	}
	work.Status.Conditions[0].ObservedGeneration = 4
	if !appliedAtGeneration(work) {
		t.Error("a Work applied at its generation does not count as applied")
	}
	work.Status.Conditions[0].Status = metav1.ConditionFalse
	if appliedAtGeneration(work) {
		t.Error("a failed apply counts as applied")
	}
}
