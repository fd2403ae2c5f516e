// Package cronfhpa is the CronFederatedHPA controller: at the times each
// rule's schedule names (in its time zone), it sets the replicas of the
// target workload (through its scale subresource) or the bounds of the
// target FederatedHPA, and records the execution in the rule's history.
//
// Its state is the status it writes: each rule's nextExecutionTime. A
// rule is due when that time has passed; an execution missed while the
// controller was down runs once when it is back (Karmada's in-memory
// scheduler skips it). A recorded time that is not a time of the rule's
// current schedule (the schedule or time zone changed) is computed afresh.
package cronfhpa

import (
	"context"
	"errors"
	"fmt"
	"time"

	autoscalingv1 "k8s.io/api/autoscaling/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/tools/record"
	"k8s.io/client-go/util/retry"
	"k8s.io/utils/ptr"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/builder"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/predicate"

	autoscalingv1alpha1 "github.com/karmada-go/karmada/api/autoscaling/v1alpha1"
	"github.com/karmada-go/karmada/internal/autoscaling/schedule"
	"github.com/karmada-go/karmada/internal/events"
	"github.com/karmada-go/karmada/internal/metrics"
	"github.com/karmada-go/karmada/internal/queues"
)

// ControllerName is the controller's name in --controllers (Karmada's).
const ControllerName = "cronFederatedHorizontalPodAutoscaler"

// Reconciler runs the CronFederatedHPAs' rules.
type Reconciler struct {
	Client   client.Client
	Recorder record.EventRecorder
	Workers  int
	// Now is the clock (time.Now when nil).
	Now func() time.Time
}

// SetupWithManager watches the CronFederatedHPAs' specs: the status it
// writes itself does not bring them back, their next times do.
func (r *Reconciler) SetupWithManager(mgr ctrl.Manager) error {
	return ctrl.NewControllerManagedBy(mgr).Named(ControllerName).
		For(&autoscalingv1alpha1.CronFederatedHPA{}, builder.WithPredicates(predicate.GenerationChangedPredicate{})).
		WithOptions(queues.Options(max(r.Workers, 1))).
		Complete(r)
}

func (r *Reconciler) now() time.Time {
	if r.Now != nil {
		return r.Now()
	}
	return time.Now()
}

// Reconcile runs the rules that are due, records their executions and
// each rule's next time, and comes back at the earliest of those.
func (r *Reconciler) Reconcile(ctx context.Context, req ctrl.Request) (res ctrl.Result, err error) {
	start := time.Now()
	defer func() {
		metrics.CronFederatedHPADuration.WithLabelValues(metrics.ResultOf(err)).Observe(time.Since(start).Seconds())
	}()
	c := &autoscalingv1alpha1.CronFederatedHPA{}
	if err := r.Client.Get(ctx, req.NamespacedName, c); err != nil || !c.DeletionTimestamp.IsZero() {
		return ctrl.Result{}, client.IgnoreNotFound(err)
	}
	now := r.now()
	before := c.Status.DeepCopy()
	histories := map[string]*autoscalingv1alpha1.ExecutionHistory{}
	for i := range c.Status.ExecutionHistories {
		histories[c.Status.ExecutionHistories[i].RuleName] = &c.Status.ExecutionHistories[i]
	}
	var next []autoscalingv1alpha1.ExecutionHistory
	var wake time.Time
	var errs []error
	for _, rule := range c.Spec.Rules {
		h := autoscalingv1alpha1.ExecutionHistory{RuleName: rule.Name}
		if old := histories[rule.Name]; old != nil {
			h = *old.DeepCopy()
		}
		at, err := r.runRule(ctx, c, rule, &h, now)
		if err != nil {
			errs = append(errs, err)
		}
		if !at.IsZero() && (wake.IsZero() || at.Before(wake)) {
			wake = at
		}
		next = append(next, h)
	}
	// Histories of rules gone (or renamed) go with them.
	c.Status.ExecutionHistories = next
	if !equality.Semantic.DeepEqual(before, &c.Status) {
		if err := r.Client.Status().Update(ctx, c); err != nil {
			events.Warning(r.Recorder, c, events.UpdateCronFederatedHPAFailed, "%v", err)
			return ctrl.Result{}, err
		}
	}
	if err := errors.Join(errs...); err != nil {
		return ctrl.Result{}, err
	}
	if wake.IsZero() {
		return ctrl.Result{}, nil
	}
	return ctrl.Result{RequeueAfter: max(wake.Sub(r.now()), time.Millisecond)}, nil
}

