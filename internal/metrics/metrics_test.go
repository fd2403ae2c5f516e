package metrics

import (
	"strings"
	"testing"

	"github.com/prometheus/client_golang/prometheus/testutil"
	"sigs.k8s.io/controller-runtime/pkg/metrics"
)

// Registering each component's set twice is harmless, and the series known
// in advance are there before any event, at zero.
func TestRegisterExportsKnownSeriesAtZero(t *testing.T) {
	for range 2 {
		RegisterScheduler()
		RegisterControllerManager()
		RegisterAgent()
	}
	n := 3
	PendingBindings.AddPending(QueueActive, func() int { return n })
	PendingBindings.AddPending(QueueActive, func() int { return 2 })
	want := `
# HELP scheduler_pending_bindings Number of pending bindings, by queue: active (waiting for a worker), backoff (a plugin failed; retried with backoff), unschedulable (fits no cluster now).
# TYPE scheduler_pending_bindings gauge
scheduler_pending_bindings{queue="active"} 5
scheduler_pending_bindings{queue="backoff"} 0
scheduler_pending_bindings{queue="unschedulable"} 0
`
	if err := testutil.GatherAndCompare(metrics.Registry, strings.NewReader(want), "scheduler_pending_bindings"); err != nil {
		t.Error(err)
	}
	families, err := metrics.Registry.Gather()
	if err != nil {
		t.Fatal(err)
	}
	series := map[string]int{}
	for _, f := range families {
		series[f.GetName()] = len(f.GetMetric())
	}
	for name, want := range map[string]int{
		"karmada_build_info":                          1,
		"karmada_scheduler_schedule_attempts_total":   4, // result × schedule_type
		"karmada_policy_apply_attempts_total":         2,
		"karmada_eviction_processing_total":           2,
		"karmada_eviction_queue_depth":                1,
		"karmada_work_sync_workload_duration_seconds": 2,
		"karmada_resource_interpreter_errors_total":   len(InterpreterOperations),
	} {
		if series[name] != want {
			t.Errorf("%s: %d series, want %d", name, series[name], want)
		}
	}
}
