// Package gracefuleviction is the gracefulEviction controller: it ends the
// graceful eviction tasks of bindings (spec.gracefulEvictionTasks) when the
// workload is healthy where it went, or their grace period is over, and
// holds them, with the EvictionBlocked condition saying why, when ending them
// would lose the workload. Ending a task lets the binding controller delete
// the evicted cluster's Work. See Assess for the rules.
package gracefuleviction

import (
	"context"
	"fmt"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
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
	workv1alpha1 "github.com/karmada-go/karmada/api/work/v1alpha1"
	workv1alpha2 "github.com/karmada-go/karmada/api/work/v1alpha2"
	"github.com/karmada-go/karmada/internal/anybinding"
	"github.com/karmada-go/karmada/internal/clusters/clusterready"
	"github.com/karmada-go/karmada/internal/events"
	"github.com/karmada-go/karmada/internal/eviction"
	"github.com/karmada-go/karmada/internal/queues"
)

// ControllerName is the name --controllers knows it by, as Karmada's.
const ControllerName = "gracefulEviction"

// DefaultTimeout is --graceful-eviction-timeout's default, as Karmada's.
const DefaultTimeout = 10 * time.Minute

// Reconciler ends and holds graceful eviction tasks.
type Reconciler struct {
	Client   client.Client
	Recorder record.EventRecorder
	// Timeout is the grace period of tasks that set none.
	Timeout time.Duration
	Workers int
	// Clock is the clock (the real one when nil); tests pass a fake.
	Clock clock.PassiveClock
}

// hasTasks passes bindings with eviction tasks, or the EvictionBlocked
// condition to clear.
func hasTasks(o client.Object) bool {
	b, err := anybinding.Of(o)
	if err != nil {
		return false
	}
	return len(b.Spec.GracefulEvictionTasks) > 0 || meta.FindStatusCondition(b.Status.Conditions, workv1alpha2.EvictionBlocked) != nil
}

// SetupWithManager registers one controller per binding kind. Status
// changes count: the workload's health where it went ends tasks.
func (r *Reconciler) SetupWithManager(mgr ctrl.Manager) error {
	if r.Clock == nil {
		r.Clock = clock.RealClock{}
	}
	if r.Timeout == 0 {
		r.Timeout = DefaultTimeout
	}
	for _, k := range anybinding.Kinds {
		name := "graceful-eviction"
		if k.ClusterScoped {
			name = "cluster-graceful-eviction"
		}
		if err := ctrl.NewControllerManagedBy(mgr).Named(name).
			For(k.New().Object, builder.WithPredicates(predicate.Funcs{
				CreateFunc: func(e event.CreateEvent) bool { return hasTasks(e.Object) },
				UpdateFunc: func(e event.UpdateEvent) bool { return hasTasks(e.ObjectNew) || hasTasks(e.ObjectOld) },
				DeleteFunc: func(event.DeleteEvent) bool { return false },
			})).
			// A cluster turning Ready or not changes what its copies count for.
			Watches(&clusterv1alpha1.Cluster{}, handler.EnqueueRequestsFromMapFunc(r.evicting(k)), builder.WithPredicates(predicate.Funcs{
				UpdateFunc: func(e event.UpdateEvent) bool {
					o, n := e.ObjectOld.(*clusterv1alpha1.Cluster), e.ObjectNew.(*clusterv1alpha1.Cluster)
					return clusterready.PlacementChanged(o, n)
				},
			})).
			WithOptions(queues.Options(max(r.Workers, 1))).
			Complete(k.Reconciler(r.Client, r.sync, nil)); err != nil {
			return err
		}
	}
	return nil
}

// evicting maps a Cluster change to the bindings with eviction tasks.
func (r *Reconciler) evicting(k anybinding.Kind) handler.MapFunc {
	return func(ctx context.Context, _ client.Object) []reconcile.Request {
		list, err := k.List(ctx, r.Client)
		if err != nil {
			klog.FromContext(ctx).Error(err, "Listing bindings", "kind", k.Name)
			return nil
		}
		var out []reconcile.Request
		for _, b := range list {
			if len(b.Spec.GracefulEvictionTasks) > 0 {
				out = append(out, reconcile.Request{NamespacedName: client.ObjectKeyFromObject(b.Object)})
			}
		}
		return out
	}
}

