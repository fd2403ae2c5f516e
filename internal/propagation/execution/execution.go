// Package execution applies the manifests of Works to push-mode member
// clusters, and removes them from the member when the Work is deleted.
package execution

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/tools/record"
	"k8s.io/klog/v2"
	"k8s.io/utils/clock"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/builder"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller"
	"sigs.k8s.io/controller-runtime/pkg/controller/controllerutil"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	clusterv1alpha1 "github.com/karmada-go/karmada/api/cluster/v1alpha1"
	workv1alpha1 "github.com/karmada-go/karmada/api/work/v1alpha1"
	"github.com/karmada-go/karmada/internal/clusters/clusterclient"
	"github.com/karmada-go/karmada/internal/clusters/clusterready"
	"github.com/karmada-go/karmada/internal/clusters/memberrights"
	"github.com/karmada-go/karmada/internal/events"
	"github.com/karmada-go/karmada/internal/interpreter"
	"github.com/karmada-go/karmada/internal/metrics"
	"github.com/karmada-go/karmada/internal/names"
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
	// Agent runs it in a karmada-agent, for its own pull-mode cluster.
	Agent bool
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
		WithOptions(controller.Options{MaxConcurrentReconciles: max(r.Workers, 1)}).
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
	if cluster == nil || !clusterclient.Serves(r.Agent, cluster) {
		// Nothing to apply here: unknown cluster, or the agent of a
		// pull-mode one applies (or, in an agent, a push-mode one).
		return ctrl.Result{}, nil
	}
	if ready, err := r.prepare(ctx, work, cluster); !ready || err != nil {
		return ctrl.Result{}, err
	}
	applyErr, err := r.applyToMember(ctx, work, cluster)
	if err != nil {
		return ctrl.Result{}, err
	}
	return r.report(ctx, work, clusterName, applyErr)
}

