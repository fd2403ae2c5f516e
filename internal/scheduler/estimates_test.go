package scheduler

import (
	"context"
	"fmt"
	"net"
	"sync/atomic"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus/testutil"
	"k8s.io/apimachinery/pkg/runtime"

	clusterv1alpha1 "github.com/karmada-go/karmada/api/cluster/v1alpha1"
	policyv1alpha1 "github.com/karmada-go/karmada/api/policy/v1alpha1"
	workv1alpha1 "github.com/karmada-go/karmada/api/work/v1alpha1"
	workv1alpha2 "github.com/karmada-go/karmada/api/work/v1alpha2"
	estimatorclient "github.com/karmada-go/karmada/internal/estimator/client"
	"github.com/karmada-go/karmada/internal/estimator/estimatortest"
	"github.com/karmada-go/karmada/internal/estimator/pb"
	"github.com/karmada-go/karmada/internal/estimator/service"
	"github.com/karmada-go/karmada/internal/metrics"
	"github.com/karmada-go/karmada/internal/scheduler/algorithm"
	"github.com/karmada-go/karmada/internal/scheduler/framework"
	"github.com/karmada-go/karmada/internal/scheduler/plugins"
	"github.com/karmada-go/karmada/internal/scheduler/schedulertest"
)

func dynamicPlacement() *policyv1alpha1.Placement {
	return &policyv1alpha1.Placement{ReplicaScheduling: &policyv1alpha1.ReplicaSchedulingStrategy{ReplicaSchedulingType: policyv1alpha1.ReplicaSchedulingTypeDivided,
		ReplicaDivisionPreference: policyv1alpha1.ReplicaDivisionPreferenceWeighted,
		WeightPreference:          &policyv1alpha1.ClusterPreferences{DynamicWeight: policyv1alpha1.DynamicWeightByAvailableReplicas}}}
}

// 100 bindings scheduled back to back, before any member shows their pods:
// without assumptions each sees the same free room and the fleet is
// overcommitted; with them, no cluster is given more than it holds.
func TestBackToBackBindingsDoNotOvercommit(t *testing.T) {
	fleet := []clusterv1alpha1.Cluster{schedulertest.Member("m1", "east", 30), schedulertest.Member("m2", "east", 20)}
	run := func(est *Estimates) (map[string]int32, int) {
		fw, err := framework.New(plugins.NewInTreeRegistry(), []string{"*"})
		if err != nil {
			t.Fatal(err)
		}
		fw.Estimator = est
		given := map[string]int32{}
		unplaced := 0
		for i := 0; i < 100; i++ {
			key := fmt.Sprintf("default/web-%d", i)
			s := schedulertest.Spec(1, dynamicPlacement())
			res := algorithm.Schedule(WithCycle(context.Background(), key, nil), fw, s, fleet)
			if res.Err != nil {
				unplaced++
				continue
			}
			est.Assumed.Assume(key, s, nil, res.Targets, nil)
			for _, tg := range res.Targets {
				given[tg.Name] += tg.Replicas
			}
		}
		return given, unplaced
	}
	given, unplaced := run(&Estimates{Assumed: &Assumptions{}})
	if given["m1"] > 30 || given["m2"] > 20 || unplaced != 50 {
		t.Fatalf("with assumptions: given %v, %d unplaced; want at most m1=30 m2=20 and 50 unplaced", given, unplaced)
	}
	// The same run without the ledger overcommits (what the test guards).
	var none *Assumptions
	given, _ = run(&Estimates{Assumed: none})
	if given["m1"]+given["m2"] != 100 {
		t.Fatalf("without assumptions: given %v; the test no longer shows the overcommit it guards against", given)
	}
}

