package interpreter

import (
	"encoding/json"
	"testing"

	"github.com/google/go-cmp/cmp"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"

	workv1alpha1 "github.com/karmada-go/karmada/api/work/v1alpha1"
	workv1alpha2 "github.com/karmada-go/karmada/api/work/v1alpha2"
)

func raw(t *testing.T, v any) *runtime.RawExtension {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return &runtime.RawExtension{Raw: b}
}

func TestReflectStatus(t *testing.T) {
	got, err := Default.ReflectStatus(obj(t, `
apiVersion: apps/v1
kind: Deployment
metadata: {name: d, generation: 4, annotations: {resourcetemplate.karmada.io/generation: "2"}}
status: {replicas: 3, readyReplicas: 3, availableReplicas: 3, updatedReplicas: 3, observedGeneration: 4, conditions: [{type: Available}]}
`))
	if err != nil {
		t.Fatal(err)
	}
	m := map[string]any{}
	if err := json.Unmarshal(got.Raw, &m); err != nil {
		t.Fatal(err)
	}
	want := map[string]any{"replicas": 3.0, "readyReplicas": 3.0, "availableReplicas": 3.0, "updatedReplicas": 3.0,
		"observedGeneration": 4.0, "generation": 4.0, "resourceTemplateGeneration": 2.0}
	if diff := cmp.Diff(want, m); diff != "" {
		t.Errorf("deployment (-want,+got):\n%s", diff)
	}

	svc, err := Default.ReflectStatus(obj(t, `{apiVersion: v1, kind: Service, metadata: {name: s}, status: {loadBalancer: {ingress: [{ip: 1.2.3.4}]}}}`))
	if err != nil || string(svc.Raw) != `{"loadBalancer":{"ingress":[{"ip":"1.2.3.4"}]}}` {
		t.Errorf("service status reflected as %s (%v), want the whole status", svc.Raw, err)
	}
	none, err := Default.ReflectStatus(obj(t, `{apiVersion: v1, kind: ConfigMap, metadata: {name: c}}`))
	if err != nil || none != nil {
		t.Errorf("configmap reflected %v (%v), want nil", none, err)
	}
}

func TestAggregateDeployment(t *testing.T) {
	tmpl := `
apiVersion: apps/v1
kind: Deployment
metadata: {name: d, generation: 2}
spec: {replicas: 5}
status: {observedGeneration: 1}
`
	member := func(replicas, gen, observed, tmplGen int) map[string]any {
		return map[string]any{"replicas": replicas, "readyReplicas": replicas, "availableReplicas": replicas, "updatedReplicas": replicas,
			"generation": gen, "observedGeneration": observed, "resourceTemplateGeneration": tmplGen}
	}
	cases := []struct {
		name    string
		items   []map[string]any
		wantGen int64
	}{
		{"every member caught up", []map[string]any{member(3, 7, 7, 2), member(2, 1, 1, 2)}, 2},
		{"a member still runs the old template", []map[string]any{member(3, 7, 7, 2), member(2, 1, 1, 1)}, 1},
		{"a member has not observed its copy", []map[string]any{member(3, 7, 6, 2), member(2, 1, 1, 2)}, 1},
	}
	for _, c := range cases {
		var items []workv1alpha2.AggregatedStatusItem
		for i, s := range c.items {
			items = append(items, workv1alpha2.AggregatedStatusItem{ClusterName: string(rune('a' + i)), Status: raw(t, s)})
		}
		got, err := Default.AggregateStatus(obj(t, tmpl), items)
		if err != nil {
			t.Fatal(err)
		}
		for _, f := range []string{"replicas", "readyReplicas", "availableReplicas", "updatedReplicas"} {
			if v, _, _ := nestedInt(got.Object, "status", f); v != 5 {
				t.Errorf("%s: %s = %d, want 5", c.name, f, v)
			}
		}
		if v, _, _ := nestedInt(got.Object, "status", "observedGeneration"); v != c.wantGen {
			t.Errorf("%s: observedGeneration = %d, want %d", c.name, v, c.wantGen)
		}
	}
}

