// Package workstatus records, in each Work's status, the state of what it
// applied to its member: the reflected status and health of every manifest,
// read from shared informers on the member that start per resource type on
// first need.
package workstatus

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"

	"k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/tools/record"
	"k8s.io/client-go/util/workqueue"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/builder"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/event"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"
	"sigs.k8s.io/controller-runtime/pkg/source"

	clusterv1alpha1 "github.com/karmada-go/karmada/api/cluster/v1alpha1"
	workv1alpha1 "github.com/karmada-go/karmada/api/work/v1alpha1"
	"github.com/karmada-go/karmada/internal/clusters/clusterclient"
	"github.com/karmada-go/karmada/internal/clusters/clusterready"
	"github.com/karmada-go/karmada/internal/events"
	"github.com/karmada-go/karmada/internal/interpreter"
	"github.com/karmada-go/karmada/internal/metrics"
	"github.com/karmada-go/karmada/internal/propagation/settle"
	"github.com/karmada-go/karmada/internal/queues"
	"github.com/karmada-go/karmada/internal/requeue"
)

// ControllerName is the name of this controller in --controllers.
const ControllerName = "workStatus"

// Reconciler reconciles the status of Works.
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

	// Window delays the reflection of a member object's change (DefaultWindow
	// when zero), so that the quick succession of status changes of a
	// rollout is written to the Work once rather than once per step.
	Window time.Duration

	// Settle is how long a Work's reflected status may wait for what it
	// applied to settle (DefaultSettle when zero): a state still in progress
	// (unobserved, unhealthy) is written at most once per Settle, a settled
	// one after Window.
	Settle time.Duration

	memberEvents chan event.TypedGenericEvent[*workv1alpha1.Work]
	// clusters reads Clusters without copying them.
	clusters *clusterready.Clusters

	// side is where it runs (ForControlPlane, ForAgent).
	side clusterclient.Side

	// progress paces the Works' status writes: Begin is when the copies
	// of a generation were first seen applied (its Applied condition not
	// written yet), a write's note the resourceVersion written over.
	progress settle.Tracker[types.NamespacedName]
}

// ForControlPlane returns r as karmada-controller-manager runs it: it
// reflects the member status of the push-mode members' Works. A Reconciler
// built without either constructor is the control plane's.
func ForControlPlane(r *Reconciler) *Reconciler {
	r.side = clusterclient.ControlPlane
	return r
}

// ForAgent returns r as a karmada-agent runs it: it reflects the member
// status of its own pull-mode cluster's Works.
func ForAgent(r *Reconciler) *Reconciler {
	r.side = clusterclient.Agent
	return r
}

// DefaultSettle is the default of Reconciler.Settle: as long as the binding
// status controller holds back a binding's progress (5 s), so that a copy
// that takes a few seconds to become available costs its Work one status
// write (1.15 writes per Work at 2 s, 1.03 at 5 s, K = 1,000 over 3 members).
const DefaultSettle = 5 * time.Second

func (r *Reconciler) settle() time.Duration {
	if r.Settle > 0 {
		return r.Settle
	}
	return DefaultSettle
}

// behindOwnWrite reports whether the cached Work is the one this controller
// last wrote over: its write's event brings the Work back, and a status
// computed from this copy would write the same again (or lose a conflict).
func (r *Reconciler) behindOwnWrite(work *workv1alpha1.Work) bool {
	over := r.progress.LastWrite(types.NamespacedName{Namespace: work.Namespace, Name: work.Name}).Note
	return over != "" && over == work.ResourceVersion
}

// DefaultWindow is the default of Reconciler.Window.
const DefaultWindow = 250 * time.Millisecond

func (r *Reconciler) window() time.Duration {
	if r.Window > 0 {
		return r.Window
	}
	return DefaultWindow
}

