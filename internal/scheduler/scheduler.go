// Package scheduler places bindings on clusters: it filters the clusters
// with the framework's plugins, assigns replicas to those that fit, writes
// spec.clusters, and records the outcome in the Scheduled condition.
package scheduler

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/tools/record"
	"k8s.io/client-go/util/workqueue"
	"k8s.io/klog/v2"
	"k8s.io/utils/clock"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/builder"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller"
	"sigs.k8s.io/controller-runtime/pkg/controller/priorityqueue"
	"sigs.k8s.io/controller-runtime/pkg/event"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	"sigs.k8s.io/controller-runtime/pkg/predicate"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	clusterv1alpha1 "github.com/karmada-go/karmada/api/cluster/v1alpha1"
	policyv1alpha1 "github.com/karmada-go/karmada/api/policy/v1alpha1"
	workv1alpha2 "github.com/karmada-go/karmada/api/work/v1alpha2"
	"github.com/karmada-go/karmada/internal/anybinding"
	"github.com/karmada-go/karmada/internal/clusters/clusterready"
	"github.com/karmada-go/karmada/internal/events"
	"github.com/karmada-go/karmada/internal/metrics"
	"github.com/karmada-go/karmada/internal/queues"
	"github.com/karmada-go/karmada/internal/requeue"
	"github.com/karmada-go/karmada/internal/scheduler/algorithm"
	"github.com/karmada-go/karmada/internal/scheduler/framework"
	"github.com/karmada-go/karmada/internal/scheduler/plugins"
)

// DefaultSchedulerName is the scheduler of bindings that name none.
const DefaultSchedulerName = "default-scheduler"

// Reasons of the Scheduled condition.
const (
	ReasonSuccess      = "Success"
	ReasonNoClusterFit = "NoClusterFit"
	// ReasonUnschedulable: the feasible clusters cannot hold the replicas
	// (Karmada's).
	ReasonUnschedulable  = "Unschedulable"
	ReasonSchedulerError = "SchedulerError"
)

// Scheduler reconciles ResourceBindings and ClusterResourceBindings.
type Scheduler struct {
	Client    client.Client
	Framework *framework.Framework
	// SchedulerName is the name bindings must carry (or leave empty) to be
	// scheduled here.
	SchedulerName string
	Workers       int
	Clock         clock.PassiveClock
	// Recorder records events on bindings and templates; nil records none.
	Recorder record.EventRecorder
	// DirectNarrowing removes a dropped cluster's copy at once (the
	// GracefulEviction gate off) instead of keeping it until the new
	// placement is healthy.
	DirectNarrowing bool
	// Estimates deducts what this scheduler has just assigned from later
	// estimates and asks the members' estimators (nil: the general
	// estimator alone, nothing assumed). It is also the framework's
	// Estimator.
	Estimates *Estimates
	// PriorityOrder takes bindings from the queue by their
	// spec.schedulePriority, highest first, and in arrival order among
	// equals (--feature-gates=PriorityBasedScheduling=true); off, in
	// arrival order alone.
	PriorityOrder bool
	// WorkloadAffinity places bindings by their workloadAffinityGroups
	// (--feature-gates=WorkloadAffinity=true): with the other workloads of
	// their affinity group, away from those of their anti-affinity group.
	WorkloadAffinity bool

	groups  groups
	backoff workqueue.TypedRateLimiter[string]
	// capacityMu orders the cycles of bindings that take capacity (see
	// scheduleOne).
	capacityMu sync.Mutex
	// written holds, per binding key, the ownWrite of the last status this
	// scheduler wrote.
	written sync.Map
	// waiting holds the bindings waiting for another try, by key: the
	// pending queue (metrics.QueueBackoff or QueueUnschedulable) they are
	// counted in.
	waiting sync.Map
	// queues are the controllers' work queues, whose lengths are the
	// active pending bindings.
	queues   []interface{ Len() int }
	queuesMu sync.Mutex
}

// ownWrite is a scheduling outcome this scheduler wrote, remembered until the
// cache shows it: the write of spec.clusters comes back as an event before
// the status write does, and scheduling again on that half-updated copy
// would only write the same placement a second time.
type ownWrite struct {
	uid        types.UID
	generation int64
}

