package scheduler

import (
	"context"
	"sync/atomic"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/util/workqueue"
	"k8s.io/utils/clock"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"
	"sigs.k8s.io/controller-runtime/pkg/client/interceptor"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	policyv1alpha1 "github.com/karmada-go/karmada/api/policy/v1alpha1"
	workv1alpha2 "github.com/karmada-go/karmada/api/work/v1alpha2"
	"github.com/karmada-go/karmada/internal/anybinding"
	"github.com/karmada-go/karmada/internal/scheduler/framework"
	"github.com/karmada-go/karmada/internal/scheduler/plugins"
	"github.com/karmada-go/karmada/internal/scheduler/schedulertest"
	"github.com/karmada-go/karmada/internal/scheme"
)

// A binding read back with its new placement but without the status written
// with it (the cache lags the scheduler's own writes) is not scheduled again;
// once its spec changes it is.
func TestScheduleOneSkipsItsOwnPendingWrite(t *testing.T) {
	ctx := context.Background()
	fw, err := framework.New(plugins.NewInTreeRegistry(), []string{"*"})
	if err != nil {
		t.Fatal(err)
	}
	m1, m2 := schedulertest.Member("member1", "r1", 10), schedulertest.Member("member2", "r1", 10)
	rb := &workv1alpha2.ResourceBinding{
		ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: "web-deployment", UID: "uid-1", Generation: 1},
		Spec:       *schedulertest.Spec(1, &policyv1alpha1.Placement{ClusterAffinity: &policyv1alpha1.ClusterAffinity{ClusterNames: []string{"member1", "member2"}}}),
	}
	var writes atomic.Int32
	c := fake.NewClientBuilder().WithScheme(scheme.Scheme).
		WithObjects(rb, &m1, &m2).WithStatusSubresource(&workv1alpha2.ResourceBinding{}).
		WithInterceptorFuncs(interceptor.Funcs{
			Patch: func(ctx context.Context, c client.WithWatch, obj client.Object, patch client.Patch, opts ...client.PatchOption) error {
				writes.Add(1)
				return c.Patch(ctx, obj, patch, opts...)
			},
			SubResourcePatch: func(ctx context.Context, c client.Client, sub string, obj client.Object, patch client.Patch, opts ...client.SubResourcePatchOption) error {
				writes.Add(1)
				return c.SubResource(sub).Patch(ctx, obj, patch, opts...)
			},
		}).Build()
	s := &Scheduler{Client: c, Framework: fw, Clock: clock.RealClock{},
		backoff: workqueue.NewTypedItemExponentialFailureRateLimiter[string](time.Second, time.Minute)}
	req := reconcile.Request{NamespacedName: client.ObjectKeyFromObject(rb)}
	if _, err := s.reconcilerFor(anybinding.Kinds[0]).Reconcile(ctx, req); err != nil {
		t.Fatal(err)
	}
	if n := writes.Load(); n != 2 {
		t.Fatalf("first schedule wrote %d times, want 2 (placement and status)", n)
	}
	got := &workv1alpha2.ResourceBinding{}
	if err := c.Get(ctx, req.NamespacedName, got); err != nil {
		t.Fatal(err)
	}
	if len(got.Spec.Clusters) != 2 || got.Status.SchedulerObservedGeneration != got.Generation {
		t.Fatalf("not scheduled: clusters %v, observed generation %d of %d", got.Spec.Clusters, got.Status.SchedulerObservedGeneration, got.Generation)
	}

	// The same binding as a lagging cache shows it: placement, no status.
	stale := got.DeepCopy()
	stale.Status = workv1alpha2.ResourceBindingStatus{}
	writes.Store(0)
	if _, err := s.scheduleOne(ctx, anybinding.Binding{Object: stale, Spec: &stale.Spec, Status: &stale.Status}); err != nil {
		t.Fatal(err)
	}
	if n := writes.Load(); n != 0 {
		t.Errorf("scheduling a copy that lags its own write wrote %d times, want 0", n)
	}

	// A newer generation (the spec changed since) is scheduled.
	stale.Generation = got.Generation + 1
	if _, err := s.scheduleOne(ctx, anybinding.Binding{Object: stale, Spec: &stale.Spec, Status: &stale.Status}); err != nil {
		t.Fatal(err)
	}
	if n := writes.Load(); n == 0 {
		t.Error("a binding whose spec changed since the last write was not scheduled")
	}
}

