package integration

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/util/retry"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/manager"

	clusterv1alpha1 "github.com/karmada-go/karmada/api/cluster/v1alpha1"
	policyv1alpha1 "github.com/karmada-go/karmada/api/policy/v1alpha1"
	workv1alpha1 "github.com/karmada-go/karmada/api/work/v1alpha1"
	workv1alpha2 "github.com/karmada-go/karmada/api/work/v1alpha2"
	"github.com/karmada-go/karmada/internal/anybinding"
	"github.com/karmada-go/karmada/internal/cache/templatecache"
	"github.com/karmada-go/karmada/internal/names"
	"github.com/karmada-go/karmada/internal/propagation/binding"
	"github.com/karmada-go/karmada/internal/propagation/bindingstatus"
	"github.com/karmada-go/karmada/internal/testenv"
)

// The binding controller turns a scheduled binding into one Work per
// cluster (pruned, replicas revised, overrides applied), moves Works with
// the placement, and deletes them with the binding.
func TestBindingController(t *testing.T) {
	t.Parallel()
	c := startBindingController(t, "member1", "member2", "member3")
	ctx := context.Background()
	web := deployment("shop", "web", 4)
	if err := c.Create(ctx, web); err != nil {
		t.Fatal(err)
	}
	op := &policyv1alpha1.OverridePolicy{
		ObjectMeta: metav1.ObjectMeta{Namespace: "shop", Name: "registry"},
		Spec: policyv1alpha1.OverrideSpec{OverrideRules: []policyv1alpha1.RuleWithCluster{{
			TargetCluster: &policyv1alpha1.ClusterAffinity{ClusterNames: []string{"member2"}},
			Overriders: policyv1alpha1.Overriders{LabelsOverrider: []policyv1alpha1.LabelAnnotationOverrider{{
				Operator: policyv1alpha1.OverriderOpAdd, Value: map[string]string{"region": "two"}}}},
		}}},
	}
	if err := c.Create(ctx, op); err != nil {
		t.Fatal(err)
	}
	rb := webBinding(web, 4)
	// Divided: each copy runs its share (a duplicated one runs the
	// template's replicas, see TestDuplicatedCopiesKeepTheTemplate).
	rb.Spec.Placement = &policyv1alpha1.Placement{ReplicaScheduling: &policyv1alpha1.ReplicaSchedulingStrategy{ReplicaSchedulingType: policyv1alpha1.ReplicaSchedulingTypeDivided}}
	if err := c.Create(ctx, rb); err != nil {
		t.Fatal(err)
	}
	setClusters(ctx, t, c, rb, workv1alpha2.TargetCluster{Name: "member1", Replicas: 1}, workv1alpha2.TargetCluster{Name: "member2", Replicas: 3})
	workName := names.WorkName("Deployment", "web", "shop")
	manifestOf := func(ctx context.Context, cluster string) (*unstructured.Unstructured, *workv1alpha1.Work, error) {
		w := &workv1alpha1.Work{}
		if err := c.Get(ctx, client.ObjectKey{Namespace: workv1alpha1.ExecutionNamespace(cluster), Name: workName}, w); err != nil {
			return nil, nil, err
		}
		u := &unstructured.Unstructured{}
		if len(w.Spec.Workload.Manifests) != 1 {
			return nil, w, fmt.Errorf("%d manifests", len(w.Spec.Workload.Manifests))
		}
		return u, w, u.UnmarshalJSON(w.Spec.Workload.Manifests[0].Raw)
	}
	for _, want := range []struct {
		cluster  string
		replicas int64
		label    string
	}{{"member1", 1, ""}, {"member2", 3, "two"}} {
		testenv.Eventually(t, deadline, "Work in "+want.cluster, func(ctx context.Context) error {
			m, w, err := manifestOf(ctx, want.cluster)
			if err != nil {
				return err
			}
			r, _, _ := unstructured.NestedInt64(m.Object, "spec", "replicas")
			if r != want.replicas || m.GetLabels()["region"] != want.label {
				return fmt.Errorf("replicas %d, labels %v", r, m.GetLabels())
			}
			if m.GetUID() != "" || m.GetResourceVersion() != "" || m.Object["status"] != nil {
				return fmt.Errorf("manifest not pruned: %v", m.Object["metadata"])
			}
			if w.Labels[workv1alpha2.ResourceBindingNameLabel] != rb.Name || w.Labels[workv1alpha2.ResourceBindingNamespaceLabel] != "shop" {
				return fmt.Errorf("Work labels %v", w.Labels)
			}
			if !slices.Contains(w.Finalizers, workv1alpha1.ExecutionFinalizer) {
				return fmt.Errorf("Work finalizers %v", w.Finalizers)
			}
			return nil
		})
	}
	testenv.Eventually(t, deadline, "OverridesApplied", func(ctx context.Context) error {
		got := &workv1alpha2.ResourceBinding{}
		if err := c.Get(ctx, client.ObjectKeyFromObject(rb), got); err != nil {
			return err
		}
		if !meta.IsStatusConditionTrue(got.Status.Conditions, workv1alpha2.OverridesApplied) {
			return fmt.Errorf("conditions %+v", got.Status.Conditions)
		}
		return nil
	})

	// Moving to member3 deletes member1's Work (nothing removes the
	// execution finalizer here, so it is only marked).
	setClusters(ctx, t, c, rb, workv1alpha2.TargetCluster{Name: "member2", Replicas: 3}, workv1alpha2.TargetCluster{Name: "member3", Replicas: 1})
	testenv.Eventually(t, deadline, "Work in member3, member1's deleted", func(ctx context.Context) error {
		if _, _, err := manifestOf(ctx, "member3"); err != nil {
			return err
		}
		_, w, err := manifestOf(ctx, "member1")
		if err != nil {
			return err
		}
		if w.DeletionTimestamp.IsZero() {
			return fmt.Errorf("member1's Work is not being deleted")
		}
		return nil
	})

	// Deleting the binding deletes every Work; it goes once they are gone.
	if err := c.Delete(ctx, rb); err != nil {
		t.Fatal(err)
	}
	testenv.Eventually(t, deadline, "Works gone, then the binding", func(ctx context.Context) error {
		works := &workv1alpha1.WorkList{}
		if err := c.List(ctx, works); err != nil {
			return err
		}
		left := 0
		for i := range works.Items {
			w := &works.Items[i]
			if w.Name != workName {
				continue
			}
			left++
			if w.DeletionTimestamp.IsZero() {
				return fmt.Errorf("Work %s/%s not being deleted", w.Namespace, w.Name)
			}
			// Stand in for the execution controller.
			w.Finalizers = nil
			if err := c.Update(ctx, w); err != nil && !apierrors.IsNotFound(err) {
				return err
			}
		}
		err := c.Get(ctx, client.ObjectKeyFromObject(rb), &workv1alpha2.ResourceBinding{})
		if left == 0 && apierrors.IsNotFound(err) {
			return nil
		}
		return fmt.Errorf("%d Works left, binding: %v", left, err)
	})
}

