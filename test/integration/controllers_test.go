package integration

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/util/retry"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/manager"
	ctrlmetrics "sigs.k8s.io/controller-runtime/pkg/metrics"

	clusterv1alpha1 "github.com/karmada-go/karmada/api/cluster/v1alpha1"
	policyv1alpha1 "github.com/karmada-go/karmada/api/policy/v1alpha1"
	workv1alpha1 "github.com/karmada-go/karmada/api/work/v1alpha1"
	workv1alpha2 "github.com/karmada-go/karmada/api/work/v1alpha2"
	"github.com/karmada-go/karmada/internal/anybinding"
	"github.com/karmada-go/karmada/internal/cache/templatecache"
	"github.com/karmada-go/karmada/internal/clusters/cluster"
	"github.com/karmada-go/karmada/internal/names"
	"github.com/karmada-go/karmada/internal/propagation/binding"
	"github.com/karmada-go/karmada/internal/propagation/bindingstatus"
	"github.com/karmada-go/karmada/internal/propagation/detector"
	"github.com/karmada-go/karmada/internal/propagation/namespace"
	"github.com/karmada-go/karmada/internal/testenv"
)

// deadline bounds every wait of these tests: generous, because the
// package's tests run in parallel, each with its own API servers, beside the
// other packages' tests on a 2-core machine (a wait that passes in a second
// alone took over 30 s once under that load).
const deadline = 60 * time.Second

// setReady writes the Cluster's Ready condition, as clusterStatus would
// (again on a conflict with a controller writing the Cluster).
func setReady(ctx context.Context, t *testing.T, c client.Client, name string, status metav1.ConditionStatus) {
	t.Helper()
	err := retry.RetryOnConflict(retry.DefaultRetry, func() error {
		cl := &clusterv1alpha1.Cluster{}
		if err := c.Get(ctx, client.ObjectKey{Name: name}, cl); err != nil {
			return err
		}
		meta.SetStatusCondition(&cl.Status.Conditions, metav1.Condition{Type: clusterv1alpha1.ClusterConditionReady, Status: status, Reason: "Test", Message: "set by the test"})
		cl.Status.APIEnablements = []clusterv1alpha1.APIEnablement{{GroupVersion: "apps/v1", Resources: []clusterv1alpha1.APIResource{{Name: "deployments", Kind: "Deployment"}}}}
		return c.Status().Update(ctx, cl)
	})
	if err != nil {
		t.Fatal(err)
	}
}

func deployment(ns, name string, replicas int32) *appsv1.Deployment {
	labels := map[string]string{"app": name}
	return &appsv1.Deployment{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name, Labels: labels},
		Spec: appsv1.DeploymentSpec{
			Replicas: ptr.To(replicas),
			Selector: &metav1.LabelSelector{MatchLabels: labels},
			Template: corev1.PodTemplateSpec{
				ObjectMeta: metav1.ObjectMeta{Labels: labels},
				Spec:       corev1.PodSpec{Containers: []corev1.Container{{Name: "c", Image: "nginx"}}},
			},
		},
	}
}

// editDeployment changes the Deployment key with edit, again on conflicts.
func editDeployment(ctx context.Context, t *testing.T, c client.Client, key client.ObjectKey, edit func(*appsv1.Deployment)) {
	t.Helper()
	if err := retry.RetryOnConflict(retry.DefaultRetry, func() error {
		d := &appsv1.Deployment{}
		if err := c.Get(ctx, key, d); err != nil {
			return err
		}
		edit(d)
		return c.Update(ctx, d)
	}); err != nil {
		t.Fatal(err)
	}
}

// createDeploymentPolicy creates the PropagationPolicy ns/name placing the
// Deployment named deployment (every Deployment of ns when "") on cluster.
func createDeploymentPolicy(ctx context.Context, t *testing.T, c client.Client, ns, name, deployment, cluster string) *policyv1alpha1.PropagationPolicy {
	t.Helper()
	pp := &policyv1alpha1.PropagationPolicy{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name},
		Spec: policyv1alpha1.PropagationSpec{
			ResourceSelectors: []policyv1alpha1.ResourceSelector{{APIVersion: "apps/v1", Kind: "Deployment", Name: deployment}},
			Placement:         policyv1alpha1.Placement{ClusterAffinity: &policyv1alpha1.ClusterAffinity{ClusterNames: []string{cluster}}},
		},
	}
	if err := c.Create(ctx, pp); err != nil {
		t.Fatal(err)
	}
	return pp
}

func createNamespace(ctx context.Context, t *testing.T, c client.Client, name string) {
	t.Helper()
	if err := c.Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: name}}); err != nil && !apierrors.IsAlreadyExists(err) {
		t.Fatal(err)
	}
}