func TestAssumptionsRelease(t *testing.T) {
	now := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	a := &Assumptions{Now: func() time.Time { return now }, TTL: time.Minute}
	s := schedulertest.Spec(5, dynamicPlacement())
	a.Assume("b", s, nil, []workv1alpha2.TargetCluster{{Name: "m1", Replicas: 3}, {Name: "m2", Replicas: 2}}, nil)
	if a.Count("m1") != 3 || a.Count("m2") != 2 {
		t.Fatalf("assumed m1=%d m2=%d, want 3 and 2", a.Count("m1"), a.Count("m2"))
	}
	// The binding's own assumptions are not deducted from its estimates.
	m1 := schedulertest.Member("m1", "east", 10)
	if got := algorithm.GeneralEstimate(a.Deduct(&m1, "b"), s); got != 10 {
		t.Errorf("own estimate = %d, want 10", got)
	}
	if got := algorithm.GeneralEstimate(a.Deduct(&m1, "other"), s); got != 7 {
		t.Errorf("another binding's estimate = %d, want 7", got)
	}
	// Scale from 3 to 5 in m1 adds 2; leaving m2 forgets it.
	a.Assume("b", s, []workv1alpha2.TargetCluster{{Name: "m1", Replicas: 3}, {Name: "m2", Replicas: 2}}, []workv1alpha2.TargetCluster{{Name: "m1", Replicas: 5}}, nil)
	if a.Count("m1") != 5 || a.Count("m2") != 0 {
		t.Fatalf("after moving: m1=%d m2=%d, want 5 and 0", a.Count("m1"), a.Count("m2"))
	}
	// Scaled down to 1: no more than 1 assumed.
	a.Assume("b", s, []workv1alpha2.TargetCluster{{Name: "m1", Replicas: 5}}, []workv1alpha2.TargetCluster{{Name: "m1", Replicas: 1}}, nil)
	if a.Count("m1") != 1 {
		t.Fatalf("after scaling down: m1=%d, want 1", a.Count("m1"))
	}
	// Healthy with the status seen when assumed is the old copy: kept.
	old := []workv1alpha2.AggregatedStatusItem{{ClusterName: "m1", Health: workv1alpha1.ResourceHealthy, Status: &runtime.RawExtension{Raw: []byte(`{"replicas":3}`)}}}
	a.Assume("c", s, nil, []workv1alpha2.TargetCluster{{Name: "m1", Replicas: 4}}, old)
	a.Observe("c", old)
	if a.Count("m1") != 5 {
		t.Fatalf("released on a status seen before: m1=%d, want 5", a.Count("m1"))
	}
	a.Observe("c", []workv1alpha2.AggregatedStatusItem{{ClusterName: "m1", Health: workv1alpha1.ResourceUnhealthy, Status: &runtime.RawExtension{Raw: []byte(`{"replicas":7}`)}}})
	if a.Count("m1") != 5 {
		t.Fatalf("released while unhealthy: m1=%d, want 5", a.Count("m1"))
	}
	a.Observe("c", []workv1alpha2.AggregatedStatusItem{{ClusterName: "m1", Health: workv1alpha1.ResourceHealthy, Status: &runtime.RawExtension{Raw: []byte(`{"replicas":7}`)}}})
	if a.Count("m1") != 1 {
		t.Fatalf("not released once healthy with a new status: m1=%d, want 1", a.Count("m1"))
	}
	// The TTL ends what no status releases.
	now = now.Add(time.Minute)
	if a.Count("m1") != 0 {
		t.Fatalf("after the TTL: m1=%d, want 0", a.Count("m1"))
	}
	undo := a.Assume("e", s, nil, []workv1alpha2.TargetCluster{{Name: "m2", Replicas: 3}}, nil)
	if a.Count("m2") != 3 {
		t.Fatalf("assumed m2=%d, want 3", a.Count("m2"))
	}
	undo() // the placement could not be written
	if a.Count("m2") != 0 {
		t.Fatalf("after undo: m2=%d, want 0", a.Count("m2"))
	}
	a.Assume("d", s, nil, []workv1alpha2.TargetCluster{{Name: "m2", Replicas: 2}}, nil)
	a.Forget("d")
	if a.Count("m2") != 0 {
		t.Fatalf("a deleted binding's assumption stayed: m2=%d", a.Count("m2"))
	}
}

// fakeEstimator answers a fixed number and counts the questions.
type fakeEstimator struct {
	service.UnimplementedEstimatorServer
	answer  int32
	calls   atomic.Int32
	assumed atomic.Int32
}

func (f *fakeEstimator) MaxAvailableReplicas(_ context.Context, req *pb.MaxAvailableReplicasRequest) (*pb.MaxAvailableReplicasResponse, error) {
	f.calls.Add(1)
	for _, w := range req.GetAssumedWorkloads() {
		for _, c := range w.GetComponents() {
			f.assumed.Add(c.GetReplicas())
		}
	}
	return &pb.MaxAvailableReplicasResponse{MaxReplicas: f.answer}, nil
}

func startFake(t *testing.T, f *fakeEstimator) string { return estimatortest.Serve(t, f) }