// setClusters places the binding as the scheduler would, retrying when a
// controller wrote the binding meanwhile.
func setClusters(ctx context.Context, t *testing.T, c client.Client, rb *workv1alpha2.ResourceBinding, targets ...workv1alpha2.TargetCluster) {
	t.Helper()
	err := retry.RetryOnConflict(retry.DefaultRetry, func() error {
		if err := c.Get(ctx, client.ObjectKeyFromObject(rb), rb); err != nil {
			return err
		}
		rb.Spec.Clusters = targets
		return c.Update(ctx, rb)
	})
	if err != nil {
		t.Fatal(err)
	}
}

// bindingStatus aggregates the Works' status into the binding and the
// template.
func TestBindingStatusController(t *testing.T) {
	t.Parallel()
	env := testenv.Start(t)
	c := env.Client
	env.RunManager(t, func(ctx context.Context, mgr manager.Manager) error {
		if err := anybinding.IndexWorks(ctx, mgr.GetFieldIndexer()); err != nil {
			return err
		}
		templates, err := templateStore(mgr)
		if err != nil {
			return err
		}
		return (&bindingstatus.Reconciler{Client: mgr.GetClient(), Templates: templates, Workers: 2, Settle: time.Millisecond}).SetupWithManager(mgr)
	})
	ctx := context.Background()
	createNamespace(ctx, t, c, "shop")
	web := deployment("shop", "web", 2)
	if err := c.Create(ctx, web); err != nil {
		t.Fatal(err)
	}
	rb := webBinding(web, 2, workv1alpha2.TargetCluster{Name: "member1", Replicas: 2}, workv1alpha2.TargetCluster{Name: "member2", Replicas: 2})
	if err := c.Create(ctx, rb); err != nil {
		t.Fatal(err)
	}
	b, err := anybinding.Of(rb)
	if err != nil {
		t.Fatal(err)
	}
	for _, n := range []string{"member1", "member2"} {
		createNamespace(ctx, t, c, workv1alpha1.ExecutionNamespace(n))
		w := &workv1alpha1.Work{ObjectMeta: metav1.ObjectMeta{Namespace: workv1alpha1.ExecutionNamespace(n), Name: names.WorkName("Deployment", "web", "shop"), Labels: b.WorkLabels()}}
		if err := c.Create(ctx, w); err != nil {
			t.Fatal(err)
		}
		reportWebApplied(ctx, t, c, w, 2, web.Generation)
	}
	testenv.Eventually(t, deadline, "aggregated status on the binding", func(ctx context.Context) error {
		got := &workv1alpha2.ResourceBinding{}
		if err := c.Get(ctx, client.ObjectKeyFromObject(rb), got); err != nil {
			return err
		}
		if !meta.IsStatusConditionTrue(got.Status.Conditions, workv1alpha2.FullyApplied) || len(got.Status.AggregatedStatus) != 2 {
			return fmt.Errorf("status %+v", got.Status)
		}
		for _, it := range got.Status.AggregatedStatus {
			if !it.Applied || it.Health != workv1alpha1.ResourceHealthy {
				return fmt.Errorf("item %+v", it)
			}
		}
		return nil
	})
	testenv.Eventually(t, deadline, "aggregated status on the template", func(ctx context.Context) error {
		got := &appsv1.Deployment{}
		if err := c.Get(ctx, client.ObjectKeyFromObject(web), got); err != nil {
			return err
		}
		if got.Status.AvailableReplicas != 4 || got.Status.ReadyReplicas != 4 || got.Status.ObservedGeneration != got.Generation {
			return fmt.Errorf("template status %+v", got.Status)
		}
		return nil
	})
}

