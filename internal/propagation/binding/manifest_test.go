package binding

import (
	"encoding/json"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	clusterv1alpha1 "github.com/karmada-go/karmada/api/cluster/v1alpha1"
	workv1alpha2 "github.com/karmada-go/karmada/api/work/v1alpha2"
	"github.com/karmada-go/karmada/internal/anybinding"
)

// Preserved state reaches only the copies the workload moved to, as labels,
// and cannot overwrite the binding's marks (a tenant chooses the label
// names of its statePreservation rules).
func TestManifestInjectsPreservedState(t *testing.T) {
	template := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "apps/v1", "kind": "Deployment",
		"metadata": map[string]any{"name": "web", "namespace": "default", "generation": int64(1), "labels": map[string]any{"app": "web"}},
		"spec":     map[string]any{"replicas": int64(2)},
	}}
	rb := &workv1alpha2.ResourceBinding{
		ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: "web-deployment", Labels: map[string]string{workv1alpha2.ResourceBindingPermanentIDLabel: "id-1"}},
		Spec: workv1alpha2.ResourceBindingSpec{Replicas: 2, Clusters: []workv1alpha2.TargetCluster{{Name: "m1", Replicas: 2}, {Name: "m3", Replicas: 2}},
			GracefulEvictionTasks: []workv1alpha2.GracefulEvictionTask{{FromCluster: "m2", ClustersBeforeFailover: []string{"m1", "m2"},
				PreservedLabelState: map[string]string{"example.io/checkpoint": "chk-9", workv1alpha2.ResourceBindingPermanentIDLabel: "forged"}}}},
	}
	b, err := anybinding.Of(rb)
	if err != nil {
		t.Fatal(err)
	}
	labels := func(cluster string) map[string]string {
		m, err := Manifest(nil, template, b, workv1alpha2.TargetCluster{Name: cluster, Replicas: 2}, &clusterv1alpha1.Cluster{ObjectMeta: metav1.ObjectMeta{Name: cluster}}, nil)
		if err != nil {
			t.Fatal(err)
		}
		var obj struct {
			Metadata struct {
				Labels map[string]string `json:"labels"`
			} `json:"metadata"`
		}
		if err := json.Unmarshal(m.Raw, &obj); err != nil {
			t.Fatal(err)
		}
		return obj.Metadata.Labels
	}
	got := labels("m3")
	if got["example.io/checkpoint"] != "chk-9" || got["app"] != "web" {
		t.Errorf("m3 (moved to): labels %v, want the preserved checkpoint and the template's own", got)
	}
	if got[workv1alpha2.ResourceBindingPermanentIDLabel] != "id-1" {
		t.Errorf("the preserved state overwrote the binding's mark: %v", got)
	}
	if got := labels("m1"); got["example.io/checkpoint"] != "" {
		t.Errorf("m1 (there before the failover) got the preserved state: %v", got)
	}
}