// runRule brings one rule's history up to now: the next time computed
// where there is none (or the recorded one is not a time of the rule's
// schedule), the rule run when that time has passed. It returns the
// rule's next time (zero when suspended).
func (r *Reconciler) runRule(ctx context.Context, c *autoscalingv1alpha1.CronFederatedHPA, rule autoscalingv1alpha1.CronFederatedHPARule, h *autoscalingv1alpha1.ExecutionHistory, now time.Time) (time.Time, error) {
	if ptr.Deref(rule.Suspend, false) {
		h.NextExecutionTime = nil
		return time.Time{}, nil
	}
	s, err := schedule.Parse(rule.Schedule)
	if err != nil {
		events.Warning(r.Recorder, c, events.StartRuleFailed, "rule %s: schedule %q: %v", rule.Name, rule.Schedule, err)
		h.NextExecutionTime = nil
		return time.Time{}, nil
	}
	loc, err := schedule.Location(rule.TimeZone)
	if err != nil {
		events.Warning(r.Recorder, c, events.StartRuleFailed, "rule %s: time zone: %v", rule.Name, err)
		h.NextExecutionTime = nil
		return time.Time{}, nil
	}
	if h.NextExecutionTime == nil || !isTimeOf(s, loc, h.NextExecutionTime.Time) {
		h.NextExecutionTime = &metav1.Time{Time: schedule.Next(s, loc, now)}
		return h.NextExecutionTime.Time, nil
	}
	if now.Before(h.NextExecutionTime.Time) {
		return h.NextExecutionTime.Time, nil
	}
	// Due: run once, however many times were missed.
	scheduled := h.NextExecutionTime.DeepCopy()
	executed := &metav1.Time{Time: now}
	start := time.Now()
	err = r.execute(ctx, c, rule)
	metrics.CronFederatedHPARuleDuration.WithLabelValues(metrics.ResultOf(err)).Observe(time.Since(start).Seconds())
	if err != nil {
		events.Warning(r.Recorder, c, events.ScaleFailed, "%v", err)
		h.FailedExecutions = prepend(h.FailedExecutions, autoscalingv1alpha1.FailedExecution{ScheduleTime: scheduled, ExecutionTime: executed, Message: err.Error()},
			int(ptr.Deref(rule.FailedHistoryLimit, 3)))
	} else {
		h.SuccessfulExecutions = prepend(h.SuccessfulExecutions, autoscalingv1alpha1.SuccessfulExecution{ScheduleTime: scheduled, ExecutionTime: executed,
			AppliedReplicas: rule.TargetReplicas, AppliedMinReplicas: rule.TargetMinReplicas, AppliedMaxReplicas: rule.TargetMaxReplicas},
			int(ptr.Deref(rule.SuccessfulHistoryLimit, 3)))
	}
	h.NextExecutionTime = &metav1.Time{Time: schedule.Next(s, loc, now)}
	return h.NextExecutionTime.Time, nil
}

// isTimeOf reports whether t is a time the schedule fires at (metav1.Time
// keeps seconds: so do cron times).
func isTimeOf(s interface{ Next(time.Time) time.Time }, loc *time.Location, t time.Time) bool {
	return s.Next(t.Add(-time.Second).In(loc)).Equal(t)
}

// prepend puts e first and keeps at most limit entries (newest first).
func prepend[T any](list []T, e T, limit int) []T {
	out := append([]T{e}, list...)
	if len(out) > limit {
		out = out[:max(limit, 0)]
	}
	return out
}

