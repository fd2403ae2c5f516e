// Package workloadrebalancer is the workloadRebalancer controller: for each
// workload a WorkloadRebalancer lists, it sets the binding's
// spec.rescheduleTriggeredAt to the time it does so, which has
// the scheduler place it afresh (its current placement not kept); it
// reports each workload's result and the finish time, and deletes the
// rebalancer ttlSecondsAfterFinished after it finished.
package workloadrebalancer

import (
	"cmp"
	"context"
	"fmt"
	"slices"
	"strings"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/utils/clock"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	appsv1alpha1 "github.com/karmada-go/karmada/api/apps/v1alpha1"
	"github.com/karmada-go/karmada/internal/anybinding"
	"github.com/karmada-go/karmada/internal/names"
	"github.com/karmada-go/karmada/internal/queues"
)

// ControllerName is the name --controllers knows it by, as Karmada's.
const ControllerName = "workloadRebalancer"

// Reconciler runs WorkloadRebalancers.
type Reconciler struct {
	Client client.Client
	// Clock is the clock (the real one when nil); tests pass a fake.
	Clock clock.PassiveClock
}

// SetupWithManager watches WorkloadRebalancers.
func (r *Reconciler) SetupWithManager(mgr ctrl.Manager) error {
	if r.Clock == nil {
		r.Clock = clock.RealClock{}
	}
	return ctrl.NewControllerManagedBy(mgr).Named(ControllerName).For(&appsv1alpha1.WorkloadRebalancer{}).WithOptions(queues.Options(1)).Complete(r)
}

// Reconcile triggers the listed workloads not triggered yet, records the
// results, and deletes a finished rebalancer after its TTL.
func (r *Reconciler) Reconcile(ctx context.Context, req ctrl.Request) (ctrl.Result, error) {
	wr := &appsv1alpha1.WorkloadRebalancer{}
	if err := r.Client.Get(ctx, req.NamespacedName, wr); err != nil {
		return ctrl.Result{}, client.IgnoreNotFound(err)
	}
	if !wr.DeletionTimestamp.IsZero() {
		return ctrl.Result{}, nil
	}
	status := r.observe(ctx, wr)
	if status.FinishTime == nil && finished(status.ObservedWorkloads) {
		now := metav1.NewTime(r.Clock.Now())
		status.FinishTime = &now
	}
	status.ObservedGeneration = wr.Generation
	if !equalStatus(&wr.Status, status) {
		patch := client.MergeFrom(wr.DeepCopy())
		wr.Status = *status
		if err := r.Client.Status().Patch(ctx, wr, patch); err != nil {
			return ctrl.Result{}, fmt.Errorf("writing the status of WorkloadRebalancer %s: %w", wr.Name, err)
		}
	}
	if wr.Status.FinishTime == nil || wr.Spec.TTLSecondsAfterFinished == nil {
		return ctrl.Result{}, nil
	}
	expires := wr.Status.FinishTime.Add(time.Duration(*wr.Spec.TTLSecondsAfterFinished) * time.Second)
	if left := expires.Sub(r.Clock.Now()); left > 0 {
		return ctrl.Result{RequeueAfter: left}, nil
	}
	uid := wr.UID
	if err := r.Client.Delete(ctx, wr, &client.DeleteOptions{Preconditions: &metav1.Preconditions{UID: &uid}}); err != nil && !apierrors.IsNotFound(err) {
		return ctrl.Result{}, fmt.Errorf("deleting WorkloadRebalancer %s after its TTL: %w", wr.Name, err)
	}
	ctrl.LoggerFrom(ctx).Info("Deleted finished WorkloadRebalancer after its TTL", "workloadRebalancer", wr.Name)
	return ctrl.Result{}, nil
}

