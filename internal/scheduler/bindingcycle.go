package scheduler

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/klog/v2"
	"sigs.k8s.io/controller-runtime/pkg/client"

	clusterv1alpha1 "github.com/karmada-go/karmada/api/cluster/v1alpha1"
	policyv1alpha1 "github.com/karmada-go/karmada/api/policy/v1alpha1"
	workv1alpha2 "github.com/karmada-go/karmada/api/work/v1alpha2"
	"github.com/karmada-go/karmada/internal/anybinding"
	"github.com/karmada-go/karmada/internal/events"
	"github.com/karmada-go/karmada/internal/eviction"
	"github.com/karmada-go/karmada/internal/metrics"
	"github.com/karmada-go/karmada/internal/quota"
	"github.com/karmada-go/karmada/internal/scheduler/algorithm"
	"github.com/karmada-go/karmada/internal/scheduler/core"
	"github.com/karmada-go/karmada/internal/scheduler/plugins"
)

// The binding cycle (as kube-scheduler's, after the scheduling cycle has
// chosen): the placement written to the binding, or cleared, with its
// Scheduled condition, events and metrics.

// bindingCycle writes the scheduling cycle's outcome: the placement (or,
// when every placed cluster left the selection, none), then the Scheduled
// condition and the explanation, with Karmada's events. A plugin error
// leaves the placement as it is and the binding is retried with backoff.
func (s *Scheduler) bindingCycle(ctx context.Context, b anybinding.Binding, key string, res algorithm.Result, undo func(), clusters []clusterv1alpha1.Cluster) (time.Duration, error) {
	obj, spec, status := b.Object, b.Spec, b.Status
	var pluginErr *algorithm.PluginError
	if errors.As(res.Err, &pluginErr) {
		if err := s.setCondition(ctx, obj, status, metav1.Condition{Type: workv1alpha2.Scheduled, Status: metav1.ConditionFalse,
			Reason: ReasonSchedulerError, Message: res.Err.Error(), ObservedGeneration: obj.GetGeneration()}); err != nil {
			return 0, err
		}
		events.OnBinding(s.Recorder, obj, spec.Resource, corev1.EventTypeWarning, events.ScheduleBindingFailed, "%v", res.Err)
		return 0, res.Err
	}
	cond := metav1.Condition{Type: workv1alpha2.Scheduled, Status: metav1.ConditionTrue, Reason: ReasonSuccess, Message: "Binding has been scheduled successfully."}
	if res.Err != nil {
		cond.Status, cond.Reason, cond.Message = metav1.ConditionFalse, ReasonNoClusterFit, res.Err.Error()
		var unschedulable *core.UnschedulableError
		if errors.As(res.Err, &unschedulable) {
			cond.Reason = ReasonUnschedulable
		}
		klog.FromContext(ctx).Info("Binding does not fit any cluster", "binding", klog.KObj(obj), "reason", res.Err.Error())
		if allDeselected(spec, res) {
			if err := s.clearPlacement(ctx, b); err != nil {
				return 0, err
			}
		}
	} else if !equality.Semantic.DeepEqual(spec.Clusters, res.Targets) {
		if after, done, err := s.writePlacement(ctx, b, key, res, undo, clusters); done {
			return after, err
		}
	}
	if err := s.writeScheduled(ctx, b, key, res, cond); err != nil {
		return 0, err
	}
	if res.Err != nil {
		events.OnBinding(s.Recorder, obj, spec.Resource, corev1.EventTypeWarning, events.ScheduleBindingFailed, "%v", res.Err)
		// Unschedulable: cluster changes re-queue it at once; meanwhile it
		// is retried with a growing delay (capacity may free up).
		return s.backoff.When(key), nil
	}
	events.OnBinding(s.Recorder, obj, spec.Resource, corev1.EventTypeNormal, events.ScheduleBindingSucceed, "Binding has been scheduled successfully. Result: {%s}", targetWords(res.Targets))
	s.backoff.Forget(key)
	return 0, nil
}