func TestAggregateJobServicePod(t *testing.T) {
	complete := map[string]any{"succeeded": 2, "startTime": "2026-01-01T00:00:05Z", "completionTime": "2026-01-01T00:01:00Z",
		"conditions": []any{map[string]any{"type": "Complete", "status": "True"}}}
	running := map[string]any{"active": 1, "startTime": "2026-01-01T00:00:01Z"}
	job := `{apiVersion: batch/v1, kind: Job, metadata: {name: j}}`
	got, err := Default.AggregateStatus(obj(t, job), []workv1alpha2.AggregatedStatusItem{{ClusterName: "a", Status: raw(t, complete)}, {ClusterName: "b", Status: raw(t, running)}})
	if err != nil {
		t.Fatal(err)
	}
	if s, _, _ := nestedInt(got.Object, "status", "succeeded"); s != 2 {
		t.Errorf("job succeeded = %d, want 2", s)
	}
	if a, _, _ := nestedInt(got.Object, "status", "active"); a != 1 {
		t.Errorf("job active = %d, want 1", a)
	}
	if st := got.Object["status"].(map[string]any)["startTime"]; st != "2026-01-01T00:00:01Z" {
		t.Errorf("job startTime = %v, want the earliest", st)
	}
	if _, found := got.Object["status"].(map[string]any)["conditions"]; found {
		t.Error("job marked with conditions while one cluster still runs it")
	}
	got, _ = Default.AggregateStatus(obj(t, job), []workv1alpha2.AggregatedStatusItem{{ClusterName: "a", Status: raw(t, complete)}, {ClusterName: "b", Status: raw(t, complete)}})
	conds, _ := got.Object["status"].(map[string]any)["conditions"].([]any)
	if len(conds) != 2 || conds[0].(map[string]any)["type"] != "SuccessCriteriaMet" || conds[1].(map[string]any)["type"] != "Complete" {
		t.Errorf("job complete everywhere: conditions %v, want SuccessCriteriaMet and Complete", conds)
	}

	lb := func(ip string) map[string]any {
		return map[string]any{"loadBalancer": map[string]any{"ingress": []any{map[string]any{"ip": ip}}}}
	}
	svc := `{apiVersion: v1, kind: Service, metadata: {name: s}, spec: {type: LoadBalancer}}`
	items := []workv1alpha2.AggregatedStatusItem{{ClusterName: "a", Status: raw(t, lb("2.2.2.2"))}, {ClusterName: "b", Status: raw(t, lb("1.1.1.1"))}, {ClusterName: "c", Status: raw(t, lb("1.1.1.1"))}, {ClusterName: "d"}}
	// Every cluster's ingress points, cluster by cluster, as Karmada lists them.
	wantIngress := []any{map[string]any{"ip": "2.2.2.2"}, map[string]any{"ip": "1.1.1.1"}, map[string]any{"ip": "1.1.1.1"}}
	got, _ = Default.AggregateStatus(obj(t, svc), items)
	ing, _, _ := unstructured.NestedSlice(got.Object, "status", "loadBalancer", "ingress")
	if d := cmp.Diff(wantIngress, ing); d != "" {
		t.Errorf("service ingress (-want,+got):\n%s", d)
	}
	got, _ = Default.AggregateStatus(obj(t, `{apiVersion: networking.k8s.io/v1, kind: Ingress, metadata: {name: i}}`), items)
	ing, _, _ = unstructured.NestedSlice(got.Object, "status", "loadBalancer", "ingress")
	if d := cmp.Diff(wantIngress, ing); d != "" {
		t.Errorf("ingress's ingress (-want,+got):\n%s", d)
	}
	got, _ = Default.AggregateStatus(obj(t, `{apiVersion: networking.k8s.io/v1, kind: Ingress, metadata: {name: i}}`), []workv1alpha2.AggregatedStatusItem{{ClusterName: "a"}})
	if lb, found, _ := unstructured.NestedMap(got.Object, "status", "loadBalancer"); !found || len(lb) != 0 {
		t.Errorf("ingress without points: status.loadBalancer %v (found %v), want {}", lb, found)
	}

	// A finished Job's status is final.
	finished := `{apiVersion: batch/v1, kind: Job, metadata: {name: j}, status: {succeeded: 7, conditions: [{type: Complete, status: "True"}]}}`
	got, _ = Default.AggregateStatus(obj(t, finished), []workv1alpha2.AggregatedStatusItem{{ClusterName: "a", Status: raw(t, running)}})
	if s, _, _ := nestedInt(got.Object, "status", "succeeded"); s != 7 {
		t.Errorf("finished job's succeeded = %d, want it left at 7", s)
	}
	failed := map[string]any{"failed": 1, "conditions": []any{map[string]any{"type": "Failed", "status": "True"}}}
	got, _ = Default.AggregateStatus(obj(t, job), []workv1alpha2.AggregatedStatusItem{{ClusterName: "a", Status: raw(t, complete)}, {ClusterName: "b", Status: raw(t, failed)}})
	conds, _ = got.Object["status"].(map[string]any)["conditions"].([]any)
	if len(conds) != 2 || conds[0].(map[string]any)["type"] != "FailureTarget" || conds[1].(map[string]any)["type"] != "Failed" ||
		conds[1].(map[string]any)["message"] != "Job executed failed in member clusters b" {
		t.Errorf("job failed in b: conditions %v, want FailureTarget and Failed naming b", conds)
	}

	for _, c := range []struct {
		phases []string
		want   string
	}{
		{[]string{"Running", "Running"}, "Running"},
		{[]string{"Running", "Pending"}, "Pending"},
		{[]string{"Succeeded", "Failed"}, "Failed"},
		{[]string{"Succeeded", "Succeeded"}, "Succeeded"},
	} {
		var items []workv1alpha2.AggregatedStatusItem
		for i, p := range c.phases {
			items = append(items, workv1alpha2.AggregatedStatusItem{ClusterName: string(rune('a' + i)), Status: raw(t, map[string]any{"phase": p})})
		}
		got, _ := Default.AggregateStatus(obj(t, `{apiVersion: v1, kind: Pod, metadata: {name: p}}`), items)
		if phase := got.Object["status"].(map[string]any)["phase"]; phase != c.want {
			t.Errorf("pod phases %v aggregate to %v, want %s", c.phases, phase, c.want)
		}
	}
}

