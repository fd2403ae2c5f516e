package topclusters

import (
	"bytes"
	"context"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"

	clusterv1alpha1 "github.com/karmada-go/karmada/api/cluster/v1alpha1"
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
	if _, err := Rows(context.Background(), c, []string{"member9"}, ""); err == nil || !strings.Contains(err.Error(), `"member9" not found`) {
		t.Errorf("an unknown cluster: %v", err)
	}
}