// clearPlacement empties the placement of a binding every placed cluster of
// which left the user's selection (their labels or names no longer match):
// an explicit change of what was selected, not a failure, so the copies go,
// as Karmada does, even with no cluster to go to. Copies kept by an
// earlier narrowing go too: nothing will replace them.
func (s *Scheduler) clearPlacement(ctx context.Context, b anybinding.Binding) error {
	obj, spec := b.Object, b.Spec
	before := obj.DeepCopyObject().(client.Object)
	spec.Clusters = nil
	spec.GracefulEvictionTasks = slices.DeleteFunc(spec.GracefulEvictionTasks, func(t workv1alpha2.GracefulEvictionTask) bool {
		return t.Producer == eviction.ProducerScheduler && t.Reason == eviction.ReasonPlacementNarrowed
	})
	if err := s.Client.Patch(ctx, obj, client.MergeFromWithOptions(before, client.MergeFromWithOptimisticLock{})); err != nil {
		return fmt.Errorf("clearing the placement: %w", err)
	}
	klog.FromContext(ctx).Info("Placement cleared: no placed cluster is selected any more", "binding", klog.KObj(obj))
	return nil
}

// writePlacement writes the new placement: a merge patch of spec.clusters
// only, on the binding it was computed from (the taint manager and
// application failover remove clusters from the same list, and a placement
// computed before an eviction would put the evicted cluster back). done
// says the cycle ends here (a write refused): the assumption is taken back
// and, for a namespace's FederatedResourceQuota that would be exceeded, the
// binding keeps its placement, says why (SchedulerError and the API
// server's words, as Karmada's scheduler reports a refused write) and is
// tried again with backoff.
func (s *Scheduler) writePlacement(ctx context.Context, b anybinding.Binding, key string, res algorithm.Result, undo func(), clusters []clusterv1alpha1.Cluster) (after time.Duration, done bool, err error) {
	obj, spec, status := b.Object, b.Spec, b.Status
	log := klog.FromContext(ctx)
	before := obj.DeepCopyObject().(client.Object)
	narrowed := s.narrow(obj, spec, res.Targets, clusters)
	spec.Clusters = res.Targets
	if len(narrowed) > 0 {
		log.Info("Placement narrowed: the dropped clusters keep their copies until the new placement is healthy", "binding", klog.KObj(obj), "clusters", narrowed)
	}
	if err := s.Client.Patch(ctx, obj, client.MergeFromWithOptions(before, client.MergeFromWithOptimisticLock{})); err != nil {
		undo()
		if !quota.IsExceeded(err) {
			return 0, true, fmt.Errorf("writing the placement: %w", err)
		}
		if cerr := s.setCondition(ctx, obj, status, metav1.Condition{Type: workv1alpha2.Scheduled, Status: metav1.ConditionFalse,
			Reason: ReasonSchedulerError, Message: err.Error(), ObservedGeneration: obj.GetGeneration()}); cerr != nil {
			return 0, true, cerr
		}
		events.OnBinding(s.Recorder, obj, spec.Resource, corev1.EventTypeWarning, events.ScheduleBindingFailed, "%v", err)
		return s.backoff.When(key), true, nil
	}
	log.Info("Scheduled binding", "binding", klog.KObj(obj), "clusters", targetNames(res.Targets), "affinity", res.AffinityName)
	return 0, false, nil
}

// writeScheduled writes the Scheduled condition, the observed generation,
// the time and affinity term of a placement, and the explanation, with an
// optimistic lock: the merge patch replaces the conditions list whole, and
// must not put back an older copy of another controller's condition.
func (s *Scheduler) writeScheduled(ctx context.Context, b anybinding.Binding, key string, res algorithm.Result, cond metav1.Condition) error {
	obj, status := b.Object, b.Status
	patch := client.MergeFromWithOptions(obj.DeepCopyObject().(client.Object), client.MergeFromWithOptimisticLock{})
	status.SchedulerObservedGeneration = obj.GetGeneration()
	if res.Err == nil {
		now := metav1.NewTime(s.Clock.Now())
		status.LastScheduledTime = &now
		status.SchedulerObservingAffinityName = res.AffinityName
	}
	status.PlacementExplanation = res.Explanation
	cond.ObservedGeneration = obj.GetGeneration()
	meta.SetStatusCondition(&status.Conditions, cond)
	if err := s.Client.Status().Patch(ctx, obj, patch); err != nil {
		return fmt.Errorf("writing the Scheduled condition: %w", err)
	}
	s.written.Store(key, ownWrite{uid: obj.GetUID(), generation: status.SchedulerObservedGeneration})
	return nil
}