// SetupWithManager registers the controller. Changes of managed objects in
// members come back as events for their Works.
func (r *Reconciler) SetupWithManager(mgr ctrl.Manager) error {
	var err error
	if r.clusters, err = clusterready.NewClusters(context.Background(), mgr); err != nil {
		return err
	}
	r.memberEvents = make(chan event.TypedGenericEvent[*workv1alpha1.Work], 1024)
	return ctrl.NewControllerManagedBy(mgr).
		Named(ControllerName).
		For(&workv1alpha1.Work{}).
		WatchesRawSource(source.Channel(r.memberEvents, handler.TypedFuncs[*workv1alpha1.Work, reconcile.Request]{
			GenericFunc: func(_ context.Context, e event.TypedGenericEvent[*workv1alpha1.Work], q workqueue.TypedRateLimitingInterface[reconcile.Request]) {
				q.AddAfter(reconcile.Request{NamespacedName: client.ObjectKeyFromObject(e.Object)}, r.window())
			},
		})).
		// A member turning Ready again may have nothing new to apply: its
		// Works' copies are looked at again.
		Watches(&clusterv1alpha1.Cluster{}, handler.EnqueueRequestsFromMapFunc(clusterready.WorksOf(r.Client)), builder.WithPredicates(clusterready.Changed)).
		WithOptions(queues.Options(max(r.Workers, 1))).
		Complete(r)
}

// release stops watching, for a Work that is gone, the member types it used
// (informers no other Work needs stop).
func (r *Reconciler) release(cluster string, work types.NamespacedName) {
	if m, ok := r.Members.Lookup(cluster); ok {
		m.Retain(work)
	}
	r.progress.Forget(work)
}

func (r *Reconciler) memberChanged(work types.NamespacedName) {
	w := &workv1alpha1.Work{}
	w.Namespace, w.Name = work.Namespace, work.Name
	// The channel source drains into the work queue (which deduplicates),
	// so this send waits only briefly even under a burst.
	r.memberEvents <- event.TypedGenericEvent[*workv1alpha1.Work]{Object: w}
}

// Reconcile writes one Work's manifest statuses.
func (r *Reconciler) Reconcile(ctx context.Context, req ctrl.Request) (ctrl.Result, error) {
	clusterName, ok := workv1alpha1.ClusterOfExecutionNamespace(req.Namespace)
	if !ok {
		return ctrl.Result{}, nil
	}
	work := &workv1alpha1.Work{}
	if err := r.Client.Get(ctx, req.NamespacedName, work); err != nil {
		if apierrors.IsNotFound(err) {
			r.release(clusterName, req.NamespacedName)
		}
		return ctrl.Result{}, client.IgnoreNotFound(err)
	}
	if !work.DeletionTimestamp.IsZero() {
		r.release(clusterName, req.NamespacedName)
		return ctrl.Result{}, nil
	}
	if r.behindOwnWrite(work) {
		return ctrl.Result{}, nil
	}
	// The informer's own Cluster: read, never modified.
	cluster, err := r.clusters.Get(ctx, clusterName)
	if err != nil {
		return ctrl.Result{}, client.IgnoreNotFound(err)
	}
	if !r.side.Serves(cluster) || !clusterready.IsReady(cluster) {
		// An agent reports a pull-mode member's Works; a member that is not
		// Ready has nothing current to report (the execution controller
		// writes why its Works are not applied).
		return ctrl.Result{}, nil
	}
	member, err := r.Members.Get(ctx, cluster)
	if err != nil {
		return ctrl.Result{}, err
	}
	states, used, wait, err := r.observe(work, member)
	if err != nil || (wait > 0 && wait < interpretRetry) {
		return ctrl.Result{RequeueAfter: wait}, err
	}
	// retry: a manifest's status could not be interpreted (see observe).
	retry := wait
	// Types the Work no longer has (its manifests changed) are released.
	member.Retain(req.NamespacedName, used...)

	now := time.Now()
	v := decide(work, states, func() time.Time { return r.progress.Begin(req.NamespacedName, work.Generation, now) },
		r.progress.LastWrite(req.NamespacedName).At, r.settle(), now)
	switch v.action {
	case leave:
		return ctrl.Result{RequeueAfter: retry}, nil
	case same:
		r.progress.EndWait(req.NamespacedName)
		return ctrl.Result{RequeueAfter: retry}, nil
	case hold:
		return ctrl.Result{RequeueAfter: v.wait}, nil
	}
	next := work.DeepCopy()
	next.Status = v.status
	var opts []client.MergeFromOption
	if v.lockConditions {
		// The merge patch replaces the conditions whole: it must not land
		// on a newer Work (a failure execution wrote meanwhile).
		opts = append(opts, client.MergeFromWithOptimisticLock{})
	}
	if err := r.Client.Status().Patch(ctx, next, client.MergeFromWithOptions(work, opts...)); err != nil {
		return requeue.OnConflict(client.IgnoreNotFound(err))
	}
	events.Normal(r.Recorder, work, events.ReflectStatusSucceed, "Reflected the status of %d manifests from cluster %s", len(v.status.ManifestStatuses), clusterName)
	if changed := healthChanges(work.Status.ManifestStatuses, v.status.ManifestStatuses); changed != "" {
		events.Normal(r.Recorder, work, events.InterpretHealthSucceed, "Interpreted health: %s", changed)
	}
	over := work.ResourceVersion
	if next.ResourceVersion == over {
		// Nothing changed once stored: no event will come for it.
		over = ""
	}
	r.progress.Wrote(req.NamespacedName, settle.Write{At: time.Now(), Note: over})
	if v.markApplied {
		r.progress.EndWait(req.NamespacedName)
	}
	return ctrl.Result{RequeueAfter: retry}, nil
}