// A binding whose rescheduleTriggeredAt is later than its last scheduling
// (a WorkloadRebalancer) is scheduled afresh, its current placement not
// kept; once done, the trigger asks nothing more.
func TestRescheduleTriggeredAtSchedulesAfresh(t *testing.T) {
	ctx := context.Background()
	fw, err := framework.New(plugins.NewInTreeRegistry(), []string{"*"})
	if err != nil {
		t.Fatal(err)
	}
	m1, m2 := schedulertest.Member("member1", "r1", 10), schedulertest.Member("member2", "r1", 10)
	placement := &policyv1alpha1.Placement{
		ClusterAffinity: &policyv1alpha1.ClusterAffinity{ClusterNames: []string{"member1", "member2"}},
		ReplicaScheduling: &policyv1alpha1.ReplicaSchedulingStrategy{ReplicaSchedulingType: policyv1alpha1.ReplicaSchedulingTypeDivided,
			ReplicaDivisionPreference: policyv1alpha1.ReplicaDivisionPreferenceWeighted,
			WeightPreference:          &policyv1alpha1.ClusterPreferences{DynamicWeight: policyv1alpha1.DynamicWeightByAvailableReplicas}},
	}
	last := metav1.NewTime(time.Now().Add(-time.Hour).Truncate(time.Second))
	rb := &workv1alpha2.ResourceBinding{
		ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: "web-deployment", UID: "uid-1", Generation: 1},
		Spec:       *schedulertest.Spec(6, placement),
	}
	// Placed all on member1 earlier (member2 joined since).
	rb.Spec.Clusters = []workv1alpha2.TargetCluster{{Name: "member1", Replicas: 6}}
	rb.Status = workv1alpha2.ResourceBindingStatus{SchedulerObservedGeneration: 1, LastScheduledTime: &last,
		Conditions: []metav1.Condition{{Type: workv1alpha2.Scheduled, Status: metav1.ConditionTrue, Reason: ReasonSuccess, LastTransitionTime: last}}}
	c := fake.NewClientBuilder().WithScheme(scheme.Scheme).WithObjects(rb, &m1, &m2).WithStatusSubresource(&workv1alpha2.ResourceBinding{}).Build()
	s := &Scheduler{Client: c, Framework: fw, Clock: clock.RealClock{},
		backoff: workqueue.NewTypedItemExponentialFailureRateLimiter[string](time.Second, time.Minute)}
	req := reconcile.Request{NamespacedName: client.ObjectKeyFromObject(rb)}
	schedule := func() *workv1alpha2.ResourceBinding {
		t.Helper()
		if _, err := s.reconcilerFor(anybinding.Kinds[0]).Reconcile(ctx, req); err != nil {
			t.Fatal(err)
		}
		got := &workv1alpha2.ResourceBinding{}
		if err := c.Get(ctx, req.NamespacedName, got); err != nil {
			t.Fatal(err)
		}
		return got
	}
	if got := schedule(); schedulertest.Targets(got.Spec.Clusters) != "member1=6" {
		t.Fatalf("without a trigger the placement should stay: %s", schedulertest.Targets(got.Spec.Clusters))
	}
	// A trigger older than the last scheduling asks nothing.
	got := schedule()
	older := metav1.NewTime(last.Add(-time.Minute))
	got.Spec.RescheduleTriggeredAt = &older
	if err := c.Update(ctx, got); err != nil {
		t.Fatal(err)
	}
	got = schedule()
	if schedulertest.Targets(got.Spec.Clusters) == "member1=3,member2=3" {
		t.Fatalf("an old trigger rescheduled afresh: %s", schedulertest.Targets(got.Spec.Clusters))
	}
	// A trigger after it: afresh, as a new binding would be placed.
	trigger := metav1.NewTime(time.Now().Add(-time.Second).Truncate(time.Second))
	got.Spec.RescheduleTriggeredAt = &trigger
	if err := c.Update(ctx, got); err != nil {
		t.Fatal(err)
	}
	got = schedule()
	if schedulertest.Targets(got.Spec.Clusters) != "member1=3,member2=3" {
		t.Errorf("after the trigger: %s, want member1=3,member2=3 (placed afresh by free capacity)", schedulertest.Targets(got.Spec.Clusters))
	}
	if got.Status.LastScheduledTime == nil || !got.Status.LastScheduledTime.After(trigger.Time) && !got.Status.LastScheduledTime.Equal(&trigger) {
		t.Errorf("lastScheduledTime %v not at or after the trigger %v", got.Status.LastScheduledTime, trigger)
	}
}
