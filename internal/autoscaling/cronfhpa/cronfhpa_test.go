package cronfhpa

import (
	"context"
	"github.com/prometheus/client_golang/prometheus"
	dto "github.com/prometheus/client_model/go"
	"testing"
	"time"

	autoscalingv2 "k8s.io/api/autoscaling/v2"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/tools/record"
	"k8s.io/utils/ptr"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"

	autoscalingv1alpha1 "github.com/karmada-go/karmada/api/autoscaling/v1alpha1"
	"github.com/karmada-go/karmada/internal/metrics"
	"github.com/karmada-go/karmada/internal/scheme"
)

// The rules of a CronFederatedHPA of a FederatedHPA, run against a clock
// the test moves: next times recorded, a due rule run once however many
// times were missed, histories kept to their limits, a changed schedule's
// next time computed afresh, suspended and removed rules.
func TestRulesRunOnTheirSchedule(t *testing.T) {
	ctx := context.Background()
	now := time.Date(2026, 11, 29, 10, 0, 30, 0, time.UTC)
	fhpa := &autoscalingv1alpha1.FederatedHPA{ObjectMeta: metav1.ObjectMeta{Namespace: "shop", Name: "web"},
		Spec: autoscalingv1alpha1.FederatedHPASpec{ScaleTargetRef: autoscalingv2.CrossVersionObjectReference{APIVersion: "apps/v1", Kind: "Deployment", Name: "web"},
			MinReplicas: ptr.To[int32](1), MaxReplicas: 10}}
	cron := &autoscalingv1alpha1.CronFederatedHPA{ObjectMeta: metav1.ObjectMeta{Namespace: "shop", Name: "web"},
		Spec: autoscalingv1alpha1.CronFederatedHPASpec{
			ScaleTargetRef: autoscalingv2.CrossVersionObjectReference{APIVersion: "autoscaling.karmada.io/v1alpha1", Kind: "FederatedHPA", Name: "web"},
			Rules: []autoscalingv1alpha1.CronFederatedHPARule{
				{Name: "every-minute", Schedule: "* * * * *", TargetMinReplicas: ptr.To[int32](3), TimeZone: ptr.To("UTC"), SuccessfulHistoryLimit: ptr.To[int32](2)},
				{Name: "paused", Schedule: "* * * * *", TargetMaxReplicas: ptr.To[int32](4), Suspend: ptr.To(true)},
			}}}
	c := fake.NewClientBuilder().WithScheme(scheme.Scheme).WithObjects(fhpa, cron).WithStatusSubresource(cron).Build()
	rec := record.NewFakeRecorder(10)
	r := &Reconciler{Client: c, Recorder: rec, Now: func() time.Time { return now }}
	req := ctrl.Request{NamespacedName: client.ObjectKeyFromObject(cron)}
	get := func() *autoscalingv1alpha1.CronFederatedHPA {
		t.Helper()
		got := &autoscalingv1alpha1.CronFederatedHPA{}
		if err := c.Get(ctx, req.NamespacedName, got); err != nil {
			t.Fatal(err)
		}
		return got
	}
	reconcile := func() ctrl.Result {
		t.Helper()
		res, err := r.Reconcile(ctx, req)
		if err != nil {
			t.Fatal(err)
		}
		return res
	}

	// First look: next times, nothing run.
	if res := reconcile(); res.RequeueAfter != 30*time.Second {
		t.Errorf("requeue after %s, want 30s (to 10:01:00)", res.RequeueAfter)
	}
	h := get().Status.ExecutionHistories
	if len(h) != 2 || h[0].RuleName != "every-minute" || !h[0].NextExecutionTime.Time.Equal(time.Date(2026, 11, 29, 10, 1, 0, 0, time.UTC)) ||
		h[1].RuleName != "paused" || h[1].NextExecutionTime != nil || len(h[0].SuccessfulExecutions) != 0 {
		t.Fatalf("histories %+v", h)
	}

	// Three minutes later (two times missed): run once.
	now = now.Add(3 * time.Minute)
	reconcile()
	h = get().Status.ExecutionHistories
	got := &autoscalingv1alpha1.FederatedHPA{}
	if err := c.Get(ctx, client.ObjectKeyFromObject(fhpa), got); err != nil || *got.Spec.MinReplicas != 3 || got.Spec.MaxReplicas != 10 {
		t.Errorf("FederatedHPA %+v (err %v), want minReplicas 3, maxReplicas kept", got.Spec, err)
	}
	if len(h[0].SuccessfulExecutions) != 1 || !h[0].SuccessfulExecutions[0].ScheduleTime.Time.Equal(time.Date(2026, 11, 29, 10, 1, 0, 0, time.UTC)) ||
		*h[0].SuccessfulExecutions[0].AppliedMinReplicas != 3 || h[0].SuccessfulExecutions[0].AppliedMaxReplicas != nil ||
		!h[0].NextExecutionTime.Time.Equal(time.Date(2026, 11, 29, 10, 4, 0, 0, time.UTC)) {
		t.Errorf("after three minutes: %+v", h[0])
	}
	// Two more runs: the history keeps 2, newest first.
	for i := 0; i < 2; i++ {
		now = now.Add(time.Minute)
		reconcile()
	}
	h = get().Status.ExecutionHistories
	if n := len(h[0].SuccessfulExecutions); n != 2 || !h[0].SuccessfulExecutions[0].ScheduleTime.After(h[0].SuccessfulExecutions[1].ScheduleTime.Time) {
		t.Errorf("%d executions kept, want 2 newest first: %+v", n, h[0].SuccessfulExecutions)
	}

	// The schedule changes to hourly: the recorded next minute is not one
	// of its times, so it is computed afresh (11:00) rather than run.
	cur := get()
	cur.Spec.Rules[0].Schedule = "0 * * * *"
	cur.Spec.Rules = cur.Spec.Rules[:1]
	if err := c.Update(ctx, cur); err != nil {
		t.Fatal(err)
	}
	now = now.Add(time.Minute)
	reconcile()
	h = get().Status.ExecutionHistories
	if len(h) != 1 || len(h[0].SuccessfulExecutions) != 2 || !h[0].NextExecutionTime.Time.Equal(time.Date(2026, 11, 29, 11, 0, 0, 0, time.UTC)) {
		t.Errorf("after the schedule changed and a rule was removed: %+v", h)
	}
}