// The detector claims a template for the policy that selects it, writes the
// binding from both, and releases the claim when the policy goes.
func TestDetector(t *testing.T) {
	t.Parallel()
	env := testenv.Start(t)
	c := env.Client
	env.RunManager(t, func(ctx context.Context, mgr manager.Manager) error {
		return (&detector.Detector{Client: mgr.GetClient(), Config: mgr.GetConfig(), Workers: 2, RediscoverEvery: time.Second}).SetupWithManager(ctx, mgr)
	})
	ctx := context.Background()
	createNamespace(ctx, t, c, "shop")
	pp := createDeploymentPolicy(ctx, t, c, "shop", "web", "web", "member1")
	web := deployment("shop", "web", 3)
	web.Spec.Template.Spec.Containers[0].Resources.Requests = corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("250m")}
	if err := c.Create(ctx, web); err != nil {
		t.Fatal(err)
	}
	other := deployment("shop", "other", 1)
	if err := c.Create(ctx, other); err != nil {
		t.Fatal(err)
	}

	rb := &workv1alpha2.ResourceBinding{}
	key := client.ObjectKey{Namespace: "shop", Name: names.BindingName("Deployment", "web")}
	testenv.Eventually(t, deadline, "binding of shop/web", func(ctx context.Context) error {
		return c.Get(ctx, key, rb)
	})
	if rb.Spec.Replicas != 3 || rb.Spec.Resource.Name != "web" || rb.Spec.Resource.UID != web.UID {
		t.Errorf("binding spec: replicas %d, resource %+v", rb.Spec.Replicas, rb.Spec.Resource)
	}
	if q := rb.Spec.ReplicaRequirements.ResourceRequest[corev1.ResourceCPU]; q.String() != "250m" {
		t.Errorf("per-replica cpu %s, want 250m", q.String())
	}
	if rb.Spec.Placement == nil || rb.Spec.Placement.ClusterAffinity == nil || !slices.Equal(rb.Spec.Placement.ClusterAffinity.ClusterNames, []string{"member1"}) {
		t.Errorf("binding placement %+v, want the policy's", rb.Spec.Placement)
	}
	if !slices.Contains(rb.Finalizers, workv1alpha2.BindingControllerFinalizer) {
		t.Errorf("binding finalizers %v: created without the binding controller's", rb.Finalizers)
	}
	if len(rb.OwnerReferences) != 1 || rb.OwnerReferences[0].UID != web.UID {
		t.Errorf("binding owners %+v, want the template", rb.OwnerReferences)
	}
	got := &appsv1.Deployment{}
	testenv.Eventually(t, deadline, "claim on the template", func(ctx context.Context) error {
		if err := c.Get(ctx, client.ObjectKeyFromObject(web), got); err != nil {
			return err
		}
		a := got.Annotations
		if a[policyv1alpha1.PropagationPolicyNameAnnotation] != "web" || a[policyv1alpha1.PropagationPolicyNamespaceAnnotation] != "shop" ||
			got.Labels[policyv1alpha1.PropagationPolicyPermanentIDLabel] == "" {
			return fmt.Errorf("template labels %v, annotations %v", got.Labels, a)
		}
		return nil
	})
	if rb.Labels[policyv1alpha1.PropagationPolicyPermanentIDLabel] != got.Labels[policyv1alpha1.PropagationPolicyPermanentIDLabel] {
		t.Errorf("binding's permanent id %q, template's %q", rb.Labels[policyv1alpha1.PropagationPolicyPermanentIDLabel], got.Labels[policyv1alpha1.PropagationPolicyPermanentIDLabel])
	}
	// A template no policy selects gets no binding and no claim.
	if err := c.Get(ctx, client.ObjectKey{Namespace: "shop", Name: names.BindingName("Deployment", "other")}, &workv1alpha2.ResourceBinding{}); !apierrors.IsNotFound(err) {
		t.Errorf("binding of the unselected template: %v, want NotFound", err)
	}

	// The spec follows the template.
	editDeployment(ctx, t, c, client.ObjectKeyFromObject(web), func(d *appsv1.Deployment) { d.Spec.Replicas = ptr.To[int32](5) })
	testenv.Eventually(t, deadline, "binding replicas follow the template", func(ctx context.Context) error {
		if err := c.Get(ctx, key, rb); err != nil {
			return err
		}
		if rb.Spec.Replicas != 5 {
			return fmt.Errorf("replicas %d", rb.Spec.Replicas)
		}
		return nil
	})

	// Deleting the policy releases the template; the binding stays.
	if err := c.Delete(ctx, pp); err != nil {
		t.Fatal(err)
	}
	testenv.Eventually(t, deadline, "claim released", func(ctx context.Context) error {
		if err := c.Get(ctx, client.ObjectKeyFromObject(web), got); err != nil {
			return err
		}
		if got.Annotations[policyv1alpha1.PropagationPolicyNameAnnotation] != "" {
			return fmt.Errorf("annotations %v", got.Annotations)
		}
		return nil
	})
	if err := c.Get(ctx, key, rb); err != nil {
		t.Errorf("the binding went with the policy: %v", err)
	}
	// The detector's workers are a controller-runtime controller's: its
	// reconciles are counted as every controller's are.
	if n := reconcileTotal(t, detector.ControllerName); n == 0 {
		t.Errorf("controller_runtime_reconcile_total{controller=%q} is 0 after the detector's reconciles", detector.ControllerName)
	}
}

