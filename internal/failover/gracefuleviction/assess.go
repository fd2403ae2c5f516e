package gracefuleviction

import (
	"fmt"
	"slices"
	"strings"
	"time"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	policyv1alpha1 "github.com/karmada-go/karmada/api/policy/v1alpha1"
	workv1alpha2 "github.com/karmada-go/karmada/api/work/v1alpha2"
	"github.com/karmada-go/karmada/internal/eviction"
)

// Input is what a binding's eviction tasks are assessed against.
type Input struct {
	Spec       *workv1alpha2.ResourceBindingSpec
	Status     *workv1alpha2.ResourceBindingStatus
	Generation int64
	// Ready reports whether a cluster is Ready: what a cluster that is not
	// reported last is stale, and counts for nothing.
	Ready func(cluster string) bool
	Now   time.Time
	// Timeout is the grace period of tasks that set none
	// (--graceful-eviction-timeout).
	Timeout time.Duration
	// MinAvailable is the binding's fleet-wide budget (0: none): ending a
	// task never takes the available replicas below it.
	MinAvailable int32
	// Recovered reports whether what evicted the task's cluster is over (nil:
	// never): a task held for want of a replacement is then undone, the
	// cluster placed back.
	Recovered func(t *workv1alpha2.GracefulEvictionTask) bool
	// Pull reports whether a cluster is in Pull mode (nil: none is): its
	// agent removes an ended task's copy whenever it is back, unchecked, so
	// a task of a pull cluster that is not Ready is not ended.
	Pull func(cluster string) bool
}

// Ended is a task that is over, and why.
type Ended struct {
	Task workv1alpha2.GracefulEvictionTask
	Why  string
	// Restored: the cluster was placed back, its copy stays.
	Restored bool
	// Gated: the task ended because the workload is healthy where it went;
	// its copy is to be deleted only if that still holds when it is
	// (workv1alpha1.EvictedAnnotation on its Work).
	Gated bool
}

// Outcome is what becomes of the tasks.
type Outcome struct {
	// Tasks are those that stay (with their creation time set).
	Tasks []workv1alpha2.GracefulEvictionTask
	Ended []Ended
	// Restored are clusters placed back: their eviction, held because
	// nothing could replace them, is undone now that they recovered.
	Restored []workv1alpha2.TargetCluster
	// Blocked is the EvictionBlocked condition, nil when no task is held
	// for safety.
	Blocked *metav1.Condition
	// After is when to look again (0: when the binding changes).
	After time.Duration
}

