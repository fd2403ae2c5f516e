// Package workstatus records, in each Work's status, the state of what it
// applied to its member: the reflected status and health of every manifest,
// read from shared informers on the member that start per resource type on
// first need.
package workstatus

import (
	"context"
	"fmt"
	"time"

	"k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/util/workqueue"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller"
	"sigs.k8s.io/controller-runtime/pkg/event"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"
	"sigs.k8s.io/controller-runtime/pkg/source"

	clusterv1alpha1 "github.com/karmada-go/karmada/api/cluster/v1alpha1"
	workv1alpha1 "github.com/karmada-go/karmada/api/work/v1alpha1"
	"github.com/karmada-go/karmada/internal/clusterclient"
	"github.com/karmada-go/karmada/internal/interpreter"
)

// ControllerName is the name of this controller in --controllers.
const ControllerName = "workStatus"

// Reconciler reconciles the status of Works.
type Reconciler struct {
	Client  client.Client
	Members *clusterclient.Cache
	Workers int

	// Window delays the reflection of a member object's change (DefaultWindow
	// when zero), so that the quick succession of status changes of a
	// rollout is written to the Work once rather than once per step.
	Window time.Duration

	memberEvents chan event.TypedGenericEvent[*workv1alpha1.Work]
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
	r.memberEvents = make(chan event.TypedGenericEvent[*workv1alpha1.Work], 1024)
	return ctrl.NewControllerManagedBy(mgr).
		Named(ControllerName).
		For(&workv1alpha1.Work{}).
		WatchesRawSource(source.Channel(r.memberEvents, handler.TypedFuncs[*workv1alpha1.Work, reconcile.Request]{
			GenericFunc: func(_ context.Context, e event.TypedGenericEvent[*workv1alpha1.Work], q workqueue.TypedRateLimitingInterface[reconcile.Request]) {
				q.AddAfter(reconcile.Request{NamespacedName: client.ObjectKeyFromObject(e.Object)}, r.window())
			},
		})).
		WithOptions(controller.Options{MaxConcurrentReconciles: max(r.Workers, 1)}).
		Complete(r)
}

// release stops watching, for a Work that is gone, the member types it used
// (informers no other Work needs stop).
func (r *Reconciler) release(cluster string, work types.NamespacedName) {
	if m, ok := r.Members.Lookup(cluster); ok {
		m.Retain(work)
	}
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
	if !meta.IsStatusConditionTrue(work.Status.Conditions, workv1alpha1.WorkApplied) {
		return ctrl.Result{}, nil
	}
	cluster := &clusterv1alpha1.Cluster{}
	if err := r.Client.Get(ctx, client.ObjectKey{Name: clusterName}, cluster); err != nil {
		return ctrl.Result{}, client.IgnoreNotFound(err)
	}
	if cluster.Spec.SyncMode == clusterv1alpha1.Pull {
		return ctrl.Result{}, nil
	}
	member, err := r.Members.Get(ctx, cluster)
	if err != nil {
		return ctrl.Result{}, err
	}
	var statuses []workv1alpha1.ManifestStatus
	var used []schema.GroupVersionResource
	for i, manifest := range work.Spec.Workload.Manifests {
		obj := &unstructured.Unstructured{}
		if err := obj.UnmarshalJSON(manifest.Raw); err != nil {
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
			continue
		}
		if err != nil {
			return ctrl.Result{}, err
		}
		live, ok := got.(*unstructured.Unstructured)
		if !ok {
			continue
		}
		if interpreter.Unobserved(live) {
			// Its controller has not caught up with the copy's spec: keep
			// what was reflected before, if anything, rather than write a
			// status of no generation in particular.
			for _, prev := range work.Status.ManifestStatuses {
				if prev.Identifier == id {
					statuses = append(statuses, prev)
				}
			}
			continue
		}
		st := workv1alpha1.ManifestStatus{Identifier: id, Health: interpreter.Health(live)}
		if st.Status, err = interpreter.ReflectStatus(live); err != nil {
			return ctrl.Result{}, err
		}
		statuses = append(statuses, st)
	}
	// Types the Work no longer has (its manifests changed) are released.
	member.Retain(req.NamespacedName, used...)
	if equality.Semantic.DeepEqual(statuses, work.Status.ManifestStatuses) {
		return ctrl.Result{}, nil
	}
	patch := client.MergeFrom(work.DeepCopy())
	work.Status.ManifestStatuses = statuses
	return ctrl.Result{}, client.IgnoreNotFound(r.Client.Status().Patch(ctx, work, patch))
}
