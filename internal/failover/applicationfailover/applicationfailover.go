// Package applicationfailover is the applicationFailover controller: a
// binding whose policy sets failover.application is evicted from a cluster
// where its workload has been unhealthy for longer than
// decisionConditions.tolerationSeconds. The eviction is a graceful eviction
// task with the policy's purgeMode (Directly: the copy goes at once;
// Gracefully: it stays until the workload is healthy elsewhere or
// gracePeriodSeconds are over; Never: it stays until a user clears
// suppressDeletion), carrying the state statePreservation extracts from the
// failed copy to the copies that replace it.
//
// How long a workload has been unhealthy is kept in memory: a restart
// starts the count again (a later failover, never an early one).
package applicationfailover

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/client-go/tools/record"
	"k8s.io/klog/v2"
	"k8s.io/utils/clock"
	"k8s.io/utils/ptr"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/builder"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/event"
	"sigs.k8s.io/controller-runtime/pkg/predicate"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	clusterv1alpha1 "github.com/karmada-go/karmada/api/cluster/v1alpha1"
	policyv1alpha1 "github.com/karmada-go/karmada/api/policy/v1alpha1"
	workv1alpha1 "github.com/karmada-go/karmada/api/work/v1alpha1"
	workv1alpha2 "github.com/karmada-go/karmada/api/work/v1alpha2"
	"github.com/karmada-go/karmada/internal/anybinding"
	"github.com/karmada-go/karmada/internal/events"
	"github.com/karmada-go/karmada/internal/eviction"
	"github.com/karmada-go/karmada/internal/features"
	"github.com/karmada-go/karmada/internal/queues"
)

// ControllerName is the name --controllers knows it by, as Karmada's.
const ControllerName = "applicationFailover"

// DefaultTolerationSeconds is decisionConditions.tolerationSeconds' default.
const DefaultTolerationSeconds = 300

// Reconciler fails applications over.
type Reconciler struct {
	Client   client.Client
	Recorder record.EventRecorder
	// Graceful records graceful eviction tasks (the GracefulEviction gate).
	Graceful bool
	Workers  int
	// Clock is the clock (the real one when nil); tests pass a fake.
	Clock clock.PassiveClock

	mu sync.Mutex
	// unhealthy: binding key -> cluster -> since when.
	unhealthy map[string]map[string]time.Time
}

func hasApplicationFailover(o client.Object) bool {
	b, err := anybinding.Of(o)
	return err == nil && b.Spec.Failover != nil && b.Spec.Failover.Application != nil
}

// SetupWithManager registers one controller per binding kind; the
// aggregated status (a status change) is what it reads.
func (r *Reconciler) SetupWithManager(mgr ctrl.Manager) error {
	if r.Clock == nil {
		r.Clock = clock.RealClock{}
	}
	r.unhealthy = map[string]map[string]time.Time{}
	for _, k := range anybinding.Kinds {
		name := "application-failover"
		if k.ClusterScoped {
			name = "cluster-application-failover"
		}
		if err := ctrl.NewControllerManagedBy(mgr).Named(name).
			For(k.New().Object, builder.WithPredicates(predicate.Funcs{
				CreateFunc: func(e event.CreateEvent) bool { return hasApplicationFailover(e.Object) },
				UpdateFunc: func(e event.UpdateEvent) bool {
					return hasApplicationFailover(e.ObjectNew) || hasApplicationFailover(e.ObjectOld)
				},
				DeleteFunc: func(event.DeleteEvent) bool { return true },
			})).
			WithOptions(queues.Options(max(r.Workers, 1))).
			Complete(k.Reconciler(r.Client, func(ctx context.Context, req reconcile.Request, b anybinding.Binding) (time.Duration, error) {
				return r.sync(ctx, k.Name+"/"+req.String(), b)
			}, func(req reconcile.Request) { r.forget(k.Name+"/"+req.String(), nil) })); err != nil {
			return err
		}
	}
	return nil
}

// forget drops the binding's records but for the clusters kept.
func (r *Reconciler) forget(key string, keep map[string]bool) {
	r.mu.Lock()
	defer r.mu.Unlock()
	for c := range r.unhealthy[key] {
		if !keep[c] {
			delete(r.unhealthy[key], c)
		}
	}
	if len(r.unhealthy[key]) == 0 {
		delete(r.unhealthy, key)
	}
}