// reconcileTotal sums controller-runtime's count of a controller's
// reconciles, every result, in this process.
func reconcileTotal(t *testing.T, controller string) float64 {
	t.Helper()
	families, err := ctrlmetrics.Registry.Gather()
	if err != nil {
		t.Fatal(err)
	}
	var n float64
	for _, f := range families {
		if f.GetName() != "controller_runtime_reconcile_total" {
			continue
		}
		for _, m := range f.GetMetric() {
			for _, l := range m.GetLabel() {
				if l.GetName() == "controller" && l.GetValue() == controller {
					n += m.GetCounter().GetValue()
				}
			}
		}
	}
	return n
}

// getCounter counts the GETs of one object's path through a client.
type getCounter struct {
	next http.RoundTripper
	path string
	n    atomic.Int64
}

func (g *getCounter) RoundTrip(req *http.Request) (*http.Response, error) {
	if req.Method == http.MethodGet && req.URL.Path == g.path {
		g.n.Add(1)
	}
	return g.next.RoundTrip(req)
}

// With the template cache, the detector reads an already claimed template
// from it rather than from the API server (a restart goes through every
// template that way), and still writes the binding from the template's
// current version.
func TestDetectorReadsClaimedTemplatesFromTheCache(t *testing.T) {
	t.Parallel()
	env := testenv.Start(t)
	c := env.Client
	gets := &getCounter{path: "/apis/apps/v1/namespaces/shop/deployments/web"}
	var store *templatecache.Store
	env.RunManager(t, func(ctx context.Context, mgr manager.Manager) error {
		var err error
		if store, err = templateStore(mgr); err != nil {
			return err
		}
		cfg := rest.CopyConfig(mgr.GetConfig())
		cfg.Wrap(func(rt http.RoundTripper) http.RoundTripper { gets.next = rt; return gets })
		return (&detector.Detector{Client: mgr.GetClient(), Config: cfg, Workers: 2, RediscoverEvery: time.Second, Templates: store}).SetupWithManager(ctx, mgr)
	})
	ctx := context.Background()
	createNamespace(ctx, t, c, "shop")
	pp := createDeploymentPolicy(ctx, t, c, "shop", "web", "web", "member1")
	web := deployment("shop", "web", 3)
	if err := c.Create(ctx, web); err != nil {
		t.Fatal(err)
	}
	rb := &workv1alpha2.ResourceBinding{}
	key := client.ObjectKey{Namespace: "shop", Name: names.BindingName("Deployment", "web")}
	bindingHas := func(what string, cluster string, replicas int32) {
		t.Helper()
		testenv.Eventually(t, deadline, what, func(ctx context.Context) error {
			if err := c.Get(ctx, key, rb); err != nil {
				return err
			}
			if p := rb.Spec.Placement; p == nil || p.ClusterAffinity == nil || !slices.Equal(p.ClusterAffinity.ClusterNames, []string{cluster}) || rb.Spec.Replicas != replicas {
				return fmt.Errorf("placement %+v, replicas %d; want %s and %d", rb.Spec.Placement, rb.Spec.Replicas, cluster, replicas)
			}
			return nil
		})
	}
	bindingHas("the binding", "member1", 3)
	// The binding controller's reads fill the cache in a controller
	// manager; here the test's.
	testenv.Eventually(t, deadline, "the template in the cache", func(ctx context.Context) error {
		u := &unstructured.Unstructured{}
		u.SetGroupVersionKind(appsv1.SchemeGroupVersion.WithKind("Deployment"))
		return store.Get(ctx, client.ObjectKeyFromObject(web), u)
	})

	// A policy change makes the detector write every binding of the
	// policy again from the whole template: the claimed template comes from
	// the cache, which holds its current version.
	before := gets.n.Load()
	if err := retry.RetryOnConflict(retry.DefaultRetry, func() error {
		if err := c.Get(ctx, client.ObjectKeyFromObject(pp), pp); err != nil {
			return err
		}
		pp.Spec.Placement.ClusterAffinity.ClusterNames = []string{"member2"}
		return c.Update(ctx, pp)
	}); err != nil {
		t.Fatal(err)
	}
	bindingHas("the binding's new placement", "member2", 3)
	if n := gets.n.Load() - before; n != 0 {
		t.Errorf("the detector read the claimed template from the API server %d times, want 0 (the cache has it)", n)
	}

	// The template's own change still reaches the binding.
	editDeployment(ctx, t, c, client.ObjectKeyFromObject(web), func(d *appsv1.Deployment) { d.Spec.Replicas = ptr.To[int32](5) })
	bindingHas("the binding's replicas follow the template", "member2", 5)
}