// SetupWithManager registers one controller per binding kind.
func (s *Scheduler) SetupWithManager(mgr ctrl.Manager) error {
	if s.Clock == nil {
		s.Clock = clock.RealClock{}
	}
	if s.SchedulerName == "" {
		s.SchedulerName = DefaultSchedulerName
	}
	s.backoff = workqueue.NewTypedItemExponentialFailureRateLimiter[string](time.Second, 5*time.Minute)
	s.countPending()
	if s.WorkloadAffinity {
		if err := indexAffinityGroups(context.Background(), mgr); err != nil {
			return err
		}
	}
	opts := controller.Options{MaxConcurrentReconciles: max(s.Workers, 1), NewQueue: s.newQueue}
	for _, k := range anybinding.Kinds {
		if err := ctrl.NewControllerManagedBy(mgr).Named("scheduler-"+strings.ToLower(k.Name)).
			Watches(k.New().Object, enqueueBinding, builder.WithPredicates(countIncoming)).
			Watches(&clusterv1alpha1.Cluster{}, s.enqueueBindingsOf(k), builder.WithPredicates(placementRelevant)).
			WithOptions(opts).
			Complete(s.reconcilerFor(k)); err != nil {
			return err
		}
	}
	return nil
}

// assumed is the assumptions ledger (nil-safe).
func (s *Scheduler) assumed() *Assumptions {
	if s.Estimates == nil {
		return nil
	}
	return s.Estimates.Assumed
}

// newQueue is controller-runtime's default queue, or (PriorityOrder) its
// priority queue, kept to be counted.
func (s *Scheduler) newQueue(name string, rl workqueue.TypedRateLimiter[reconcile.Request]) workqueue.TypedRateLimitingInterface[reconcile.Request] {
	var q workqueue.TypedRateLimitingInterface[reconcile.Request]
	if s.PriorityOrder {
		q = queues.NewPriority(name, rl)
	} else {
		q = workqueue.NewTypedRateLimitingQueueWithConfig(rl, workqueue.TypedRateLimitingQueueConfig[reconcile.Request]{Name: name})
	}
	s.queuesMu.Lock()
	s.queues = append(s.queues, q)
	s.queuesMu.Unlock()
	return q
}

// countPending adds this scheduler's queues to scheduler_pending_bindings.
func (s *Scheduler) countPending() {
	metrics.PendingBindings.AddPending(metrics.QueueActive, func() int {
		s.queuesMu.Lock()
		defer s.queuesMu.Unlock()
		n := 0
		for _, q := range s.queues {
			n += q.Len()
		}
		return n
	})
	for _, queue := range []string{metrics.QueueBackoff, metrics.QueueUnschedulable} {
		metrics.PendingBindings.AddPending(queue, func() int {
			n := 0
			s.waiting.Range(func(_, v any) bool {
				if v == queue {
					n++
				}
				return true
			})
			return n
		})
	}
}

// countIncoming counts the binding events that reach the queue.
var countIncoming = predicate.Funcs{
	CreateFunc:  func(event.CreateEvent) bool { incomingAdd.Inc(); return true },
	UpdateFunc:  func(event.UpdateEvent) bool { incomingUpdate.Inc(); return true },
	DeleteFunc:  func(event.DeleteEvent) bool { incomingDelete.Inc(); return true },
	GenericFunc: func(event.GenericEvent) bool { return true },
}

// The incoming bindings' counters, resolved once (every event counts).
var (
	incomingAdd            = metrics.QueueIncomingBindings.WithLabelValues("Add")
	incomingUpdate         = metrics.QueueIncomingBindings.WithLabelValues("Update")
	incomingDelete         = metrics.QueueIncomingBindings.WithLabelValues("Delete")
	incomingClusterChanged = metrics.QueueIncomingBindings.WithLabelValues("ClusterChanged")
)