// prepare makes the Work ready to apply: its finalizer, its dispatching
// (a suspended Work says so and stops here; a resumed one says so), and
// its cluster Ready (else the Applied condition says it is not, and the
// Cluster watch brings the Work back when it is).
func (r *Reconciler) prepare(ctx context.Context, work *workv1alpha1.Work, cluster *clusterv1alpha1.Cluster) (ready bool, err error) {
	key := types.NamespacedName{Namespace: work.Namespace, Name: work.Name}
	if controllerutil.AddFinalizer(work, Finalizer) {
		if err := r.Client.Update(ctx, work); err != nil {
			return false, fmt.Errorf("adding finalizer: %w", err)
		}
	}
	if work.Spec.SuspendDispatching != nil && *work.Spec.SuspendDispatching {
		r.forget(key)
		return false, r.setDispatching(ctx, work, false)
	}
	if meta.FindStatusCondition(work.Status.Conditions, workv1alpha1.WorkDispatching) != nil {
		// Dispatching resumed. A Work never suspended carries no
		// condition, which saves a write per Work.
		if err := r.setDispatching(ctx, work, true); err != nil {
			return false, err
		}
	}
	if !clusterready.IsReady(cluster) {
		r.forget(key)
		return false, r.setCondition(ctx, work, metav1.Condition{Type: workv1alpha1.WorkApplied, Status: metav1.ConditionFalse, Reason: workv1alpha1.ReasonAppliedFailed, Message: fmt.Sprintf("cluster %s is not ready", cluster.Name)})
	}
	return true, nil
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

// report writes the Applied condition (on success only when workStatus
// does not write it with the copies' first status) and says when to look
// again: soon for what goes away by itself, never for manifests no retry
// can apply, with backoff for the rest.
func (r *Reconciler) report(ctx context.Context, work *workv1alpha1.Work, clusterName string, applyErr error) (ctrl.Result, error) {
	cond := metav1.Condition{Type: workv1alpha1.WorkApplied, Status: metav1.ConditionTrue, Reason: workv1alpha1.ReasonAppliedSuccessful, Message: workv1alpha1.MessageApplied}
	if applyErr != nil {
		cond.Status, cond.Reason, cond.Message = metav1.ConditionFalse, workv1alpha1.ReasonAppliedFailed, applyErr.Error()
	} else if r.StatusWritesApplied {
		return ctrl.Result{}, nil
	}
	if err := r.setCondition(ctx, work, cond); err != nil {
		return ctrl.Result{}, err
	}
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

// notServedError says a member does not serve a manifest's type (yet).
type notServedError struct{ err error }

func (e *notServedError) Error() string { return e.err.Error() }
func (e *notServedError) Unwrap() error { return e.err }

// invalidManifestError is a manifest that is not an object: no retry can
// apply it.
type invalidManifestError struct{ err error }

func (e *invalidManifestError) Error() string { return e.err.Error() }
func (e *invalidManifestError) Unwrap() error { return e.err }

// onlyInvalid reports whether every apply error is an invalid manifest.
func onlyInvalid(err error) bool {
	errs := []error{err}
	if j, ok := err.(interface{ Unwrap() []error }); ok {
		errs = j.Unwrap()
	}
	for _, e := range errs {
		var im *invalidManifestError
		if !errors.As(e, &im) {
			return false
		}
	}
	return len(errs) > 0
}

// soonResolved reports whether every apply error is of the kind that goes
// away without a new Work: a type not served yet, a namespace not created
// yet, or a kind the member refuses until an administrator grants it.
func soonResolved(err error) bool {
	var errs []error
	if j, ok := err.(interface{ Unwrap() []error }); ok {
		errs = j.Unwrap()
	} else {
		errs = []error{err}
	}
	for _, e := range errs {
		var ns *notServedError
		var refused *memberrights.Refusal
		if !errors.As(e, &ns) && !errors.As(e, &refused) && !apierrors.IsNotFound(e) {
			return false
		}
	}
	return len(errs) > 0
}

// apply server-side applies every manifest, marked as coming from the Work.
// A manifest whose member copy already holds it (seen in the member's cache
// of managed objects), for a generation of the Work applied before, is not
// sent again: restarts and status updates cost the member nothing.
// It returns how many manifests it sent.
func (r *Reconciler) apply(ctx context.Context, m *clusterclient.Member, work *workv1alpha1.Work) (int, error) {
	var errs []error
	sent := 0
	workKey := types.NamespacedName{Namespace: work.Namespace, Name: work.Name}
	applied := appliedAtGeneration(work) || r.done.has(work)
	// After a failed apply (something in the way, say), the member is read
	// first rather than refusing the same create-only apply on every retry.
	failedBefore := meta.IsStatusConditionFalse(work.Status.Conditions, workv1alpha1.WorkApplied)
	for i, manifest := range work.Spec.Workload.Manifests {
		obj := &unstructured.Unstructured{}
		if err := obj.UnmarshalJSON(manifest.Raw); err != nil {
			errs = append(errs, &invalidManifestError{fmt.Errorf("manifest %d is not a valid object: %w", i, err)})
			continue
		}
		overwrite := obj.GetAnnotations()[workv1alpha1.ConflictResolutionAnnotation] == workv1alpha1.ConflictOverwrite
		markFromWork(obj, work)
		ri, mapping, err := resourceFor(m, obj)
		if err != nil {
			errs = append(errs, err)
			continue
		}
		// What the member has in the way: a managed copy (from the cache),
		// nothing (the cache has no managed copy: sent as a create-only
		// apply, which a member object of that name refuses), or unknown
		// (the cache cannot answer: the member is asked).
		ours, absent := false, false
		if cur, found, ok := cachedCopy(ctx, m, mapping, workKey, obj); ok && found && fromWork(cur, work) {
			kept, err := retained(r.Interpreter, obj, cur)
			if err != nil {
				errs = append(errs, err)
				continue
			}
			obj = kept
			// An adopted copy stays marked as adopted.
			keepAdoption(obj, cur)
			if holds(cur, obj, work, applied) {
				continue
			}
			// A generation applied before whose copy the cache does not
			// show may be the cache lagging behind that very apply: the
			// member is asked before writing again.
			ours = !applied
		} else if ok && !found && !failedBefore && !applied {
			// (A generation applied before, not in the cache: the cache
			// may lag behind that apply, and the read below tells.)
			absent = true
		}
		// resolve reads the member's object of that name and decides: with
		// Abort, what is there decides whether to apply; with Overwrite,
		// whether the object was there before Karmada, and so is adopted
		// rather than created (and released, not deleted, with the Work).
		// It returns whether to send the manifest.
		resolve := func() (bool, error) {
			cur, err := ri.Get(ctx, obj.GetName(), metav1.GetOptions{})
			if err != nil && !apierrors.IsNotFound(err) {
				return false, r.refusal(ctx, m, mapping, fmt.Errorf("reading %s %s: %w", obj.GetKind(), objectName(obj), err))
			}
			if err == nil && !overwrite && !fromWork(cur, work) {
				return false, fmt.Errorf("%s %s already exists in cluster %s and was not created by Karmada; it is left alone (set conflictResolution: Overwrite in the policy to take it over)", obj.GetKind(), objectName(obj), m.Name)
			}
			if err == nil {
				kept, rerr := retained(r.Interpreter, obj, cur)
				if rerr != nil {
					return false, rerr
				}
				obj = kept
				if fromWork(cur, work) {
					keepAdoption(obj, cur)
				} else {
					adopt(obj, cur, work)
				}
			}
			// The cache could not answer (a member's informer still
			// syncing after a restart, or lagging): the copy just read
			// tells as well whether it already holds the manifest.
			return err != nil || !holds(cur, obj, work, applied), nil
		}
		if !ours && !absent {
			send, err := resolve()
			if err != nil {
				errs = append(errs, err)
			}
			if !send {
				continue
			}
		}
		ctrl.LoggerFrom(ctx).V(4).Info("Applying manifest", "work", klog.KObj(work), "generation", work.Generation, "appliedBefore", applied, "object", objectName(obj), "createOnly", absent)
		err = r.send(ctx, ri, obj, absent)
		countSend(m.Name, obj, absent, err)
		if absent && apierrors.IsConflict(err) {
			// Something of that name is there after all (not Karmada's, or a
			// copy the cache has not shown yet): untouched; decide as above.
			send, rerr := resolve()
			if rerr != nil {
				errs = append(errs, rerr)
			}
			if !send {
				continue
			}
			err = r.send(ctx, ri, obj, false)
			countSend(m.Name, obj, false, err)
		}
		if err != nil {
			errs = append(errs, r.refusal(ctx, m, mapping, fmt.Errorf("applying %s %s: %w", obj.GetKind(), objectName(obj), err)))
			continue
		}
		sent++
	}
	return sent, errors.Join(errs...)
}

// retained is the manifest completed with what the member owns in its copy
// cur, for kinds whose customization (or interpreter webhook) defines
// Retain: server-side apply already keeps every field the manifest leaves
// out, so the built-in kinds need none. On failure the copy is left as it
// is (the error names the customization), and applied again at the next
// try.
func retained(in *interpreter.Interpreter, obj, cur *unstructured.Unstructured) (*unstructured.Unstructured, error) {
	if !in.HasRetain(obj.GroupVersionKind().GroupKind()) {
		return obj, nil
	}
	out, err := in.Retain(obj, cur)
	if err != nil {
		metrics.InterpreterErrors.WithLabelValues("Retain").Inc()
		return nil, fmt.Errorf("retaining the member's fields of %s %s: %w", obj.GetKind(), objectName(obj), err)
	}
	return out, nil
}

// refusal explains a refusal of the member's authorizer (Karmada's identity
// there may not write that kind, or not grant those rights) with the flag
// or command that grants it, read from the record of the identity's grant
// on its ClusterRole; any other error is returned as it is.
func (r *Reconciler) refusal(ctx context.Context, m *clusterclient.Member, mapping *meta.RESTMapping, err error) error {
	escalation, ok := memberrights.Refused(err)
	if !ok {
		return err
	}
	refusal := &memberrights.Refusal{Cluster: m.Name, Pull: r.Agent, Escalation: escalation, Err: err,
		Kind: memberrights.Kind{Group: mapping.Resource.Group, Resource: mapping.Resource.Resource}}
	role := memberrights.PushClusterRole(m.Name)
	if r.Agent {
		role = memberrights.PullClusterRole
	}
	// Read on failures only; without it the hint names the kind alone.
	if cr, gerr := m.Kube.RbacV1().ClusterRoles().Get(ctx, role, metav1.GetOptions{}); gerr == nil {
		refusal.Granted = cr.Annotations[clusterv1alpha1.PropagateKindsAnnotation]
	}
	return refusal
}

// absentResourceVersion makes a server-side apply create-only: as a
// precondition no live object can meet (no etcd revision reaches it), it has
// the member refuse the apply with a conflict when an object of that name
// exists, and is ignored when the apply creates the object. One request
// instead of a read and an apply, and what is in the way is never touched.
const absentResourceVersion = "9223372036854775807"

// countSend counts a create (createOnly) or update of a member object. A
// create refused because the object exists is not a failed create: what
// happens next decides.
func countSend(cluster string, obj *unstructured.Unstructured, createOnly bool, err error) {
	if createOnly {
		if apierrors.IsConflict(err) {
			return
		}
		metrics.CreateResourceToCluster.WithLabelValues(metrics.ResultOf(err), obj.GetAPIVersion(), obj.GetKind(), cluster, "false").Inc()
		return
	}
	metrics.UpdateResourceToCluster.WithLabelValues(metrics.ResultOf(err), obj.GetAPIVersion(), obj.GetKind(), cluster, "updated").Inc()
}

// send server-side applies the manifest, create-only when absent.
func (r *Reconciler) send(ctx context.Context, ri dynamic.ResourceInterface, obj *unstructured.Unstructured, createOnly bool) error {
	body := obj
	if createOnly {
		body = obj.DeepCopy()
		body.SetResourceVersion(absentResourceVersion)
	}
	data, err := json.Marshal(body.Object)
	if err != nil {
		return err
	}
	_, err = ri.Patch(ctx, obj.GetName(), types.ApplyPatchType, data, metav1.PatchOptions{FieldManager: FieldManager, Force: ptrTrue()})
	return err
}

// fromWork reports whether a member object carries this Work's mark.
func fromWork(obj *unstructured.Unstructured, work *workv1alpha1.Work) bool {
	return names.FromWork(obj.GetAnnotations(), client.ObjectKeyFromObject(work))
}

func markFromWork(obj *unstructured.Unstructured, work *workv1alpha1.Work) {
	a := names.MarkWork(obj.GetAnnotations(), client.ObjectKeyFromObject(work))
	a[workv1alpha1.WorkGenerationAnnotation] = strconv.FormatInt(work.Generation, 10)
	obj.SetAnnotations(a)
	l := obj.GetLabels()
	if l == nil {
		l = map[string]string{}
	}
	l[workv1alpha1.ManagedLabel] = "true"
	obj.SetLabels(l)
}

func resourceFor(m *clusterclient.Member, obj *unstructured.Unstructured) (dynamic.ResourceInterface, *meta.RESTMapping, error) {
	gvk := obj.GroupVersionKind()
	mapping, err := m.Mapper.RESTMapping(gvk.GroupKind(), gvk.Version)
	if err != nil {
		// The member may have gained the API since discovery was cached:
		// read it again, unless another Work just did.
		if !m.RefreshDiscovery() {
			return nil, nil, &notServedError{fmt.Errorf("cluster %s does not serve %s: %w", m.Name, gvk, err)}
		}
		if mapping, err = m.Mapper.RESTMapping(gvk.GroupKind(), gvk.Version); err != nil {
			return nil, nil, &notServedError{fmt.Errorf("cluster %s does not serve %s: %w", m.Name, gvk, err)}
		}
	}
	if mapping.Scope.Name() == meta.RESTScopeNameNamespace {
		return m.Dynamic.Resource(mapping.Resource).Namespace(obj.GetNamespace()), mapping, nil
	}
	return m.Dynamic.Resource(mapping.Resource), mapping, nil
}

// setDispatching writes the WorkDispatching condition and, when it flips,
// records the WorkDispatching event saying whether dispatching is suspended.
func (r *Reconciler) setDispatching(ctx context.Context, work *workv1alpha1.Work, on bool) error {
	cond := metav1.Condition{Type: workv1alpha1.WorkDispatching, Status: metav1.ConditionTrue, Reason: ReasonDispatching, Message: events.MessageDispatching}
	if !on {
		cond.Status, cond.Reason, cond.Message = metav1.ConditionFalse, ReasonSuspendDispatching, events.MessageDispatchingSuspended
	}
	flips := !meta.IsStatusConditionPresentAndEqual(work.Status.Conditions, workv1alpha1.WorkDispatching, cond.Status)
	if err := r.setCondition(ctx, work, cond); err != nil {
		return err
	}
	if flips {
		events.Normal(r.Recorder, work, events.WorkDispatching, "%s", cond.Message)
	}
	return nil
}

func (r *Reconciler) setCondition(ctx context.Context, work *workv1alpha1.Work, cond metav1.Condition) error {
	cond.ObservedGeneration = work.Generation
	patch := client.MergeFrom(work.DeepCopy())
	if !meta.SetStatusCondition(&work.Status.Conditions, cond) {
		return nil
	}
	if err := r.Client.Status().Patch(ctx, work, patch); err != nil {
		return client.IgnoreNotFound(err)
	}
	return nil
}

func objectName(obj *unstructured.Unstructured) string {
	if ns := obj.GetNamespace(); ns != "" {
		return ns + "/" + obj.GetName()
	}
	return obj.GetName()
}

func ptrTrue() *bool                { b := true; return &b }
func ptrUID(u types.UID) *types.UID { return &u }