func TestHealth(t *testing.T) {
	cases := []struct {
		name, yaml string
		want       workv1alpha1.ResourceHealth
	}{
		{"deployment rolled out", `{apiVersion: apps/v1, kind: Deployment, metadata: {name: d, generation: 2}, spec: {replicas: 3}, status: {observedGeneration: 2, updatedReplicas: 3, availableReplicas: 3}}`, workv1alpha1.ResourceHealthy},
		{"deployment not observed yet", `{apiVersion: apps/v1, kind: Deployment, metadata: {name: d, generation: 3}, spec: {replicas: 3}, status: {observedGeneration: 2, updatedReplicas: 3, availableReplicas: 3}}`, workv1alpha1.ResourceUnhealthy},
		{"deployment short of available", `{apiVersion: apps/v1, kind: Deployment, metadata: {name: d, generation: 2}, spec: {replicas: 3}, status: {observedGeneration: 2, updatedReplicas: 3, availableReplicas: 1}}`, workv1alpha1.ResourceUnhealthy},
		{"statefulset ready", `{apiVersion: apps/v1, kind: StatefulSet, metadata: {name: s, generation: 1}, spec: {replicas: 2}, status: {observedGeneration: 1, updatedReplicas: 2, readyReplicas: 2}}`, workv1alpha1.ResourceHealthy},
		{"replicaset short", `{apiVersion: apps/v1, kind: ReplicaSet, metadata: {name: r, generation: 1}, spec: {replicas: 2}, status: {observedGeneration: 1, availableReplicas: 1}}`, workv1alpha1.ResourceUnhealthy},
		{"daemonset everywhere", `{apiVersion: apps/v1, kind: DaemonSet, metadata: {name: ds, generation: 1}, status: {observedGeneration: 1, desiredNumberScheduled: 3, updatedNumberScheduled: 3, numberAvailable: 3}}`, workv1alpha1.ResourceHealthy},
		{"pod running", `{apiVersion: v1, kind: Pod, metadata: {name: p}, status: {phase: Running}}`, workv1alpha1.ResourceHealthy},
		{"pod pending", `{apiVersion: v1, kind: Pod, metadata: {name: p}, status: {phase: Pending}}`, workv1alpha1.ResourceUnhealthy},
		{"cluster-ip service", `{apiVersion: v1, kind: Service, metadata: {name: s}, spec: {type: ClusterIP}}`, workv1alpha1.ResourceHealthy},
		{"load balancer without address", `{apiVersion: v1, kind: Service, metadata: {name: s}, spec: {type: LoadBalancer}}`, workv1alpha1.ResourceUnhealthy},
		{"load balancer with address", `{apiVersion: v1, kind: Service, metadata: {name: s}, spec: {type: LoadBalancer}, status: {loadBalancer: {ingress: [{ip: 1.1.1.1}]}}}`, workv1alpha1.ResourceHealthy},
		{"pvc bound", `{apiVersion: v1, kind: PersistentVolumeClaim, metadata: {name: p}, status: {phase: Bound}}`, workv1alpha1.ResourceHealthy},
		{"pvc pending", `{apiVersion: v1, kind: PersistentVolumeClaim, metadata: {name: p}, status: {phase: Pending}}`, workv1alpha1.ResourceUnhealthy},
		{"configmap unknown", `{apiVersion: v1, kind: ConfigMap, metadata: {name: c}}`, workv1alpha1.ResourceUnknownHealth},
	}
	for _, c := range cases {
		if got, err := Default.Health(obj(t, c.yaml)); err != nil || got != c.want {
			t.Errorf("%s: %s, want %s", c.name, got, c.want)
		}
	}
}