// A binding whose Work an earlier version made under another name keeps
// that Work (renaming it would delete and recreate the member's copy); a
// new cluster's Work gets Karmada's name. The manifest keeps the template's
// claim and names the binding.
func TestBindingKeepsExistingWorkName(t *testing.T) {
	t.Parallel()
	c := startBindingController(t, "member1", "member2")
	ctx := context.Background()
	web := deployment("shop", "web", 2)
	web.Annotations = map[string]string{policyv1alpha1.PropagationPolicyNameAnnotation: "pp", policyv1alpha1.PropagationPolicyNamespaceAnnotation: "shop"}
	if err := c.Create(ctx, web); err != nil {
		t.Fatal(err)
	}
	rb := webBinding(web, 2, workv1alpha2.TargetCluster{Name: "member1", Replicas: 1}, workv1alpha2.TargetCluster{Name: "member2", Replicas: 1})
	rb.Labels = map[string]string{workv1alpha2.ResourceBindingPermanentIDLabel: "id-1"}
	b, err := anybinding.Of(rb)
	if err != nil {
		t.Fatal(err)
	}
	old := &workv1alpha1.Work{ObjectMeta: metav1.ObjectMeta{Namespace: workv1alpha1.ExecutionNamespace("member1"), Name: "web-deployment-0011aabb", Labels: b.WorkLabels()}}
	if err := c.Create(ctx, old); err != nil {
		t.Fatal(err)
	}
	if err := c.Create(ctx, rb); err != nil {
		t.Fatal(err)
	}
	karmadaName := names.WorkName("Deployment", "web", "shop")
	testenv.Eventually(t, deadline, "Works of both clusters", func(ctx context.Context) error {
		w1 := &workv1alpha1.Work{}
		if err := c.Get(ctx, client.ObjectKeyFromObject(old), w1); err != nil {
			return err
		}
		if len(w1.Spec.Workload.Manifests) != 1 {
			return fmt.Errorf("the existing Work holds %d manifests", len(w1.Spec.Workload.Manifests))
		}
		m := &unstructured.Unstructured{}
		if err := m.UnmarshalJSON(w1.Spec.Workload.Manifests[0].Raw); err != nil {
			return err
		}
		a := m.GetAnnotations()
		if a[policyv1alpha1.PropagationPolicyNameAnnotation] != "pp" || a[workv1alpha2.ResourceBindingNameAnnotation] != rb.Name ||
			a[workv1alpha2.ResourceBindingNamespaceAnnotation] != "shop" || m.GetLabels()[workv1alpha2.ResourceBindingPermanentIDLabel] != "id-1" {
			return fmt.Errorf("manifest labels %v annotations %v", m.GetLabels(), a)
		}
		if w1.Labels[workv1alpha2.ResourceBindingPermanentIDLabel] != "id-1" {
			return fmt.Errorf("Work labels %v", w1.Labels)
		}
		if err := c.Get(ctx, client.ObjectKey{Namespace: workv1alpha1.ExecutionNamespace("member2"), Name: karmadaName}, &workv1alpha1.Work{}); err != nil {
			return fmt.Errorf("member2's Work %s: %w", karmadaName, err)
		}
		return nil
	})
	if err := c.Get(ctx, client.ObjectKey{Namespace: workv1alpha1.ExecutionNamespace("member1"), Name: karmadaName}, &workv1alpha1.Work{}); !apierrors.IsNotFound(err) {
		t.Errorf("member1 got a second Work %s beside the existing one (err %v)", karmadaName, err)
	}
}