// observe triggers each workload of the spec that has no result yet, and
// returns the status: one entry per workload of the spec, in Karmada's
// order (see compareWorkloads; a workload removed from the spec is
// dropped, its trigger stays).
func (r *Reconciler) observe(ctx context.Context, wr *appsv1alpha1.WorkloadRebalancer) *appsv1alpha1.WorkloadRebalancerStatus {
	out := wr.Status.DeepCopy()
	out.ObservedWorkloads = nil
	for _, w := range wr.Spec.Workloads {
		i := slices.IndexFunc(wr.Status.ObservedWorkloads, func(o appsv1alpha1.ObservedWorkload) bool { return o.Workload == w })
		if i >= 0 && wr.Status.ObservedWorkloads[i].Result != "" {
			out.ObservedWorkloads = append(out.ObservedWorkloads, wr.Status.ObservedWorkloads[i])
			continue
		}
		res := appsv1alpha1.ObservedWorkload{Workload: w, Result: appsv1alpha1.RebalanceSuccessful}
		// Now, not the rebalancer's creation: a scheduling that happened
		// in between (say the binding's spec changed) must not make the
		// trigger look stale.
		at := metav1.NewTime(r.Clock.Now().Truncate(time.Second))
		if at.Before(&wr.CreationTimestamp) {
			at = wr.CreationTimestamp
		}
		if err := r.trigger(ctx, w, at); err != nil {
			if !apierrors.IsNotFound(err) {
				// Tried again at the next reconcile: no result yet.
				ctrl.LoggerFrom(ctx).Error(err, "Triggering a reschedule", "workload", w)
				res.Result = ""
			} else {
				res.Result, res.Reason = appsv1alpha1.RebalanceFailed, appsv1alpha1.RebalanceObjectNotFound
			}
		}
		out.ObservedWorkloads = append(out.ObservedWorkloads, res)
	}
	slices.SortStableFunc(out.ObservedWorkloads, func(a, b appsv1alpha1.ObservedWorkload) int { return compareWorkloads(a.Workload, b.Workload) })
	// A workload added to the spec after the rebalancer finished starts
	// it again.
	if !finished(out.ObservedWorkloads) {
		out.FinishTime = nil
	}
	return out
}

// trigger sets the workload's binding's rescheduleTriggeredAt to at (not
// earlier than what it holds).
func (r *Reconciler) trigger(ctx context.Context, w appsv1alpha1.ObjectReference, at metav1.Time) error {
	gv, err := schema.ParseGroupVersion(w.APIVersion)
	if err != nil {
		return apierrors.NewNotFound(schema.GroupResource{}, w.Name)
	}
	name := names.BindingName(w.Kind, w.Name)
	binding, err := anybinding.KindFor(w.Namespace).Get(ctx, r.Client, client.ObjectKey{Namespace: w.Namespace, Name: name})
	if err != nil {
		return err
	}
	b, spec := binding.Object, binding.Spec
	// The binding must be the workload's: same kind, group and name.
	if ref := spec.Resource; ref.Kind != w.Kind || ref.Name != w.Name || groupOf(ref.APIVersion) != gv.Group {
		return apierrors.NewNotFound(schema.GroupResource{}, w.Name)
	}
	if spec.RescheduleTriggeredAt != nil && !spec.RescheduleTriggeredAt.Before(&at) {
		return nil
	}
	patch := client.MergeFrom(b.DeepCopyObject().(client.Object))
	spec.RescheduleTriggeredAt = &at
	return r.Client.Patch(ctx, b, patch)
}

// compareWorkloads orders workloads as Karmada lists them in
// status.observedWorkloads: by apiVersion, then kind, namespace and name,
// so that clients comparing the list with Karmada's see no difference.
func compareWorkloads(a, b appsv1alpha1.ObjectReference) int {
	return cmp.Or(strings.Compare(a.APIVersion, b.APIVersion), strings.Compare(a.Kind, b.Kind),
		strings.Compare(a.Namespace, b.Namespace), strings.Compare(a.Name, b.Name))
}

func groupOf(apiVersion string) string {
	if g, _, ok := strings.Cut(apiVersion, "/"); ok {
		return g
	}
	return ""
}

func finished(ws []appsv1alpha1.ObservedWorkload) bool {
	for _, w := range ws {
		if w.Result == "" {
			return false
		}
	}
	return len(ws) > 0
}

func equalStatus(a, b *appsv1alpha1.WorkloadRebalancerStatus) bool {
	if a.ObservedGeneration != b.ObservedGeneration || !slices.Equal(a.ObservedWorkloads, b.ObservedWorkloads) {
		return false
	}
	if (a.FinishTime == nil) != (b.FinishTime == nil) {
		return false
	}
	return a.FinishTime == nil || a.FinishTime.Equal(b.FinishTime)
}
