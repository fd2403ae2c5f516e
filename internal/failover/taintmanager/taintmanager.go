// Package taintmanager is the NoExecute taint manager of the cluster
// controller: a binding placed on a cluster with a NoExecute taint it does
// not tolerate is evicted from that cluster, at once, or once its
// toleration's tolerationSeconds (counted from the taint's timeAdded) are
// over. Eviction removes the cluster from spec.clusters and records a
// graceful eviction task, so that the scheduler places the workload
// elsewhere and the old copy stays until the gracefulEviction controller
// ends the task. Evictions are rate-limited fleet-wide
// (--resource-eviction-rate).
package taintmanager

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"time"

	"golang.org/x/time/rate"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/client-go/tools/record"
	"k8s.io/klog/v2"
	"k8s.io/utils/clock"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/builder"
	"sigs.k8s.io/controller-runtime/pkg/client"
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
	"github.com/karmada-go/karmada/internal/eviction"
	"github.com/karmada-go/karmada/internal/features"
	"github.com/karmada-go/karmada/internal/metrics"
	"github.com/karmada-go/karmada/internal/queues"
)

// Defaults of the flags, as Karmada's.
const (
	DefaultEvictionRate = 0.5
	DefaultPurgeMode    = policyv1alpha1.PurgeModeGracefully
)

// Manager evicts bindings from clusters with NoExecute taints.
type Manager struct {
	Client   client.Client
	Recorder record.EventRecorder
	// Rate is the evictions per second allowed across the fleet (0: no
	// limit).
	Rate float64
	// PurgeMode of bindings whose policy sets none (failover.cluster).
	PurgeMode policyv1alpha1.PurgeMode
	// Graceful records graceful eviction tasks (the GracefulEviction gate);
	// false removes the cluster and its copy at once.
	Graceful bool
	Workers  int
	// Clock is the clock (the real one when nil); tests pass a fake.
	Clock clock.PassiveClock

	limiter *rate.Limiter
	// clusters reads Clusters without copying them.
	clusters *clusterready.Clusters
	// queued holds, per binding, the clusters it is due to be evicted
	// from (now, or once a toleration runs out): the eviction queue the
	// metrics count.
	queued   map[string]queuedEviction
	queuedMu sync.Mutex
}

// queuedEviction is a binding waiting to be evicted from clusters.
type queuedEviction struct {
	kind     string
	clusters []string
}

// queue records what a binding waits to be evicted from (nothing: it left
// the queue), in karmada_eviction_queue_depth and karmada_eviction_kind_total.
func (m *Manager) queue(key string, kind string, clusters []string) {
	m.queuedMu.Lock()
	defer m.queuedMu.Unlock()
	if old, ok := m.queued[key]; ok {
		queueDepth.Dec()
		for _, c := range old.clusters {
			metrics.EvictionKindTotal.WithLabelValues(c, old.kind).Dec()
		}
		delete(m.queued, key)
	}
	if len(clusters) == 0 {
		return
	}
	if m.queued == nil {
		m.queued = map[string]queuedEviction{}
	}
	m.queued[key] = queuedEviction{kind: kind, clusters: clusters}
	queueDepth.Inc()
	for _, c := range clusters {
		metrics.EvictionKindTotal.WithLabelValues(c, kind).Inc()
	}
}

// The taint manager's eviction queue, as the metrics name it.
const queueName = "taint-manager"

var queueDepth = metrics.EvictionQueueDepth.WithLabelValues(queueName)

// SetupWithManager registers one controller per binding kind.
func (m *Manager) SetupWithManager(mgr ctrl.Manager) error {
	if m.Clock == nil {
		m.Clock = clock.RealClock{}
	}
	if m.PurgeMode == "" {
		m.PurgeMode = DefaultPurgeMode
	}
	var err error
	if m.clusters, err = clusterready.NewClusters(context.Background(), mgr); err != nil {
		return err
	}
	m.limiter = rate.NewLimiter(rate.Inf, 1)
	if m.Rate > 0 {
		m.limiter = rate.NewLimiter(rate.Limit(m.Rate), 1)
	}
	for _, k := range anybinding.Kinds {
		name := "taint-manager"
		if k.ClusterScoped {
			name = "cluster-taint-manager"
		}
		if err := ctrl.NewControllerManagedBy(mgr).Named(name).
			For(k.New().Object, builder.WithPredicates(predicate.GenerationChangedPredicate{})).
			Watches(&clusterv1alpha1.Cluster{}, handler.EnqueueRequestsFromMapFunc(m.placedOn(k)), builder.WithPredicates(predicate.Funcs{
				UpdateFunc: func(e event.UpdateEvent) bool {
					o, n := e.ObjectOld.(*clusterv1alpha1.Cluster), e.ObjectNew.(*clusterv1alpha1.Cluster)
					return !equality.Semantic.DeepEqual(noExecute(o.Spec.Taints), noExecute(n.Spec.Taints))
				},
				DeleteFunc: func(event.DeleteEvent) bool { return false },
			})).
			WithOptions(queues.Options(max(m.Workers, 1))).
			Complete(k.Reconciler(m.Client, m.sync, func(req reconcile.Request) { m.queue(req.String(), "", nil) })); err != nil {
			return err
		}
	}
	return nil
}

func noExecute(taints []corev1.Taint) []corev1.Taint {
	var out []corev1.Taint
	for _, t := range taints {
		if t.Effect == corev1.TaintEffectNoExecute {
			out = append(out, t)
		}
	}
	return out
}