// sync assesses the binding's tasks and writes what changed: the tasks,
// then the EvictionBlocked condition.
func (r *Reconciler) sync(ctx context.Context, _ reconcile.Request, b anybinding.Binding) (time.Duration, error) {
	obj, spec, status := b.Object, b.Spec, b.Status
	if !obj.GetDeletionTimestamp().IsZero() {
		return 0, nil
	}
	clusters := &clusterv1alpha1.ClusterList{}
	if err := r.Client.List(ctx, clusters); err != nil {
		return 0, err
	}
	ready, pull := map[string]bool{}, map[string]bool{}
	byName := map[string]*clusterv1alpha1.Cluster{}
	for i := range clusters.Items {
		cl := &clusters.Items[i]
		ready[cl.Name] = meta.IsStatusConditionTrue(cl.Status.Conditions, clusterv1alpha1.ClusterConditionReady)
		pull[cl.Name] = cl.Spec.SyncMode == clusterv1alpha1.Pull
		byName[cl.Name] = cl
	}
	var tolerations []corev1.Toleration
	if spec.Placement != nil {
		tolerations = spec.Placement.ClusterTolerations
	}
	now := r.Clock.Now()
	// A taint eviction is over when the cluster is Ready and no longer has
	// a NoExecute taint the workload does not tolerate.
	recovered := func(t *workv1alpha2.GracefulEvictionTask) bool {
		cl := byName[t.FromCluster]
		if t.Producer != eviction.ProducerTaintManager || cl == nil || !ready[cl.Name] || !cl.DeletionTimestamp.IsZero() {
			return false
		}
		_, _, evicts := eviction.EvictionTime(cl.Spec.Taints, tolerations, now)
		return !evicts
	}
	out := Assess(Input{Spec: spec, Status: status, Generation: obj.GetGeneration(), Ready: func(c string) bool { return ready[c] },
		Now: now, Timeout: r.Timeout, MinAvailable: eviction.MinAvailable(obj.GetAnnotations(), spec.Replicas), Recovered: recovered,
		Pull: func(c string) bool { return pull[c] }})

	if len(out.Restored) > 0 || (!equality.Semantic.DeepEqual(out.Tasks, spec.GracefulEvictionTasks) && !(len(out.Tasks) == 0 && len(spec.GracefulEvictionTasks) == 0)) {
		// The copies of tasks ended because the workload is healthy where
		// it went are marked first: they are deleted only if that still
		// holds when they are (a cluster not Ready deletes its copy when it
		// is back, maybe much later).
		for _, e := range out.Ended {
			if e.Gated {
				if err := r.markEvicted(ctx, b, e.Task.FromCluster); err != nil {
					return 0, err
				}
			}
		}
		// The taint manager appends tasks to the same list: never write
		// over one this cache has not seen.
		patch := client.MergeFromWithOptions(obj.DeepCopyObject().(client.Object), client.MergeFromWithOptimisticLock{})
		spec.GracefulEvictionTasks = out.Tasks
		spec.Clusters = append(spec.Clusters, out.Restored...)
		if err := r.Client.Patch(ctx, obj, patch); err != nil {
			return 0, fmt.Errorf("writing the eviction tasks: %w", err)
		}
		for _, e := range out.Ended {
			klog.FromContext(ctx).Info("Graceful eviction ended", "binding", klog.KObj(obj), "cluster", e.Task.FromCluster, "why", e.Why)
			events.OnBinding(r.Recorder, obj, spec.Resource, corev1.EventTypeNormal, events.GracefulEvictionCompleted,
				"Eviction from %s ended (%s): %s", e.Task.FromCluster, purgeVerb(e), e.Why)
		}
	}

	patch := client.MergeFromWithOptions(obj.DeepCopyObject().(client.Object), client.MergeFromWithOptimisticLock{})
	changed := false
	if out.Blocked != nil {
		out.Blocked.ObservedGeneration = obj.GetGeneration()
		before := meta.FindStatusCondition(status.Conditions, workv1alpha2.EvictionBlocked)
		newlyBlocked := before == nil || before.Status != metav1.ConditionTrue || before.Message != out.Blocked.Message
		changed = meta.SetStatusCondition(&status.Conditions, *out.Blocked)
		if newlyBlocked {
			events.OnBinding(r.Recorder, obj, spec.Resource, corev1.EventTypeWarning, events.EvictionBlocked, "%s", out.Blocked.Message)
		}
	} else {
		changed = meta.RemoveStatusCondition(&status.Conditions, workv1alpha2.EvictionBlocked)
	}
	if changed {
		if err := r.Client.Status().Patch(ctx, obj, patch); err != nil {
			return 0, fmt.Errorf("writing the %s condition: %w", workv1alpha2.EvictionBlocked, err)
		}
	}
	return out.After, nil
}

// markEvicted sets workv1alpha1.EvictedAnnotation on the binding's Works in
// cluster's execution namespace.
func (r *Reconciler) markEvicted(ctx context.Context, b anybinding.Binding, cluster string) error {
	works := &workv1alpha1.WorkList{}
	if err := r.Client.List(ctx, works, client.InNamespace(workv1alpha1.ExecutionNamespace(cluster)), client.MatchingLabels(b.WorkLabels())); err != nil {
		return err
	}
	for i := range works.Items {
		w := &works.Items[i]
		if w.Annotations[workv1alpha1.EvictedAnnotation] == "true" || !w.DeletionTimestamp.IsZero() {
			continue
		}
		patch := client.MergeFrom(w.DeepCopy())
		metav1.SetMetaDataAnnotation(&w.ObjectMeta, workv1alpha1.EvictedAnnotation, "true")
		if err := r.Client.Patch(ctx, w, patch); err != nil && !apierrors.IsNotFound(err) {
			return fmt.Errorf("marking work %s/%s evicted: %w", w.Namespace, w.Name, err)
		}
	}
	return nil
}

func purgeVerb(e Ended) string {
	if e.Restored {
		return "its copy stays"
	}
	if e.Task.PurgeMode == policyv1alpha1.PurgeModeDirectly {
		return "its copy was removed at eviction"
	}
	return "its copy is removed now"
}