func (s *Scheduler) reconcilerFor(k anybinding.Kind) reconcile.Reconciler {
	return reconcile.Func(func(ctx context.Context, req reconcile.Request) (reconcile.Result, error) {
		b, err := k.Get(ctx, s.Client, req.NamespacedName)
		if err != nil {
			if apierrors.IsNotFound(err) {
				s.written.Delete(req.String())
				s.waiting.Delete(req.String())
				s.assumed().Forget(req.String())
				s.forgetGroups(req.String())
			}
			return reconcile.Result{}, client.IgnoreNotFound(err)
		}
		after, err := s.scheduleOne(ctx, b)
		if err != nil {
			// A conflict (another controller wrote the binding's status
			// meanwhile) is tried again once the cache has it.
			return requeue.OnConflict(err)
		}
		return reconcile.Result{RequeueAfter: after}, nil
	})
}

// scheduleOne schedules a binding whose spec changed since it was last
// scheduled, or that did not fit last time.
func (s *Scheduler) scheduleOne(ctx context.Context, b anybinding.Binding) (after time.Duration, err error) {
	start := time.Now()
	obj, status := b.Object, b.Status
	if !s.responsible(b) {
		return 0, nil
	}
	key := client.ObjectKeyFromObject(obj).String()
	s.assumed().Observe(key, status.AggregatedStatus)
	if w, ok := s.written.Load(key); ok {
		if w := w.(ownWrite); w.uid == obj.GetUID() && status.SchedulerObservedGeneration < w.generation && obj.GetGeneration() <= w.generation {
			// The cache is behind this scheduler's own status write; that
			// write's event brings the binding back.
			return 0, nil
		}
	}
	clusters := &clusterv1alpha1.ClusterList{}
	if err := s.Client.List(ctx, clusters); err != nil {
		return 0, err
	}
	fresh := freshRequested(b)
	if !fresh && s.placementHolds(ctx, b, clusters.Items) {
		return 0, nil
	}
	if s.WorkloadAffinity && b.Spec.WorkloadAffinityGroups != nil {
		// A group's cycles one at a time, each seeing where the last went.
		s.groups.mu.Lock()
		peers, perr := s.peers(ctx, b, key)
		if perr != nil {
			s.groups.mu.Unlock()
			return 0, perr
		}
		ctx = plugins.WithPeers(ctx, peers)
		res, undo := s.schedulingCycle(ctx, b, key, fresh, clusters.Items)
		if res.Err == nil {
			s.decide(b, key, res.Targets)
		}
		s.groups.mu.Unlock()
		defer func() { s.recordAttempt(obj, key, start, res.Err, err) }()
		return s.bindingCycle(ctx, b, key, res, undo, clusters.Items)
	}
	res, undo := s.schedulingCycle(ctx, b, key, fresh, clusters.Items)
	defer func() { s.recordAttempt(obj, key, start, res.Err, err) }()
	return s.bindingCycle(ctx, b, key, res, undo, clusters.Items)
}

// responsible says whether this scheduler places the binding now: not one
// being deleted, another scheduler's, an attached binding (a dependency of
// workloads with propagateDeps goes where they run), or one whose
// scheduling is suspended.
func (s *Scheduler) responsible(b anybinding.Binding) bool {
	spec := b.Spec
	switch {
	case !b.Object.GetDeletionTimestamp().IsZero():
		return false
	case spec.SchedulerName != "" && spec.SchedulerName != s.SchedulerName:
		return false
	case spec.Placement == nil && len(spec.RequiredBy) > 0:
		return false
	case spec.Suspension != nil && spec.Suspension.Scheduling != nil && *spec.Suspension.Scheduling:
		return false
	}
	return true
}

// freshRequested says whether a reschedule was asked for (a
// WorkloadRebalancer) at or after the last scheduling: it is done afresh,
// the current placement not kept. (Both times have whole seconds: a
// trigger in the second of the last scheduling counts, and costs at most
// one more, identical, pass.)
func freshRequested(b anybinding.Binding) bool {
	spec, status := b.Spec, b.Status
	return spec.RescheduleTriggeredAt != nil && (status.LastScheduledTime == nil || !spec.RescheduleTriggeredAt.Before(status.LastScheduledTime))
}