// observe reads, from the member's shared informers, what the member shows
// of each of the Work's copies, and the resources they are of. wait > 0:
// an informer is still syncing, look again then.
func (r *Reconciler) observe(work *workv1alpha1.Work, member *clusterclient.Member) (states []manifestState, used []schema.GroupVersionResource, wait time.Duration, err error) {
	key := types.NamespacedName{Namespace: work.Namespace, Name: work.Name}
	for i, manifest := range work.Spec.Workload.Manifests {
		obj, err := identify(manifest.Raw)
		if err != nil {
			continue
		}
		gvk := obj.GroupVersionKind()
		mapping, err := member.Mapper.RESTMapping(gvk.GroupKind(), gvk.Version)
		if err != nil {
			return nil, nil, 0, fmt.Errorf("cluster %s does not serve %s: %w", member.Name, gvk, err)
		}
		used = append(used, mapping.Resource)
		lister, synced := member.Managed(mapping.Resource, key, r.memberChanged)
		if !synced {
			return nil, nil, 200 * time.Millisecond, nil
		}
		st := manifestState{id: workv1alpha1.ResourceIdentifier{Ordinal: i, Group: gvk.Group, Version: gvk.Version, Kind: gvk.Kind,
			Resource: mapping.Resource.Resource, Namespace: obj.GetNamespace(), Name: obj.GetName()}}
		var got any
		if mapping.Scope.Name() == meta.RESTScopeNameNamespace {
			got, err = lister.ByNamespace(obj.GetNamespace()).Get(obj.GetName())
		} else {
			got, err = lister.Get(obj.GetName())
		}
		if err != nil && !apierrors.IsNotFound(err) {
			return nil, nil, 0, err
		}
		live, ok := got.(*unstructured.Unstructured)
		st.present, st.readable = err == nil, ok
		if ok {
			st.stamped = workv1alpha1.AppliedFromGeneration(live.GetAnnotations(), work.Generation)
			st.unobserved = r.Interpreter.Unobserved(live)
			if !st.unobserved {
				st.status = workv1alpha1.ManifestStatus{Identifier: st.id}
				health, herr := r.Interpreter.Health(live)
				status, serr := r.Interpreter.ReflectStatus(live)
				if ierr := errors.Join(herr, serr); ierr != nil {
					op := "InterpretStatus"
					if herr != nil {
						op = "InterpretHealth"
					}
					metrics.InterpreterErrors.WithLabelValues(op).Inc()
					// Karmada's reasons: a failing health interpretation is
					// InterpretHealthFailed, a failing reflection
					// ReflectStatusFailed.
					if herr != nil {
						events.Warning(r.Recorder, work, events.InterpretHealthFailed, "Failed to interpret the health of %s %s: %v", gvk.Kind, live.GetName(), herr)
					}
					if serr != nil {
						events.Warning(r.Recorder, work, events.ReflectStatusFailed, "Failed to reflect the status of %s %s: %v", gvk.Kind, live.GetName(), serr)
					}
					var custom *interpreter.Error
					if !errors.As(ierr, &custom) {
						return nil, nil, 0, ierr
					}
					st.interpretErr = ierr
					// A customization's or webhook's failure keeps the status
					// last reflected; it is tried again at the next change of
					// the copy, or soon.
					prev, found := previousStatus(work, st.id)
					if !found {
						prev = workv1alpha1.ManifestStatus{Identifier: st.id, Health: workv1alpha1.ResourceUnknownHealth}
					}
					health, status = prev.Health, prev.Status
					wait = interpretRetry
				}
				st.status.Health, st.status.Status = health, status
			}
		}
		states = append(states, st)
	}
	return states, used, wait, nil
}

