package integration

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"sync"
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
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
	"github.com/karmada-go/karmada/internal/testenv"
)

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