// startBindingController starts an API server with the binding controller,
// push-mode Clusters of the given names (labelled name=<name>) with their
// execution namespaces, and the namespace "shop".
// templateStore adds to mgr the template cache the controller manager gives
// the binding and binding status controllers.
func templateStore(mgr manager.Manager) (*templatecache.Store, error) {
	dyn, err := dynamic.NewForConfig(mgr.GetConfig())
	if err != nil {
		return nil, err
	}
	s := templatecache.New(dyn, mgr.GetRESTMapper())
	return s, mgr.Add(s)
}

// runBindingController runs the binding controller on env, as the
// controller manager wires it.
func runBindingController(t *testing.T, env *testenv.Env) {
	t.Helper()
	env.RunManager(t, func(ctx context.Context, mgr manager.Manager) error {
		if err := anybinding.IndexWorks(ctx, mgr.GetFieldIndexer()); err != nil {
			return err
		}
		templates, err := templateStore(mgr)
		if err != nil {
			return err
		}
		return (&binding.Reconciler{Client: mgr.GetClient(), Templates: templates, Workers: 2}).SetupWithManager(mgr)
	})
}

func startBindingController(t *testing.T, clusters ...string) client.Client {
	t.Helper()
	env := testenv.Start(t)
	c := env.Client
	runBindingController(t, env)
	ctx := context.Background()
	for _, n := range clusters {
		if err := c.Create(ctx, &clusterv1alpha1.Cluster{ObjectMeta: metav1.ObjectMeta{Name: n, Labels: map[string]string{"name": n}}, Spec: clusterv1alpha1.ClusterSpec{SyncMode: clusterv1alpha1.Push}}); err != nil {
			t.Fatal(err)
		}
		createNamespace(ctx, t, c, workv1alpha1.ExecutionNamespace(n))
	}
	createNamespace(ctx, t, c, "shop")
	return c
}

// An override that would change which object a manifest is (here, move it
// to kube-system) is refused: OverridesApplied turns False naming the policy
// and the field, and no Work is written until the policy is gone.
func TestBindingRefusesIdentityOverride(t *testing.T) {
	t.Parallel()
	c := startBindingController(t, "member1")
	ctx := context.Background()
	web := deployment("shop", "web", 1)
	if err := c.Create(ctx, web); err != nil {
		t.Fatal(err)
	}
	op := &policyv1alpha1.OverridePolicy{
		ObjectMeta: metav1.ObjectMeta{Namespace: "shop", Name: "move"},
		Spec: policyv1alpha1.OverrideSpec{OverrideRules: []policyv1alpha1.RuleWithCluster{{
			Overriders: policyv1alpha1.Overriders{Plaintext: []policyv1alpha1.PlaintextOverrider{{
				Path: "/metadata/namespace", Operator: policyv1alpha1.OverriderOpReplace, Value: apiextensionsv1.JSON{Raw: []byte(`"kube-system"`)}}}},
		}}},
	}
	if err := c.Create(ctx, op); err != nil {
		t.Fatal(err)
	}
	rb := webBinding(web, 1, workv1alpha2.TargetCluster{Name: "member1", Replicas: 1})
	if err := c.Create(ctx, rb); err != nil {
		t.Fatal(err)
	}
	testenv.Eventually(t, deadline, "OverridesApplied False", func(ctx context.Context) error {
		got := &workv1alpha2.ResourceBinding{}
		if err := c.Get(ctx, client.ObjectKeyFromObject(rb), got); err != nil {
			return err
		}
		cond := meta.FindStatusCondition(got.Status.Conditions, workv1alpha2.OverridesApplied)
		if cond == nil || cond.Status != metav1.ConditionFalse || !strings.Contains(cond.Message, "OverridePolicy shop/move") ||
			!strings.Contains(cond.Message, `metadata.namespace: changed from "shop" to "kube-system"`) {
			return fmt.Errorf("condition %+v", cond)
		}
		return nil
	})
	work := client.ObjectKey{Namespace: workv1alpha1.ExecutionNamespace("member1"), Name: names.WorkName("Deployment", "web", "shop")}
	if err := c.Get(ctx, work, &workv1alpha1.Work{}); !apierrors.IsNotFound(err) {
		t.Errorf("a Work was written despite the refused override (err %v)", err)
	}
	// Without the policy, the Work is written, in the template's namespace.
	if err := c.Delete(ctx, op); err != nil {
		t.Fatal(err)
	}
	testenv.Eventually(t, deadline, "the Work, in shop", func(ctx context.Context) error {
		w := &workv1alpha1.Work{}
		if err := c.Get(ctx, work, w); err != nil {
			return err
		}
		m := &unstructured.Unstructured{}
		if err := m.UnmarshalJSON(w.Spec.Workload.Manifests[0].Raw); err != nil {
			return err
		}
		if m.GetNamespace() != "shop" {
			return fmt.Errorf("manifest namespace %q", m.GetNamespace())
		}
		return nil
	})
}

