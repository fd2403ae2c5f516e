//go:build e2e

package e2e

import (
	"context"
	"encoding/json"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/wait"
	"sigs.k8s.io/controller-runtime/pkg/client"

	configv1alpha1 "github.com/karmada-go/karmada/api/config/v1alpha1"
	policyv1alpha1 "github.com/karmada-go/karmada/api/policy/v1alpha1"
	workv1alpha1 "github.com/karmada-go/karmada/api/work/v1alpha1"
	workv1alpha2 "github.com/karmada-go/karmada/api/work/v1alpha2"
	"github.com/karmada-go/karmada/internal/names"
)

// Karmada's resource interpreter cases, each within seconds of the change:
// a customization of Deployment (acting on templates labelled e2e-ric)
// gives the binding its replicas (+1), keeps a member's own spec.paused
// (retain), reflects the member's status with a field of its own, and
// judges health by a label; a second customization adds dependencies
// beside a first's.
func TestCustomizationsApplyWithinSeconds(t *testing.T) {
	ctx := context.Background()
	c := karmadaClient(t)
	const within = 15 * time.Second
	ric := &configv1alpha1.ResourceInterpreterCustomization{
		ObjectMeta: metav1.ObjectMeta{Name: "e2e-ric-deployment"},
		Spec: configv1alpha1.ResourceInterpreterCustomizationSpec{
			Target: configv1alpha1.CustomizationTarget{APIVersion: "apps/v1", Kind: "Deployment"},
			Customizations: configv1alpha1.CustomizationRules{
				ReplicaResource: &configv1alpha1.ReplicaResourceRequirement{LuaScript: `
local kube = require("kube")
function GetReplicas(obj)
  local r = obj.spec.replicas
  if obj.metadata.labels ~= nil and obj.metadata.labels["e2e-ric"] == "yes" then r = r + 1 end
  return r, kube.accuratePodRequirements(obj.spec.template)
end`},
				Retention: &configv1alpha1.LocalValueRetention{LuaScript: `
function Retain(desiredObj, observedObj)
  if observedObj.spec.paused ~= nil then desiredObj.spec.paused = observedObj.spec.paused end
  return desiredObj
end`},
				StatusReflection: &configv1alpha1.StatusReflection{LuaScript: `
function ReflectStatus(observedObj)
  if observedObj.status == nil then return {} end
  local s = observedObj.status
  if observedObj.metadata.labels ~= nil and observedObj.metadata.labels["e2e-ric"] == "yes" then s.e2eReflected = "yes" end
  return s
end`},
				HealthInterpretation: &configv1alpha1.HealthInterpretation{LuaScript: `
function InterpretHealth(observedObj)
  return observedObj.metadata.labels == nil or observedObj.metadata.labels["e2e-unhealthy"] ~= "yes"
end`},
			},
		},
	}
	if err := c.Create(ctx, ric); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { deleteAll(t, c, ric) })
	// A second customization of the kind, dependencies only: allowed.
	deps := &configv1alpha1.ResourceInterpreterCustomization{
		ObjectMeta: metav1.ObjectMeta{Name: "e2e-ric-deployment-deps"},
		Spec: configv1alpha1.ResourceInterpreterCustomizationSpec{
			Target: configv1alpha1.CustomizationTarget{APIVersion: "apps/v1", Kind: "Deployment"},
			Customizations: configv1alpha1.CustomizationRules{DependencyInterpretation: &configv1alpha1.DependencyInterpretation{LuaScript: `
function GetDependencies(desiredObj) return {} end`}},
		},
	}
	if err := c.Create(ctx, deps); err != nil {
		t.Fatalf("a second customization of Deployment with dependencyInterpretation: %v", err)
	}
	t.Cleanup(func() { deleteAll(t, c, deps) })

	d := deploymentNamed("e2e-ric", 2)
	d.Labels = map[string]string{"e2e-ric": "yes"}
	start := time.Now()
	propagate(ctx, t, d, policyv1alpha1.Placement{ClusterAffinity: &policyv1alpha1.ClusterAffinity{ClusterNames: []string{"member1"}}})
	rb := &workv1alpha2.ResourceBinding{}
	within15 := func(what string, ok func() (bool, error)) {
		t.Helper()
		from := time.Now()
		if err := wait.PollUntilContextTimeout(ctx, 200*time.Millisecond, within, true, func(context.Context) (bool, error) { return ok() }); err != nil {
			t.Fatalf("%s: not within %s", what, within)
		}
		t.Logf("%s after %.1fs", what, time.Since(from).Seconds())
	}
	if err := wait.PollUntilContextTimeout(ctx, 200*time.Millisecond, within, true, func(context.Context) (bool, error) {
		return c.Get(ctx, client.ObjectKey{Namespace: "default", Name: "e2e-ric-deployment"}, rb) == nil && rb.Spec.Replicas == 3, nil
	}); err != nil {
		ev, _ := eventReasons(ctx, kube(t, "karmada-apiserver"), "Deployment", "default", "e2e-ric")
		t.Fatalf("the binding's replicas from GetReplicas: %d, not 3 within %s; conditions %+v; template events %v", rb.Spec.Replicas, within, rb.Status.Conditions, ev)
	}
	t.Logf("created to interpreted: %.1fs", time.Since(start).Seconds())
	waitMemberDeployment(ctx, t, "member1", "e2e-ric", 2)

	// Retain: member1's own spec.paused survives a template change.
	m1 := kube(t, "member1")
	md, err := m1.AppsV1().Deployments("default").Get(ctx, "e2e-ric", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	md.Spec.Paused = true
	if _, err := m1.AppsV1().Deployments("default").Update(ctx, md, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	// label sets a label on the template.
	label := func(key, value string) {
		t.Helper()
		tmpl := &appsv1.Deployment{}
		if err := c.Get(ctx, client.ObjectKeyFromObject(d), tmpl); err != nil {
			t.Fatal(err)
		}
		tmpl.Labels[key] = value
		if err := c.Update(ctx, tmpl); err != nil {
			t.Fatal(err)
		}
	}
	label("e2e-touched", "1")
	within15("member1's copy updated with its paused kept", func() (bool, error) {
		got, err := m1.AppsV1().Deployments("default").Get(ctx, "e2e-ric", metav1.GetOptions{})
		return err == nil && got.Labels["e2e-touched"] == "1" && got.Spec.Paused, nil
	})

	// ReflectStatus: the Work carries the script's field.
	work := &workv1alpha1.Work{}
	within15("the Work's status from ReflectStatus", func() (bool, error) {
		if err := c.Get(ctx, client.ObjectKey{Namespace: "karmada-es-member1", Name: names.WorkName("Deployment", "e2e-ric", "default")}, work); err != nil {
			return false, nil
		}
		for _, ms := range work.Status.ManifestStatuses {
			var s map[string]any
			if ms.Status != nil && json.Unmarshal(ms.Status.Raw, &s) == nil && s["e2eReflected"] == "yes" {
				return true, nil
			}
		}
		return false, nil
	})

	// InterpretHealth: the label makes member1's copy unhealthy.
	label("e2e-unhealthy", "yes")
	within15("the binding's health from InterpretHealth", func() (bool, error) {
		if err := c.Get(ctx, client.ObjectKeyFromObject(rb), rb); err != nil {
			return false, nil
		}
		for _, it := range rb.Status.AggregatedStatus {
			if it.ClusterName == "member1" {
				return it.Health == workv1alpha1.ResourceUnhealthy, nil
			}
		}
		return false, nil // member1's not aggregated yet
	})
}
