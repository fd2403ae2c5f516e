package integration

import (
	"context"
	"fmt"
	"net/http"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
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
	"github.com/karmada-go/karmada/internal/cache/templatecache"
	"github.com/karmada-go/karmada/internal/clusters/cluster"
	"github.com/karmada-go/karmada/internal/names"
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
