package topclusters

import (
	"bytes"
	"context"
	"net"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"

	clusterv1alpha1 "github.com/karmada-go/karmada/api/cluster/v1alpha1"
	estimatorclient "github.com/karmada-go/karmada/internal/estimator/client"
	"github.com/karmada-go/karmada/internal/estimator/estimatortest"
	"github.com/karmada-go/karmada/internal/estimator/pb"
	"github.com/karmada-go/karmada/internal/estimator/service"
	"github.com/karmada-go/karmada/internal/scheme"
)

func TestTopClusters(t *testing.T) {
	m1 := &clusterv1alpha1.Cluster{ObjectMeta: metav1.ObjectMeta{Name: "member1", Labels: map[string]string{"env": "prod"}},
		Status: clusterv1alpha1.ClusterStatus{
			Conditions: []metav1.Condition{{Type: clusterv1alpha1.ClusterConditionReady, Status: metav1.ConditionTrue}},
			ResourceSummary: &clusterv1alpha1.ResourceSummary{
				Allocatable: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("24"), corev1.ResourceMemory: resource.MustParse("96Gi"), corev1.ResourcePods: resource.MustParse("330")},
				Allocated:   corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("6"), corev1.ResourceMemory: resource.MustParse("24Gi"), corev1.ResourcePods: resource.MustParse("30")},
				Allocating:  corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("500m")},
			}}}
	m2 := &clusterv1alpha1.Cluster{ObjectMeta: metav1.ObjectMeta{Name: "member2"}}
	c := fake.NewClientBuilder().WithScheme(scheme.Scheme).WithObjects(m1, m2).Build()
	rows, err := Rows(context.Background(), c, nil, "")
	if err != nil {
		t.Fatal(err)
	}
	var out bytes.Buffer
	if err := Print(&out, rows); err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSpace(out.String()), "\n")
	if len(lines) != 3 {
		t.Fatalf("output:\n%s", out.String())
	}
	for _, want := range []string{"member1", "true", "17500m/24", "27%", "72Gi/96Gi", "25%", "300/330", "9%"} {
		if !strings.Contains(lines[1], want) {
			t.Errorf("member1's line %q lacks %q", lines[1], want)
		}
	}
	if !strings.Contains(lines[2], "member2") || !strings.Contains(lines[2], "<unknown>") {
		t.Errorf("a cluster without a summary: %q", lines[2])
	}
	if rows, err := Rows(context.Background(), c, nil, "env=prod"); err != nil || len(rows) != 1 || rows[0].Name != "member1" {
		t.Errorf("-l env=prod: %+v %v", rows, err)
	}
	// Named clusters: those only (naming every one but the last used to
	// list the last too).
	if rows, err := Rows(context.Background(), c, []string{"member1"}, ""); err != nil || len(rows) != 1 || rows[0].Name != "member1" {
		t.Errorf("member1 named: %+v %v", rows, err)
	}
	if _, err := Rows(context.Background(), c, []string{"member9"}, ""); err == nil || !strings.Contains(err.Error(), `"member9" not found`) {
		t.Errorf("an unknown cluster: %v", err)
	}
}

type fitEstimator struct {
	service.UnimplementedEstimatorServer
	replicas int32
	asked    corev1.ResourceList
}

func (f *fitEstimator) MaxAvailableReplicas(_ context.Context, req *pb.MaxAvailableReplicasRequest) (*pb.MaxAvailableReplicasResponse, error) {
	r, err := req.GetReplicaRequirements().Decode()
	if err != nil {
		return nil, err
	}
	f.asked = r.ResourceRequest
	return &pb.MaxAvailableReplicasResponse{MaxReplicas: f.replicas}, nil
}

// --fit: the general estimator's count from the summary beside the
// member's estimator's (asked over gRPC with the shape given), and why an
// estimator that cannot be reached has no count.
func TestTopClustersFit(t *testing.T) {
	m1 := &clusterv1alpha1.Cluster{ObjectMeta: metav1.ObjectMeta{Name: "member1"},
		Status: clusterv1alpha1.ClusterStatus{ResourceSummary: &clusterv1alpha1.ResourceSummary{
			Allocatable: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("24"), corev1.ResourceMemory: resource.MustParse("96Gi"), corev1.ResourcePods: resource.MustParse("330")},
			Allocated:   corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("8")},
		}}}
	m2 := &clusterv1alpha1.Cluster{ObjectMeta: metav1.ObjectMeta{Name: "member2"}}
	c := fake.NewClientBuilder().WithScheme(scheme.Scheme).WithObjects(m1, m2).Build()
	rows, err := Rows(context.Background(), c, nil, "")
	if err != nil {
		t.Fatal(err)
	}
	est := &fitEstimator{replicas: 2}
	closed, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	deadAddr := closed.Addr().String()
	closed.Close()
	pool, err := estimatorclient.NewPool(estimatorclient.Options{Plaintext: true, Timeout: 2 * time.Second,
		Addresses: map[string]string{"member1": estimatortest.Serve(t, est), "member2": deadAddr}})
	if err != nil {
		t.Fatal(err)
	}
	defer pool.Close()
	request, err := ParseFit("cpu=4, memory=8Gi")
	if err != nil {
		t.Fatal(err)
	}
	if err := Fits(context.Background(), rows, request, pool); err != nil {
		t.Fatal(err)
	}
	if q := est.asked[corev1.ResourceCPU]; q.String() != "4" {
		t.Errorf("the estimator was asked for %v, want cpu 4", est.asked)
	}
	var out bytes.Buffer
	if err := Print(&out, rows); err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSpace(out.String()), "\n")
	if !strings.Contains(lines[0], "FIT(GENERAL)") || !strings.Contains(lines[0], "FIT(ESTIMATOR)") {
		t.Fatalf("header %q", lines[0])
	}
	// member1: 16 cpu free / 4 = 4 by the summary; 2 by its estimator.
	if f := strings.Fields(lines[1]); f[len(f)-2] != "4" || f[len(f)-1] != "2" {
		t.Errorf("member1's line %q: want FIT(GENERAL) 4 and FIT(ESTIMATOR) 2", lines[1])
	}
	if !strings.Contains(lines[2], "<unknown>") || !strings.Contains(lines[2], "<unavailable:") {
		t.Errorf("member2's line %q: want no summary and the unreachable estimator's reason", lines[2])
	}

	for in, want := range map[string]string{
		"cpu":        "want name=quantity pairs",
		"cpu=lots":   `cpu="lots" is not a quantity`,
		"memory=-1G": "memory must be positive",
	} {
		if _, err := ParseFit(in); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("--fit %q: %v, want an error naming %q", in, err, want)
		}
	}
}