// A restarted detector goes through every template: a binding whose
// template changed only in status (the binding status controller's writes)
// is not written again, one whose template changed otherwise is.
func TestDetectorRestartWritesOnlyChangedBindings(t *testing.T) {
	t.Parallel()
	env := testenv.Start(t)
	c := env.Client
	run := func() func() {
		return env.RunManager(t, func(ctx context.Context, mgr manager.Manager) error {
			store, err := templateStore(mgr)
			if err != nil {
				return err
			}
			return (&detector.Detector{Client: mgr.GetClient(), Config: mgr.GetConfig(), Workers: 2, RediscoverEvery: time.Second, Templates: store}).SetupWithManager(ctx, mgr)
		})
	}
	stop := run()
	ctx := context.Background()
	createNamespace(ctx, t, c, "shop")
	createDeploymentPolicy(ctx, t, c, "shop", "all", "", "member1")
	bindingOf := func(ctx context.Context, name string) (*workv1alpha2.ResourceBinding, error) {
		rb := &workv1alpha2.ResourceBinding{}
		return rb, c.Get(ctx, client.ObjectKey{Namespace: "shop", Name: names.BindingName("Deployment", name)}, rb)
	}
	// current waits until the binding records the template's resourceVersion.
	current := func(what, name string) *workv1alpha2.ResourceBinding {
		t.Helper()
		var rb *workv1alpha2.ResourceBinding
		testenv.Eventually(t, deadline, what, func(ctx context.Context) error {
			d := &appsv1.Deployment{}
			if err := c.Get(ctx, client.ObjectKey{Namespace: "shop", Name: name}, d); err != nil {
				return err
			}
			var err error
			if rb, err = bindingOf(ctx, name); err != nil {
				return err
			}
			if rb.Spec.Resource.ResourceVersion != d.ResourceVersion || rb.Annotations[workv1alpha2.TemplateHashAnnotation] == "" {
				return fmt.Errorf("binding records resourceVersion %s and digest %q, the template is at %s",
					rb.Spec.Resource.ResourceVersion, rb.Annotations[workv1alpha2.TemplateHashAnnotation], d.ResourceVersion)
			}
			return nil
		})
		return rb
	}
	for _, name := range []string{"status-only", "annotated"} {
		if err := c.Create(ctx, deployment("shop", name, 1)); err != nil {
			t.Fatal(err)
		}
	}
	before := current("the first binding", "status-only")
	current("the second binding", "annotated")
	stop()

	// While the detector is down: one template gets a status, the other an
	// annotation.
	d := &appsv1.Deployment{}
	if err := retry.RetryOnConflict(retry.DefaultRetry, func() error {
		if err := c.Get(ctx, client.ObjectKey{Namespace: "shop", Name: "status-only"}, d); err != nil {
			return err
		}
		d.Status.Replicas, d.Status.ObservedGeneration = 1, d.Generation
		return c.Status().Update(ctx, d)
	}); err != nil {
		t.Fatal(err)
	}
	if d.ResourceVersion == before.Spec.Resource.ResourceVersion {
		t.Fatal("the status write did not move the template's resourceVersion")
	}
	editDeployment(ctx, t, c, client.ObjectKey{Namespace: "shop", Name: "annotated"}, func(d *appsv1.Deployment) {
		d.Annotations = map[string]string{"note": "changed while the detector was down"}
	})

	run()
	current("the changed template's binding after the restart", "annotated")
	testenv.Consistently(t, 3*time.Second, "the binding of the template whose status alone changed is not written", func(ctx context.Context) error {
		rb, err := bindingOf(ctx, "status-only")
		if err != nil {
			return err
		}
		if rb.ResourceVersion != before.ResourceVersion {
			return fmt.Errorf("written again: spec.resource.resourceVersion %s (was %s)", rb.Spec.Resource.ResourceVersion, before.Spec.Resource.ResourceVersion)
		}
		return nil
	})
}

