package algorithm

import (
	"context"
	"fmt"
	"testing"

	corev1 "k8s.io/api/core/v1"

	clusterv1alpha1 "github.com/karmada-go/karmada/api/cluster/v1alpha1"
	policyv1alpha1 "github.com/karmada-go/karmada/api/policy/v1alpha1"
	"github.com/karmada-go/karmada/internal/scheduler/framework"
	"github.com/karmada-go/karmada/internal/scheduler/plugins"
	"github.com/karmada-go/karmada/internal/scheduler/schedulertest"
)

// benchFleet is n Ready clusters over 10 regions; every 10th is cordoned.
func benchFleet(n int) []clusterv1alpha1.Cluster {
	out := make([]clusterv1alpha1.Cluster, 0, n)
	for i := 0; i < n; i++ {
		var taints []corev1.Taint
		if i%10 == 9 {
			taints = append(taints, corev1.Taint{Key: "cluster.karmada.io/unschedulable", Effect: corev1.TaintEffectNoSchedule})
		}
		out = append(out, schedulertest.Member(fmt.Sprintf("member%04d", i), fmt.Sprintf("region-%d", i%10), 100+i%50, taints...))
	}
	return out
}

func benchSchedule(b *testing.B, clusters int, replicas int32, placement *policyv1alpha1.Placement) {
	fw, err := framework.New(plugins.NewInTreeRegistry(), []string{"*"})
	if err != nil {
		b.Fatal(err)
	}
	fleet := benchFleet(clusters)
	s := schedulertest.Spec(replicas, placement)
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		if r := Schedule(context.Background(), fw, s, fleet); r.Err != nil {
			b.Fatal(r.Err)
		}
	}
}

// Every plugin runs; the placement uses affinity, tolerations, a spread
// constraint and dynamic division, so every step of a cycle is exercised.
func fullPlacement() *policyv1alpha1.Placement {
	return &policyv1alpha1.Placement{
		ClusterAffinity:   &policyv1alpha1.ClusterAffinity{Exclude: []string{"member0000"}},
		SpreadConstraints: []policyv1alpha1.SpreadConstraint{{SpreadByField: policyv1alpha1.SpreadByFieldRegion, MinGroups: 2, MaxGroups: 5}},
		ReplicaScheduling: &policyv1alpha1.ReplicaSchedulingStrategy{
			ReplicaSchedulingType: policyv1alpha1.ReplicaSchedulingTypeDivided, ReplicaDivisionPreference: policyv1alpha1.ReplicaDivisionPreferenceWeighted,
			WeightPreference: &policyv1alpha1.ClusterPreferences{DynamicWeight: policyv1alpha1.DynamicWeightByAvailableReplicas},
		},
	}
}

func BenchmarkSchedule100Clusters(b *testing.B)  { benchSchedule(b, 100, 100, fullPlacement()) }
func BenchmarkSchedule1000Clusters(b *testing.B) { benchSchedule(b, 1000, 100, fullPlacement()) }

// BenchmarkDivide10000Replicas divides 10,000 replicas over 1,000 clusters
// by available replicas.
func BenchmarkDivide10000Replicas(b *testing.B) {
	p := fullPlacement()
	p.SpreadConstraints = nil
	benchSchedule(b, 1000, 10000, p)
}
