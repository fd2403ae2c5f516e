//go:build e2e

package e2e

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/dynamic"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/yaml"

	configv1alpha1 "github.com/karmada-go/karmada/api/config/v1alpha1"
	policyv1alpha1 "github.com/karmada-go/karmada/api/policy/v1alpha1"
	workv1alpha1 "github.com/karmada-go/karmada/api/work/v1alpha1"
	workv1alpha2 "github.com/karmada-go/karmada/api/work/v1alpha2"
	"github.com/karmada-go/karmada/internal/testenv"
)

// installCRD creates one of the shipped customizations' CRD fixtures in the
// control plane and, through a ClusterPropagationPolicy, in the members;
// it waits until the members serve it and registers its clean-up (which
// waits until the members no longer have it).
func installCRD(ctx context.Context, t *testing.T, c client.Client, fixture string, members ...string) *apiextensionsv1.CustomResourceDefinition {
	t.Helper()
	data, err := os.ReadFile(filepath.Join(testenv.RepoRoot(), "internal/interpreter/thirdparty/testdata/crds", fixture))
	if err != nil {
		t.Fatal(err)
	}
	crd := &apiextensionsv1.CustomResourceDefinition{}
	if err := yaml.UnmarshalStrict(data, crd); err != nil {
		t.Fatal(err)
	}
	policy := &policyv1alpha1.ClusterPropagationPolicy{
		ObjectMeta: metav1.ObjectMeta{Name: "e2e-crd-" + crd.Spec.Names.Plural},
		Spec: policyv1alpha1.PropagationSpec{
			ResourceSelectors: []policyv1alpha1.ResourceSelector{{APIVersion: "apiextensions.k8s.io/v1", Kind: "CustomResourceDefinition", Name: crd.Name}},
			Placement:         policyv1alpha1.Placement{ClusterAffinity: &policyv1alpha1.ClusterAffinity{ClusterNames: members}},
		},
	}
	if err := c.Create(ctx, policy); err != nil {
		t.Fatal(err)
	}
	if err := c.Create(ctx, crd.DeepCopy()); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		deleteAll(t, c, policy, &apiextensionsv1.CustomResourceDefinition{ObjectMeta: metav1.ObjectMeta{Name: crd.Name}})
		for _, m := range members {
			dc := dynamicFor(t, m)
			crds := schema.GroupVersionResource{Group: "apiextensions.k8s.io", Version: "v1", Resource: "customresourcedefinitions"}
			if err := wait.PollUntilContextTimeout(context.Background(), 500*time.Millisecond, 90*time.Second, true, func(ctx context.Context) (bool, error) {
				_, err := dc.Resource(crds).Get(ctx, crd.Name, metav1.GetOptions{})
				return apierrors.IsNotFound(err), nil
			}); err != nil {
				t.Errorf("CRD %s is still in %s after clean-up", crd.Name, m)
			}
		}
	})
	gvr := schema.GroupVersionResource{Group: crd.Spec.Group, Version: crd.Spec.Versions[0].Name, Resource: crd.Spec.Names.Plural}
	for _, m := range members {
		dc := dynamicFor(t, m)
		if err := wait.PollUntilContextTimeout(ctx, 250*time.Millisecond, 60*time.Second, true, func(ctx context.Context) (bool, error) {
			_, err := dc.Resource(gvr).Namespace("default").List(ctx, metav1.ListOptions{Limit: 1})
			return err == nil, nil
		}); err != nil {
			t.Fatalf("%s does not serve %s", m, gvr)
		}
	}
	// The members' API enablements name the new resource once their
	// status is next collected: the scheduler needs that.
	if err := wait.PollUntilContextTimeout(ctx, 500*time.Millisecond, 60*time.Second, true, func(ctx context.Context) (bool, error) {
		for _, m := range members {
			cl := getCluster(ctx, t, c, m)
			found := false
			for _, e := range cl.Status.APIEnablements {
				for _, r := range e.Resources {
					found = found || (e.GroupVersion == gvr.GroupVersion().String() && r.Name == gvr.Resource)
				}
			}
			if !found {
				return false, nil
			}
		}
		return true, nil
	}); err != nil {
		t.Fatalf("the members' API enablements never listed %s", gvr)
	}
	return crd
}

func dynamicFor(t *testing.T, context string) dynamic.Interface {
	t.Helper()
	dc, err := dynamic.NewForConfig(restConfig(t, context))
	if err != nil {
		t.Fatal(err)
	}
	return dc
}