func TestUnobserved(t *testing.T) {
	obj := func(kind string, generation int64, status map[string]any) *unstructured.Unstructured {
		u := &unstructured.Unstructured{Object: map[string]any{"apiVersion": "apps/v1", "kind": kind, "metadata": map[string]any{"name": "x", "generation": generation}}}
		if kind == "Job" {
			u.SetAPIVersion("batch/v1")
		}
		if status != nil {
			u.Object["status"] = status
		}
		return u
	}
	cases := []struct {
		name string
		obj  *unstructured.Unstructured
		want bool
	}{
		{"a Deployment just created, no status", obj("Deployment", 1, nil), true},
		{"a Deployment whose controller lags", obj("Deployment", 2, map[string]any{"observedGeneration": int64(1), "replicas": int64(3)}), true},
		{"a Deployment observed", obj("Deployment", 2, map[string]any{"observedGeneration": int64(2)}), false},
		{"a DaemonSet observed", obj("DaemonSet", 1, map[string]any{"observedGeneration": int64(1)}), false},
		{"a Job never reports observedGeneration", obj("Job", 1, map[string]any{"active": int64(1)}), false},
		{"a ConfigMap has no status", &unstructured.Unstructured{Object: map[string]any{"apiVersion": "v1", "kind": "ConfigMap", "metadata": map[string]any{"name": "c"}}}, false},
	}
	for _, c := range cases {
		if got := Default.Unobserved(c.obj); got != c.want {
			t.Errorf("%s: Unobserved = %v, want %v", c.name, got, c.want)
		}
	}
}

// A PodDisruptionBudget's counts add up over clusters; its disrupted pods
// are named by cluster; it is healthy while it has the healthy pods it wants.
func TestAggregatePodDisruptionBudget(t *testing.T) {
	pdb := `{apiVersion: policy/v1, kind: PodDisruptionBudget, metadata: {name: p}}`
	st := func(current, desired, expected, allowed int, disrupted map[string]any) map[string]any {
		s := map[string]any{"currentHealthy": current, "desiredHealthy": desired, "expectedPods": expected, "disruptionsAllowed": allowed}
		if disrupted != nil {
			s["disruptedPods"] = disrupted
		}
		return s
	}
	got, err := Default.AggregateStatus(obj(t, pdb), []workv1alpha2.AggregatedStatusItem{
		{ClusterName: "m1", Status: raw(t, st(2, 1, 2, 1, map[string]any{"web-1": "2026-11-26T00:00:00Z"}))},
		{ClusterName: "m2", Status: raw(t, st(2, 1, 2, 1, map[string]any{"web-1": "2026-11-26T00:00:01Z"}))},
	})
	if err != nil {
		t.Fatal(err)
	}
	for f, want := range map[string]int64{"currentHealthy": 4, "desiredHealthy": 2, "expectedPods": 4, "disruptionsAllowed": 2} {
		if v, _, _ := nestedInt(got.Object, "status", f); v != want {
			t.Errorf("%s = %d, want %d", f, v, want)
		}
	}
	d, _, _ := unstructured.NestedMap(got.Object, "status", "disruptedPods")
	if len(d) != 2 || d["m1/web-1"] == nil || d["m2/web-1"] == nil {
		t.Errorf("disruptedPods %v, want m1/web-1 and m2/web-1", d)
	}
	for _, c := range []struct {
		status map[string]any
		want   workv1alpha1.ResourceHealth
	}{{st(2, 1, 2, 1, nil), workv1alpha1.ResourceHealthy}, {st(0, 1, 2, 0, nil), workv1alpha1.ResourceUnhealthy}} {
		o := obj(t, pdb)
		o.Object["status"] = c.status
		if got, _ := Default.Health(o); got != c.want {
			t.Errorf("health of %v = %s, want %s", c.status, got, c.want)
		}
	}
}
