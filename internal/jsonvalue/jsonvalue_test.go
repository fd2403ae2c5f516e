package jsonvalue

import "testing"

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

func TestEqual(t *testing.T) {
	for _, tc := range []struct {
		name string
		a, b any
		want bool
	}{
		{"numbers of different types", map[string]any{"replicas": int64(3)}, map[string]any{"replicas": float64(3)}, true},
		{"zero equals absent", map[string]any{"replicas": int64(3), "readyReplicas": int64(0)}, map[string]any{"replicas": int64(3)}, true},
		{"absent equals zero", map[string]any{}, map[string]any{"unavailableReplicas": int64(0), "conditions": []any{}}, true},
		{"nil and empty map", nil, map[string]any{"readyReplicas": int64(0)}, true},
		{"a count changed", map[string]any{"readyReplicas": int64(1)}, map[string]any{"readyReplicas": int64(2)}, false},
		{"a field appeared", map[string]any{}, map[string]any{"readyReplicas": int64(1)}, false},
		{"a field went", map[string]any{"readyReplicas": int64(1)}, map[string]any{}, false},
		{"a string changed", map[string]any{"phase": "Running"}, map[string]any{"phase": "Pending"}, false},
		{"nested list", map[string]any{"ingress": []any{map[string]any{"ip": "1.2.3.4"}}}, map[string]any{"ingress": []any{map[string]any{"ip": "1.2.3.5"}}}, false},
		{"list length", map[string]any{"ingress": []any{"a"}}, map[string]any{"ingress": []any{"a", "b"}}, false},
		{"type changed", map[string]any{"x": "1"}, map[string]any{"x": int64(1)}, false},
	} {
		if got := Equal(tc.a, tc.b); got != tc.want {
			t.Errorf("%s: Equal(%v, %v) = %v, want %v", tc.name, tc.a, tc.b, got, tc.want)
		}
	}
}