// interpretRetry is when a manifest whose status a customization or webhook
// failed to interpret is looked at again (sooner if its copy changes).
const interpretRetry = 10 * time.Second

// previousStatus is the status the Work holds for the manifest id.
func previousStatus(work *workv1alpha1.Work, id workv1alpha1.ResourceIdentifier) (workv1alpha1.ManifestStatus, bool) {
	for _, ms := range work.Status.ManifestStatuses {
		if ms.Identifier == id {
			return ms, true
		}
	}
	return workv1alpha1.ManifestStatus{}, false
}

// manifestState is what the member shows of one manifest's copy.
type manifestState struct {
	id workv1alpha1.ResourceIdentifier
	// present: the copy is in the member's cache (not: not applied yet, or
	// deleted in the member; the execution controller puts it back).
	present bool
	// readable: the cached copy is an object (not: no status of it).
	readable bool
	// stamped: the copy says it was applied from the Work's generation.
	stamped bool
	// unobserved: its controller has not caught up with the copy's spec.
	unobserved bool
	// status is the reflected status and health, when observed.
	status workv1alpha1.ManifestStatus
	// interpretErr: a customization or webhook failed on the copy's status
	// or health (status then holds what was reflected before).
	interpretErr error
}

// action is what decide says to do with a Work's status.
type action int

const (
	// leave: nothing is reported of a Work not applied yet, or failing.
	leave action = iota
	// same: the status already says it all.
	same
	// hold: progress, written after a wait.
	hold
	// write the status.
	write
)

// verdict is decide's answer.
type verdict struct {
	action action
	// wait is how long a hold lasts.
	wait time.Duration
	// status is what a write writes.
	status workv1alpha1.WorkStatus
	// markApplied: the write sets the Applied condition of the generation.
	markApplied bool
	// lockConditions: the write changes the conditions, and must not land
	// on a newer Work.
	lockConditions bool
}