func TestAccurateEstimatesAreTheMinimumAndFallBack(t *testing.T) {
	m1 := &fakeEstimator{answer: 2} // node-level fit: fewer than the summary says
	m3 := &fakeEstimator{answer: 50}
	dead, _ := net.Listen("tcp", "127.0.0.1:0")
	deadAddr := dead.Addr().String()
	_ = dead.Close()
	pool, err := estimatorclient.NewPool(estimatorclient.Options{Enabled: true, Plaintext: true, Timeout: 2 * time.Second,
		Addresses: map[string]string{"m1": startFake(t, m1), "m2": deadAddr, "m3": startFake(t, m3)}})
	if err != nil {
		t.Fatal(err)
	}
	defer pool.Close()
	est := &Estimates{Pool: pool, Assumed: &Assumptions{}}
	est.Assumed.Assume("other", schedulertest.Spec(4, nil), nil, []workv1alpha2.TargetCluster{{Name: "m1", Replicas: 4}}, nil)
	fw, err := framework.New(plugins.NewInTreeRegistry(), []string{"*"})
	if err != nil {
		t.Fatal(err)
	}
	fw.Estimator = est
	fleet := []clusterv1alpha1.Cluster{schedulertest.Member("m1", "east", 10), schedulertest.Member("m2", "east", 10), schedulertest.Member("m3", "west", 10)}
	var fallbacks []string
	ctx := WithCycle(context.Background(), "default/web", func(cluster, reason string, _ error) { fallbacks = append(fallbacks, cluster+":"+reason) })
	before := testutil.ToFloat64(metrics.EstimatorFallbacks.WithLabelValues("m2", estimatorclient.ReasonUnavailable)) +
		testutil.ToFloat64(metrics.EstimatorFallbacks.WithLabelValues("m2", estimatorclient.ReasonTimeout))
	// Two affinity terms: the estimators are asked once per cycle.
	p := dynamicPlacement()
	p.ClusterAffinities = []policyv1alpha1.ClusterAffinityTerm{
		{AffinityName: "small", ClusterAffinity: policyv1alpha1.ClusterAffinity{ClusterNames: []string{"m1"}}},
		{AffinityName: "all", ClusterAffinity: policyv1alpha1.ClusterAffinity{ClusterNames: []string{"m1", "m2", "m3"}}},
	}
	res := algorithm.ScheduleFrom(ctx, fw, schedulertest.Spec(12, p), fleet, "")
	if res.Err != nil {
		t.Fatal(res.Err)
	}
	avail := map[string]int32{}
	for _, e := range res.Explanation.Clusters {
		if e.AvailableReplicas != nil {
			avail[e.Name] = *e.AvailableReplicas
		}
	}
	// m1: min(general 10-4 assumed, accurate 2); m2: its estimator is
	// down, general 10; m3: min(10, 50).
	if avail["m1"] != 2 || avail["m2"] != 10 || avail["m3"] != 10 {
		t.Fatalf("available = %v, want m1=2 m2=10 m3=10", avail)
	}
	var total int32
	for _, tg := range res.Targets {
		total += tg.Replicas
		if tg.Name == "m1" && tg.Replicas > 2 {
			t.Errorf("m1 was given %d replicas; its estimator said 2 fit", tg.Replicas)
		}
	}
	if res.AffinityName != "all" || total != 12 {
		t.Errorf("placement %s by %q, want 12 replicas by the term \"all\"", schedulertest.Targets(res.Targets), res.AffinityName)
	}
	if n := m1.calls.Load(); n != 1 {
		t.Errorf("m1's estimator was asked %d times in one cycle, want 1", n)
	}
	if n := m1.assumed.Load(); n != 4 {
		t.Errorf("m1's estimator was told of %d assumed replicas, want 4", n)
	}
	if len(fallbacks) != 1 || fallbacks[0] != "m2:"+estimatorclient.ReasonUnavailable && fallbacks[0] != "m2:"+estimatorclient.ReasonTimeout {
		t.Errorf("fallbacks = %v, want m2 once", fallbacks)
	}
	after := testutil.ToFloat64(metrics.EstimatorFallbacks.WithLabelValues("m2", estimatorclient.ReasonUnavailable)) +
		testutil.ToFloat64(metrics.EstimatorFallbacks.WithLabelValues("m2", estimatorclient.ReasonTimeout))
	if after-before < 1 {
		t.Errorf("karmada_scheduler_estimator_fallback_total did not count m2")
	}
}