// createUntilServed creates obj, retrying while the control plane does not
// serve its kind yet (a CRD just created).
func createUntilServed(ctx context.Context, t *testing.T, c client.Client, obj *unstructured.Unstructured) {
	t.Helper()
	var last error
	if err := wait.PollUntilContextTimeout(ctx, 200*time.Millisecond, 30*time.Second, true, func(ctx context.Context) (bool, error) {
		last = c.Create(ctx, obj.DeepCopy())
		return last == nil, nil
	}); err != nil {
		t.Fatalf("creating %s %s: %v", obj.GetKind(), obj.GetName(), last)
	}
	t.Cleanup(func() {
		if err := c.Delete(context.Background(), obj.DeepCopy()); err != nil && !apierrors.IsNotFound(err) && !meta.IsNoMatchError(err) {
			t.Errorf("deleting %s %s: %v", obj.GetKind(), obj.GetName(), err)
		}
	})
}

// TestCustomizedCRDWorkload: an OpenKruise CloneSet (its CRD in the control
// plane and the members; no Kruise controller runs there, so the test sets
// the members' status as that controller would) is divided 1:2 by static
// weights through the shipped customization, and its status is aggregated
// on the template. Then a user's broken statusAggregation and
// statusReflection show on the binding (ResourceInterpreted=False naming the
// customization, the operations and, for the reflection, the cluster) while
// the template keeps its last aggregated status; deleting the customization
// brings the shipped scripts back.
func TestCustomizedCRDWorkload(t *testing.T) {
	quiet(t)
	ctx := context.Background()
	c := karmadaClient(t)
	installCRD(ctx, t, c, "apps.kruise.io-cloneset.yaml", "member1", "member2")
	gvr := schema.GroupVersionResource{Group: "apps.kruise.io", Version: "v1alpha1", Resource: "clonesets"}

	policy := &policyv1alpha1.PropagationPolicy{
		ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: "e2e-cloneset"},
		Spec: policyv1alpha1.PropagationSpec{
			ResourceSelectors: []policyv1alpha1.ResourceSelector{{APIVersion: "apps.kruise.io/v1alpha1", Kind: "CloneSet", Name: "e2e-web"}},
			Placement: policyv1alpha1.Placement{
				ClusterAffinity: &policyv1alpha1.ClusterAffinity{ClusterNames: []string{"member1", "member2"}},
				ReplicaScheduling: &policyv1alpha1.ReplicaSchedulingStrategy{
					ReplicaSchedulingType: policyv1alpha1.ReplicaSchedulingTypeDivided, ReplicaDivisionPreference: policyv1alpha1.ReplicaDivisionPreferenceWeighted,
					WeightPreference: &policyv1alpha1.ClusterPreferences{StaticWeightList: []policyv1alpha1.StaticClusterWeight{
						{TargetCluster: policyv1alpha1.ClusterAffinity{ClusterNames: []string{"member1"}}, Weight: 1},
						{TargetCluster: policyv1alpha1.ClusterAffinity{ClusterNames: []string{"member2"}}, Weight: 2},
					}},
				},
			},
		},
	}
	if err := c.Create(ctx, policy); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { deleteAll(t, c, policy) })
	cloneset := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "apps.kruise.io/v1alpha1", "kind": "CloneSet",
		"metadata": map[string]any{"name": "e2e-web", "namespace": "default"},
		"spec": map[string]any{"replicas": int64(3), "selector": map[string]any{"matchLabels": map[string]any{"app": "e2e-web"}},
			"template": map[string]any{"metadata": map[string]any{"labels": map[string]any{"app": "e2e-web"}},
				"spec": map[string]any{"containers": []any{map[string]any{"name": "web", "image": "nginx",
					"resources": map[string]any{"requests": map[string]any{"cpu": "100m"}}}}}}},
	}}
	createUntilServed(ctx, t, c, cloneset)

	// Divided 1:2: the customization's GetReplicas and ReviseReplica.
	for m, want := range map[string]int64{"member1": 1, "member2": 2} {
		dc := dynamicFor(t, m)
		var last string
		if err := wait.PollUntilContextTimeout(ctx, 250*time.Millisecond, 60*time.Second, true, func(ctx context.Context) (bool, error) {
			got, err := dc.Resource(gvr).Namespace("default").Get(ctx, "e2e-web", metav1.GetOptions{})
			if err != nil {
				last = err.Error()
				return false, nil
			}
			n, _, _ := unstructured.NestedInt64(got.Object, "spec", "replicas")
			last = fmt.Sprintf("spec.replicas %d", n)
			return n == want, nil
		}); err != nil {
			t.Fatalf("the CloneSet in %s never had %d replicas: %s", m, want, last)
		}
	}
	rb := &workv1alpha2.ResourceBinding{}
	if err := c.Get(ctx, client.ObjectKey{Namespace: "default", Name: "e2e-web-cloneset"}, rb); err != nil {
		t.Fatal(err)
	}
	if rb.Spec.Replicas != 3 || rb.Spec.ReplicaRequirements == nil || rb.Spec.ReplicaRequirements.ResourceRequest.Cpu().String() != "100m" {
		t.Errorf("binding replicas %d, requirements %+v: want 3 and 100m cpu from the customization", rb.Spec.Replicas, rb.Spec.ReplicaRequirements)
	}

	// The members report status (as Kruise's controller would).
	setStatus := func(m string, ready int64) {
		t.Helper()
		dc := dynamicFor(t, m)
		if err := wait.PollUntilContextTimeout(ctx, 250*time.Millisecond, 30*time.Second, true, func(ctx context.Context) (bool, error) {
			got, err := dc.Resource(gvr).Namespace("default").Get(ctx, "e2e-web", metav1.GetOptions{})
			if err != nil {
				return false, nil
			}
			n, _, _ := unstructured.NestedInt64(got.Object, "spec", "replicas")
			_ = unstructured.SetNestedMap(got.Object, map[string]any{"observedGeneration": got.GetGeneration(), "replicas": n, "readyReplicas": ready,
				"availableReplicas": ready, "updatedReplicas": n, "updatedReadyReplicas": ready}, "status")
			_, err = dc.Resource(gvr).Namespace("default").UpdateStatus(ctx, got, metav1.UpdateOptions{})
			return err == nil, nil
		}); err != nil {
			t.Fatalf("setting the status in %s", m)
		}
	}
	templateStatus := func() map[string]any {
		got := cloneset.DeepCopy()
		if err := c.Get(ctx, client.ObjectKeyFromObject(got), got); err != nil {
			t.Fatal(err)
		}
		s, _, _ := unstructured.NestedMap(got.Object, "status")
		return s
	}
	waitStatus := func(what string, ok func(map[string]any) bool) {
		t.Helper()
		if err := wait.PollUntilContextTimeout(ctx, 250*time.Millisecond, 60*time.Second, true, func(ctx context.Context) (bool, error) {
			return ok(templateStatus()), nil
		}); err != nil {
			t.Fatalf("the template's status never %s: %v", what, templateStatus())
		}
	}
	setStatus("member1", 1)
	setStatus("member2", 1)
	waitStatus("summed 2 ready of 3", func(s map[string]any) bool { return s["replicas"] == int64(3) && s["readyReplicas"] == int64(2) })

	// A user's broken statusAggregation takes precedence over the shipped
	// one, fails, and says so on the binding; the status stays.
	ric := &configv1alpha1.ResourceInterpreterCustomization{
		ObjectMeta: metav1.ObjectMeta{Name: "e2e-broken-cloneset-aggregation"},
		Spec: configv1alpha1.ResourceInterpreterCustomizationSpec{
			Target: configv1alpha1.CustomizationTarget{APIVersion: "apps.kruise.io/v1alpha1", Kind: "CloneSet"},
			Customizations: configv1alpha1.CustomizationRules{
				StatusAggregation: &configv1alpha1.StatusAggregation{
					LuaScript: "function AggregateStatus(desiredObj, statusItems)\n  return desiredObj.status.missing.field\nend"},
				StatusReflection: &configv1alpha1.StatusReflection{
					LuaScript: "function ReflectStatus(observedObj)\n  if observedObj.status.readyReplicas == 2 then error('cannot reflect two') end\n  return observedObj.status\nend"},
			},
		},
	}
	if err := c.Create(ctx, ric); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { deleteAll(t, c, ric) })
	setStatus("member2", 2)
	var cond *metav1.Condition
	if err := wait.PollUntilContextTimeout(ctx, 250*time.Millisecond, 60*time.Second, true, func(ctx context.Context) (bool, error) {
		if err := c.Get(ctx, client.ObjectKeyFromObject(rb), rb); err != nil {
			return false, nil
		}
		cond = meta.FindStatusCondition(rb.Status.Conditions, workv1alpha2.ResourceInterpreted)
		return cond != nil && cond.Status == metav1.ConditionFalse && strings.Contains(cond.Message, "InterpretStatus"), nil
	}); err != nil {
		t.Fatalf("the binding never showed both failures: %+v", rb.Status.Conditions)
	}
	// The aggregation fails on the template; the reflection only in member2
	// (the copy whose status it cannot reflect), reported by its Work.
	for _, want := range []string{"ResourceInterpreterCustomization/e2e-broken-cloneset-aggregation", "operation AggregateStatus:", "attempt to index",
		"cluster member2: CloneSet default/e2e-web: ResourceInterpreterCustomization/e2e-broken-cloneset-aggregation, operation InterpretStatus:", "cannot reflect two"} {
		if !strings.Contains(cond.Message, want) {
			t.Errorf("condition message %q lacks %q", cond.Message, want)
		}
	}
	if s := templateStatus(); s["readyReplicas"] != int64(2) {
		t.Errorf("the template's status changed under a failing script: %v", s)
	}
	// Fixed (deleted): the shipped script aggregates again.
	deleteAll(t, c, ric)
	waitStatus("summed 3 ready after the fix", func(s map[string]any) bool { return s["readyReplicas"] == int64(3) })
	if err := wait.PollUntilContextTimeout(ctx, 250*time.Millisecond, 30*time.Second, true, func(ctx context.Context) (bool, error) {
		if err := c.Get(ctx, client.ObjectKeyFromObject(rb), rb); err != nil {
			return false, nil
		}
		cond = meta.FindStatusCondition(rb.Status.Conditions, workv1alpha2.ResourceInterpreted)
		return cond != nil && cond.Status == metav1.ConditionTrue, nil
	}); err != nil {
		t.Errorf("the binding's condition never recovered: %+v", rb.Status.Conditions)
	}
}

