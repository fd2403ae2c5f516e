// Package execution applies the manifests of Works to push-mode member
// clusters, and removes them from the member when the Work is deleted.
package execution

import (
	"context"
	"fmt"
	"slices"
	"time"

	"k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/tools/record"
	"k8s.io/utils/clock"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/builder"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller/controllerutil"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	clusterv1alpha1 "github.com/karmada-go/karmada/api/cluster/v1alpha1"
	workv1alpha1 "github.com/karmada-go/karmada/api/work/v1alpha1"
	"github.com/karmada-go/karmada/internal/clusters/clusterclient"
	"github.com/karmada-go/karmada/internal/clusters/clusterready"
	"github.com/karmada-go/karmada/internal/events"
	"github.com/karmada-go/karmada/internal/interpreter"
	"github.com/karmada-go/karmada/internal/metrics"
	"github.com/karmada-go/karmada/internal/queues"
	"github.com/karmada-go/karmada/internal/requeue"
)

// ControllerName is the name of this controller in --controllers.
const ControllerName = "execution"

// Finalizer holds a Work until its resources are removed from the member.
const Finalizer = workv1alpha1.ExecutionFinalizer

// FieldManager owns the fields Karmada applies in members.
const FieldManager = workv1alpha1.ExecutionFieldManager

// Reasons of the WorkDispatching condition.
const (
	ReasonDispatching        = "Dispatching"
	ReasonSuspendDispatching = "SuspendDispatching"
)

// Reconciler reconciles Works.
type Reconciler struct {
	// Interpreter answers what the controller must know of each kind
	// (replicas, status, health, ...): the binary's, with the
	// customizations and interpreter webhooks in force; nil knows the
	// built-in kinds only.
	Interpreter *interpreter.Interpreter
	// Recorder records events; nil records none.
	Recorder record.EventRecorder
	Client   client.Client
	Members  *clusterclient.Cache
	Workers  int
	// PullReleaseGrace (control plane; 0: never) lets go of a deleted Work
	// of a pull-mode cluster whose Ready condition has been Unknown for
	// that long (its agent is gone): its copies stay in the member.
	PullReleaseGrace time.Duration
	// StatusWritesApplied says the workStatus controller runs beside this
	// one and writes the Applied condition of a successful apply, together
	// with the first status of what was applied (one write of the Work
	// instead of two): it knows the apply succeeded from the member's copies,
	// which carry the Work generation they were applied from. This controller
	// then writes only failures. Without it, this controller writes every
	// outcome.
	StatusWritesApplied bool
	// Clock is the clock (the real one when nil); tests pass a fake.
	Clock clock.PassiveClock

	// done remembers the generation of each Work this process applied.
	done appliedGenerations
	// waiting holds the Works waiting for a type or namespace their member
	// does not have yet, and their backoff.
	waiting waitingWorks
	// clusters reads Clusters without copying them.
	clusters *clusterready.Clusters
	// side is where it runs (ForControlPlane, ForAgent).
	side clusterclient.Side
}

// ForControlPlane returns r as karmada-controller-manager runs it: for the
// push-mode members, judging evicted copies itself (evictedcopy.Judge) and
// recording those of pull-mode clusters for their agents. A Reconciler
// built without either constructor is the control plane's.
func ForControlPlane(r *Reconciler) *Reconciler {
	r.side = clusterclient.ControlPlane
	return r
}

// ForAgent returns r as a karmada-agent runs it: for its own pull-mode
// cluster only, reading no bindings: an evicted copy is removed on the
// verdict the control plane recorded on its Work (evictedcopy.Recorded),
// and a refused write names the pull grant's ClusterRole.
func ForAgent(r *Reconciler) *Reconciler {
	r.side = clusterclient.Agent
	return r
}

// SetupWithManager registers the controller.
func (r *Reconciler) SetupWithManager(mgr ctrl.Manager) error {
	if r.Clock == nil {
		r.Clock = clock.RealClock{}
	}
	var err error
	if r.clusters, err = clusterready.NewClusters(context.Background(), mgr); err != nil {
		return err
	}
	return ctrl.NewControllerManagedBy(mgr).
		Named(ControllerName).
		For(&workv1alpha1.Work{}).
		// A cluster turning Ready (or going away) may unblock its Works.
		Watches(&clusterv1alpha1.Cluster{}, handler.EnqueueRequestsFromMapFunc(clusterready.WorksOf(r.Client)), builder.WithPredicates(clusterready.Changed)).
		// A member serving new APIs may unblock the Works waiting for one.
		Watches(&clusterv1alpha1.Cluster{}, handler.EnqueueRequestsFromMapFunc(r.waitingOn), builder.WithPredicates(apiEnablementsChanged)).
		WithOptions(queues.Options(max(r.Workers, 1))).
		Complete(r)
}

