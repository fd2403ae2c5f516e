package integration

import (
	"context"
	"fmt"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/manager"

	clusterv1alpha1 "github.com/karmada-go/karmada/api/cluster/v1alpha1"
	configv1alpha1 "github.com/karmada-go/karmada/api/config/v1alpha1"
	policyv1alpha1 "github.com/karmada-go/karmada/api/policy/v1alpha1"
	workv1alpha1 "github.com/karmada-go/karmada/api/work/v1alpha1"
	workv1alpha2 "github.com/karmada-go/karmada/api/work/v1alpha2"
	"github.com/karmada-go/karmada/internal/anybinding"
	"github.com/karmada-go/karmada/internal/interpreter"
	"github.com/karmada-go/karmada/internal/interpreter/customization"
	"github.com/karmada-go/karmada/internal/names"
	"github.com/karmada-go/karmada/internal/propagation/binding"
	"github.com/karmada-go/karmada/internal/propagation/bindingstatus"
	"github.com/karmada-go/karmada/internal/testenv"
)

// The binding and binding-status controllers, run in one manager with the
// interpreter the controller manager builds (a customization watcher's
// layer in front of the built-in knowledge), answer with a Lua
// customization: each Work's manifest is revised by the customization's
// ReviseReplica (its replicas and its mark), and the template's status is
// the customization's AggregateStatus (collisionCount counting the
// clusters, which the built-in aggregation never sets).
func TestControllersInterpretWithALuaCustomization(t *testing.T) {
	t.Parallel()
	env := testenv.Start(t)
	c := env.Client
	ctx := context.Background()
	ric := &configv1alpha1.ResourceInterpreterCustomization{
		ObjectMeta: metav1.ObjectMeta{Name: "deployment-marked"},
		Spec: configv1alpha1.ResourceInterpreterCustomizationSpec{
			Target: configv1alpha1.CustomizationTarget{APIVersion: "apps/v1", Kind: "Deployment"},
			Customizations: configv1alpha1.CustomizationRules{
				ReplicaRevision: &configv1alpha1.ReplicaRevision{LuaScript: `
function ReviseReplica(obj, desiredReplica)
  obj.spec.replicas = desiredReplica
  if obj.metadata.annotations == nil then
    obj.metadata.annotations = {}
  end
  obj.metadata.annotations["example.com/revised-by"] = "lua"
  return obj
end`},
				StatusAggregation: &configv1alpha1.StatusAggregation{LuaScript: `
function AggregateStatus(desiredObj, statusItems)
  local ready = 0
  for i = 1, #statusItems do
    if statusItems[i].status ~= nil and statusItems[i].status.readyReplicas ~= nil then
      ready = ready + statusItems[i].status.readyReplicas
    end
  end
  desiredObj.status = {replicas = ready, readyReplicas = ready, collisionCount = #statusItems, observedGeneration = desiredObj.metadata.generation}
  return desiredObj
end`},
			},
		},
	}
	if err := c.Create(ctx, ric); err != nil {
		t.Fatal(err)
	}
	env.RunManager(t, func(ctx context.Context, mgr manager.Manager) error {
		if err := anybinding.IndexWorks(ctx, mgr.GetFieldIndexer()); err != nil {
			return err
		}
		templates, err := templateStore(mgr)
		if err != nil {
			return err
		}
		custom := customization.NewWatcher(nil)
		in := interpreter.New(custom.Layer)
		if err := (&binding.Reconciler{Client: mgr.GetClient(), Templates: templates, Workers: 2, Interpreter: in}).SetupWithManager(mgr); err != nil {
			return err
		}
		if err := (&bindingstatus.Reconciler{Client: mgr.GetClient(), Templates: templates, Workers: 2, Settle: time.Millisecond, Interpreter: in}).SetupWithManager(mgr); err != nil {
			return err
		}
		return custom.Install(ctx, mgr.GetAPIReader(), mgr.GetCache())
	})
	for _, n := range []string{"member1", "member2"} {
		if err := c.Create(ctx, &clusterv1alpha1.Cluster{ObjectMeta: metav1.ObjectMeta{Name: n}, Spec: clusterv1alpha1.ClusterSpec{SyncMode: clusterv1alpha1.Push}}); err != nil {
			t.Fatal(err)
		}
		createNamespace(ctx, t, c, workv1alpha1.ExecutionNamespace(n))
	}
	createNamespace(ctx, t, c, "shop")
	web := deployment("shop", "web", 4)
	if err := c.Create(ctx, web); err != nil {
		t.Fatal(err)
	}
	rb := webBinding(web, 4)
	rb.Spec.Placement = &policyv1alpha1.Placement{ReplicaScheduling: &policyv1alpha1.ReplicaSchedulingStrategy{ReplicaSchedulingType: policyv1alpha1.ReplicaSchedulingTypeDivided}}
	if err := c.Create(ctx, rb); err != nil {
		t.Fatal(err)
	}
	setClusters(ctx, t, c, rb, workv1alpha2.TargetCluster{Name: "member1", Replicas: 1}, workv1alpha2.TargetCluster{Name: "member2", Replicas: 3})

	workName := names.WorkName("Deployment", "web", "shop")
	for cluster, replicas := range map[string]int64{"member1": 1, "member2": 3} {
		testenv.Eventually(t, deadline, "the customization's manifest in "+cluster, func(ctx context.Context) error {
			w := &workv1alpha1.Work{}
			if err := c.Get(ctx, client.ObjectKey{Namespace: workv1alpha1.ExecutionNamespace(cluster), Name: workName}, w); err != nil {
				return err
			}
			if len(w.Spec.Workload.Manifests) != 1 {
				return fmt.Errorf("%d manifests", len(w.Spec.Workload.Manifests))
			}
			m := &unstructured.Unstructured{}
			if err := m.UnmarshalJSON(w.Spec.Workload.Manifests[0].Raw); err != nil {
				return err
			}
			got, _, _ := unstructured.NestedInt64(m.Object, "spec", "replicas")
			if got != replicas || m.GetAnnotations()["example.com/revised-by"] != "lua" {
				return fmt.Errorf("replicas %d, annotations %v", got, m.GetAnnotations())
			}
			return nil
		})
	}

	// Stand in for the execution and work-status controllers: each copy
	// applied, with its ready replicas.
	for cluster, ready := range map[string]int{"member1": 1, "member2": 3} {
		w := &workv1alpha1.Work{}
		if err := c.Get(ctx, client.ObjectKey{Namespace: workv1alpha1.ExecutionNamespace(cluster), Name: workName}, w); err != nil {
			t.Fatal(err)
		}
		reportWebApplied(ctx, t, c, w, ready, web.Generation)
	}
	testenv.Eventually(t, deadline, "the customization's status on the template", func(ctx context.Context) error {
		got := &appsv1.Deployment{}
		if err := c.Get(ctx, client.ObjectKeyFromObject(web), got); err != nil {
			return err
		}
		if got.Status.ReadyReplicas != 4 || got.Status.CollisionCount == nil || *got.Status.CollisionCount != 2 {
			return fmt.Errorf("template status %+v", got.Status)
		}
		return nil
	})
}