// TestMultiComponentWorkloadScheduled: a FlinkDeployment's binding carries
// its two components (from the shipped componentResource), and a Divided
// placement over three members puts it whole in one, with every component's
// replicas.
func TestMultiComponentWorkloadScheduled(t *testing.T) {
	quiet(t)
	ctx := context.Background()
	c := karmadaClient(t)
	members := []string{"member1", "member2", "member3"}
	installCRD(ctx, t, c, "flink.apache.org-flinkdeployment.yaml", members...)
	policy := &policyv1alpha1.PropagationPolicy{
		ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: "e2e-flink"},
		Spec: policyv1alpha1.PropagationSpec{
			ResourceSelectors: []policyv1alpha1.ResourceSelector{{APIVersion: "flink.apache.org/v1beta1", Kind: "FlinkDeployment"}},
			Placement: policyv1alpha1.Placement{
				ClusterAffinity: &policyv1alpha1.ClusterAffinity{ClusterNames: members},
				ReplicaScheduling: &policyv1alpha1.ReplicaSchedulingStrategy{ReplicaSchedulingType: policyv1alpha1.ReplicaSchedulingTypeDivided,
					ReplicaDivisionPreference: policyv1alpha1.ReplicaDivisionPreferenceWeighted},
			},
		},
	}
	if err := c.Create(ctx, policy); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { deleteAll(t, c, policy) })
	flink := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "flink.apache.org/v1beta1", "kind": "FlinkDeployment",
		"metadata": map[string]any{"name": "e2e-wordcount", "namespace": "default"},
		"spec": map[string]any{
			"jobManager":  map[string]any{"replicas": int64(1), "resource": map[string]any{"cpu": int64(1), "memory": "1024m"}},
			"taskManager": map[string]any{"replicas": int64(2), "resource": map[string]any{"cpu": "500m", "memory": "1g"}},
		},
	}}
	createUntilServed(ctx, t, c, flink)
	rb := &workv1alpha2.ResourceBinding{}
	if err := wait.PollUntilContextTimeout(ctx, 250*time.Millisecond, 60*time.Second, true, func(ctx context.Context) (bool, error) {
		if err := c.Get(ctx, client.ObjectKey{Namespace: "default", Name: "e2e-wordcount-flinkdeployment"}, rb); err != nil {
			return false, nil
		}
		return len(rb.Spec.Clusters) > 0, nil
	}); err != nil {
		t.Fatalf("the FlinkDeployment's binding was never scheduled: %+v", rb.Status.Conditions)
	}
	if len(rb.Spec.Components) != 2 || rb.Spec.Components[0].Name != "jobmanager" || rb.Spec.Components[1].Name != "taskmanager" ||
		rb.Spec.Components[1].Replicas != 2 || rb.Spec.Components[1].ReplicaRequirements == nil ||
		rb.Spec.Components[1].ReplicaRequirements.ResourceRequest.Memory().String() != "1Gi" {
		t.Errorf("components %+v", rb.Spec.Components)
	}
	if len(rb.Spec.Clusters) != 1 || len(rb.Spec.Clusters[0].Components) != 2 || rb.Spec.Clusters[0].Components[1].Replicas != 2 {
		t.Errorf("placement %+v: want one cluster with both components", rb.Spec.Clusters)
	}
	placed := rb.Spec.Clusters[0].Name
	gvr := schema.GroupVersionResource{Group: "flink.apache.org", Version: "v1beta1", Resource: "flinkdeployments"}
	for _, m := range members {
		dc := dynamicFor(t, m)
		want := m == placed
		if err := wait.PollUntilContextTimeout(ctx, 250*time.Millisecond, 30*time.Second, true, func(ctx context.Context) (bool, error) {
			_, err := dc.Resource(gvr).Namespace("default").Get(ctx, "e2e-wordcount", metav1.GetOptions{})
			return (err == nil) == want, nil
		}); err != nil {
			t.Errorf("the FlinkDeployment in %s: present should be %v", m, want)
		}
	}
	if t.Failed() {
		reportFlink(ctx, t, c)
	}
}

