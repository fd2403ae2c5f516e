package explain

import (
	"bytes"
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	workv1alpha2 "github.com/karmada-go/karmada/api/work/v1alpha2"
)

var update = flag.Bool("update", false, "rewrite the golden files")

func golden(t *testing.T, name string, got []byte) {
	t.Helper()
	path := filepath.Join("testdata", name)
	if *update {
		if err := os.WriteFile(path, got, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run go test ./internal/karmadactl/explain -update to create it)", err)
	}
	if !bytes.Equal(got, want) {
		t.Errorf("output differs from %s:\n--- got\n%s\n--- want\n%s", path, got, want)
	}
}

func TestRenderGolden(t *testing.T) {
	ex := &workv1alpha2.PlacementExplanation{
		AffinityName: "backup",
		Message:      "scheduled",
		Clusters: []workv1alpha2.ClusterExplanation{
			{Name: "member2", Feasible: true, Selected: true, Replicas: 3, AvailableReplicas: ptr.To[int32](72), Score: 100,
				Scores: []workv1alpha2.PluginScore{{Plugin: "ClusterLocality", Score: 100}}},
			{Name: "member3", Feasible: true, Selected: true, Replicas: 6, AvailableReplicas: ptr.To[int32](144), Score: 0,
				Scores: []workv1alpha2.PluginScore{{Plugin: "ClusterLocality", Score: 0}}},
			{Name: "member1", Plugin: "TaintToleration", Reason: "cluster had untolerated taint {cluster.karmada.io/unschedulable:NoSchedule}"},
		},
		Omitted: 2,
	}
	var out bytes.Buffer
	targets := []workv1alpha2.TargetCluster{{Name: "member2", Replicas: 3}, {Name: "member3", Replicas: 6}}
	if err := Render(&out, "ResourceBinding default/nginx-deployment (Deployment nginx)", targets, ex); err != nil {
		t.Fatal(err)
	}
	golden(t, "explain.txt", out.Bytes())

	out.Reset()
	failed := &workv1alpha2.PlacementExplanation{
		Message:  "0/2 clusters are available: member1, member2: cluster is not in clusterNames (ClusterAffinity)",
		Clusters: []workv1alpha2.ClusterExplanation{{Name: "member1", Plugin: "ClusterAffinity", Reason: "cluster is not in clusterNames"}, {Name: "member2", Plugin: "ClusterAffinity", Reason: "cluster is not in clusterNames"}},
	}
	if err := Render(&out, "ResourceBinding default/web-deployment (Deployment web)", nil, failed); err != nil {
		t.Fatal(err)
	}
	golden(t, "explain-unschedulable.txt", out.Bytes())

	out.Reset()
	if err := Render(&out, "ResourceBinding default/new-deployment (Deployment new)", nil, nil); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(out.String(), "no explanation recorded") {
		t.Errorf("a binding without explanation prints %q", out.String())
	}
}

func TestReadPolicies(t *testing.T) {
	in := `apiVersion: policy.karmada.io/v1alpha1
kind: PropagationPolicy
metadata:
  name: nginx
spec:
  resourceSelectors:
    - apiVersion: apps/v1
      kind: Deployment
      name: nginx
  placement:
    clusterAffinity:
      clusterNames: [member1]
---
apiVersion: policy.karmada.io/v1alpha1
kind: ClusterPropagationPolicy
metadata:
  name: crds
spec:
  resourceSelectors:
    - apiVersion: apiextensions.k8s.io/v1
      kind: CustomResourceDefinition
`
	ps, err := ReadPolicies(strings.NewReader(in), "shop")
	if err != nil {
		t.Fatal(err)
	}
	if len(ps) != 2 || ps[0].PP == nil || ps[0].PP.Namespace != "shop" || ps[0].PP.Spec.Placement.ClusterAffinity.ClusterNames[0] != "member1" || ps[1].CPP == nil {
		t.Fatalf("read %+v", ps)
	}
	_, err = ReadPolicies(strings.NewReader("apiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: nginx\n"), "default")
	if err == nil || !strings.Contains(err.Error(), `document 1 is a Deployment "nginx"`) {
		t.Errorf("a Deployment in the input: %v", err)
	}
	if _, err := ReadPolicies(strings.NewReader(""), "default"); err == nil {
		t.Error("an empty input is accepted")
	}
}

func TestRenderEvictionsGolden(t *testing.T) {
	now := time.Date(2026, 11, 24, 8, 0, 0, 0, time.UTC)
	created := metav1.NewTime(now.Add(-95 * time.Second))
	spec := &workv1alpha2.ResourceBindingSpec{GracefulEvictionTasks: []workv1alpha2.GracefulEvictionTask{
		{FromCluster: "member2", Reason: "TaintUntolerated", Producer: "TaintManager", PurgeMode: "Gracefully", Replicas: ptr.To[int32](2), CreationTimestamp: &created,
			Message: "cluster has taint {cluster.karmada.io/not-ready:NoExecute} tolerated for 300s"},
		{FromCluster: "member1", Reason: "ApplicationFailure", Producer: "resource-binding-application-failover-controller", PurgeMode: "Never", SuppressDeletion: ptr.To(true), CreationTimestamp: &created},
	}}
	status := &workv1alpha2.ResourceBindingStatus{Conditions: []metav1.Condition{{Type: workv1alpha2.EvictionBlocked, Status: metav1.ConditionTrue, Reason: "NoReplacement",
		Message: "the copy in member2 is kept: no cluster can take the workload (0/3 clusters are available)"}}}
	var out bytes.Buffer
	if err := RenderEvictions(&out, spec, status, now); err != nil {
		t.Fatal(err)
	}
	golden(t, "explain-evictions.txt", out.Bytes())
	out.Reset()
	if err := RenderEvictions(&out, &workv1alpha2.ResourceBindingSpec{}, &workv1alpha2.ResourceBindingStatus{}, now); err != nil || out.Len() != 0 {
		t.Errorf("no eviction prints %q (%v)", out.String(), err)
	}
}