// A duplicated placement's copies are the template as it is, as in
// Karmada: a Job keeps its parallelism and completions in every cluster;
// divided, each cluster runs its share of the parallelism and completes its
// share of the completions.
func TestDuplicatedCopiesKeepTheTemplate(t *testing.T) {
	t.Parallel()
	c := startBindingController(t, "member1", "member2")
	ctx := context.Background()
	for _, divide := range []bool{false, true} {
		name := "duplicated"
		placement := &policyv1alpha1.Placement{ReplicaScheduling: &policyv1alpha1.ReplicaSchedulingStrategy{ReplicaSchedulingType: policyv1alpha1.ReplicaSchedulingTypeDuplicated}}
		targets := []workv1alpha2.TargetCluster{{Name: "member1", Replicas: 4}, {Name: "member2", Replicas: 4}}
		want := map[string][2]int64{"member1": {4, 10}, "member2": {4, 10}}
		if divide {
			name = "divided"
			placement = &policyv1alpha1.Placement{ReplicaScheduling: &policyv1alpha1.ReplicaSchedulingStrategy{ReplicaSchedulingType: policyv1alpha1.ReplicaSchedulingTypeDivided}}
			targets = []workv1alpha2.TargetCluster{{Name: "member1", Replicas: 1}, {Name: "member2", Replicas: 3}}
			want = map[string][2]int64{"member1": {1, 2}, "member2": {3, 8}}
		}
		job := &batchv1.Job{ObjectMeta: metav1.ObjectMeta{Namespace: "shop", Name: name},
			Spec: batchv1.JobSpec{Parallelism: ptr.To[int32](4), Completions: ptr.To[int32](10), Template: corev1.PodTemplateSpec{
				Spec: corev1.PodSpec{RestartPolicy: corev1.RestartPolicyNever, Containers: []corev1.Container{{Name: "c", Image: "busybox"}}}}}}
		if err := c.Create(ctx, job); err != nil {
			t.Fatal(err)
		}
		rb := &workv1alpha2.ResourceBinding{
			ObjectMeta: metav1.ObjectMeta{Namespace: "shop", Name: names.BindingName("Job", name)},
			Spec: workv1alpha2.ResourceBindingSpec{
				Resource: workv1alpha2.ObjectReference{APIVersion: "batch/v1", Kind: "Job", Namespace: "shop", Name: name, UID: job.UID},
				Replicas: 4, Placement: placement, Clusters: targets,
			},
		}
		if err := c.Create(ctx, rb); err != nil {
			t.Fatal(err)
		}
		for cluster, w := range want {
			testenv.Eventually(t, deadline, name+" Job's Work in "+cluster, func(ctx context.Context) error {
				work := &workv1alpha1.Work{}
				if err := c.Get(ctx, client.ObjectKey{Namespace: workv1alpha1.ExecutionNamespace(cluster), Name: names.WorkName("Job", name, "shop")}, work); err != nil {
					return err
				}
				m := &unstructured.Unstructured{}
				if err := m.UnmarshalJSON(work.Spec.Workload.Manifests[0].Raw); err != nil {
					return err
				}
				p, _, _ := unstructured.NestedInt64(m.Object, "spec", "parallelism")
				n, _, _ := unstructured.NestedInt64(m.Object, "spec", "completions")
				if p != w[0] || n != w[1] {
					return fmt.Errorf("parallelism %d completions %d, want %d and %d", p, n, w[0], w[1])
				}
				return nil
			})
		}
	}
}