// reportFlink logs, for a failure in CI, where the FlinkDeployment's way
// to its member stopped: the binding's placement and conditions, each
// member's Work and its conditions, and the controller manager's lines
// about it.
func reportFlink(ctx context.Context, t *testing.T, c client.Client) {
	t.Helper()
	rb := &workv1alpha2.ResourceBinding{}
	if err := c.Get(ctx, client.ObjectKey{Namespace: "default", Name: "e2e-wordcount-flinkdeployment"}, rb); err == nil {
		t.Logf("binding: generation %d, clusters %+v, conditions %+v", rb.Generation, rb.Spec.Clusters, rb.Status.Conditions)
	} else {
		t.Logf("binding: %v", err)
	}
	works := &workv1alpha1.WorkList{}
	if err := c.List(ctx, works); err == nil {
		for _, w := range works.Items {
			if strings.Contains(w.Name, "wordcount") {
				t.Logf("work %s/%s: generation %d, conditions %+v", w.Namespace, w.Name, w.Generation, w.Status.Conditions)
			}
		}
	}
	data, err := os.ReadFile(filepath.Join(fleet.StateDir, "logs", "karmada", "karmada-controller-manager.log"))
	if err != nil {
		t.Logf("controller manager log: %v", err)
		return
	}
	var lines []string
	for _, l := range strings.Split(string(data), "\n") {
		if strings.Contains(l, "wordcount") || strings.Contains(l, "flink") {
			lines = append(lines, l)
		}
	}
	t.Logf("the controller manager's lines about it:\n%s", tail(strings.Join(lines, "\n"), 40))
}

