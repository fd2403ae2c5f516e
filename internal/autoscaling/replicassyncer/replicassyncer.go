// Package replicassyncer is the deploymentReplicasSyncer controller (off
// by default, as Karmada's): a Deployment template labelled
// resourcetemplate.karmada.io/retain-replicas: "true" (its members' HPAs
// decide the replicas) and divided over the clusters gets, as its
// spec.replicas, the sum of the members' replicas once every member's
// status is collected. The scheduler then divides what the members have,
// and a new cluster gets its share of the real total.
package replicassyncer

import (
	"context"
	"encoding/json"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	"k8s.io/apimachinery/pkg/labels"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/event"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	"sigs.k8s.io/controller-runtime/pkg/predicate"
	"sigs.k8s.io/controller-runtime/pkg/source"

	policyv1alpha1 "github.com/karmada-go/karmada/api/policy/v1alpha1"
	workv1alpha2 "github.com/karmada-go/karmada/api/work/v1alpha2"
	"github.com/karmada-go/karmada/internal/names"
	"github.com/karmada-go/karmada/internal/queues"
)

// ControllerName is the controller's name in --controllers (Karmada's).
const ControllerName = "deploymentReplicasSyncer"

// collectWait is how soon a template whose members' status is not all
// collected yet is looked at again.
const collectWait = time.Second

// Reconciler writes the members' replicas back into Deployment templates.
type Reconciler struct {
	Client client.Client
	// marked reads the marked Deployments: a cache of its own holding
	// only those (the manager's would hold every Deployment template, a
	// hot path's worth of memory for a controller few fleets run).
	marked client.Reader
}

func marked(o client.Object) bool {
	return o.GetLabels()[policyv1alpha1.RetainReplicasLabel] == policyv1alpha1.RetainReplicasValue
}

// SetupWithManager watches marked Deployments whose replicas (asked or
// counted) change, or that were just marked.
func (r *Reconciler) SetupWithManager(mgr ctrl.Manager) error {
	only, err := cache.New(mgr.GetConfig(), cache.Options{Scheme: mgr.GetScheme(), Mapper: mgr.GetRESTMapper(),
		ByObject: map[client.Object]cache.ByObject{&appsv1.Deployment{}: {
			Label: labels.SelectorFromSet(labels.Set{policyv1alpha1.RetainReplicasLabel: policyv1alpha1.RetainReplicasValue})}}})
	if err != nil {
		return err
	}
	if err := mgr.Add(only); err != nil {
		return err
	}
	r.marked = only
	return ctrl.NewControllerManagedBy(mgr).Named(ControllerName).
		WatchesRawSource(source.Kind(only, &appsv1.Deployment{}, &handler.TypedEnqueueRequestForObject[*appsv1.Deployment]{},
			predicate.TypedFuncs[*appsv1.Deployment]{
				// Marked just now: it enters this cache.
				CreateFunc: func(event.TypedCreateEvent[*appsv1.Deployment]) bool { return true },
				UpdateFunc: func(e event.TypedUpdateEvent[*appsv1.Deployment]) bool {
					o, n := e.ObjectOld, e.ObjectNew
					return o.Status.Replicas != n.Status.Replicas || replicas(o) != replicas(n)
				},
				DeleteFunc:  func(event.TypedDeleteEvent[*appsv1.Deployment]) bool { return false },
				GenericFunc: func(event.TypedGenericEvent[*appsv1.Deployment]) bool { return false },
			})).
		WithOptions(queues.Options(1)).
		Complete(r)
}

func replicas(d *appsv1.Deployment) int32 {
	if d.Spec.Replicas == nil {
		return 1
	}
	return *d.Spec.Replicas
}

// Reconcile sets spec.replicas to status.replicas (the members' sum, as
// bindingStatus aggregates it) when the binding is divided and every
// member's status is collected for the template's current replicas.
func (r *Reconciler) Reconcile(ctx context.Context, req ctrl.Request) (ctrl.Result, error) {
	d := &appsv1.Deployment{}
	if err := r.marked.Get(ctx, req.NamespacedName, d); err != nil || !marked(d) {
		return ctrl.Result{}, client.IgnoreNotFound(err)
	}
	rb := &workv1alpha2.ResourceBinding{}
	if err := r.Client.Get(ctx, client.ObjectKey{Namespace: d.Namespace, Name: names.BindingName("Deployment", d.Name)}, rb); err != nil {
		return ctrl.Result{}, client.IgnoreNotFound(err)
	}
	if !divided(rb) || replicas(d) == d.Status.Replicas {
		return ctrl.Result{}, nil
	}
	if !Collected(d, rb) {
		return ctrl.Result{RequeueAfter: collectWait}, nil
	}
	from := replicas(d)
	next := d.DeepCopy()
	next.Spec.Replicas = &d.Status.Replicas
	if err := r.Client.Update(ctx, next); err != nil {
		return ctrl.Result{}, err
	}
	ctrl.LoggerFrom(ctx).Info("Replicas synced from the members", "from", from, "to", d.Status.Replicas)
	return ctrl.Result{}, nil
}

func divided(rb *workv1alpha2.ResourceBinding) bool {
	p := rb.Spec.Placement
	return p != nil && p.ReplicaScheduling != nil && p.ReplicaScheduling.ReplicaSchedulingType == policyv1alpha1.ReplicaSchedulingTypeDivided
}

// Collected reports whether the template's status.replicas is the sum of
// what every member reports for the template's current replicas: the
// binding has those replicas and is scheduled at its generation, every
// scheduled cluster's status is in, none says 0 replicas (an HPA keeps at
// least one: 0 is a status not collected yet), and they add up to the
// template's status.
func Collected(d *appsv1.Deployment, rb *workv1alpha2.ResourceBinding) bool {
	if rb.Spec.Replicas != replicas(d) || rb.Generation != rb.Status.SchedulerObservedGeneration ||
		len(rb.Status.AggregatedStatus) != len(rb.Spec.Clusters) {
		return false
	}
	var sum int32
	for _, item := range rb.Status.AggregatedStatus {
		if item.Status == nil {
			return false
		}
		var st appsv1.DeploymentStatus
		if err := json.Unmarshal(item.Status.Raw, &st); err != nil || st.Replicas <= 0 {
			return false
		}
		sum += st.Replicas
	}
	return sum == d.Status.Replicas
}
