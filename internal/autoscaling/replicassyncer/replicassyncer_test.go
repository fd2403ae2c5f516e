package replicassyncer

import (
	"encoding/json"
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/utils/ptr"

	workv1alpha2 "github.com/karmada-go/karmada/api/work/v1alpha2"
)

func TestCollected(t *testing.T) {
	status := func(replicas int32) *runtime.RawExtension {
		raw, _ := json.Marshal(appsv1.DeploymentStatus{Replicas: replicas})
		return &runtime.RawExtension{Raw: raw}
	}
	binding := func(mutate func(*workv1alpha2.ResourceBinding)) *workv1alpha2.ResourceBinding {
		rb := &workv1alpha2.ResourceBinding{ObjectMeta: metav1.ObjectMeta{Generation: 3},
			Spec: workv1alpha2.ResourceBindingSpec{Replicas: 4, Clusters: []workv1alpha2.TargetCluster{{Name: "m1", Replicas: 2}, {Name: "m2", Replicas: 2}}},
			Status: workv1alpha2.ResourceBindingStatus{SchedulerObservedGeneration: 3, AggregatedStatus: []workv1alpha2.AggregatedStatusItem{
				{ClusterName: "m1", Status: status(5)}, {ClusterName: "m2", Status: status(2)}}}}
		if mutate != nil {
			mutate(rb)
		}
		return rb
	}
	d := &appsv1.Deployment{Spec: appsv1.DeploymentSpec{Replicas: ptr.To[int32](4)}, Status: appsv1.DeploymentStatus{Replicas: 7}}
	for _, tc := range []struct {
		name string
		rb   *workv1alpha2.ResourceBinding
		want bool
	}{
		{"every member's status in, adding up", binding(nil), true},
		{"the binding has older replicas", binding(func(rb *workv1alpha2.ResourceBinding) { rb.Spec.Replicas = 3 }), false},
		{"not scheduled at this generation", binding(func(rb *workv1alpha2.ResourceBinding) { rb.Status.SchedulerObservedGeneration = 2 }), false},
		{"a member's status missing", binding(func(rb *workv1alpha2.ResourceBinding) { rb.Status.AggregatedStatus = rb.Status.AggregatedStatus[:1] }), false},
		{"a member says 0", binding(func(rb *workv1alpha2.ResourceBinding) { rb.Status.AggregatedStatus[1].Status = status(0) }), false},
		{"the template's status lags", binding(func(rb *workv1alpha2.ResourceBinding) { rb.Status.AggregatedStatus[1].Status = status(3) }), false},
	} {
		if got := Collected(d, tc.rb); got != tc.want {
			t.Errorf("%s: %t, want %t", tc.name, got, tc.want)
		}
	}
}