// The cluster controller gives each Cluster its execution namespace and
// readiness taints, and removes its Works and namespace before it goes; the
// namespace controller propagates user namespaces as Works.
func TestClusterAndNamespaceControllers(t *testing.T) {
	t.Parallel()
	env := testenv.Start(t)
	c := env.Client
	env.RunManager(t, func(ctx context.Context, mgr manager.Manager) error {
		if err := (&cluster.Reconciler{Client: mgr.GetClient(), Workers: 2}).SetupWithManager(mgr); err != nil {
			return err
		}
		return (&namespace.Reconciler{Client: mgr.GetClient(), Workers: 2}).SetupWithManager(mgr)
	})
	ctx := context.Background()
	for _, n := range []string{"member1", "member2"} {
		if err := c.Create(ctx, &clusterv1alpha1.Cluster{ObjectMeta: metav1.ObjectMeta{Name: n}, Spec: clusterv1alpha1.ClusterSpec{SyncMode: clusterv1alpha1.Push}}); err != nil {
			t.Fatal(err)
		}
	}
	for _, n := range []string{"member1", "member2"} {
		testenv.Eventually(t, deadline, "execution namespace of "+n, func(ctx context.Context) error {
			return c.Get(ctx, client.ObjectKey{Name: workv1alpha1.ExecutionNamespace(n)}, &corev1.Namespace{})
		})
	}
	cl := &clusterv1alpha1.Cluster{}
	if err := c.Get(ctx, client.ObjectKey{Name: "member1"}, cl); err != nil || !slices.Contains(cl.Finalizers, clusterv1alpha1.ClusterControllerFinalizer) {
		t.Fatalf("member1 finalizers %v (%v)", cl.Finalizers, err)
	}

	taintKeys := func(name string) ([]string, error) {
		cl := &clusterv1alpha1.Cluster{}
		if err := c.Get(ctx, client.ObjectKey{Name: name}, cl); err != nil {
			return nil, err
		}
		var keys []string
		for _, t := range cl.Spec.Taints {
			keys = append(keys, t.Key+":"+string(t.Effect))
		}
		return keys, nil
	}
	setReady(ctx, t, c, "member1", metav1.ConditionFalse)
	testenv.Eventually(t, deadline, "not-ready taint", func(context.Context) error {
		keys, err := taintKeys("member1")
		if err == nil && !slices.Equal(keys, []string{clusterv1alpha1.TaintClusterNotReady + ":NoSchedule"}) {
			err = fmt.Errorf("taints %v", keys)
		}
		return err
	})
	setReady(ctx, t, c, "member1", metav1.ConditionTrue)
	testenv.Eventually(t, deadline, "taint removed", func(context.Context) error {
		keys, err := taintKeys("member1")
		if err == nil && len(keys) != 0 {
			err = fmt.Errorf("taints %v", keys)
		}
		return err
	})

	// Namespaces: a user's becomes a Work in every execution namespace;
	// default, kube-* and opted-out ones do not.
	createNamespace(ctx, t, c, "team-a")
	if err := c.Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "team-b", Labels: map[string]string{policyv1alpha1.NamespaceSkipAutoPropagationLabel: "true"}}}); err != nil {
		t.Fatal(err)
	}
	createNamespace(ctx, t, c, "kube-extra")
	for _, n := range []string{"member1", "member2"} {
		testenv.Eventually(t, deadline, "namespace Work in "+n, func(ctx context.Context) error {
			w := &workv1alpha1.Work{}
			if err := c.Get(ctx, client.ObjectKey{Namespace: workv1alpha1.ExecutionNamespace(n), Name: names.NamespaceWorkName("team-a")}, w); err != nil {
				return err
			}
			if len(w.Spec.Workload.Manifests) != 1 || !strings.Contains(string(w.Spec.Workload.Manifests[0].Raw), `"name":"team-a"`) {
				return fmt.Errorf("manifests %s", w.Spec.Workload.Manifests)
			}
			return nil
		})
	}
	works := &workv1alpha1.WorkList{}
	if err := c.List(ctx, works, client.HasLabels{workv1alpha1.NamespaceWorkLabel}); err != nil {
		t.Fatal(err)
	}
	for _, w := range works.Items {
		if n := w.Labels[workv1alpha1.NamespaceWorkLabel]; n != "team-a" {
			t.Errorf("namespace %s was propagated (Work %s/%s)", n, w.Namespace, w.Name)
		}
	}
	// Opting out afterwards removes the Works.
	ns := &corev1.Namespace{}
	if err := c.Get(ctx, client.ObjectKey{Name: "team-a"}, ns); err != nil {
		t.Fatal(err)
	}
	ns.Labels = map[string]string{policyv1alpha1.NamespaceSkipAutoPropagationLabel: "true"}
	if err := c.Update(ctx, ns); err != nil {
		t.Fatal(err)
	}
	testenv.Eventually(t, deadline, "namespace Works removed", func(ctx context.Context) error {
		works := &workv1alpha1.WorkList{}
		if err := c.List(ctx, works, client.MatchingLabels{workv1alpha1.NamespaceWorkLabel: "team-a"}); err != nil {
			return err
		}
		if len(works.Items) != 0 {
			return fmt.Errorf("%d Works left", len(works.Items))
		}
		return nil
	})

	// Removing a Cluster removes its Works, then its execution namespace,
	// then lets the Cluster go.
	w := &workv1alpha1.Work{ObjectMeta: metav1.ObjectMeta{Namespace: workv1alpha1.ExecutionNamespace("member2"), Name: "leftover"}}
	if err := c.Create(ctx, w); err != nil {
		t.Fatal(err)
	}
	if err := c.Delete(ctx, &clusterv1alpha1.Cluster{ObjectMeta: metav1.ObjectMeta{Name: "member2"}}); err != nil {
		t.Fatal(err)
	}
	testenv.Eventually(t, deadline, "member2's execution namespace deleted", func(ctx context.Context) error {
		ns := &corev1.Namespace{}
		if err := c.Get(ctx, client.ObjectKey{Name: workv1alpha1.ExecutionNamespace("member2")}, ns); err != nil {
			return client.IgnoreNotFound(err)
		}
		if ns.DeletionTimestamp.IsZero() {
			return fmt.Errorf("not being deleted")
		}
		// No namespace controller runs here: finalize it as it would.
		ns.Spec.Finalizers = nil
		return c.SubResource("finalize").Update(ctx, ns)
	})
	if err := c.Get(ctx, client.ObjectKeyFromObject(w), &workv1alpha1.Work{}); !apierrors.IsNotFound(err) {
		t.Errorf("member2's Work: %v, want it deleted", err)
	}
	testenv.Eventually(t, deadline, "member2 gone", func(ctx context.Context) error {
		err := c.Get(ctx, client.ObjectKey{Name: "member2"}, &clusterv1alpha1.Cluster{})
		if apierrors.IsNotFound(err) {
			return nil
		}
		return fmt.Errorf("still there (%v)", err)
	})
}

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

