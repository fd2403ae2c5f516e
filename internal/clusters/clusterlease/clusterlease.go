// Package clusterlease watches the heartbeats of pull-mode clusters. Their
// agent renews a Lease named after the cluster in karmada-cluster; when it
// has not been renewed within the grace period (or, for a cluster whose
// agent never renewed it, within the startup grace period after the
// Cluster was created), the Cluster's Ready condition turns Unknown, and the
// cluster controller adds the cluster.karmada.io/unreachable NoSchedule
// taint. The agent, back, reports Ready again. Push-mode clusters are
// probed by clusterStatus instead.
package clusterlease

import (
	"context"
	"fmt"
	"time"

	coordinationv1 "k8s.io/api/coordination/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/clock"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/builder"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	"sigs.k8s.io/controller-runtime/pkg/predicate"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	clusterv1alpha1 "github.com/karmada-go/karmada/api/cluster/v1alpha1"
	"github.com/karmada-go/karmada/internal/names"
	"github.com/karmada-go/karmada/internal/queues"
)

// Name names the controller in logs (it runs as part of "cluster").
const Name = "clusterLease"

// ReasonStatusUnknown is the Ready condition's reason once the agent went
// silent, as Karmada words it.
const ReasonStatusUnknown = "ClusterStatusUnknown"

// Monitor marks silent pull-mode clusters.
type Monitor struct {
	Client client.Client
	// GracePeriod is how long a lease may go unrenewed
	// (--cluster-monitor-grace-period); StartupGrace how long a new
	// cluster's agent has to renew it first (--cluster-startup-grace-period).
	GracePeriod  time.Duration
	StartupGrace time.Duration
	// Period is how often a silent cluster is looked at again
	// (--cluster-monitor-period).
	Period time.Duration
	Clock  clock.PassiveClock
}

// SetupWithManager registers the monitor.
func (m *Monitor) SetupWithManager(mgr ctrl.Manager) error {
	if m.Clock == nil {
		m.Clock = clock.RealClock{}
	}
	pull := predicate.NewPredicateFuncs(func(o client.Object) bool {
		c, ok := o.(*clusterv1alpha1.Cluster)
		return ok && c.Spec.SyncMode == clusterv1alpha1.Pull
	})
	ofCluster := handler.EnqueueRequestsFromMapFunc(func(_ context.Context, o client.Object) []reconcile.Request {
		if o.GetNamespace() != names.ClusterNamespace {
			return nil
		}
		return []reconcile.Request{{NamespacedName: types.NamespacedName{Name: o.GetName()}}}
	})
	return ctrl.NewControllerManagedBy(mgr).
		Named(Name).
		For(&clusterv1alpha1.Cluster{}, builder.WithPredicates(pull)).
		Watches(&coordinationv1.Lease{}, ofCluster).
		WithOptions(queues.Options(1)).
		Complete(m)
}

// Reconcile looks at one cluster's heartbeat.
func (m *Monitor) Reconcile(ctx context.Context, req ctrl.Request) (ctrl.Result, error) {
	cluster := &clusterv1alpha1.Cluster{}
	if err := m.Client.Get(ctx, req.NamespacedName, cluster); err != nil {
		return ctrl.Result{}, client.IgnoreNotFound(err)
	}
	if cluster.Spec.SyncMode != clusterv1alpha1.Pull || !cluster.DeletionTimestamp.IsZero() {
		return ctrl.Result{}, nil
	}
	lease := &coordinationv1.Lease{}
	err := m.Client.Get(ctx, client.ObjectKey{Namespace: names.ClusterNamespace, Name: cluster.Name}, lease)
	if err != nil && !apierrors.IsNotFound(err) {
		return ctrl.Result{}, err
	}
	last, grace, what := cluster.CreationTimestamp.Time, m.StartupGrace, "has not renewed its lease since the cluster was created"
	if err == nil && lease.Spec.RenewTime != nil {
		last, grace, what = lease.Spec.RenewTime.Time, m.GracePeriod, "stopped renewing its lease"
	}
	silent := m.Clock.Now().Sub(last)
	if silent <= grace {
		return ctrl.Result{RequeueAfter: grace - silent + time.Second}, nil
	}
	ready := meta.FindStatusCondition(cluster.Status.Conditions, clusterv1alpha1.ClusterConditionReady)
	if ready != nil && ready.Status == metav1.ConditionUnknown && ready.Reason == ReasonStatusUnknown {
		return ctrl.Result{RequeueAfter: m.Period}, nil
	}
	before := cluster.DeepCopy()
	meta.SetStatusCondition(&cluster.Status.Conditions, metav1.Condition{
		Type: clusterv1alpha1.ClusterConditionReady, Status: metav1.ConditionUnknown, Reason: ReasonStatusUnknown,
		Message: fmt.Sprintf("The cluster's karmada-agent %s (last at %s, %s ago; grace period %s).", what, last.UTC().Format(time.RFC3339), silent.Round(time.Second), grace),
	})
	if err := m.Client.Status().Patch(ctx, cluster, client.MergeFromWithOptions(before, client.MergeFromWithOptimisticLock{})); err != nil {
		return ctrl.Result{}, client.IgnoreNotFound(err)
	}
	ctrl.LoggerFrom(ctx).Info("Pull-mode cluster went silent", "cluster", cluster.Name, "last", last, "grace", grace)
	return ctrl.Result{RequeueAfter: m.Period}, nil
}
