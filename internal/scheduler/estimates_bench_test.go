package scheduler

import (
	"context"
	"fmt"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	clusterv1alpha1 "github.com/karmada-go/karmada/api/cluster/v1alpha1"
	estimatorclient "github.com/karmada-go/karmada/internal/estimator/client"
	"github.com/karmada-go/karmada/internal/estimator/estimatortest"
	"github.com/karmada-go/karmada/internal/estimator/server"
	"github.com/karmada-go/karmada/internal/scheduler/algorithm"
	"github.com/karmada-go/karmada/internal/scheduler/framework"
	"github.com/karmada-go/karmada/internal/scheduler/plugins"
	"github.com/karmada-go/karmada/internal/scheduler/schedulertest"
)

// estimatorFor serves a member of 100 8-cpu nodes running 3,000 pods over
// loopback gRPC, as a member's karmada-scheduler-estimator would.
func estimatorFor(b *testing.B, cluster string) string {
	c := server.NewCache()
	for i := 0; i < 100; i++ {
		name := fmt.Sprintf("node-%03d", i)
		c.SetNode(&corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: name, Labels: map[string]string{"kubernetes.io/hostname": name}},
			Status: corev1.NodeStatus{Allocatable: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("8"), corev1.ResourceMemory: resource.MustParse("32Gi"), corev1.ResourcePods: resource.MustParse("110")}}})
	}
	for i := 0; i < 3000; i++ {
		c.SetPod(&corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: fmt.Sprint(i), UID: types.UID(fmt.Sprint(i))},
			Spec: corev1.PodSpec{NodeName: fmt.Sprintf("node-%03d", i%100), Containers: []corev1.Container{{Name: "c", Resources: corev1.ResourceRequirements{
				Requests: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("100m")}}}}}})
	}
	return estimatortest.Serve(b, &server.Service{Cluster: cluster, Estimator: &server.Estimator{Cache: c}})
}

// BenchmarkScheduleWithEstimators is one scheduling cycle of a dynamically
// divided binding (10 replicas of 100m cpu) over 3 and 10 members, with
// the general estimator alone and with every member's estimator asked over
// loopback gRPC; the placement is assumed, as the scheduler does, and the
// ledger is emptied every 10 cycles (the members' 100 pod slots). bindings/s is the throughput of
// one worker.
func BenchmarkScheduleWithEstimators(b *testing.B) {
	for _, members := range []int{3, 10} {
		for _, accurate := range []bool{false, true} {
			name := fmt.Sprintf("members=%d/general", members)
			if accurate {
				name = fmt.Sprintf("members=%d/estimators", members)
			}
			b.Run(name, func(b *testing.B) {
				fleet := make([]clusterv1alpha1.Cluster, members)
				addrs := map[string]string{}
				for i := range fleet {
					fleet[i] = schedulertest.Member(fmt.Sprintf("member%d", i+1), "east", 800)
					if accurate {
						addrs[fleet[i].Name] = estimatorFor(b, fleet[i].Name)
					}
				}
				est := &Estimates{Assumed: &Assumptions{}}
				if accurate {
					pool, err := estimatorclient.NewPool(estimatorclient.Options{Enabled: true, Plaintext: true, Timeout: 3 * time.Second, Addresses: addrs})
					if err != nil {
						b.Fatal(err)
					}
					defer pool.Close()
					est.Pool = pool
				}
				fw, err := framework.New(plugins.NewInTreeRegistry(), []string{"*"})
				if err != nil {
					b.Fatal(err)
				}
				fw.Estimator = est
				s := schedulertest.Spec(10, dynamicPlacement())
				s.ReplicaRequirements.ResourceRequest = corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("100m")}
				b.ResetTimer()
				start := time.Now()
				for i := 0; i < b.N; i++ {
					if i%10 == 0 {
						est.Assumed = &Assumptions{}
					}
					key := fmt.Sprintf("default/b-%d", i)
					res := algorithm.Schedule(WithCycle(context.Background(), key, nil), fw, s, fleet)
					if res.Err != nil {
						b.Fatal(res.Err)
					}
					est.Assumed.Assume(key, s, nil, res.Targets, nil)
				}
				b.ReportMetric(float64(b.N)/time.Since(start).Seconds(), "bindings/s")
			})
		}
	}
}