// webBinding is the ResourceBinding of Deployment shop/web (not created).
func webBinding(web *appsv1.Deployment, replicas int32, targets ...workv1alpha2.TargetCluster) *workv1alpha2.ResourceBinding {
	return &workv1alpha2.ResourceBinding{
		ObjectMeta: metav1.ObjectMeta{Namespace: "shop", Name: names.BindingName("Deployment", "web")},
		Spec: workv1alpha2.ResourceBindingSpec{
			Resource: workv1alpha2.ObjectReference{APIVersion: "apps/v1", Kind: "Deployment", Namespace: "shop", Name: "web", UID: web.UID},
			Replicas: replicas,
			Clusters: targets,
		},
	}
}

// An override policy that cannot be applied (here, a ClusterOverridePolicy
// replacing a field ConfigMaps lack, for member1) holds up only the
// templates it selects, and only in the clusters it targets: a ConfigMap's
// Work for member1 is not written (OverridesApplied False, naming the
// policy), its Work for member2 is, and a Deployment's Works are.
func TestFailingOverrideBlocksOnlyWhatItSelects(t *testing.T) {
	t.Parallel()
	c := startBindingController(t, "member1", "member2")
	ctx := context.Background()
	cop := &policyv1alpha1.ClusterOverridePolicy{
		ObjectMeta: metav1.ObjectMeta{Name: "broken"},
		Spec: policyv1alpha1.OverrideSpec{
			ResourceSelectors: []policyv1alpha1.ResourceSelector{{APIVersion: "v1", Kind: "ConfigMap"}},
			OverrideRules: []policyv1alpha1.RuleWithCluster{{
				TargetCluster: &policyv1alpha1.ClusterAffinity{ClusterNames: []string{"member1"}},
				Overriders: policyv1alpha1.Overriders{Plaintext: []policyv1alpha1.PlaintextOverrider{{
					Path: "/data/missing/deeper", Operator: policyv1alpha1.OverriderOpReplace, Value: apiextensionsv1.JSON{Raw: []byte(`"x"`)}}}},
			}},
		},
	}
	if err := c.Create(ctx, cop); err != nil {
		t.Fatal(err)
	}
	cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: "shop", Name: "settings"}, Data: map[string]string{"a": "b"}}
	web := deployment("shop", "web", 2)
	for _, o := range []client.Object{cm, web} {
		if err := c.Create(ctx, o); err != nil {
			t.Fatal(err)
		}
	}
	both := []workv1alpha2.TargetCluster{{Name: "member1", Replicas: 1}, {Name: "member2", Replicas: 1}}
	cmBinding := &workv1alpha2.ResourceBinding{
		ObjectMeta: metav1.ObjectMeta{Namespace: "shop", Name: names.BindingName("ConfigMap", "settings")},
		Spec: workv1alpha2.ResourceBindingSpec{
			Resource: workv1alpha2.ObjectReference{APIVersion: "v1", Kind: "ConfigMap", Namespace: "shop", Name: "settings", UID: cm.UID},
			Clusters: []workv1alpha2.TargetCluster{{Name: "member1"}, {Name: "member2"}},
		},
	}
	for _, b := range []*workv1alpha2.ResourceBinding{cmBinding, webBinding(web, 2, both...)} {
		if err := c.Create(ctx, b); err != nil {
			t.Fatal(err)
		}
	}
	work := func(cluster, kind, name string) client.ObjectKey {
		return client.ObjectKey{Namespace: workv1alpha1.ExecutionNamespace(cluster), Name: names.WorkName(kind, name, "shop")}
	}
	testenv.Eventually(t, deadline, "the Works not held up", func(ctx context.Context) error {
		for _, k := range []client.ObjectKey{work("member2", "ConfigMap", "settings"), work("member1", "Deployment", "web"), work("member2", "Deployment", "web")} {
			if err := c.Get(ctx, k, &workv1alpha1.Work{}); err != nil {
				return fmt.Errorf("Work %s: %w", k, err)
			}
		}
		got := &workv1alpha2.ResourceBinding{}
		if err := c.Get(ctx, client.ObjectKeyFromObject(cmBinding), got); err != nil {
			return err
		}
		cond := meta.FindStatusCondition(got.Status.Conditions, workv1alpha2.OverridesApplied)
		if cond == nil || cond.Status != metav1.ConditionFalse || !strings.Contains(cond.Message, "broken") || !strings.Contains(cond.Message, "member1") {
			return fmt.Errorf("the ConfigMap's binding: OverridesApplied %+v", cond)
		}
		return nil
	})
	if err := c.Get(ctx, work("member1", "ConfigMap", "settings"), &workv1alpha1.Work{}); !apierrors.IsNotFound(err) {
		t.Errorf("the ConfigMap's Work for member1 was written despite the failing override (err %v)", err)
	}
	got := &workv1alpha2.ResourceBinding{}
	if err := c.Get(ctx, client.ObjectKeyFromObject(webBinding(web, 2)), got); err != nil {
		t.Fatal(err)
	}
	if cond := meta.FindStatusCondition(got.Status.Conditions, workv1alpha2.OverridesApplied); cond != nil && cond.Status == metav1.ConditionFalse {
		t.Errorf("the Deployment, which the policy does not select, has OverridesApplied False: %+v", cond)
	}
}

