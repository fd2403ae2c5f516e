package descheduler

import (
	"context"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/tools/record"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"

	policyv1alpha1 "github.com/karmada-go/karmada/api/policy/v1alpha1"
	workv1alpha2 "github.com/karmada-go/karmada/api/work/v1alpha2"
	estimatorclient "github.com/karmada-go/karmada/internal/estimator/client"
	"github.com/karmada-go/karmada/internal/estimator/estimatortest"
	"github.com/karmada-go/karmada/internal/estimator/pb"
	"github.com/karmada-go/karmada/internal/estimator/service"
	"github.com/karmada-go/karmada/internal/scheme"
)

func TestLower(t *testing.T) {
	targets := []workv1alpha2.TargetCluster{{Name: "m1", Replicas: 4}, {Name: "m2", Replicas: 3}, {Name: "m3", Replicas: 2}}
	got, removed := Lower(targets, map[string]int32{"m1": 2, "m2": 3, "m3": 2}, map[string]int32{"m1": 2, "m3": 1})
	want := map[string]int32{"m1": 2, "m3": 1}
	if len(got) != 2 || got[0].Name != "m1" || got[0].Replicas != want["m1"] || got[1].Name != "m3" || got[1].Replicas != want["m3"] {
		t.Fatalf("targets %+v, want m1=2 (2 taken) and m3=1 (one of two taken: one is available), m2 gone", got)
	}
	if len(removed) != 3 || removed[0] != "m1: 2" || removed[1] != "m2: 3" || removed[2] != "m3: 1" {
		t.Errorf("removed %v", removed)
	}
	// Available replicas are never taken, whatever the estimator says.
	got, removed = Lower(targets, map[string]int32{"m1": 4}, map[string]int32{"m1": 4})
	if len(removed) != 0 || got[0].Replicas != 4 {
		t.Errorf("took available replicas: %+v %v", got, removed)
	}
}

func TestDynamic(t *testing.T) {
	div := func(pref policyv1alpha1.ReplicaDivisionPreference, dyn policyv1alpha1.DynamicWeightFactor) *policyv1alpha1.Placement {
		s := &policyv1alpha1.ReplicaSchedulingStrategy{ReplicaSchedulingType: policyv1alpha1.ReplicaSchedulingTypeDivided, ReplicaDivisionPreference: pref}
		if dyn != "" {
			s.WeightPreference = &policyv1alpha1.ClusterPreferences{DynamicWeight: dyn}
		}
		return &policyv1alpha1.Placement{ReplicaScheduling: s}
	}
	for _, tc := range []struct {
		p    *policyv1alpha1.Placement
		want bool
	}{
		{nil, false},
		{&policyv1alpha1.Placement{}, false},
		{div(policyv1alpha1.ReplicaDivisionPreferenceWeighted, ""), false},
		{div(policyv1alpha1.ReplicaDivisionPreferenceWeighted, policyv1alpha1.DynamicWeightByAvailableReplicas), true},
		{div(policyv1alpha1.ReplicaDivisionPreferenceAggregated, ""), true},
	} {
		if got := Dynamic(tc.p); got != tc.want {
			t.Errorf("Dynamic(%+v) = %t, want %t", tc.p, got, tc.want)
		}
	}
}

type fakeEstimator struct {
	service.UnimplementedEstimatorServer
	unschedulable int32
	threshold     time.Duration
	asked         *pb.ObjectReference
}

func (f *fakeEstimator) GetUnschedulableReplicas(_ context.Context, req *pb.UnschedulableReplicasRequest) (*pb.UnschedulableReplicasResponse, error) {
	f.asked, f.threshold = req.GetResource(), time.Duration(req.GetUnschedulableThreshold())
	return &pb.UnschedulableReplicasResponse{UnschedulableReplicas: f.unschedulable}, nil
}

func serve(t *testing.T, f *fakeEstimator) string { return estimatortest.Serve(t, f) }

