package eviction

import (
	"strings"
	"testing"
	"time"

	policyv1alpha1 "github.com/karmada-go/karmada/api/policy/v1alpha1"
	workv1alpha2 "github.com/karmada-go/karmada/api/work/v1alpha2"
)

func TestEvict(t *testing.T) {
	now := time.Date(2026, 11, 24, 8, 0, 0, 0, time.UTC)
	spec := &workv1alpha2.ResourceBindingSpec{Clusters: []workv1alpha2.TargetCluster{{Name: "m1", Replicas: 2}, {Name: "m2", Replicas: 3}}}
	task := Task{Cluster: "m2", PurgeMode: policyv1alpha1.PurgeModeGracefully, Reason: ReasonTaintUntolerated, Producer: ProducerTaintManager, Now: now}
	if Evict(spec, Task{Cluster: "m9", Now: now}, true) {
		t.Fatal("evicted from a cluster the binding is not on")
	}
	if !Evict(spec, task, true) {
		t.Fatal("not evicted")
	}
	if len(spec.Clusters) != 1 || spec.Clusters[0].Name != "m1" || len(spec.GracefulEvictionTasks) != 1 {
		t.Fatalf("clusters %v, tasks %v", spec.Clusters, spec.GracefulEvictionTasks)
	}
	got := spec.GracefulEvictionTasks[0]
	if got.FromCluster != "m2" || *got.Replicas != 3 || strings.Join(got.ClustersBeforeFailover, ",") != "m1,m2" || !got.CreationTimestamp.Time.Equal(now) {
		t.Errorf("task %+v", got)
	}
	if k := KeptClusters(spec, false); len(k) != 1 || k[0] != "m2" {
		t.Errorf("kept %v, want m2", k)
	}
	// Evicted again (placed there again meanwhile): one task per cluster.
	spec.Clusters = append(spec.Clusters, workv1alpha2.TargetCluster{Name: "m2", Replicas: 1})
	task.PurgeMode = policyv1alpha1.PurgeModeDirectly
	Evict(spec, task, true)
	if len(spec.GracefulEvictionTasks) != 1 || KeptClusters(spec, false) != nil {
		t.Errorf("tasks %v kept %v, want one Directly task keeping nothing", spec.GracefulEvictionTasks, KeptClusters(spec, false))
	}
	if k := KeptClusters(spec, true); len(k) != 1 {
		t.Errorf("under a budget, a Directly task keeps its copy: %v", k)
	}
	// Without graceful eviction: no task.
	spec = &workv1alpha2.ResourceBindingSpec{Clusters: []workv1alpha2.TargetCluster{{Name: "m2"}}}
	if !Evict(spec, task, false) || len(spec.Clusters) != 0 || len(spec.GracefulEvictionTasks) != 0 {
		t.Errorf("non-graceful eviction: %+v", spec)
	}
}

func TestPreserveStateAndInject(t *testing.T) {
	rules := []policyv1alpha1.StatePreservationRule{{AliasLabelName: "failover.example.io/checkpoint", JSONPath: "{.jobStatus.checkpoint}"},
		{AliasLabelName: "failover.example.io/replicas", JSONPath: "{.replicas}"}}
	state, err := PreserveState(rules, []byte(`{"replicas": 3, "jobStatus": {"checkpoint": "s3-chk-42"}}`))
	if err != nil || state["failover.example.io/checkpoint"] != "s3-chk-42" || state["failover.example.io/replicas"] != "3" {
		t.Fatalf("state %v, %v", state, err)
	}
	if _, err := PreserveState(rules, []byte(`{"replicas": 3}`)); err == nil || !strings.Contains(err.Error(), "finds nothing") {
		t.Errorf("a missing value: %v, want an error naming it", err)
	}
	spec := &workv1alpha2.ResourceBindingSpec{Clusters: []workv1alpha2.TargetCluster{{Name: "m1"}, {Name: "m3"}},
		GracefulEvictionTasks: []workv1alpha2.GracefulEvictionTask{{FromCluster: "m2", PreservedLabelState: state, ClustersBeforeFailover: []string{"m1", "m2"}}}}
	if l := InjectedLabels(spec, "m3"); l["failover.example.io/checkpoint"] != "s3-chk-42" {
		t.Errorf("m3 (new) gets %v", l)
	}
	if l := InjectedLabels(spec, "m1"); l != nil {
		t.Errorf("m1 (there before) gets %v", l)
	}
}