// recordAttempt counts a scheduling cycle, times it, and says in which
// pending queue the binding waits, if any: a failed plugin or write is
// retried with backoff, a binding that fits no cluster waits for a change.
func (s *Scheduler) recordAttempt(obj client.Object, key string, start time.Time, fit, write error) {
	kind := metrics.ResourceBinding
	if obj.GetNamespace() == "" {
		kind = metrics.ClusterResourceBinding
	}
	result := metrics.ResultOf(errors.Join(fit, write))
	metrics.ScheduleAttempts.WithLabelValues(result, kind).Inc()
	metrics.E2ESchedulingDuration.WithLabelValues(result, kind).Observe(metrics.Since(start))
	var pluginErr *algorithm.PluginError
	switch {
	case write != nil || errors.As(fit, &pluginErr):
		s.waiting.Store(key, metrics.QueueBackoff)
	case fit != nil:
		s.waiting.Store(key, metrics.QueueUnschedulable)
	default:
		s.waiting.Delete(key)
	}
}

// narrow records a graceful eviction task for each live cluster the new
// placement drops (unless the policy says Directly, or GracefulEviction is
// off), so that its copy stays until the workload is healthy where it is
// placed now; it returns those clusters. Clusters leaving the fleet get
// none: their copies go with them.
func (s *Scheduler) narrow(obj client.Object, spec *workv1alpha2.ResourceBindingSpec, targets []workv1alpha2.TargetCluster, clusters []clusterv1alpha1.Cluster) []string {
	if s.DirectNarrowing || obj.GetAnnotations()[policyv1alpha1.PlacementNarrowingAnnotation] == string(policyv1alpha1.PurgeModeDirectly) {
		return nil
	}
	live := map[string]bool{}
	for i := range clusters {
		live[clusters[i].Name] = clusters[i].DeletionTimestamp.IsZero()
	}
	kept := map[string]bool{}
	for _, t := range targets {
		kept[t.Name] = true
	}
	var before, dropped []string
	for _, t := range spec.Clusters {
		before = append(before, t.Name)
	}
	now := s.Clock.Now()
	for _, t := range spec.Clusters {
		if kept[t.Name] || !live[t.Name] {
			continue
		}
		eviction.AddTask(spec, eviction.Task{Cluster: t.Name, PurgeMode: policyv1alpha1.PurgeModeGracefully, Reason: eviction.ReasonPlacementNarrowed,
			Producer: eviction.ProducerScheduler, Message: "the placement no longer selects the cluster", Now: now}, t.Replicas, before)
		dropped = append(dropped, t.Name)
	}
	return dropped
}

// setCondition writes the Scheduled condition alone, when it changed.
func (s *Scheduler) setCondition(ctx context.Context, obj client.Object, status *workv1alpha2.ResourceBindingStatus, cond metav1.Condition) error {
	patch := client.MergeFromWithOptions(obj.DeepCopyObject().(client.Object), client.MergeFromWithOptimisticLock{})
	if !meta.SetStatusCondition(&status.Conditions, cond) {
		return nil
	}
	if err := s.Client.Status().Patch(ctx, obj, patch); err != nil {
		return fmt.Errorf("writing the Scheduled condition: %w", err)
	}
	return nil
}

// targetWords is a placement as Karmada's ScheduleBindingSucceed message
// writes it: "member1:1, member2:2".
func targetWords(targets []workv1alpha2.TargetCluster) string {
	out := make([]string, len(targets))
	for i, t := range targets {
		out[i] = fmt.Sprintf("%s:%d", t.Name, t.Replicas)
	}
	return strings.Join(out, ", ")
}

// allDeselected says whether a binding that fits no cluster is placed only on
// clusters its single cluster affinity no longer selects (the ClusterAffinity
// filter ruled each out). With clusterAffinities terms, or a cluster ruled
// out for another reason (taints, health, capacity), the placement stays.
func allDeselected(spec *workv1alpha2.ResourceBindingSpec, res algorithm.Result) bool {
	if len(spec.Clusters) == 0 || res.Explanation == nil || (spec.Placement != nil && len(spec.Placement.ClusterAffinities) > 0) {
		return false
	}
	var unschedulable *core.UnschedulableError
	if errors.As(res.Err, &unschedulable) {
		return false
	}
	byAffinity := map[string]bool{}
	for _, c := range res.Explanation.Clusters {
		byAffinity[c.Name] = !c.Feasible && c.Plugin == plugins.ClusterAffinityName
	}
	for _, t := range spec.Clusters {
		if !byAffinity[t.Name] {
			return false
		}
	}
	return true
}