func TestRunOnceTakesUnschedulableReplicasOut(t *testing.T) {
	m1, m2 := &fakeEstimator{unschedulable: 2}, &fakeEstimator{}
	pool, err := estimatorclient.NewPool(estimatorclient.Options{Enabled: true, Plaintext: true, Timeout: 2 * time.Second,
		Addresses: map[string]string{"m1": serve(t, m1), "m2": serve(t, m2)}})
	if err != nil {
		t.Fatal(err)
	}
	defer pool.Close()
	dynamic := &policyv1alpha1.Placement{ReplicaScheduling: &policyv1alpha1.ReplicaSchedulingStrategy{ReplicaSchedulingType: policyv1alpha1.ReplicaSchedulingTypeDivided,
		ReplicaDivisionPreference: policyv1alpha1.ReplicaDivisionPreferenceWeighted, WeightPreference: &policyv1alpha1.ClusterPreferences{DynamicWeight: policyv1alpha1.DynamicWeightByAvailableReplicas}}}
	scheduled := workv1alpha2.ResourceBindingStatus{Conditions: []metav1.Condition{{Type: workv1alpha2.Scheduled, Status: metav1.ConditionTrue, Reason: "Success", LastTransitionTime: metav1.Now()}},
		AggregatedStatus: []workv1alpha2.AggregatedStatusItem{{ClusterName: "m1", Status: &runtime.RawExtension{Raw: []byte(`{"availableReplicas":1}`)}}}}
	rb := func(name string, p *policyv1alpha1.Placement) *workv1alpha2.ResourceBinding {
		return &workv1alpha2.ResourceBinding{ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: name},
			Spec: workv1alpha2.ResourceBindingSpec{Replicas: 5, Placement: p,
				Resource: workv1alpha2.ObjectReference{APIVersion: "apps/v1", Kind: "Deployment", Namespace: "default", Name: name},
				Clusters: []workv1alpha2.TargetCluster{{Name: "m1", Replicas: 3}, {Name: "m2", Replicas: 2}}},
			Status: scheduled}
	}
	static := &policyv1alpha1.Placement{ReplicaScheduling: &policyv1alpha1.ReplicaSchedulingStrategy{ReplicaSchedulingType: policyv1alpha1.ReplicaSchedulingTypeDivided}}
	c := fake.NewClientBuilder().WithScheme(scheme.Scheme).WithObjects(rb("web-deployment", dynamic), rb("fixed-deployment", static)).WithStatusSubresource(&workv1alpha2.ResourceBinding{}).Build()
	rec := record.NewFakeRecorder(10)
	d := &Descheduler{Client: c, Pool: pool, Interval: time.Minute, Threshold: 5 * time.Minute, Recorder: rec}
	if err := d.RunOnce(context.Background()); err != nil {
		t.Fatal(err)
	}
	got := &workv1alpha2.ResourceBinding{}
	if err := c.Get(context.Background(), client.ObjectKey{Namespace: "default", Name: "web-deployment"}, got); err != nil {
		t.Fatal(err)
	}
	if len(got.Spec.Clusters) != 2 || got.Spec.Clusters[0].Replicas != 1 || got.Spec.Clusters[1].Replicas != 2 {
		t.Errorf("clusters %+v, want m1=1 (2 unschedulable taken), m2=2", got.Spec.Clusters)
	}
	if m1.threshold != 5*time.Minute || m1.asked.GetKind() != "Deployment" || m1.asked.GetName() != "web-deployment" {
		t.Errorf("asked about %+v with threshold %s", m1.asked, m1.threshold)
	}
	fixed := &workv1alpha2.ResourceBinding{}
	if err := c.Get(context.Background(), client.ObjectKey{Namespace: "default", Name: "fixed-deployment"}, fixed); err != nil {
		t.Fatal(err)
	}
	if fixed.Spec.Clusters[0].Replicas != 3 {
		t.Errorf("a statically divided binding was descheduled: %+v", fixed.Spec.Clusters)
	}
	select {
	case e := <-rec.Events:
		if e != "Normal DescheduleBindingSucceed Binding has been descheduled: m1: 2 (replicas unschedulable there for 5m0s)" {
			t.Errorf("event %q", e)
		}
	default:
		t.Error("no event")
	}
}