// since records that the workload is unhealthy in the cluster and returns
// since when.
func (r *Reconciler) since(key, cluster string, now time.Time) time.Time {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.unhealthy[key] == nil {
		r.unhealthy[key] = map[string]time.Time{}
	}
	if t, ok := r.unhealthy[key][cluster]; ok {
		return t
	}
	r.unhealthy[key][cluster] = now
	return now
}

func (r *Reconciler) sync(ctx context.Context, key string, b anybinding.Binding) (time.Duration, error) {
	obj, spec, status := b.Object, b.Spec, b.Status
	if !obj.GetDeletionTimestamp().IsZero() || spec.Failover == nil || spec.Failover.Application == nil {
		r.forget(key, nil)
		return 0, nil
	}
	app := spec.Failover.Application
	toleration := time.Duration(DefaultTolerationSeconds) * time.Second
	if s := app.DecisionConditions.TolerationSeconds; s != nil {
		toleration = time.Duration(*s) * time.Second
	}
	items := map[string]*workv1alpha2.AggregatedStatusItem{}
	for i := range status.AggregatedStatus {
		items[status.AggregatedStatus[i].ClusterName] = &status.AggregatedStatus[i]
	}
	now := r.Clock.Now()
	unhealthy := map[string]bool{}
	var due []string
	var after time.Duration
	for _, t := range spec.Clusters {
		it := items[t.Name]
		if it == nil || !it.Applied || it.Health != workv1alpha1.ResourceUnhealthy {
			continue
		}
		// A cluster that is not Ready reports nothing new: its failure is
		// the cluster's (the taint manager's business), not the
		// application's.
		cl := &clusterv1alpha1.Cluster{}
		if err := r.Client.Get(ctx, client.ObjectKey{Name: t.Name}, cl); err != nil || !meta.IsStatusConditionTrue(cl.Status.Conditions, clusterv1alpha1.ClusterConditionReady) {
			continue
		}
		unhealthy[t.Name] = true
		since := r.since(key, t.Name, now)
		if wait := since.Add(toleration).Sub(now); wait > 0 {
			if after == 0 || wait < after {
				after = wait
			}
			continue
		}
		due = append(due, t.Name)
	}
	r.forget(key, unhealthy)
	if len(due) == 0 {
		return after, nil
	}
	purge := app.PurgeMode
	if purge == "" {
		purge = policyv1alpha1.PurgeModeGracefully
	}
	producer := "resource-binding-application-failover-controller"
	if b.ClusterScoped() {
		producer = "cluster-resource-binding-application-failover-controller"
	}
	patch := client.MergeFromWithOptions(obj.DeepCopyObject().(client.Object), client.MergeFromWithOptimisticLock{})
	var warnings []string
	for _, c := range due {
		task := eviction.Task{Cluster: c, PurgeMode: purge, Reason: eviction.ReasonApplicationFailure, Producer: producer, Now: now,
			Message: fmt.Sprintf("the workload was unhealthy for more than %s", toleration)}
		switch purge {
		case policyv1alpha1.PurgeModeGracefully:
			task.GracePeriodSeconds = app.GracePeriodSeconds
		case policyv1alpha1.PurgeModeNever:
			task.SuppressDeletion = ptr.To(true)
		}
		// State is preserved with
		// --feature-gates=StatefulFailoverInjection=true, as Karmada.
		if sp := app.StatePreservation; sp != nil && features.Gate.Enabled(features.StatefulFailoverInjection) {
			var raw []byte
			if it := items[c]; it.Status != nil {
				raw = it.Status.Raw
			}
			state, err := eviction.PreserveState(sp.Rules, raw)
			if err != nil {
				warnings = append(warnings, fmt.Sprintf("state of %s not preserved: %v", c, err))
			}
			task.PreservedLabelState = state
		}
		eviction.Evict(spec, task, r.Graceful)
	}
	if err := r.Client.Patch(ctx, obj, patch); err != nil {
		return 0, fmt.Errorf("failing over from %s: %w", strings.Join(due, ", "), err)
	}
	r.forget(key, nil)
	klog.FromContext(ctx).Info("Application failed over", "binding", klog.KObj(obj), "from", due, "purgeMode", purge)
	events.OnBinding(r.Recorder, obj, spec.Resource, corev1.EventTypeNormal, events.EvictWorkloadFromClusterSucceed,
		"Evicted from %s: the workload was unhealthy there for more than %s (purge mode %s)", strings.Join(due, ", "), toleration, purge)
	for _, w := range warnings {
		events.OnBinding(r.Recorder, obj, spec.Resource, corev1.EventTypeWarning, events.EvictWorkloadFromClusterFailed, "%s", w)
	}
	return 0, nil
}
