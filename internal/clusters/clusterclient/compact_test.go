package clusterclient

import (
	"context"
	"sync"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/wait"
	dynamicfake "k8s.io/client-go/dynamic/fake"

	workv1alpha1 "github.com/karmada-go/karmada/api/work/v1alpha1"
)

func managedDeployment(ns, name, work string, replicas int64) *unstructured.Unstructured {
	u := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "apps/v1", "kind": "Deployment",
		"metadata": map[string]any{
			"name": name, "namespace": ns,
			"labels": map[string]any{workv1alpha1.ManagedLabel: "true", "app": name},
			"annotations": map[string]any{
				workv1alpha1.WorkNamespaceAnnotation: "karmada-es-m1",
				workv1alpha1.WorkNameAnnotation:      work,
			},
			"managedFields": []any{map[string]any{"manager": "karmada", "operation": "Apply"}},
		},
		"spec":   map[string]any{"replicas": replicas},
		"status": map[string]any{"readyReplicas": replicas},
	}}
	return u
}

// The managed-object cache keeps copies as compact JSON; its lister must
// still answer as a dynamic informer's would: whole objects without
// managedFields, NotFound for what is not there, namespaces and selectors
// honoured, and every read a fresh object the caller may change.
func TestManagedCacheHandsOutWholeCopies(t *testing.T) {
	deploy := schema.GroupVersionResource{Group: "apps", Version: "v1", Resource: "deployments"}
	dc := dynamicfake.NewSimpleDynamicClientWithCustomListKinds(runtime.NewScheme(), map[schema.GroupVersionResource]string{deploy: "DeploymentList"},
		managedDeployment("a", "web", "web-work", 3), managedDeployment("b", "web", "other-work", 1))
	m := &Member{Name: "m1", Dynamic: dc, stop: make(chan struct{})}
	defer m.close()

	var mu sync.Mutex
	changed := map[types.NamespacedName]int{}
	onChange := func(w types.NamespacedName) { mu.Lock(); changed[w]++; mu.Unlock() }
	work := types.NamespacedName{Namespace: "karmada-es-m1", Name: "web-work"}
	lister, _ := m.Managed(deploy, work, onChange)
	if !m.WaitManaged(context.Background(), deploy) {
		t.Fatal("informer never synced")
	}

	got, err := lister.ByNamespace("a").Get("web")
	if err != nil {
		t.Fatal(err)
	}
	u := got.(*unstructured.Unstructured)
	if r, _, _ := unstructured.NestedInt64(u.Object, "spec", "replicas"); r != 3 {
		t.Fatalf("spec.replicas %d, want 3 (object %v)", r, u.Object)
	}
	if r, _, _ := unstructured.NestedInt64(u.Object, "status", "readyReplicas"); r != 3 {
		t.Fatalf("status.readyReplicas %d, want 3", r)
	}
	if u.GetManagedFields() != nil {
		t.Fatalf("managedFields kept: %v", u.GetManagedFields())
	}
	// Changing what a read returned does not change the cache.
	u.Object["spec"] = "scribbled"
	again, _ := lister.ByNamespace("a").Get("web")
	if r, _, _ := unstructured.NestedInt64(again.(*unstructured.Unstructured).Object, "spec", "replicas"); r != 3 {
		t.Fatal("a caller's change to a read object reached the cache")
	}

	if _, err := lister.ByNamespace("a").Get("missing"); !apierrors.IsNotFound(err) {
		t.Fatalf("missing copy: %v, want NotFound", err)
	}
	if all, err := lister.List(labels.Everything()); err != nil || len(all) != 2 {
		t.Fatalf("List: %d objects, %v; want 2", len(all), err)
	}
	if inB, err := lister.ByNamespace("b").List(labels.Everything()); err != nil || len(inB) != 1 {
		t.Fatalf("List in b: %d objects, %v; want 1", len(inB), err)
	}
	if none, _ := lister.List(labels.SelectorFromSet(labels.Set{"app": "db"})); len(none) != 0 {
		t.Fatalf("List app=db: %d objects, want 0", len(none))
	}

	// An update in the member reaches the lister and names its Work.
	upd := managedDeployment("a", "web", "web-work", 5)
	if _, err := dc.Resource(deploy).Namespace("a").Update(context.Background(), upd, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	if err := wait.PollUntilContextTimeout(context.Background(), 10*time.Millisecond, 10*time.Second, true, func(context.Context) (bool, error) {
		got, err := lister.ByNamespace("a").Get("web")
		if err != nil {
			return false, err
		}
		r, _, _ := unstructured.NestedInt64(got.(*unstructured.Unstructured).Object, "spec", "replicas")
		mu.Lock()
		defer mu.Unlock()
		return r == 5 && changed[work] >= 2, nil
	}); err != nil {
		t.Fatalf("update not seen (changes recorded for the Work: %v): %v", changed, err)
	}
}

// A pod trimmed for the cache asks for what the whole pod asked: containers,
// the larger of the init container and the rest, and overhead.
func TestTrimmedPodAsksForTheSame(t *testing.T) {
	q := resource.MustParse
	always := corev1.ContainerRestartPolicyAlways
	pod := &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: "p", Namespace: "n", ManagedFields: []metav1.ManagedFieldsEntry{{Manager: "x"}}},
		Spec: corev1.PodSpec{
			NodeName: "node1",
			Containers: []corev1.Container{
				{Name: "a", Resources: corev1.ResourceRequirements{Requests: corev1.ResourceList{corev1.ResourceCPU: q("100m")}, Limits: corev1.ResourceList{corev1.ResourceCPU: q("1")}}},
				{Name: "b", Resources: corev1.ResourceRequirements{Requests: corev1.ResourceList{corev1.ResourceCPU: q("200m"), corev1.ResourceMemory: q("64Mi")}}},
			},
			InitContainers: []corev1.Container{
				{Name: "side", RestartPolicy: &always, Resources: corev1.ResourceRequirements{Requests: corev1.ResourceList{corev1.ResourceCPU: q("50m")}}},
				{Name: "init", Resources: corev1.ResourceRequirements{Requests: corev1.ResourceList{corev1.ResourceMemory: q("1Gi")}}},
			},
			Overhead: corev1.ResourceList{corev1.ResourceCPU: q("10m")},
		},
		Status: corev1.PodStatus{Phase: corev1.PodRunning},
	}
	out, err := trimForSummary(pod)
	if err != nil {
		t.Fatal(err)
	}
	u := out.(*PodUsage)
	// containers 300m + sidecar 50m + overhead 10m; memory: the init
	// container's 1Gi beside the 50m sidecar beats the containers' 64Mi.
	want := corev1.ResourceList{corev1.ResourceCPU: q("360m"), corev1.ResourceMemory: q("1Gi")}
	if len(u.Requests) != len(want) {
		t.Fatalf("usage asks for %v, want %v", u.Requests, want)
	}
	for name, w := range want {
		if g := u.Requests[name]; g.Cmp(w) != 0 {
			t.Fatalf("%s: %s, want %s", name, g.String(), w.String())
		}
	}
	if u.NodeName != "node1" || u.Phase != corev1.PodRunning || u.Name != "p" || u.Namespace != "n" {
		t.Fatalf("usage lost the pod's node, phase or name: %+v", u)
	}
	// A relist hands stored objects back: they stay as they are.
	if again, _ := trimForSummary(u); again != u {
		t.Fatal("a stored usage was transformed again")
	}
	cp := u.DeepCopyObject().(*PodUsage)
	cp.Requests[corev1.ResourceCPU] = q("5")
	if g := u.Requests[corev1.ResourceCPU]; g.Cmp(q("360m")) != 0 {
		t.Fatal("DeepCopyObject shares the requests")
	}
}
