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
	a := newAssessment(in)
	for _, t := range in.Spec.GracefulEvictionTasks {
		if t.CreationTimestamp == nil {
			now := metav1.NewTime(in.Now)
			t.CreationTimestamp = &now
		}
		a.judge(t)
	}
	if len(a.blocked) > 0 {
		a.out.Blocked = &metav1.Condition{Type: workv1alpha2.EvictionBlocked, Status: metav1.ConditionTrue, Reason: a.reason, Message: strings.Join(a.blocked, "; ")}
	}
	return a.out
}

// assessment is Assess at work: the figures every task is judged against,
// and the outcome so far.
type assessment struct {
	in  Input
	out Outcome
	// blocked are the holds' messages; reason is the first hold's.
	blocked []string
	reason  string

	items     map[string]*workv1alpha2.AggregatedStatusItem
	scheduled *metav1.Condition
	// caughtUp: the scheduler has placed the binding since it changed.
	caughtUp bool
	// The placed clusters: all healthy, any healthy, replicas available.
	placedHealthy, placedAny bool
	placedAvailable          int32
	// What each kept copy contributes to the budget, and their sum.
	keptAvailable map[string]int32
	keptTotal     int32
}

func newAssessment(in Input) *assessment {
	a := &assessment{in: in, items: map[string]*workv1alpha2.AggregatedStatusItem{}, keptAvailable: map[string]int32{}, placedHealthy: true}
	for i := range in.Status.AggregatedStatus {
		a.items[in.Status.AggregatedStatus[i].ClusterName] = &in.Status.AggregatedStatus[i]
	}
	a.scheduled = meta.FindStatusCondition(in.Status.Conditions, workv1alpha2.Scheduled)
	a.caughtUp = in.Status.SchedulerObservedGeneration >= in.Generation
	for _, t := range in.Spec.Clusters {
		ok, n := eviction.CopyHealthy(a.items[t.Name], t.Replicas, in.Ready(t.Name))
		a.placedHealthy = a.placedHealthy && ok
		a.placedAny = a.placedAny || ok
		a.placedAvailable += n
	}
	budgeted := in.MinAvailable > 0
	for _, t := range in.Spec.GracefulEvictionTasks {
		if !eviction.KeepsCopy(&t, budgeted) {
			continue
		}
		var want int32
		if t.Replicas != nil {
			want = *t.Replicas
		}
		_, n := eviction.CopyHealthy(a.items[t.FromCluster], want, in.Ready(t.FromCluster))
		a.keptAvailable[t.FromCluster] = n
		a.keptTotal += n
	}
	return a
}

func (a *assessment) block(reason, msg string) {
	if a.reason == "" {
		a.reason = reason
	}
	a.blocked = append(a.blocked, msg)
}

func (a *assessment) wait(d time.Duration) {
	if d > 0 && (a.out.After == 0 || d < a.out.After) {
		a.out.After = d
	}
}

func (a *assessment) keep(t workv1alpha2.GracefulEvictionTask) { a.out.Tasks = append(a.out.Tasks, t) }

func (a *assessment) end(t workv1alpha2.GracefulEvictionTask, e Ended) {
	a.out.Ended = append(a.out.Ended, e)
	if !e.Restored {
		a.keptTotal -= a.keptAvailable[t.FromCluster]
	}
}

func (a *assessment) placedIn(cluster string) bool {
	return slices.ContainsFunc(a.in.Spec.Clusters, func(c workv1alpha2.TargetCluster) bool { return c.Name == cluster })
}

