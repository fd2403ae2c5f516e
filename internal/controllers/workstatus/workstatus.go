// Package workstatus records, in each Work's status, the state of what it
// applied to its member: the reflected status and health of every manifest,
// read from shared informers on the member that start per resource type on
// first need.
package workstatus

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"sync"
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
	"sigs.k8s.io/controller-runtime/pkg/controller"
	"sigs.k8s.io/controller-runtime/pkg/event"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"
	"sigs.k8s.io/controller-runtime/pkg/source"

	clusterv1alpha1 "github.com/karmada-go/karmada/api/cluster/v1alpha1"
	workv1alpha1 "github.com/karmada-go/karmada/api/work/v1alpha1"
	"github.com/karmada-go/karmada/internal/clusterclient"
	"github.com/karmada-go/karmada/internal/clusterready"
	"github.com/karmada-go/karmada/internal/events"
	"github.com/karmada-go/karmada/internal/interpreter"
	"github.com/karmada-go/karmada/internal/requeue"
)

// ControllerName is the name of this controller in --controllers.
const ControllerName = "workStatus"

// Reconciler reconciles the status of Works.
type Reconciler struct {
	// Recorder records events; nil records none.
	Recorder record.EventRecorder
	Client   client.Client
	Members  *clusterclient.Cache
	Workers  int
	// Agent runs it in a karmada-agent, for its own pull-mode cluster.
	Agent bool

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

	// seen holds, per Work whose current generation's copies were seen
	// applied and whose Applied condition is not written yet, that
	// generation and when it was first seen; written, when each Work's
	// status was last written and from which resourceVersion.
	mu      sync.Mutex
	seen    map[types.NamespacedName]appliedAt
	written map[types.NamespacedName]ownWrite
}

// ownWrite is a status write of this controller: when, and the
// resourceVersion of the Work it was written over. A cached Work still at
// that resourceVersion has not caught up with the write yet.
type ownWrite struct {
	at   time.Time
	over string
}

// appliedAt is a Work generation seen applied in the member, and when.
type appliedAt struct {
	generation int64
	at         time.Time
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

// appliedSeen returns when the copies of the Work's generation were first
// seen applied, recording now when this is the first time.
func (r *Reconciler) appliedSeen(work types.NamespacedName, generation int64) time.Time {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.seen == nil {
		r.seen = map[types.NamespacedName]appliedAt{}
	}
	if p, ok := r.seen[work]; ok && p.generation == generation {
		return p.at
	}
	now := time.Now()
	r.seen[work] = appliedAt{generation: generation, at: now}
	return now
}

// forgetSeen drops what appliedSeen recorded for the Work.
func (r *Reconciler) forgetSeen(work types.NamespacedName) {
	r.mu.Lock()
	defer r.mu.Unlock()
	delete(r.seen, work)
}

// wrote records a write of the Work's status over resourceVersion over.
func (r *Reconciler) wrote(work types.NamespacedName, over string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.written == nil {
		r.written = map[types.NamespacedName]ownWrite{}
	}
	r.written[work] = ownWrite{at: time.Now(), over: over}
}

// behindOwnWrite reports whether the cached Work is the one this controller
// last wrote over: its write's event brings the Work back, and a status
// computed from this copy would write the same again (or lose a conflict).
func (r *Reconciler) behindOwnWrite(work *workv1alpha1.Work) bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	w, ok := r.written[types.NamespacedName{Namespace: work.Namespace, Name: work.Name}]
	return ok && w.over != "" && w.over == work.ResourceVersion
}

func (r *Reconciler) lastWritten(work types.NamespacedName) time.Time {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.written[work].at
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
		WithOptions(controller.Options{MaxConcurrentReconciles: max(r.Workers, 1)}).
		Complete(r)
}