// Reconcile applies or removes one Work, in phases: a Work being deleted
// is removed (remove.go); otherwise the Work is made ready to apply
// (prepare: finalizer, dispatching, the cluster's readiness), applied to
// its member (applyToMember) and the outcome reported (report: the Applied
// condition and when to look again).
func (r *Reconciler) Reconcile(ctx context.Context, req ctrl.Request) (ctrl.Result, error) {
	clusterName, ok := workv1alpha1.ClusterOfExecutionNamespace(req.Namespace)
	if !ok {
		return ctrl.Result{}, nil
	}
	work := &workv1alpha1.Work{}
	if err := r.Client.Get(ctx, req.NamespacedName, work); err != nil {
		if apierrors.IsNotFound(err) {
			r.forget(req.NamespacedName)
		}
		return ctrl.Result{}, client.IgnoreNotFound(err)
	}
	// The informer's own Cluster: read, never modified.
	cluster, err := r.clusters.Get(ctx, clusterName)
	if err != nil {
		if !apierrors.IsNotFound(err) {
			return ctrl.Result{}, err
		}
		cluster = nil
	}
	if !work.DeletionTimestamp.IsZero() {
		return r.remove(ctx, work, cluster)
	}
	if cluster == nil || !r.side.Serves(cluster) {
		// Nothing to apply here: unknown cluster, or the agent of a
		// pull-mode one applies (or, in an agent, a push-mode one).
		return ctrl.Result{}, nil
	}
	if controllerutil.AddFinalizer(work, Finalizer) {
		if err := r.Client.Update(ctx, work); err != nil {
			return ctrl.Result{}, fmt.Errorf("adding finalizer: %w", err)
		}
	}
	return r.sync(ctx, work, cluster)
}

// sync runs the phases of a Work that is to be applied: prepare, apply to
// the member, report. The phases set the Work's conditions in memory; its
// status is written once, at the end, whatever phase stopped.
func (r *Reconciler) sync(ctx context.Context, work *workv1alpha1.Work, cluster *clusterv1alpha1.Cluster) (result ctrl.Result, err error) {
	// The conditions as read (Conditions hold values only: a shallow
	// clone is a copy); the Work is copied only when they changed.
	before := slices.Clone(work.Status.Conditions)
	defer func() {
		werr := r.writeStatus(ctx, before, work)
		if err != nil || werr == nil {
			return
		}
		// Lost a race with workStatus: retried after ConflictDelay, not
		// logged as an error.
		result, err = requeue.OnConflict(werr)
	}()
	if !r.prepare(work, cluster) {
		return ctrl.Result{}, nil
	}
	applyErr, err := r.applyToMember(ctx, work, cluster)
	if err != nil {
		return ctrl.Result{}, err
	}
	return r.report(work, cluster.Name, applyErr)
}

// prepare says whether the Work is ready to apply: a suspended Work says
// so and stops here, a resumed one says so; its cluster must be Ready
// (else the Applied condition says it is not, and the Cluster watch brings
// the Work back when it is).
func (r *Reconciler) prepare(work *workv1alpha1.Work, cluster *clusterv1alpha1.Cluster) (ready bool) {
	key := types.NamespacedName{Namespace: work.Namespace, Name: work.Name}
	if work.Spec.SuspendDispatching != nil && *work.Spec.SuspendDispatching {
		r.forget(key)
		r.setDispatching(work, false)
		return false
	}
	if meta.FindStatusCondition(work.Status.Conditions, workv1alpha1.WorkDispatching) != nil {
		// Dispatching resumed. A Work never suspended carries no
		// condition, which saves a write per Work.
		r.setDispatching(work, true)
	}
	if !clusterready.IsReady(cluster) {
		r.forget(key)
		setCondition(work, metav1.Condition{Type: workv1alpha1.WorkApplied, Status: metav1.ConditionFalse, Reason: workv1alpha1.ReasonAppliedFailed, Message: fmt.Sprintf("cluster %s is not ready", cluster.Name)})
		return false
	}
	return true
}

// applyToMember applies the Work's manifests to its member, times it,
// records Karmada's SyncFailed or (when something was sent) SyncSucceed
// event, and keeps what this process knows of the Work's applies. applyErr
// is the apply's failure; err a failure to reach the member.
func (r *Reconciler) applyToMember(ctx context.Context, work *workv1alpha1.Work, cluster *clusterv1alpha1.Cluster) (applyErr, err error) {
	member, err := r.Members.Get(ctx, cluster)
	if err != nil {
		return nil, err
	}
	key := types.NamespacedName{Namespace: work.Namespace, Name: work.Name}
	start := time.Now()
	sent, applyErr := r.apply(ctx, member, work)
	metrics.WorkSyncWorkloadDuration.WithLabelValues(metrics.ResultOf(applyErr)).Observe(metrics.Since(start))
	if applyErr != nil {
		events.Warning(r.Recorder, work, events.SyncFailed, "Failed to sync work(%s/%s) to cluster(%s), err: %v", work.Namespace, work.Name, cluster.Name, applyErr)
	} else if sent > 0 {
		events.Normal(r.Recorder, work, events.SyncSucceed, "Sync work(%s/%s) to cluster(%s) successful.", work.Namespace, work.Name, cluster.Name)
	}
	if applyErr == nil || !soonResolved(applyErr) {
		r.waiting.clear(key)
	}
	if applyErr == nil {
		r.done.record(work)
	} else {
		r.done.forget(key)
	}
	return applyErr, nil
}