// TestPropagateDepsFollowTheDeployment: with propagateDeps, the ConfigMap
// and Secret a Deployment uses go to exactly its clusters, follow it when
// its placement moves, and carry their changes; a ConfigMap of another
// namespace is never propagated; nothing is left once the Deployment goes.
func TestPropagateDepsFollowTheDeployment(t *testing.T) {
	ctx := context.Background()
	c := karmadaClient(t)
	cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: "e2e-deps-settings"}, Data: map[string]string{"mode": "a"}}
	secret := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: "e2e-deps-token"}, StringData: map[string]string{"token": "t"}}
	for _, o := range []client.Object{cm, secret} {
		if err := c.Create(ctx, o); err != nil {
			t.Fatal(err)
		}
	}
	t.Cleanup(func() { deleteAll(t, c, cm, secret) })
	deploy := deploymentNamed("e2e-deps", 1)
	deploy.Spec.Template.Spec.Volumes = []corev1.Volume{{Name: "settings", VolumeSource: corev1.VolumeSource{ConfigMap: &corev1.ConfigMapVolumeSource{LocalObjectReference: corev1.LocalObjectReference{Name: cm.Name}}}}}
	deploy.Spec.Template.Spec.Containers[0].EnvFrom = []corev1.EnvFromSource{{SecretRef: &corev1.SecretEnvSource{LocalObjectReference: corev1.LocalObjectReference{Name: secret.Name}}}}
	policy := &policyv1alpha1.PropagationPolicy{
		ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: "e2e-deps"},
		Spec: policyv1alpha1.PropagationSpec{
			ResourceSelectors: []policyv1alpha1.ResourceSelector{{APIVersion: "apps/v1", Kind: "Deployment", Name: deploy.Name}},
			Placement:         policyv1alpha1.Placement{ClusterAffinity: &policyv1alpha1.ClusterAffinity{ClusterNames: []string{"member1"}}},
			PropagateDeps:     true,
		},
	}
	if err := c.Create(ctx, policy); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { deleteAll(t, c, policy) })
	if err := c.Create(ctx, deploy); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		deleteAll(t, c, &appsv1.Deployment{ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: deploy.Name}})
	})

	where := func(member string, present bool, data string) {
		t.Helper()
		kc := kube(t, member)
		var last string
		if err := wait.PollUntilContextTimeout(ctx, 250*time.Millisecond, 60*time.Second, true, func(ctx context.Context) (bool, error) {
			gotCM, errCM := kc.CoreV1().ConfigMaps("default").Get(ctx, cm.Name, metav1.GetOptions{})
			_, errS := kc.CoreV1().Secrets("default").Get(ctx, secret.Name, metav1.GetOptions{})
			last = fmt.Sprintf("configmap: %v, secret: %v", errCM, errS)
			if !present {
				return apierrors.IsNotFound(errCM) && apierrors.IsNotFound(errS), nil
			}
			return errCM == nil && errS == nil && gotCM.Data["mode"] == data, nil
		}); err != nil {
			t.Fatalf("in %s the dependencies should be present=%v (mode %q): %s", member, present, data, last)
		}
	}
	where("member1", true, "a")
	where("member2", false, "")
	a := &workv1alpha2.ResourceBinding{}
	if err := c.Get(ctx, client.ObjectKey{Namespace: "default", Name: "e2e-deps-settings-configmap"}, a); err != nil {
		t.Fatal(err)
	}
	if len(a.Spec.RequiredBy) != 1 || a.Spec.RequiredBy[0].Name != "e2e-deps-deployment" || len(a.Spec.RequiredBy[0].Clusters) != 1 || a.Spec.RequiredBy[0].Clusters[0].Name != "member1" {
		t.Errorf("attached binding's requiredBy %+v", a.Spec.RequiredBy)
	}

	// The placement moves: the dependencies move with the Deployment.
	if err := c.Get(ctx, client.ObjectKeyFromObject(policy), policy); err != nil {
		t.Fatal(err)
	}
	policy.Spec.Placement.ClusterAffinity.ClusterNames = []string{"member2"}
	if err := c.Update(ctx, policy); err != nil {
		t.Fatal(err)
	}
	where("member2", true, "a")
	where("member1", false, "")

	// A change to the ConfigMap reaches the copy.
	if err := c.Get(ctx, client.ObjectKeyFromObject(cm), cm); err != nil {
		t.Fatal(err)
	}
	cm.Data["mode"] = "b"
	if err := c.Update(ctx, cm); err != nil {
		t.Fatal(err)
	}
	where("member2", true, "b")

	// The Deployment goes: so do its dependencies' attached bindings and
	// copies.
	deleteAll(t, c, &appsv1.Deployment{ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: deploy.Name}})
	where("member2", false, "")
	if err := wait.PollUntilContextTimeout(ctx, 250*time.Millisecond, 30*time.Second, true, func(ctx context.Context) (bool, error) {
		err := c.Get(ctx, client.ObjectKey{Namespace: "default", Name: "e2e-deps-settings-configmap"}, a)
		return apierrors.IsNotFound(err), nil
	}); err != nil {
		t.Errorf("the attached binding outlived the Deployment")
	}
	// The control plane's own ConfigMap is untouched.
	if err := c.Get(ctx, client.ObjectKeyFromObject(cm), cm); err != nil || cm.Data["mode"] != "b" {
		t.Errorf("the control plane's ConfigMap: %v %v", cm.Data, err)
	}
}