// placementHolds says whether the binding's placement, scheduled at its
// generation, still holds: none of its clusters is leaving, no cluster
// became feasible that was not, and none left the user's selection.
func (s *Scheduler) placementHolds(ctx context.Context, b anybinding.Binding, clusters []clusterv1alpha1.Cluster) bool {
	spec, status := b.Spec, b.Status
	scheduled := meta.FindStatusCondition(status.Conditions, workv1alpha2.Scheduled)
	if status.SchedulerObservedGeneration != b.Object.GetGeneration() || scheduled == nil || scheduled.Status != metav1.ConditionTrue {
		return false
	}
	effective := algorithm.EffectiveSpec(spec, status.SchedulerObservingAffinityName)
	var tiers []policyv1alpha1.ClusterAffinityTerm
	if term := algorithm.AffinityTerm(spec, status.SchedulerObservingAffinityName); term != nil {
		tiers = algorithm.OverflowTiers(spec, term)
	}
	return !placedOnLeavingCluster(spec, clusters) && !s.newlyFeasible(ctx, effective, clusters) && len(algorithm.Deselected(effective, clusters, tiers)) == 0
}

// schedulingCycle computes the binding's placement (afresh when asked)
// and, for a binding that takes capacity, assumes its replicas where they
// go, under one lock: two cycles estimating at once would both count the
// same free room. undo takes the assumption back (the binding cycle's
// write failed).
func (s *Scheduler) schedulingCycle(ctx context.Context, b anybinding.Binding, key string, fresh bool, clusters []clusterv1alpha1.Cluster) (res algorithm.Result, undo func()) {
	obj, spec, status := b.Object, b.Spec, b.Status
	in, from := spec, status.SchedulerObservingAffinityName
	if fresh {
		in = spec.DeepCopy()
		in.Clusters = nil
		from = ""
		klog.FromContext(ctx).Info("Scheduling binding afresh", "binding", klog.KObj(obj), "rescheduleTriggeredAt", spec.RescheduleTriggeredAt)
	}
	ctx = WithCycle(ctx, key, func(cluster, reason string, err error) {
		events.OnBinding(s.Recorder, obj, spec.Resource, corev1.EventTypeWarning, events.EstimatorFallback,
			"scheduler estimator of cluster %s did not answer (%s: %v): estimated from the cluster's resource summary alone", cluster, reason, err)
	})
	undo = func() {}
	consumes := s.assumed() != nil && (spec.Replicas > 0 || len(spec.Components) > 0)
	if !consumes {
		return algorithm.ScheduleFrom(ctx, s.Framework, in, clusters, from), undo
	}
	s.capacityMu.Lock()
	defer s.capacityMu.Unlock()
	res = algorithm.ScheduleFrom(ctx, s.Framework, in, clusters, from)
	if res.Err == nil && !equality.Semantic.DeepEqual(spec.Clusters, res.Targets) {
		undo = s.assumed().Assume(key, spec, spec.Clusters, res.Targets, status.AggregatedStatus)
	}
	return res, undo
}

// placementRelevant passes Cluster changes that can change a filter's
// verdict: spec (taints, topology), labels, deletion, readiness, served APIs.
// The status controller rewrites resource summaries every few seconds; those
// changes alone do not re-queue every binding (unschedulable bindings are
// retried with backoff, so freed capacity is still noticed).
var placementRelevant = predicate.Funcs{
	UpdateFunc: func(e event.UpdateEvent) bool {
		o, ok1 := e.ObjectOld.(*clusterv1alpha1.Cluster)
		n, ok2 := e.ObjectNew.(*clusterv1alpha1.Cluster)
		if !ok1 || !ok2 {
			return true
		}
		return clusterready.PlacementChanged(o, n)
	},
}

// newlyFeasible reports whether a duplicated binding now fits a cluster it is
// not placed on (one that joined, or gained the API, or lost a taint).
// Divided bindings are not re-divided on every cluster change.
func (s *Scheduler) newlyFeasible(ctx context.Context, spec *workv1alpha2.ResourceBindingSpec, clusters []clusterv1alpha1.Cluster) bool {
	if spec.Placement != nil && spec.Placement.ReplicaScheduling != nil &&
		spec.Placement.ReplicaScheduling.ReplicaSchedulingType == policyv1alpha1.ReplicaSchedulingTypeDivided && spec.Replicas > 0 {
		return false
	}
	placed := map[string]bool{}
	for _, t := range spec.Clusters {
		placed[t.Name] = true
	}
	for i := range clusters {
		c := &clusters[i]
		if !placed[c.Name] && c.DeletionTimestamp.IsZero() && s.Framework.RunFilters(ctx, spec, c).IsSuccess() {
			return true
		}
	}
	return false
}