// placedOn maps a Cluster whose NoExecute taints changed to the bindings
// placed on it.
func (m *Manager) placedOn(k anybinding.Kind) handler.MapFunc {
	return func(ctx context.Context, cl client.Object) []reconcile.Request {
		if len(noExecute(cl.(*clusterv1alpha1.Cluster).Spec.Taints)) == 0 {
			return nil
		}
		list, err := k.List(ctx, m.Client)
		if err != nil {
			klog.FromContext(ctx).Error(err, "Listing bindings", "kind", k.Name)
			return nil
		}
		var out []reconcile.Request
		for _, b := range list {
			for _, t := range b.Spec.Clusters {
				if t.Name == cl.GetName() {
					out = append(out, reconcile.Request{NamespacedName: client.ObjectKeyFromObject(b.Object)})
					break
				}
			}
		}
		return out
	}
}

// sync evicts the binding from the clusters whose time is up, and returns
// when to look again for the others.
func (m *Manager) sync(ctx context.Context, _ reconcile.Request, b anybinding.Binding) (time.Duration, error) {
	obj, spec, status := b.Object, b.Spec, b.Status
	if !obj.GetDeletionTimestamp().IsZero() || len(spec.Clusters) == 0 {
		m.queue(client.ObjectKeyFromObject(obj).String(), "", nil)
		return 0, nil
	}
	start := time.Now()
	var tolerations []corev1.Toleration
	if spec.Placement != nil {
		tolerations = spec.Placement.ClusterTolerations
	}
	now := m.Clock.Now()
	type due struct{ cluster, why string }
	var evict []due
	var waiting []string
	var after time.Duration
	for _, t := range spec.Clusters {
		// The informer's own Cluster: read, never modified.
		cl, err := m.clusters.Get(ctx, t.Name)
		if err != nil {
			if apierrors.IsNotFound(err) {
				continue
			}
			return 0, err
		}
		at, why, ok := eviction.EvictionTime(cl.Spec.Taints, tolerations, now)
		if !ok {
			continue
		}
		waiting = append(waiting, t.Name)
		if wait := at.Sub(now); wait > 0 {
			if after == 0 || wait < after {
				after = wait
			}
			continue
		}
		evict = append(evict, due{t.Name, why})
	}
	m.queue(client.ObjectKeyFromObject(obj).String(), spec.Resource.Kind, waiting)
	if len(evict) == 0 {
		return after, nil
	}
	if r := m.limiter.Reserve(); r.Delay() > 0 {
		// Over the fleet's eviction rate: this binding's turn comes later.
		delay := r.Delay()
		r.Cancel()
		return delay, nil
	}
	purge := m.PurgeMode
	var rules []policyv1alpha1.StatePreservationRule
	if f := spec.Failover; f != nil && f.Cluster != nil {
		if f.Cluster.PurgeMode != "" {
			purge = f.Cluster.PurgeMode
		}
		if f.Cluster.StatePreservation != nil && features.Gate.Enabled(features.StatefulFailoverInjection) {
			rules = f.Cluster.StatePreservation.Rules
		}
	}
	// The taint manager and the graceful eviction controller write the same
	// list: never over a copy this cache has not seen.
	patch := client.MergeFromWithOptions(obj.DeepCopyObject().(client.Object), client.MergeFromWithOptimisticLock{})
	var done []string
	for _, e := range evict {
		task := eviction.Task{Cluster: e.cluster, PurgeMode: purge, Reason: eviction.ReasonTaintUntolerated, Producer: eviction.ProducerTaintManager,
			Message: "cluster has " + e.why, Now: now}
		if len(rules) > 0 {
			state, err := eviction.PreserveState(rules, statusIn(status, e.cluster))
			if err != nil {
				// Evicted all the same: the cluster is failing; the event
				// says what was not carried over.
				events.OnBinding(m.Recorder, obj, spec.Resource, corev1.EventTypeWarning, events.EvictWorkloadFromClusterFailed, "State of %s not preserved: %v", e.cluster, err)
			}
			task.PreservedLabelState = state
		}
		if eviction.Evict(spec, task, m.Graceful) {
			done = append(done, fmt.Sprintf("%s (%s)", e.cluster, e.why))
		}
	}
	err := m.Client.Patch(ctx, obj, patch)
	metrics.EvictionProcessingTotal.WithLabelValues(queueName, metrics.ResultOf(err)).Inc()
	metrics.EvictionProcessingLatency.WithLabelValues(queueName).Observe(metrics.Since(start))
	if err != nil {
		return 0, fmt.Errorf("evicting from %s: %w", strings.Join(done, ", "), err)
	}
	mode := "purge mode " + string(purge)
	if !m.Graceful {
		mode = "its copy removed at once (GracefulEviction off)"
	}
	klog.FromContext(ctx).Info("Evicted binding", "binding", klog.KObj(obj), "from", done, "purgeMode", purge)
	events.OnBinding(m.Recorder, obj, spec.Resource, corev1.EventTypeNormal, events.EvictWorkloadFromClusterSucceed, "Evicted from %s, %s", strings.Join(done, ", "), mode)
	return after, nil
}

// statusIn is the reflected status of the binding's copy in a cluster.
func statusIn(status *workv1alpha2.ResourceBindingStatus, cluster string) []byte {
	for _, it := range status.AggregatedStatus {
		if it.ClusterName == cluster && it.Status != nil {
			return it.Status.Raw
		}
	}
	return nil
}