// release stops watching, for a Work that is gone, the member types it used
// (informers no other Work needs stop).
func (r *Reconciler) release(cluster string, work types.NamespacedName) {
	if m, ok := r.Members.Lookup(cluster); ok {
		m.Retain(work)
	}
	r.mu.Lock()
	delete(r.seen, work)
	delete(r.written, work)
	r.mu.Unlock()
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
	applied := meta.FindStatusCondition(work.Status.Conditions, workv1alpha1.WorkApplied)
	// The informer's own Cluster: read, never modified.
	cluster, err := r.clusters.Get(ctx, clusterName)
	if err != nil {
		return ctrl.Result{}, client.IgnoreNotFound(err)
	}
	if !clusterclient.Serves(r.Agent, cluster) || !clusterready.IsReady(cluster) {
		// An agent reports a pull-mode member's Works; a member that is not
		// Ready has nothing current to report (the execution controller
		// writes why its Works are not applied).
		return ctrl.Result{}, nil
	}
	member, err := r.Members.Get(ctx, cluster)
	if err != nil {
		return ctrl.Result{}, err
	}
	var statuses []workv1alpha1.ManifestStatus
	var used []schema.GroupVersionResource
	// settled is false while a manifest's copy is not in the member's cache
	// yet, not observed by its controller, or unhealthy; stamped, while every
	// copy was applied from the Work's current generation.
	settled, stamped := true, len(work.Spec.Workload.Manifests) > 0
	for i, manifest := range work.Spec.Workload.Manifests {
		obj, err := identify(manifest.Raw)
		if err != nil {
			continue
		}
		gvk := obj.GroupVersionKind()
		mapping, err := member.Mapper.RESTMapping(gvk.GroupKind(), gvk.Version)
		if err != nil {
			return ctrl.Result{}, fmt.Errorf("cluster %s does not serve %s: %w", clusterName, gvk, err)
		}
		used = append(used, mapping.Resource)
		lister, synced := member.Managed(mapping.Resource, req.NamespacedName, r.memberChanged)
		if !synced {
			return ctrl.Result{RequeueAfter: 200 * time.Millisecond}, nil
		}
		id := workv1alpha1.ResourceIdentifier{Ordinal: i, Group: gvk.Group, Version: gvk.Version, Kind: gvk.Kind,
			Resource: mapping.Resource.Resource, Namespace: obj.GetNamespace(), Name: obj.GetName()}
		var got any
		if mapping.Scope.Name() == meta.RESTScopeNameNamespace {
			got, err = lister.ByNamespace(obj.GetNamespace()).Get(obj.GetName())
		} else {
			got, err = lister.Get(obj.GetName())
		}
		if apierrors.IsNotFound(err) {
			// Not applied yet, or deleted in the member: the execution
			// controller puts it back; no status until then.
			settled, stamped = false, false
			continue
		}
		if err != nil {
			return ctrl.Result{}, err
		}
		live, ok := got.(*unstructured.Unstructured)
		if !ok {
			stamped = false
			continue
		}
		stamped = stamped && workv1alpha1.AppliedFromGeneration(live.GetAnnotations(), work.Generation)
		if interpreter.Unobserved(live) {
			// Its controller has not caught up with the copy's spec: keep
			// what was reflected before, if anything, rather than write a
			// status of no generation in particular.
			for _, prev := range work.Status.ManifestStatuses {
				if prev.Identifier == id {
					statuses = append(statuses, prev)
				}
			}
			settled = false
			continue
		}
		st := workv1alpha1.ManifestStatus{Identifier: id, Health: interpreter.Health(live)}
		if st.Status, err = interpreter.ReflectStatus(live); err != nil {
			events.Warning(r.Recorder, work, events.ReflectStatusFailed, "Failed to reflect the status of %s %s: %v", gvk.Kind, live.GetName(), err)
			return ctrl.Result{}, err
		}
		settled = settled && st.Health != workv1alpha1.ResourceUnhealthy
		statuses = append(statuses, st)
	}
	// Types the Work no longer has (its manifests changed) are released.
	member.Retain(req.NamespacedName, used...)
	next := work.DeepCopy()
	next.Status.ManifestStatuses = statuses
	// The Applied condition of the current generation turns True once
	// every copy says it was applied from it (also after a failure the
	// execution controller wrote), with the first status of them.
	appliedBefore := applied != nil && applied.Status == metav1.ConditionTrue
	markApplied := stamped && !(appliedBefore && applied.ObservedGeneration == work.Generation)
	if !markApplied && !appliedBefore {
		// Nothing is reported of a Work not applied yet, or failing.
		return ctrl.Result{}, nil
	}
	var since time.Time
	if markApplied {
		since = r.appliedSeen(req.NamespacedName, work.Generation)
		meta.SetStatusCondition(&next.Status.Conditions, metav1.Condition{Type: workv1alpha1.WorkApplied, Status: metav1.ConditionTrue,
			Reason: workv1alpha1.ReasonAppliedSuccessful, Message: workv1alpha1.MessageApplied, ObservedGeneration: work.Generation})
	}
	if equality.Semantic.DeepEqual(next.Status, work.Status) {
		r.forgetSeen(req.NamespacedName)
		return ctrl.Result{}, nil
	}
	if !settled {
		// Progress is written at most once per settle period (from when
		// the copies were first seen applied, or from the last write): a
		// copy that becomes healthy meanwhile costs one write rather than
		// one per step.
		if last := r.lastWritten(req.NamespacedName); last.After(since) {
			since = last
		}
		if wait := r.settle() - time.Since(since); wait > 0 {
			return ctrl.Result{RequeueAfter: wait}, nil
		}
	}
	var opts []client.MergeFromOption
	if !equality.Semantic.DeepEqual(next.Status.Conditions, work.Status.Conditions) {
		// The merge patch replaces the conditions whole: it must not land
		// on a newer Work (a failure execution wrote meanwhile).
		opts = append(opts, client.MergeFromWithOptimisticLock{})
	}
	if err := r.Client.Status().Patch(ctx, next, client.MergeFromWithOptions(work, opts...)); err != nil {
		return requeue.OnConflict(client.IgnoreNotFound(err))
	}
	events.Normal(r.Recorder, work, events.ReflectStatusSucceed, "Reflected the status of %d manifests from cluster %s", len(statuses), clusterName)
	if changed := healthChanges(work.Status.ManifestStatuses, statuses); changed != "" {
		events.Normal(r.Recorder, work, events.InterpretHealthSucceed, "Interpreted health: %s", changed)
	}
	over := work.ResourceVersion
	if next.ResourceVersion == over {
		// Nothing changed once stored: no event will come for it.
		over = ""
	}
	r.wrote(req.NamespacedName, over)
	if markApplied {
		r.forgetSeen(req.NamespacedName)
	}
	return ctrl.Result{}, nil
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