// Assess decides, task by task, whether the evicted copy may go now:
//   - a task with suppressDeletion true (or purgeMode Never) stays until a
//     user sets suppressDeletion to false;
//   - otherwise it waits for the scheduler to have placed the binding since
//     the eviction; with no cluster to take the workload it is held
//     (EvictionBlocked NoReplacement), whatever its grace period;
//   - it ends when every cluster of the placement runs the workload healthy
//     (Applied, Healthy or of a kind without health, as many replicas
//     available as it was given), its copy to be deleted only if that still
//     holds when it is (Ended.Gated); a task of a pull-mode cluster that is
//     not Ready waits for the cluster (its agent would delete the copy
//     unchecked when back);
//   - and never because its grace period is over: a task whose grace period
//     ends while the replacement is not healthy is held (ReplacementUnhealthy),
//     whatever is known of the evicted copy (a cluster that is not Ready says
//     nothing about its copy: it is unknown, not gone);
//   - and never while ending it would take the available replicas below the
//     binding's minAvailable (held: BelowMinAvailable); under a budget even
//     a Directly task keeps its copy until the budget allows it to go.
func Assess(in Input) Outcome {
	var out Outcome
	var blocked []string
	reason := ""
	block := func(r, msg string) {
		if reason == "" {
			reason = r
		}
		blocked = append(blocked, msg)
	}
	wait := func(d time.Duration) {
		if d > 0 && (out.After == 0 || d < out.After) {
			out.After = d
		}
	}
	items := map[string]*workv1alpha2.AggregatedStatusItem{}
	for i := range in.Status.AggregatedStatus {
		items[in.Status.AggregatedStatus[i].ClusterName] = &in.Status.AggregatedStatus[i]
	}
	scheduled := meta.FindStatusCondition(in.Status.Conditions, workv1alpha2.Scheduled)
	caughtUp := in.Status.SchedulerObservedGeneration >= in.Generation
	placedHealthy, placedAny := true, false
	var placedAvailable int32
	for _, t := range in.Spec.Clusters {
		ok, n := eviction.CopyHealthy(items[t.Name], t.Replicas, in.Ready(t.Name))
		placedHealthy = placedHealthy && ok
		placedAny = placedAny || ok
		placedAvailable += n
	}
	// What each kept copy contributes to the budget.
	keptAvailable := map[string]int32{}
	var keptTotal int32
	budgeted := in.MinAvailable > 0
	for _, t := range in.Spec.GracefulEvictionTasks {
		if !eviction.KeepsCopy(&t, budgeted) {
			continue
		}
		var want int32
		if t.Replicas != nil {
			want = *t.Replicas
		}
		_, n := eviction.CopyHealthy(items[t.FromCluster], want, in.Ready(t.FromCluster))
		keptAvailable[t.FromCluster] = n
		keptTotal += n
	}

	for _, t := range in.Spec.GracefulEvictionTasks {
		if t.CreationTimestamp == nil {
			now := metav1.NewTime(in.Now)
			t.CreationTimestamp = &now
		}
		keep := func() { out.Tasks = append(out.Tasks, t) }
		end := func(why string) {
			out.Ended = append(out.Ended, Ended{Task: t, Why: why})
			keptTotal -= keptAvailable[t.FromCluster]
		}
		if slices.ContainsFunc(in.Spec.Clusters, func(c workv1alpha2.TargetCluster) bool { return c.Name == t.FromCluster }) {
			// Placed there again (a narrowing undone): nothing to evict.
			out.Ended = append(out.Ended, Ended{Task: t, Why: "the workload is placed there again", Restored: true})
			continue
		}
		switch {
		case t.SuppressDeletion != nil && *t.SuppressDeletion:
			keep()
			continue
		case t.SuppressDeletion != nil:
			end("its deletion is no longer suppressed")
			continue
		case t.PurgeMode == policyv1alpha1.PurgeModeNever:
			keep()
			continue
		case !caughtUp:
			// The scheduler has not placed the binding since it changed.
			keep()
			continue
		case len(in.Spec.Clusters) == 0 || scheduled == nil || scheduled.Status != metav1.ConditionTrue:
			why := "the scheduler has not placed it"
			if scheduled != nil && scheduled.Message != "" {
				why = scheduled.Message
			}
			if in.Recovered != nil && in.Recovered(&t) && !slices.ContainsFunc(in.Spec.Clusters, func(c workv1alpha2.TargetCluster) bool { return c.Name == t.FromCluster }) {
				var replicas int32
				if t.Replicas != nil {
					replicas = *t.Replicas
				}
				out.Restored = append(out.Restored, workv1alpha2.TargetCluster{Name: t.FromCluster, Replicas: replicas})
				out.Ended = append(out.Ended, Ended{Task: t, Why: "the cluster recovered before any other could take the workload: it is placed back", Restored: true})
				continue
			}
			block(workv1alpha2.ReasonNoReplacement, fmt.Sprintf("the copy in %s is kept: no cluster can take the workload (%s)", t.FromCluster, why))
			keep()
			continue
		}
		// The budget: what stays available once this copy is gone.
		if in.MinAvailable > 0 && keptAvailable[t.FromCluster] > 0 && placedAvailable+keptTotal-keptAvailable[t.FromCluster] < in.MinAvailable {
			block(workv1alpha2.ReasonBelowMinAvailable, fmt.Sprintf("the copy in %s is kept: without its %d available replicas, %d would be available, under minAvailable %d",
				t.FromCluster, keptAvailable[t.FromCluster], placedAvailable+keptTotal-keptAvailable[t.FromCluster], in.MinAvailable))
			keep()
			continue
		}
		if t.PurgeMode == policyv1alpha1.PurgeModeDirectly {
			// Kept only for the budget, which now allows it to go.
			end("purge mode Directly, within the availability budget")
			continue
		}
		if placedHealthy && in.Pull != nil && in.Pull(t.FromCluster) && !in.Ready(t.FromCluster) {
			// Ended now, the copy would be deleted when the agent is back,
			// whatever the workload's health then: wait for it.
			keep()
			continue
		}
		if placedHealthy {
			out.Ended = append(out.Ended, Ended{Task: t, Why: "the workload is healthy in " + strings.Join(targetNames(in.Spec.Clusters), ", "), Gated: true})
			keptTotal -= keptAvailable[t.FromCluster]
			continue
		}
		grace := in.Timeout
		if t.GracePeriodSeconds != nil {
			grace = time.Duration(*t.GracePeriodSeconds) * time.Second
		}
		if left := t.CreationTimestamp.Add(grace).Sub(in.Now); left > 0 {
			keep()
			wait(left)
			continue
		}
		// The grace period is over and the replacement is not healthy: the
		// evicted copy, healthy, unhealthy or unknown (its cluster not
		// Ready), may be all there is of the workload. It is held until the
		// replacement is healthy, or a user sets suppressDeletion false.
		evicted := "its health unknown (cluster " + t.FromCluster + " not Ready)"
		if in.Ready(t.FromCluster) {
			if ok, _ := eviction.CopyHealthy(items[t.FromCluster], 0, true); ok {
				evicted = "healthy"
				if !placedAny {
					evicted = "the last healthy one"
				}
			} else {
				evicted = "not healthy"
			}
		}
		block(workv1alpha2.ReasonReplacementUnhealthy, fmt.Sprintf("the copy in %s (%s) is kept after its grace period (%s): the workload is not healthy in %s",
			t.FromCluster, evicted, grace, strings.Join(targetNames(in.Spec.Clusters), ", ")))
		keep()
	}
	if len(blocked) > 0 {
		out.Blocked = &metav1.Condition{Type: workv1alpha2.EvictionBlocked, Status: metav1.ConditionTrue, Reason: reason, Message: strings.Join(blocked, "; ")}
	}
	return out
}

func targetNames(ts []workv1alpha2.TargetCluster) []string {
	out := make([]string, 0, len(ts))
	for _, t := range ts {
		out = append(out, t.Name)
	}
	return slices.Clip(out)
}