// placedOnLeavingCluster reports whether the binding is placed on a cluster
// that is gone or being removed.
func placedOnLeavingCluster(spec *workv1alpha2.ResourceBindingSpec, clusters []clusterv1alpha1.Cluster) bool {
	live := map[string]bool{}
	for i := range clusters {
		live[clusters[i].Name] = clusters[i].DeletionTimestamp.IsZero()
	}
	for _, t := range spec.Clusters {
		if !live[t.Name] {
			return true
		}
	}
	return false
}

func targetNames(ts []workv1alpha2.TargetCluster) []string {
	out := make([]string, 0, len(ts))
	for _, t := range ts {
		out = append(out, fmt.Sprintf("%s=%d", t.Name, t.Replicas))
	}
	return out
}

// unscheduledBindings maps a Cluster change to the bindings that did not fit
// last time or are not placed on it (a new or changed cluster may take them
// now), and to the bindings placed on it (it may be leaving, or no longer
// selected by their affinity). The binding's own reconcile decides cheaply
// whether anything changes.
func (s *Scheduler) enqueueBindingsOf(k anybinding.Kind) handler.EventHandler {
	return allBindings{s: s, k: k}
}

// allBindings queues every binding of its kind, each at its priority, on
// any event (of a Cluster). An EventHandler of its own rather than
// handler.Funcs: those hand their functions a queue whose adds lose the
// priority.
type allBindings struct {
	s *Scheduler
	k anybinding.Kind
}

type queue = workqueue.TypedRateLimitingInterface[reconcile.Request]

func (a allBindings) add(ctx context.Context, q queue) {
	list, err := a.k.List(ctx, a.s.Client)
	if err != nil {
		klog.FromContext(ctx).Error(err, "Listing bindings", "kind", a.k.Name)
		return
	}
	for _, b := range list {
		addByPriority(q, b.Object)
	}
	incomingClusterChanged.Add(float64(len(list)))
}

func (a allBindings) Create(ctx context.Context, _ event.CreateEvent, q queue)   { a.add(ctx, q) }
func (a allBindings) Update(ctx context.Context, _ event.UpdateEvent, q queue)   { a.add(ctx, q) }
func (a allBindings) Delete(ctx context.Context, _ event.DeleteEvent, q queue)   { a.add(ctx, q) }
func (a allBindings) Generic(ctx context.Context, _ event.GenericEvent, q queue) { a.add(ctx, q) }

// bindingEvents queues the binding of each event at its priority.
type bindingEvents struct{}

var enqueueBinding handler.EventHandler = bindingEvents{}

func (bindingEvents) Create(_ context.Context, e event.CreateEvent, q queue) {
	addByPriority(q, e.Object)
}
func (bindingEvents) Update(_ context.Context, e event.UpdateEvent, q queue) {
	addByPriority(q, e.ObjectNew)
}
func (bindingEvents) Delete(_ context.Context, e event.DeleteEvent, q queue) {
	addByPriority(q, e.Object)
}
func (bindingEvents) Generic(_ context.Context, e event.GenericEvent, q queue) {
	addByPriority(q, e.Object)
}

// addByPriority queues a binding at its spec.schedulePriority: a priority
// queue (PriorityOrder) takes it before those of lower priority; the plain
// queue takes everything in arrival order.
func addByPriority(q queue, obj client.Object) {
	req := reconcile.Request{NamespacedName: client.ObjectKeyFromObject(obj)}
	pq, ok := q.(priorityqueue.PriorityQueue[reconcile.Request])
	if !ok {
		q.Add(req)
		return
	}
	p := 0
	if b, err := anybinding.Of(obj); err == nil && b.Spec.SchedulePriority != nil {
		p = int(b.Spec.SchedulePriority.Priority)
	}
	pq.AddWithOpts(priorityqueue.AddOpts{Priority: p}, req)
}
