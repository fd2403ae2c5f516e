package gracefuleviction

import (
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"time"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	policyv1alpha1 "github.com/karmada-go/karmada/api/policy/v1alpha1"
	workv1alpha1 "github.com/karmada-go/karmada/api/work/v1alpha1"
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
}

// Ended is a task that is over, and why.
type Ended struct {
	Task workv1alpha2.GracefulEvictionTask
	Why  string
	// Restored: the cluster was placed back, its copy stays.
	Restored bool
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
//     available as it was given);
//   - or when its grace period is over, unless the evicted copy is the last
//     healthy one (held: ReplacementUnhealthy);
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
		ok, n := healthy(items[t.Name], t.Replicas, in.Ready(t.Name))
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
		_, n := healthy(items[t.FromCluster], want, in.Ready(t.FromCluster))
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
		if placedHealthy {
			end("the workload is healthy in " + strings.Join(targetNames(in.Spec.Clusters), ", "))
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
		if evictedOK, _ := healthy(items[t.FromCluster], 0, in.Ready(t.FromCluster)); evictedOK && !placedAny && t.PurgeMode != policyv1alpha1.PurgeModeDirectly {
			block(workv1alpha2.ReasonReplacementUnhealthy, fmt.Sprintf("the copy in %s is kept after its grace period (%s): it is the last healthy one, the workload is not healthy in %s",
				t.FromCluster, grace, strings.Join(targetNames(in.Spec.Clusters), ", ")))
			keep()
			continue
		}
		end(fmt.Sprintf("its grace period (%s) is over", grace))
	}
	if len(blocked) > 0 {
		out.Blocked = &metav1.Condition{Type: workv1alpha2.EvictionBlocked, Status: metav1.ConditionTrue, Reason: reason, Message: strings.Join(blocked, "; ")}
	}
	return out
}

// healthy reports whether a cluster's copy is healthy (its cluster Ready,
// applied, not Unhealthy, and with at least want replicas available when its
// status counts them), and how many replicas it has available (healthy or
// not; none when its cluster is not Ready: that count is stale).
func healthy(item *workv1alpha2.AggregatedStatusItem, want int32, ready bool) (bool, int32) {
	if item == nil || !ready || !item.Applied {
		return false, 0
	}
	available, counted := availableReplicas(item)
	// Unknown health, once applied, is a kind without a health
	// interpretation (a ConfigMap): applied is all there is to know.
	if item.Health == workv1alpha1.ResourceUnhealthy {
		// What runs counts for the budget all the same.
		return false, available
	}
	if !counted {
		return true, want
	}
	return available >= want, available
}

// availableReplicas reads status.availableReplicas of a reflected status.
func availableReplicas(item *workv1alpha2.AggregatedStatusItem) (int32, bool) {
	if item.Status == nil || len(item.Status.Raw) == 0 {
		return 0, false
	}
	var s struct {
		AvailableReplicas *int32 `json:"availableReplicas"`
	}
	if err := json.Unmarshal(item.Status.Raw, &s); err != nil || s.AvailableReplicas == nil {
		return 0, false
	}
	return *s.AvailableReplicas, true
}

func targetNames(ts []workv1alpha2.TargetCluster) []string {
	out := make([]string, 0, len(ts))
	for _, t := range ts {
		out = append(out, t.Name)
	}
	return slices.Clip(out)
}
