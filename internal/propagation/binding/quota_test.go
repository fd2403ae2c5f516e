package binding

import (
	"errors"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"

	policyv1alpha1 "github.com/karmada-go/karmada/api/policy/v1alpha1"
	workv1alpha2 "github.com/karmada-go/karmada/api/work/v1alpha2"
	"github.com/karmada-go/karmada/internal/interpreter"
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
			err := beyondQuota(nil, c.obj, c.spec, member1, c.quotas)
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
	if err := beyondQuota(nil, cm, declared, member1, cpuQuota); err != nil {
		t.Errorf("a kind without replicas: %v", err)
	}
}

// A workload of several components is counted per component: an override
// raising one component's replicas or requests past what the binding
// declares is refused like a single-component one.
func TestBeyondQuotaCountsComponents(t *testing.T) {
	gk := schema.GroupKind{Group: "example.com", Kind: "Cluster"}
	// The test kind's components: head (1 × spec.headCPU) and workers
	// (spec.workers × 1 cpu).
	in := interpreter.New(interpreter.Registry{gk: &interpreter.Kind{GetComponents: func(obj *unstructured.Unstructured) ([]workv1alpha2.Component, error) {
		head, _, _ := unstructured.NestedString(obj.Object, "spec", "headCPU")
		workers, _, _ := unstructured.NestedInt64(obj.Object, "spec", "workers")
		return []workv1alpha2.Component{
			{Name: "head", Replicas: 1, ReplicaRequirements: &workv1alpha2.ComponentReplicaRequirements{ResourceRequest: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse(head)}}},
			{Name: "worker", Replicas: int32(workers), ReplicaRequirements: &workv1alpha2.ComponentReplicaRequirements{ResourceRequest: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("1")}}},
		}, nil
	}}})
	obj := func(headCPU string, workers int64) *unstructured.Unstructured {
		return &unstructured.Unstructured{Object: map[string]any{"apiVersion": "example.com/v1", "kind": "Cluster", "metadata": map[string]any{"name": "c", "namespace": "team"},
			"spec": map[string]any{"headCPU": headCPU, "workers": workers}}}
	}
	spec := &workv1alpha2.ResourceBindingSpec{Components: []workv1alpha2.Component{
		{Name: "head", Replicas: 1, ReplicaRequirements: &workv1alpha2.ComponentReplicaRequirements{ResourceRequest: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("2")}}},
		{Name: "worker", Replicas: 2, ReplicaRequirements: &workv1alpha2.ComponentReplicaRequirements{ResourceRequest: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("1")}}},
	}}
	target := workv1alpha2.TargetCluster{Name: "member1", Components: []workv1alpha2.ComponentReplicas{{Name: "head", Replicas: 1}, {Name: "worker", Replicas: 2}}}
	quotas := []policyv1alpha1.FederatedResourceQuota{{ObjectMeta: metav1.ObjectMeta{Namespace: "team", Name: "q"},
		Spec: policyv1alpha1.FederatedResourceQuotaSpec{Overall: corev1.ResourceList{"requests.cpu": resource.MustParse("10")}}}}
	if err := beyondQuota(in, obj("2", 2), spec, target, quotas); err != nil {
		t.Errorf("as declared: %v", err)
	}
	for name, c := range map[string]struct {
		obj  *unstructured.Unstructured
		want string
	}{
		"more workers":           {obj("2", 20), "cpu 22 (the binding declares 4)"},
		"a bigger head":          {obj("8", 2), "cpu 10 (the binding declares 4)"},
		"no components declared": {obj("2", 2), "cpu 4 (the binding declares 0)"},
	} {
		s, tg := spec, target
		if name == "no components declared" {
			s, tg = &workv1alpha2.ResourceBindingSpec{}, workv1alpha2.TargetCluster{Name: "member1", Replicas: 3}
		}
		if err := beyondQuota(in, c.obj, s, tg, quotas); err == nil || !strings.Contains(err.Error(), c.want) || !errors.Is(err, errOverride) {
			t.Errorf("%s: %v, want an override failure containing %q", name, err, c.want)
		}
	}
}