// A rule whose target is gone records a failure and a ScaleFailed event.
func TestFailedExecutionRecorded(t *testing.T) {
	ctx := context.Background()
	now := time.Date(2026, 11, 29, 10, 0, 0, 0, time.UTC)
	cron := &autoscalingv1alpha1.CronFederatedHPA{ObjectMeta: metav1.ObjectMeta{Namespace: "shop", Name: "web"},
		Spec: autoscalingv1alpha1.CronFederatedHPASpec{
			ScaleTargetRef: autoscalingv2.CrossVersionObjectReference{APIVersion: "autoscaling.karmada.io/v1alpha1", Kind: "FederatedHPA", Name: "gone"},
			Rules:          []autoscalingv1alpha1.CronFederatedHPARule{{Name: "r", Schedule: "* * * * *", TargetMaxReplicas: ptr.To[int32](4), FailedHistoryLimit: ptr.To[int32](1)}}},
		Status: autoscalingv1alpha1.CronFederatedHPAStatus{ExecutionHistories: []autoscalingv1alpha1.ExecutionHistory{{RuleName: "r", NextExecutionTime: &metav1.Time{Time: now}}}}}
	c := fake.NewClientBuilder().WithScheme(scheme.Scheme).WithObjects(cron).WithStatusSubresource(cron).Build()
	rec := record.NewFakeRecorder(10)
	r := &Reconciler{Client: c, Recorder: rec, Now: func() time.Time { return now }}
	failedBefore := ruleErrors(t)
	for i := 0; i < 2; i++ {
		if _, err := r.Reconcile(ctx, ctrl.Request{NamespacedName: client.ObjectKeyFromObject(cron)}); err != nil {
			t.Fatal(err)
		}
		now = now.Add(time.Minute)
	}
	got := &autoscalingv1alpha1.CronFederatedHPA{}
	if err := c.Get(ctx, client.ObjectKeyFromObject(cron), got); err != nil {
		t.Fatal(err)
	}
	f := got.Status.ExecutionHistories[0].FailedExecutions
	if len(f) != 1 || f[0].Message == "" || !f[0].ScheduleTime.Time.Equal(time.Date(2026, 11, 29, 10, 1, 0, 0, time.UTC)) {
		t.Errorf("failed executions %+v, want the latest one only", f)
	}
	if n := ruleErrors(t) - failedBefore; n != 2 {
		t.Errorf("karmada_cronfederatedhpa_rule_process_duration_seconds{result=error} counted %d executions, want 2", n)
	}
	select {
	case e := <-rec.Events:
		if e[:len("Warning ScaleFailed")] != "Warning ScaleFailed" {
			t.Errorf("event %q", e)
		}
	default:
		t.Error("no ScaleFailed event")
	}
}

// ruleErrors is how many rule executions the metric counted as failed.
func ruleErrors(t *testing.T) uint64 {
	t.Helper()
	m := &dto.Metric{}
	if err := metrics.CronFederatedHPARuleDuration.WithLabelValues("error").(prometheus.Histogram).Write(m); err != nil {
		t.Fatal(err)
	}
	return m.GetHistogram().GetSampleCount()
}
