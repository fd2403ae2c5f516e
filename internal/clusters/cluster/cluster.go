// Package cluster reconciles Clusters: each gets an execution namespace
// karmada-es-<cluster> for its Works, removed (after the Works) when the
// Cluster is deleted; and NoSchedule taints that follow its Ready condition.
package cluster

import (
	"context"
	"fmt"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/tools/record"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/builder"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller/controllerutil"

	clusterv1alpha1 "github.com/karmada-go/karmada/api/cluster/v1alpha1"
	workv1alpha1 "github.com/karmada-go/karmada/api/work/v1alpha1"
	"github.com/karmada-go/karmada/internal/clusters/clusterready"
	"github.com/karmada-go/karmada/internal/events"
	"github.com/karmada-go/karmada/internal/queues"
)

// ControllerName is the name of this controller in --controllers.
const ControllerName = "cluster"

// Finalizer holds a Cluster until its Works and execution namespace are gone.
const Finalizer = clusterv1alpha1.ClusterControllerFinalizer

// Taints this controller keeps in step with the Ready condition.
const (
	TaintNotReady    = clusterv1alpha1.TaintClusterNotReady
	TaintUnreachable = clusterv1alpha1.TaintClusterUnreachable
)

// Reconciler reconciles Clusters.
type Reconciler struct {
	// Recorder records events; nil records none.
	Recorder record.EventRecorder
	Client   client.Client
	// Reader reads past the cache; nil uses the manager's API reader. A
	// Work created a moment before its Cluster is deleted may not be in
	// the cache yet: the execution namespace goes only when the API
	// server, not the cache, holds no Work in it.
	Reader  client.Reader
	Workers int
}

// SetupWithManager registers the controller.
func (r *Reconciler) SetupWithManager(mgr ctrl.Manager) error {
	if r.Reader == nil {
		r.Reader = mgr.GetAPIReader()
	}
	return ctrl.NewControllerManagedBy(mgr).
		Named(ControllerName).
		For(&clusterv1alpha1.Cluster{}, builder.WithPredicates(clusterready.Changed)).
		WithOptions(queues.Options(max(r.Workers, 1))).
		Complete(r)
}

// Reconcile converges one Cluster.
func (r *Reconciler) Reconcile(ctx context.Context, req ctrl.Request) (ctrl.Result, error) {
	cluster := &clusterv1alpha1.Cluster{}
	if err := r.Client.Get(ctx, req.NamespacedName, cluster); err != nil {
		return ctrl.Result{}, client.IgnoreNotFound(err)
	}
	if !cluster.DeletionTimestamp.IsZero() {
		return r.remove(ctx, cluster)
	}
	if controllerutil.AddFinalizer(cluster, Finalizer) {
		if err := r.Client.Update(ctx, cluster); err != nil {
			return ctrl.Result{}, fmt.Errorf("adding finalizer: %w", err)
		}
	}
	ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: workv1alpha1.ExecutionNamespace(cluster.Name)}}
	if err := r.Client.Get(ctx, client.ObjectKeyFromObject(ns), &corev1.Namespace{}); apierrors.IsNotFound(err) {
		err := r.Client.Create(ctx, ns)
		if err != nil && !apierrors.IsAlreadyExists(err) {
			events.Warning(r.Recorder, cluster, events.CreateExecutionSpaceFailed, "Failed to create execution namespace %s: %v", ns.Name, err)
			return ctrl.Result{}, fmt.Errorf("creating execution namespace %s: %w", ns.Name, err)
		}
		if err == nil {
			events.Normal(r.Recorder, cluster, events.CreateExecutionSpaceSucceed, "Created execution namespace %s", ns.Name)
		}
	} else if err != nil {
		return ctrl.Result{}, err
	}
	taints, changed := TaintsForReadiness(cluster.Spec.Taints, meta.FindStatusCondition(cluster.Status.Conditions, clusterv1alpha1.ClusterConditionReady), time.Now())
	if changed {
		cluster.Spec.Taints = taints
		if err := r.Client.Update(ctx, cluster); err != nil {
			if !apierrors.IsConflict(err) {
				events.Warning(r.Recorder, cluster, events.TaintClusterFailed, "Failed to set taints %v: %v", taintKeys(taints), err)
			}
			return ctrl.Result{}, fmt.Errorf("updating taints: %w", err)
		}
		events.Normal(r.Recorder, cluster, events.TaintClusterSucceed, "Set taints %v", taintKeys(taints))
		ctrl.LoggerFrom(ctx).Info("Updated cluster taints", "cluster", cluster.Name, "taints", taintKeys(taints))
	}
	return ctrl.Result{}, nil
}