// frozenTemplates answers each key with the first copy it read: a template
// cache whose watch has not resumed.
type frozenTemplates struct {
	inner templatecache.Reader
	mu    sync.Mutex
	seen  map[client.ObjectKey]*unstructured.Unstructured
}

func (f *frozenTemplates) Get(ctx context.Context, key client.ObjectKey, obj client.Object, _ ...client.GetOption) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	if u, ok := f.seen[key]; ok {
		u.DeepCopyInto(obj.(*unstructured.Unstructured))
		return nil
	}
	if err := f.inner.Get(ctx, key, obj); err != nil {
		return err
	}
	f.seen[key] = obj.(*unstructured.Unstructured).DeepCopy()
	return nil
}

// A binding written from a newer template than the template cache holds
// (the detector's watch resumed before the cache's, after an outage) gets
// Works made from the newer one: the binding controller reads the template
// from the API server when the cached copy is not the binding's version.
func TestBindingReadsTheTemplateTheCacheLacks(t *testing.T) {
	t.Parallel()
	env := testenv.Start(t)
	c := env.Client
	env.RunManager(t, func(ctx context.Context, mgr manager.Manager) error {
		if err := anybinding.IndexWorks(ctx, mgr.GetFieldIndexer()); err != nil {
			return err
		}
		store, err := templateStore(mgr)
		if err != nil {
			return err
		}
		frozen := &frozenTemplates{inner: store, seen: map[client.ObjectKey]*unstructured.Unstructured{}}
		return (&binding.Reconciler{Client: mgr.GetClient(), Templates: frozen, Workers: 2}).SetupWithManager(mgr)
	})
	ctx := context.Background()
	web := member1AndWeb(ctx, t, c)
	dyn := dynamic.NewForConfigOrDie(env.Config)
	gvr := appsv1.SchemeGroupVersion.WithResource("deployments")
	// As the detector writes it: the template's resourceVersion and hash.
	made := func(rb *workv1alpha2.ResourceBinding) {
		t.Helper()
		u, err := dyn.Resource(gvr).Namespace("shop").Get(ctx, "web", metav1.GetOptions{})
		if err != nil {
			t.Fatal(err)
		}
		hash, err := anybinding.TemplateHash(u)
		if err != nil {
			t.Fatal(err)
		}
		rb.Spec.Resource.ResourceVersion = u.GetResourceVersion()
		metav1.SetMetaDataAnnotation(&rb.ObjectMeta, workv1alpha2.TemplateHashAnnotation, hash)
	}
	rb := webBinding(web, 1, workv1alpha2.TargetCluster{Name: "member1", Replicas: 1})
	made(rb)
	if err := c.Create(ctx, rb); err != nil {
		t.Fatal(err)
	}
	setClusters(ctx, t, c, rb, workv1alpha2.TargetCluster{Name: "member1", Replicas: 1})
	replicasIn := func(want int64) func(context.Context) error {
		return func(ctx context.Context) error {
			w := &workv1alpha1.Work{}
			if err := c.Get(ctx, client.ObjectKey{Namespace: workv1alpha1.ExecutionNamespace("member1"), Name: names.WorkName("Deployment", "web", "shop")}, w); err != nil {
				return err
			}
			m := &unstructured.Unstructured{}
			if err := m.UnmarshalJSON(w.Spec.Workload.Manifests[0].Raw); err != nil {
				return err
			}
			if got, _, _ := unstructured.NestedInt64(m.Object, "spec", "replicas"); got != want {
				return fmt.Errorf("the Work's manifest has %d replicas, want %d", got, want)
			}
			return nil
		}
	}
	testenv.Eventually(t, deadline, "the Work from the first template", replicasIn(1))
	// The template changes; the cache keeps the first copy, the binding is
	// written from the new one.
	if err := retry.RetryOnConflict(retry.DefaultRetry, func() error {
		if err := c.Get(ctx, client.ObjectKeyFromObject(web), web); err != nil {
			return err
		}
		web.Spec.Replicas = ptr.To[int32](3)
		return c.Update(ctx, web)
	}); err != nil {
		t.Fatal(err)
	}
	if err := retry.RetryOnConflict(retry.DefaultRetry, func() error {
		if err := c.Get(ctx, client.ObjectKeyFromObject(rb), rb); err != nil {
			return err
		}
		made(rb)
		rb.Spec.Replicas = 3
		return c.Update(ctx, rb)
	}); err != nil {
		t.Fatal(err)
	}
	testenv.Eventually(t, deadline, "the Work from the changed template", replicasIn(3))
}