// report sets the Applied condition (on success only when workStatus does
// not write it with the copies' first status) and says when to look
// again: soon for what goes away by itself, never for manifests no retry
// can apply, with backoff for the rest.
func (r *Reconciler) report(work *workv1alpha1.Work, clusterName string, applyErr error) (ctrl.Result, error) {
	cond := metav1.Condition{Type: workv1alpha1.WorkApplied, Status: metav1.ConditionTrue, Reason: workv1alpha1.ReasonAppliedSuccessful, Message: workv1alpha1.MessageApplied}
	if applyErr != nil {
		cond.Status, cond.Reason, cond.Message = metav1.ConditionFalse, workv1alpha1.ReasonAppliedFailed, applyErr.Error()
	} else if r.StatusWritesApplied {
		return ctrl.Result{}, nil
	}
	setCondition(work, cond)
	switch {
	case applyErr == nil:
		return ctrl.Result{}, nil
	case soonResolved(applyErr):
		// The type or namespace may be on its way (a CRD or namespace
		// propagating alongside), or the right to write the kind (an
		// administrator granting it): retry soon, then less and less often
		// (every second five times, then 2 s doubling to 5 min), each
		// retry reading the member's discovery again; a change of the
		// Cluster's API enablements brings the Work back at once.
		return ctrl.Result{RequeueAfter: r.waiting.next(types.NamespacedName{Namespace: work.Namespace, Name: work.Name}, clusterName)}, nil
	case onlyInvalid(applyErr):
		// Applying the same manifests again cannot succeed: the condition
		// says why, and a new generation of the Work brings it back.
		return ctrl.Result{}, reconcile.TerminalError(applyErr)
	}
	return ctrl.Result{}, applyErr
}

// forget drops what this process knows of the Work's applies: its copies
// are compared and applied afresh next time.
func (r *Reconciler) forget(work types.NamespacedName) {
	r.done.forget(work)
	r.waiting.clear(work)
}

// setDispatching sets the WorkDispatching condition and, when it flips,
// records the WorkDispatching event saying whether dispatching is suspended.
func (r *Reconciler) setDispatching(work *workv1alpha1.Work, on bool) {
	cond := metav1.Condition{Type: workv1alpha1.WorkDispatching, Status: metav1.ConditionTrue, Reason: ReasonDispatching, Message: events.MessageDispatching}
	if !on {
		cond.Status, cond.Reason, cond.Message = metav1.ConditionFalse, ReasonSuspendDispatching, events.MessageDispatchingSuspended
	}
	flips := !meta.IsStatusConditionPresentAndEqual(work.Status.Conditions, workv1alpha1.WorkDispatching, cond.Status)
	setCondition(work, cond)
	if flips {
		events.Normal(r.Recorder, work, events.WorkDispatching, "%s", cond.Message)
	}
}

// setCondition sets a condition of the Work in memory, observed at its
// generation.
func setCondition(work *workv1alpha1.Work, cond metav1.Condition) {
	cond.ObservedGeneration = work.Generation
	meta.SetStatusCondition(&work.Status.Conditions, cond)
}

// writeStatus writes the Work's status, as the phases left it, when its
// conditions differ from before: the one status write of a sync. The
// optimistic lock keeps a merge patch, which replaces the conditions list
// whole, from erasing what workStatus wrote meanwhile (a conflict retries).
func (r *Reconciler) writeStatus(ctx context.Context, before []metav1.Condition, work *workv1alpha1.Work) error {
	if equality.Semantic.DeepEqual(before, work.Status.Conditions) {
		return nil
	}
	base := work.DeepCopy()
	base.Status.Conditions = before
	patch := client.MergeFromWithOptions(base, client.MergeFromWithOptimisticLock{})
	return client.IgnoreNotFound(r.Client.Status().Patch(ctx, work, patch))
}

func objectName(obj *unstructured.Unstructured) string {
	if ns := obj.GetNamespace(); ns != "" {
		return ns + "/" + obj.GetName()
	}
	return obj.GetName()
}

func ptrTrue() *bool                { b := true; return &b }
func ptrUID(u types.UID) *types.UID { return &u }
