package binding

import (
	"errors"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	policyv1alpha1 "github.com/karmada-go/karmada/api/policy/v1alpha1"
	workv1alpha2 "github.com/karmada-go/karmada/api/work/v1alpha2"
)

func deploymentManifest(replicas int64, cpu string) *unstructured.Unstructured {
	return &unstructured.Unstructured{Object: map[string]any{"apiVersion": "apps/v1", "kind": "Deployment", "metadata": map[string]any{"name": "web", "namespace": "team"},
		"spec": map[string]any{"replicas": replicas, "template": map[string]any{"spec": map[string]any{"containers": []any{
			map[string]any{"name": "c", "image": "x", "resources": map[string]any{"requests": map[string]any{"cpu": cpu}}}}}}}}}
}

// A copy that would run more than its binding declares, of what a quota
// limits, is refused (as an override failure: the Work keeps its last good
// manifest); one that runs what was declared, or more of what no quota
// limits, passes.
func TestBeyondQuota(t *testing.T) {
	cpuQuota := []policyv1alpha1.FederatedResourceQuota{{ObjectMeta: metav1.ObjectMeta{Namespace: "team", Name: "q"},
		Spec: policyv1alpha1.FederatedResourceQuotaSpec{Overall: corev1.ResourceList{"requests.cpu": resource.MustParse("3")}}}}
	podQuota := []policyv1alpha1.FederatedResourceQuota{{ObjectMeta: metav1.ObjectMeta{Namespace: "team", Name: "pods"},
		Spec: policyv1alpha1.FederatedResourceQuotaSpec{Overall: corev1.ResourceList{"pods": resource.MustParse("10")}}}}
	declared := &workv1alpha2.ResourceBindingSpec{Replicas: 2, ReplicaRequirements: &workv1alpha2.ReplicaRequirements{ResourceRequest: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("500m")}}}
	noRequirements := &workv1alpha2.ResourceBindingSpec{Replicas: 2}
	member1 := workv1alpha2.TargetCluster{Name: "member1", Replicas: 2}
	for _, c := range []struct {
		name    string
		obj     *unstructured.Unstructured
		spec    *workv1alpha2.ResourceBindingSpec
		quotas  []policyv1alpha1.FederatedResourceQuota
		wantErr string
	}{
		{"as declared", deploymentManifest(2, "500m"), declared, cpuQuota, ""},
		{"an override raising replicas", deploymentManifest(30, "500m"), declared, cpuQuota, "the copy for cluster member1 would run cpu 15 (the binding declares 1)"},
		{"an override raising requests", deploymentManifest(2, "2"), declared, cpuQuota, "cpu 4 (the binding declares 1)"},
		{"a binding declaring no requirements", deploymentManifest(2, "500m"), noRequirements, cpuQuota, "cpu 1 (the binding declares 0)"},
		{"requests no quota limits", deploymentManifest(2, "2"), declared, podQuota, ""},
		{"replicas a pods quota limits", deploymentManifest(30, "500m"), declared, podQuota, "pods 30 (the binding declares 2)"},
		{"no quota", deploymentManifest(30, "500m"), declared, nil, ""},
		{"fewer than declared", deploymentManifest(1, "100m"), declared, cpuQuota, ""},
	} {
		t.Run(c.name, func(t *testing.T) {
			err := beyondQuota(c.obj, c.spec, member1, c.quotas)
			if c.wantErr == "" {
				if err != nil {
					t.Fatalf("refused: %v", err)
				}
				return
			}
			if err == nil || !strings.Contains(err.Error(), c.wantErr) || !errors.Is(err, errOverride) {
				t.Fatalf("err = %v, want an override failure containing %q", err, c.wantErr)
			}
		})
	}
	cm := &unstructured.Unstructured{Object: map[string]any{"apiVersion": "v1", "kind": "ConfigMap", "metadata": map[string]any{"name": "c"}}}
	if err := beyondQuota(cm, declared, member1, cpuQuota); err != nil {
		t.Errorf("a kind without replicas: %v", err)
	}
}