// reportWebApplied stands in for the execution and work-status controllers
// on a Work of Deployment shop/web: applied, its copy healthy with ready
// replicas of the template's generation.
func reportWebApplied(ctx context.Context, t *testing.T, c client.Client, w *workv1alpha1.Work, ready int, templateGeneration int64) {
	t.Helper()
	status, _ := json.Marshal(map[string]any{"replicas": ready, "readyReplicas": ready, "availableReplicas": ready, "updatedReplicas": ready,
		"observedGeneration": 1, "generation": 1, "resourceTemplateGeneration": templateGeneration})
	meta.SetStatusCondition(&w.Status.Conditions, metav1.Condition{Type: workv1alpha1.WorkApplied, Status: metav1.ConditionTrue,
		Reason: workv1alpha1.ReasonAppliedSuccessful, Message: workv1alpha1.MessageApplied, ObservedGeneration: w.Generation})
	w.Status.ManifestStatuses = []workv1alpha1.ManifestStatus{{
		Identifier: workv1alpha1.ResourceIdentifier{Group: "apps", Version: "v1", Kind: "Deployment", Resource: "deployments", Namespace: "shop", Name: "web"},
		Status:     &runtime.RawExtension{Raw: status}, Health: workv1alpha1.ResourceHealthy,
	}}
	if err := c.Status().Update(ctx, w); err != nil {
		t.Fatal(err)
	}
}

// blindTemplates is a template cache that holds nothing: a type whose CRD
// was deleted and created again, say, while its informer relists.
type blindTemplates struct{}

func (blindTemplates) Get(_ context.Context, key client.ObjectKey, obj client.Object, _ ...client.GetOption) error {
	return apierrors.NewNotFound(schema.GroupResource{Group: obj.GetObjectKind().GroupVersionKind().Group, Resource: "templates"}, key.Name)
}

// A template the cache does not hold is not taken for gone: the binding
// controller asks the API server, and writes the Works (CI saw a
// FlinkDeployment's binding placed and never given a Work after its CRD
// was deleted and created again).
func TestBindingAsksTheAPIServerWhenTheCacheLacksTheTemplate(t *testing.T) {
	t.Parallel()
	env := testenv.Start(t)
	c := env.Client
	env.RunManager(t, func(ctx context.Context, mgr manager.Manager) error {
		if err := anybinding.IndexWorks(ctx, mgr.GetFieldIndexer()); err != nil {
			return err
		}
		return (&binding.Reconciler{Client: mgr.GetClient(), Templates: blindTemplates{}, Workers: 2}).SetupWithManager(mgr)
	})
	ctx := context.Background()
	web := member1AndWeb(ctx, t, c)
	rb := webBinding(web, 1)
	if err := c.Create(ctx, rb); err != nil {
		t.Fatal(err)
	}
	setClusters(ctx, t, c, rb, workv1alpha2.TargetCluster{Name: "member1", Replicas: 1})
	testenv.Eventually(t, deadline, "member1's Work", func(ctx context.Context) error {
		return c.Get(ctx, client.ObjectKey{Namespace: workv1alpha1.ExecutionNamespace("member1"), Name: names.WorkName("Deployment", "web", "shop")}, &workv1alpha1.Work{})
	})
}

// member1AndWeb makes push-mode member1 with its execution namespace, and
// Deployment shop/web of one replica.
func member1AndWeb(ctx context.Context, t *testing.T, c client.Client) *appsv1.Deployment {
	t.Helper()
	if err := c.Create(ctx, &clusterv1alpha1.Cluster{ObjectMeta: metav1.ObjectMeta{Name: "member1"}, Spec: clusterv1alpha1.ClusterSpec{SyncMode: clusterv1alpha1.Push}}); err != nil {
		t.Fatal(err)
	}
	createNamespace(ctx, t, c, workv1alpha1.ExecutionNamespace("member1"))
	createNamespace(ctx, t, c, "shop")
	web := deployment("shop", "web", 1)
	if err := c.Create(ctx, web); err != nil {
		t.Fatal(err)
	}
	return web
}