// judge decides one task, in the order the rules of Assess are given.
func (a *assessment) judge(t workv1alpha2.GracefulEvictionTask) {
	in := a.in
	if a.placedIn(t.FromCluster) {
		// Placed there again (a narrowing undone): nothing to evict.
		a.end(t, Ended{Task: t, Why: "the workload is placed there again", Restored: true})
		return
	}
	switch {
	case t.SuppressDeletion != nil && *t.SuppressDeletion:
		a.keep(t)
		return
	case t.SuppressDeletion != nil:
		a.end(t, Ended{Task: t, Why: "its deletion is no longer suppressed"})
		return
	case t.PurgeMode == policyv1alpha1.PurgeModeNever:
		a.keep(t)
		return
	case !a.caughtUp:
		// The scheduler has not placed the binding since it changed.
		a.keep(t)
		return
	case len(in.Spec.Clusters) == 0 || a.scheduled == nil || a.scheduled.Status != metav1.ConditionTrue:
		a.unplaced(t)
		return
	}
	// The budget: what stays available once this copy is gone.
	if left := a.placedAvailable + a.keptTotal - a.keptAvailable[t.FromCluster]; in.MinAvailable > 0 && a.keptAvailable[t.FromCluster] > 0 && left < in.MinAvailable {
		a.block(workv1alpha2.ReasonBelowMinAvailable, fmt.Sprintf("the copy in %s is kept: without its %d available replicas, %d would be available, under minAvailable %d",
			t.FromCluster, a.keptAvailable[t.FromCluster], left, in.MinAvailable))
		a.keep(t)
		return
	}
	switch {
	case t.PurgeMode == policyv1alpha1.PurgeModeDirectly:
		// Kept only for the budget, which now allows it to go.
		a.end(t, Ended{Task: t, Why: "purge mode Directly, within the availability budget"})
	case a.placedHealthy && in.Pull != nil && in.Pull(t.FromCluster) && !in.Ready(t.FromCluster):
		// Ended now, the copy would be deleted when the agent is back,
		// whatever the workload's health then: wait for it.
		a.keep(t)
	case a.placedHealthy:
		a.end(t, Ended{Task: t, Why: "the workload is healthy in " + strings.Join(targetNames(in.Spec.Clusters), ", "), Gated: true})
	default:
		a.graceOver(t)
	}
}

// unplaced: the scheduler has not placed the workload anywhere. A cluster
// that recovered meanwhile takes it back; otherwise the copy is held.
func (a *assessment) unplaced(t workv1alpha2.GracefulEvictionTask) {
	why := "the scheduler has not placed it"
	if a.scheduled != nil && a.scheduled.Message != "" {
		why = a.scheduled.Message
	}
	if a.in.Recovered != nil && a.in.Recovered(&t) && !a.placedIn(t.FromCluster) {
		var replicas int32
		if t.Replicas != nil {
			replicas = *t.Replicas
		}
		a.out.Restored = append(a.out.Restored, workv1alpha2.TargetCluster{Name: t.FromCluster, Replicas: replicas})
		a.out.Ended = append(a.out.Ended, Ended{Task: t, Why: "the cluster recovered before any other could take the workload: it is placed back", Restored: true})
		return
	}
	a.block(workv1alpha2.ReasonNoReplacement, fmt.Sprintf("the copy in %s is kept: no cluster can take the workload (%s)", t.FromCluster, why))
	a.keep(t)
}

// graceOver: the replacement is not healthy. Within its grace period the
// task waits; after it, the evicted copy, healthy, unhealthy or unknown
// (its cluster not Ready), may be all there is of the workload: it is held
// until the replacement is healthy, or a user sets suppressDeletion false.
func (a *assessment) graceOver(t workv1alpha2.GracefulEvictionTask) {
	grace := a.in.Timeout
	if t.GracePeriodSeconds != nil {
		grace = time.Duration(*t.GracePeriodSeconds) * time.Second
	}
	if left := t.CreationTimestamp.Add(grace).Sub(a.in.Now); left > 0 {
		a.keep(t)
		a.wait(left)
		return
	}
	evicted := "its health unknown (cluster " + t.FromCluster + " not Ready)"
	if a.in.Ready(t.FromCluster) {
		if ok, _ := eviction.CopyHealthy(a.items[t.FromCluster], 0, true); ok {
			evicted = "healthy"
			if !a.placedAny {
				evicted = "the last healthy one"
			}
		} else {
			evicted = "not healthy"
		}
	}
	a.block(workv1alpha2.ReasonReplacementUnhealthy, fmt.Sprintf("the copy in %s (%s) is kept after its grace period (%s): the workload is not healthy in %s",
		t.FromCluster, evicted, grace, strings.Join(targetNames(a.in.Spec.Clusters), ", ")))
	a.keep(t)
}

func targetNames(ts []workv1alpha2.TargetCluster) []string {
	out := make([]string, 0, len(ts))
	for _, t := range ts {
		out = append(out, t.Name)
	}
	return slices.Clip(out)
}