// decide computes a Work's status from what the member shows of its copies
// and says whether to write it now, later or not at all. A copy that is
// unobserved keeps what was reflected of it before; the Applied condition
// of the Work's generation turns True once every copy was applied from it
// (also after a failure the execution controller wrote). A state in
// progress (a copy missing, unobserved or unhealthy) is written at most
// once per settle period, counted from when the generation's copies were
// first seen applied (appliedSince, asked only when the Applied condition
// is to be set) or from the last write (lastWrite).
func decide(work *workv1alpha1.Work, states []manifestState, appliedSince func() time.Time, lastWrite time.Time, settlePeriod time.Duration, now time.Time) verdict {
	var statuses []workv1alpha1.ManifestStatus
	settled, stamped := true, len(work.Spec.Workload.Manifests) > 0
	for _, st := range states {
		switch {
		case !st.present:
			settled, stamped = false, false
		case !st.readable:
			stamped = false
		case st.unobserved:
			stamped = stamped && st.stamped
			for _, prev := range work.Status.ManifestStatuses {
				if prev.Identifier == st.id {
					statuses = append(statuses, prev)
				}
			}
			settled = false
		default:
			stamped = stamped && st.stamped
			settled = settled && st.status.Health != workv1alpha1.ResourceUnhealthy
			statuses = append(statuses, st.status)
		}
	}
	next := work.Status.DeepCopy()
	next.ManifestStatuses = statuses
	setInterpreted(work, next, states)
	applied := meta.FindStatusCondition(work.Status.Conditions, workv1alpha1.WorkApplied)
	appliedBefore := applied != nil && applied.Status == metav1.ConditionTrue
	markApplied := stamped && !(appliedBefore && applied.ObservedGeneration == work.Generation)
	if !markApplied && !appliedBefore {
		return verdict{action: leave}
	}
	var since time.Time
	if markApplied {
		since = appliedSince()
		meta.SetStatusCondition(&next.Conditions, metav1.Condition{Type: workv1alpha1.WorkApplied, Status: metav1.ConditionTrue,
			Reason: workv1alpha1.ReasonAppliedSuccessful, Message: workv1alpha1.MessageApplied, ObservedGeneration: work.Generation})
	}
	if equality.Semantic.DeepEqual(*next, work.Status) {
		return verdict{action: same}
	}
	if !settled {
		// A copy that becomes healthy within the period costs one write
		// rather than one per step.
		if wait := settle.Wait(settlePeriod, since, lastWrite, now); wait > 0 {
			return verdict{action: hold, wait: wait}
		}
	}
	return verdict{action: write, status: *next, markApplied: markApplied,
		lockConditions: !equality.Semantic.DeepEqual(next.Conditions, work.Status.Conditions)}
}

// setInterpreted sets the Work's ResourceInterpreted condition False
// naming the copies a customization or webhook failed on, or removes it
// when there is none.
func setInterpreted(work *workv1alpha1.Work, next *workv1alpha1.WorkStatus, states []manifestState) {
	var failed []string
	for _, st := range states {
		if st.interpretErr != nil {
			failed = append(failed, fmt.Sprintf("%s %s: %v", st.id.Kind, objectKey(st.id), st.interpretErr))
		}
	}
	if len(failed) == 0 {
		meta.RemoveStatusCondition(&next.Conditions, workv1alpha1.WorkResourceInterpreted)
		return
	}
	meta.SetStatusCondition(&next.Conditions, metav1.Condition{Type: workv1alpha1.WorkResourceInterpreted, Status: metav1.ConditionFalse,
		Reason: workv1alpha1.ReasonInterpretFailed, Message: strings.Join(failed, "; "), ObservedGeneration: work.Generation})
}

// objectKey is namespace/name, or name for a cluster-scoped object.
func objectKey(id workv1alpha1.ResourceIdentifier) string {
	if id.Namespace == "" {
		return id.Name
	}
	return id.Namespace + "/" + id.Name
}

// manifestID is what workStatus needs of a manifest: which object it is.
type manifestID struct {
	metav1.TypeMeta `json:",inline"`
	Metadata        struct {
		Name      string `json:"name"`
		Namespace string `json:"namespace"`
	} `json:"metadata"`
}

func (m *manifestID) GetName() string      { return m.Metadata.Name }
func (m *manifestID) GetNamespace() string { return m.Metadata.Namespace }

// identify reads a manifest's kind, name and namespace, and nothing else
// (this runs for every copy's every status change).
func identify(raw []byte) (*manifestID, error) {
	id := &manifestID{}
	if err := json.Unmarshal(raw, id); err != nil {
		return nil, err
	}
	if id.Kind == "" || id.APIVersion == "" {
		return nil, fmt.Errorf("manifest without apiVersion or kind")
	}
	return id, nil
}

// healthChanges describes the manifests whose health differs from before
// ("" when none does).
func healthChanges(before, after []workv1alpha1.ManifestStatus) string {
	was := make(map[workv1alpha1.ResourceIdentifier]workv1alpha1.ResourceHealth, len(before))
	for _, st := range before {
		was[st.Identifier] = st.Health
	}
	var out []string
	for _, st := range after {
		if h, ok := was[st.Identifier]; !ok || h != st.Health {
			out = append(out, fmt.Sprintf("%s %s is %s", st.Identifier.Kind, st.Identifier.Name, st.Health))
		}
	}
	return strings.Join(out, ", ")
}