// execute does what the rule says: a FederatedHPA's bounds, or a
// workload's replicas through its scale subresource. A write that lost a
// race is retried.
func (r *Reconciler) execute(ctx context.Context, c *autoscalingv1alpha1.CronFederatedHPA, rule autoscalingv1alpha1.CronFederatedHPARule) error {
	ref := c.Spec.ScaleTargetRef
	if ref.APIVersion == autoscalingv1alpha1.SchemeGroupVersion.String() {
		if ref.Kind != "FederatedHPA" {
			return fmt.Errorf("CronFederatedHPA(%s/%s) do not support scale target %s/%s", c.Namespace, c.Name, ref.APIVersion, ref.Kind)
		}
		return retry.RetryOnConflict(retry.DefaultRetry, func() error { return r.scaleFederatedHPA(ctx, c.Namespace, ref.Name, rule) })
	}
	if rule.TargetReplicas == nil {
		return fmt.Errorf("rule %s has no targetReplicas to set on %s %s", rule.Name, ref.Kind, ref.Name)
	}
	return retry.RetryOnConflict(retry.DefaultRetry, func() error {
		return r.scaleWorkload(ctx, c.Namespace, ref.APIVersion, ref.Kind, ref.Name, *rule.TargetReplicas)
	})
}

func (r *Reconciler) scaleFederatedHPA(ctx context.Context, namespace, name string, rule autoscalingv1alpha1.CronFederatedHPARule) error {
	f := &autoscalingv1alpha1.FederatedHPA{}
	if err := r.Client.Get(ctx, client.ObjectKey{Namespace: namespace, Name: name}, f); err != nil {
		return err
	}
	next := f.DeepCopy()
	if rule.TargetMaxReplicas != nil {
		next.Spec.MaxReplicas = *rule.TargetMaxReplicas
	}
	if rule.TargetMinReplicas != nil {
		next.Spec.MinReplicas = ptr.To(*rule.TargetMinReplicas)
	}
	if equality.Semantic.DeepEqual(f.Spec, next.Spec) {
		return nil
	}
	if m := ptr.Deref(next.Spec.MinReplicas, 1); m > next.Spec.MaxReplicas {
		return fmt.Errorf("FederatedHPA %s/%s would get minReplicas %d above maxReplicas %d", namespace, name, m, next.Spec.MaxReplicas)
	}
	return r.Client.Update(ctx, next)
}

func (r *Reconciler) scaleWorkload(ctx context.Context, namespace, apiVersion, kind, name string, replicas int32) error {
	gv, err := schema.ParseGroupVersion(apiVersion)
	if err != nil {
		return fmt.Errorf("scaleTargetRef.apiVersion %q: %w", apiVersion, err)
	}
	target := &unstructured.Unstructured{}
	target.SetGroupVersionKind(gv.WithKind(kind))
	target.SetNamespace(namespace)
	target.SetName(name)
	// The scale as the API server serves it (autoscaling/v1 Scale), read
	// and written unstructured as the target is.
	scale := &unstructured.Unstructured{}
	scale.SetGroupVersionKind(autoscalingv1.SchemeGroupVersion.WithKind("Scale"))
	if err := r.Client.SubResource("scale").Get(ctx, target, scale); err != nil {
		return fmt.Errorf("reading the scale of %s %s/%s: %w", kind, namespace, name, err)
	}
	if cur, _, _ := unstructured.NestedInt64(scale.Object, "spec", "replicas"); cur == int64(replicas) {
		return nil
	}
	if err := unstructured.SetNestedField(scale.Object, int64(replicas), "spec", "replicas"); err != nil {
		return err
	}
	if err := r.Client.SubResource("scale").Update(ctx, target, client.WithSubResourceBody(scale)); err != nil {
		return fmt.Errorf("scaling %s %s/%s to %d: %w", kind, namespace, name, replicas, err)
	}
	return nil
}