// remove deletes the Cluster's Works, then its execution namespace, then
// lets the Cluster go.
func (r *Reconciler) remove(ctx context.Context, cluster *clusterv1alpha1.Cluster) (ctrl.Result, error) {
	if !controllerutil.ContainsFinalizer(cluster, Finalizer) {
		return ctrl.Result{}, nil
	}
	nsName := workv1alpha1.ExecutionNamespace(cluster.Name)
	works := &workv1alpha1.WorkList{}
	if err := r.Client.List(ctx, works, client.InNamespace(nsName)); err != nil {
		return ctrl.Result{}, fmt.Errorf("listing works of cluster %s: %w", cluster.Name, err)
	}
	if len(works.Items) > 0 {
		for i := range works.Items {
			w := &works.Items[i]
			if w.DeletionTimestamp.IsZero() {
				if err := r.Client.Delete(ctx, w); err != nil && !apierrors.IsNotFound(err) {
					return ctrl.Result{}, fmt.Errorf("deleting work %s/%s: %w", w.Namespace, w.Name, err)
				}
			}
		}
		// The execution controller removes each Work's resources first.
		return ctrl.Result{RequeueAfter: time.Second}, nil
	}
	if r.Reader != nil {
		live := &workv1alpha1.WorkList{}
		if err := r.Reader.List(ctx, live, client.InNamespace(nsName), client.Limit(1)); err != nil {
			return ctrl.Result{}, fmt.Errorf("listing works of cluster %s: %w", cluster.Name, err)
		}
		if len(live.Items) > 0 {
			// The cache has not caught up: come back when it has.
			return ctrl.Result{RequeueAfter: 100 * time.Millisecond}, nil
		}
	}
	ns := &corev1.Namespace{}
	err := r.Client.Get(ctx, client.ObjectKey{Name: nsName}, ns)
	switch {
	case err == nil:
		if ns.DeletionTimestamp.IsZero() {
			if err := r.Client.Delete(ctx, ns); err != nil && !apierrors.IsNotFound(err) {
				events.Warning(r.Recorder, cluster, events.RemoveExecutionSpaceFailed, "Failed to remove execution namespace %s: %v", nsName, err)
				return ctrl.Result{}, fmt.Errorf("deleting execution namespace %s: %w", nsName, err)
			}
			events.Normal(r.Recorder, cluster, events.RemoveExecutionSpaceSucceed, "Removed execution namespace %s", nsName)
		}
		return ctrl.Result{RequeueAfter: time.Second}, nil
	case !apierrors.IsNotFound(err):
		return ctrl.Result{}, err
	}
	controllerutil.RemoveFinalizer(cluster, Finalizer)
	if err := r.Client.Update(ctx, cluster); err != nil {
		return ctrl.Result{}, client.IgnoreNotFound(err)
	}
	ctrl.LoggerFrom(ctx).Info("Removed cluster", "cluster", cluster.Name)
	return ctrl.Result{}, nil
}

// TaintsForReadiness returns the taints with not-ready / unreachable
// NoSchedule taints matching the Ready condition: False means not-ready,
// Unknown unreachable, True neither. No condition yet changes nothing.
func TaintsForReadiness(taints []corev1.Taint, ready *metav1.Condition, now time.Time) ([]corev1.Taint, bool) {
	if ready == nil {
		return taints, false
	}
	want := map[string]bool{}
	switch ready.Status {
	case metav1.ConditionFalse:
		want[TaintNotReady] = true
	case metav1.ConditionUnknown:
		want[TaintUnreachable] = true
	}
	out := make([]corev1.Taint, 0, len(taints)+1)
	changed := false
	have := map[string]bool{}
	for _, t := range taints {
		managed := t.Effect == corev1.TaintEffectNoSchedule && (t.Key == TaintNotReady || t.Key == TaintUnreachable)
		if managed && !want[t.Key] {
			changed = true
			continue
		}
		if managed {
			have[t.Key] = true
		}
		out = append(out, t)
	}
	for _, key := range []string{TaintNotReady, TaintUnreachable} {
		if want[key] && !have[key] {
			out = append(out, corev1.Taint{Key: key, Effect: corev1.TaintEffectNoSchedule, TimeAdded: &metav1.Time{Time: now.Truncate(time.Second)}})
			changed = true
		}
	}
	return out, changed
}

func taintKeys(ts []corev1.Taint) []string {
	out := make([]string, 0, len(ts))
	for _, t := range ts {
		out = append(out, t.Key+":"+string(t.Effect))
	}
	return out
}
