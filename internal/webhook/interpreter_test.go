package webhook

import (
	"context"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"

	configv1alpha1 "github.com/karmada-go/karmada/api/config/v1alpha1"
	"github.com/karmada-go/karmada/internal/scheme"
)

// TestCustomizationRules: a customization names its kind and has scripts
// that compile and define their functions; the causes name the field.
func TestCustomizationRules(t *testing.T) {
	const path = "/validate-resourceinterpretercustomization"
	ric := func(change func(*configv1alpha1.ResourceInterpreterCustomization)) *configv1alpha1.ResourceInterpreterCustomization {
		c := validRIC()
		change(c)
		return c
	}
	for _, tc := range []ruleCase{
		{name: "valid", path: path, obj: validRIC()},
		{name: "no target", path: path, obj: ric(func(c *configv1alpha1.ResourceInterpreterCustomization) {
			c.Spec.Target = configv1alpha1.CustomizationTarget{}
		}),
			want: []string{
				"spec.target.apiVersion: Required value: the API version of the kind the scripts interpret, e.g. apps.kruise.io/v1alpha1",
				"spec.target.kind: Required value: the kind the scripts interpret, e.g. CloneSet",
			}},
		{name: "a bad apiVersion", path: path, obj: ric(func(c *configv1alpha1.ResourceInterpreterCustomization) { c.Spec.Target.APIVersion = "a/b/c" }),
			want: []string{`spec.target.apiVersion: Invalid value: "a/b/c": must be group/version or version: unexpected GroupVersion string: a/b/c`}},
		{name: "no scripts", path: path, obj: ric(func(c *configv1alpha1.ResourceInterpreterCustomization) {
			c.Spec.Customizations = configv1alpha1.CustomizationRules{}
		}),
			want: []string{"spec.customizations: Required value: at least one of retention, replicaResource, componentResource, replicaRevision, statusReflection, statusAggregation, healthInterpretation, dependencyInterpretation"}},
		{name: "an empty script", path: path, obj: ric(func(c *configv1alpha1.ResourceInterpreterCustomization) {
			c.Spec.Customizations.Retention = &configv1alpha1.LocalValueRetention{LuaScript: " "}
		}), want: []string{"spec.customizations.retention.luaScript: Required value: a Lua script defining function Retain"}},
		{name: "a syntax error", path: path, obj: ric(func(c *configv1alpha1.ResourceInterpreterCustomization) {
			c.Spec.Customizations.HealthInterpretation.LuaScript = "function InterpretHealth(obj) return end end"
		}), want: []string{`spec.customizations.healthInterpretation.luaScript: Invalid value: "function InterpretHealth(obj) return end end": must be a Lua script defining function InterpretHealth: parse: InterpretHealth line:1(column:44) near 'end':   syntax error`}},
		{name: "the wrong function", path: path, obj: ric(func(c *configv1alpha1.ResourceInterpreterCustomization) {
			c.Spec.Customizations.HealthInterpretation.LuaScript = "function Healthy(obj) return true end"
		}), want: []string{`spec.customizations.healthInterpretation.luaScript: Invalid value: "function Healthy(obj) return true end": must be a Lua script defining function InterpretHealth: InterpretHealth: the script does not define function InterpretHealth`}},
		{name: "a top level that never ends", path: path, obj: ric(func(c *configv1alpha1.ResourceInterpreterCustomization) {
			c.Spec.Customizations.HealthInterpretation.LuaScript = "while true do end"
		}), want: []string{`spec.customizations.healthInterpretation.luaScript: Invalid value: "while true do end": must be a Lua script defining function InterpretHealth: InterpretHealth: budget exceeded: ran longer than 500ms`}},
		{name: "a module that is not there", path: path, obj: ric(func(c *configv1alpha1.ResourceInterpreterCustomization) {
			c.Spec.Customizations.HealthInterpretation.LuaScript = "local io = require('io')\nfunction InterpretHealth(obj) return true end"
		}), want: []string{"spec.customizations.healthInterpretation.luaScript: Invalid value: \"local io = require('io')\\nfunction InterpretHealth(obj) return true end\": must be a Lua script defining function InterpretHealth: InterpretHealth: InterpretHealth:1: module \"io\" is not available: only \"kube\" and \"os\" are"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if diff := cmp.Diff(tc.want, admit(t, tc.path, tc.obj, tc.old)); diff != "" {
				t.Errorf("causes (-want +got):\n%s", diff)
			}
		})
	}
}

// TestOneCustomizationPerKindAndOperation: a second customization may add
// operations to a kind, not define one another already defines.
func TestOneCustomizationPerKindAndOperation(t *testing.T) {
	existing := validRIC()
	existing.Name = "cloneset-health"
	existing.Spec.Customizations = configv1alpha1.CustomizationRules{HealthInterpretation: existing.Spec.Customizations.HealthInterpretation}
	reader := fake.NewClientBuilder().WithScheme(scheme.Scheme).WithObjects(existing).Build()
	var e Endpoint
	for _, x := range EndpointsWith(scheme.Scheme, Options{Clusters: reader}) {
		if x.Path == "/validate-resourceinterpretercustomization" {
			e = x
		}
	}
	got := denials(t, e.Handler().Handle(context.Background(), request(t, e, validRIC(), nil)))
	want := []string{`spec.customizations.healthInterpretation: Duplicate value: "conflicting with InterpreterOperation(InterpretHealth) of existing ResourceInterpreterCustomization(cloneset-health): one customization per kind (apps.kruise.io/v1alpha1 CloneSet) and operation, but for InterpretDependency"`}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("causes (-want +got):\n%s", diff)
	}
	other := validRIC()
	other.Spec.Customizations.HealthInterpretation = nil
	if resp := e.Handler().Handle(context.Background(), request(t, e, other, nil)); !resp.Allowed {
		t.Errorf("a customization adding another operation was denied: %+v", resp.Result)
	}
	// Dependencies add up: two customizations may both interpret them
	// (Karmada allows it).
	deps := validRIC()
	deps.Name = "cloneset-deps-a"
	deps.Spec.Customizations = configv1alpha1.CustomizationRules{DependencyInterpretation: &configv1alpha1.DependencyInterpretation{
		LuaScript: `function GetDependencies(desiredObj) return {} end`}}
	reader = fake.NewClientBuilder().WithScheme(scheme.Scheme).WithObjects(existing, deps).Build()
	for _, x := range EndpointsWith(scheme.Scheme, Options{Clusters: reader}) {
		if x.Path == "/validate-resourceinterpretercustomization" {
			e = x
		}
	}
	second := deps.DeepCopy()
	second.Name = "cloneset-deps-b"
	if resp := e.Handler().Handle(context.Background(), request(t, e, second, nil)); !resp.Allowed {
		t.Errorf("a second dependency customization of the kind was denied: %+v", resp.Result)
	}
	// Its own, unchanged, is fine.
	if resp := e.Handler().Handle(context.Background(), request(t, e, existing, nil)); !resp.Allowed {
		t.Errorf("the existing customization itself was denied: %+v", resp.Result)
	}
}

// TestInterpreterWebhookRules: where the webhook is, what it answers, how
// long it may take and which context version it speaks.
func TestInterpreterWebhookRules(t *testing.T) {
	const path = "/validate-resourceinterpreterwebhookconfiguration"
	riwc := func(change func(*configv1alpha1.ResourceInterpreterWebhook)) *configv1alpha1.ResourceInterpreterWebhookConfiguration {
		c := validRIWC()
		change(&c.Webhooks[0])
		return c
	}
	for _, tc := range []ruleCase{
		{name: "valid", path: path, obj: validRIWC()},
		{name: "http", path: path, obj: riwc(func(w *configv1alpha1.ResourceInterpreterWebhook) {
			w.ClientConfig.URL = ptr.To("http://127.0.0.1:8443/x")
		}),
			want: []string{`webhooks[0].clientConfig.url: Invalid value: "http://127.0.0.1:8443/x": must use https`}},
		{name: "a query", path: path, obj: riwc(func(w *configv1alpha1.ResourceInterpreterWebhook) { w.ClientConfig.URL = ptr.To("https://h:1/x?a=b") }),
			want: []string{`webhooks[0].clientConfig.url: Invalid value: "https://h:1/x?a=b": must not have a query or a fragment`}},
		{name: "neither url nor service", path: path, obj: riwc(func(w *configv1alpha1.ResourceInterpreterWebhook) { w.ClientConfig.URL = nil }),
			want: []string{"webhooks[0].clientConfig: Required value: exactly one of url and service"}},
		{name: "a bad CA bundle", path: path, obj: riwc(func(w *configv1alpha1.ResourceInterpreterWebhook) { w.ClientConfig.CABundle = []byte("not pem") }),
			want: []string{`webhooks[0].clientConfig.caBundle: Invalid value: "<bytes>": must be PEM-encoded CA certificates`}},
		{name: "an unknown operation", path: path, obj: riwc(func(w *configv1alpha1.ResourceInterpreterWebhook) { w.Rules[0].Operations[0] = "Interpret" }),
			want: []string{`webhooks[0].rules[0].operations[0]: Unsupported value: "Interpret": supported values: "*", "AggregateStatus", "InterpretComponent", "InterpretDependency", "InterpretHealth", "InterpretReplica", "InterpretStatus", "Retain", "ReviseReplica"`}},
		{name: "no kinds", path: path, obj: riwc(func(w *configv1alpha1.ResourceInterpreterWebhook) { w.Rules[0].Kinds = nil }),
			want: []string{"webhooks[0].rules[0].kinds: Required value: at least one, or *"}},
		{name: "a long timeout", path: path, obj: riwc(func(w *configv1alpha1.ResourceInterpreterWebhook) { w.TimeoutSeconds = ptr.To[int32](31) }),
			want: []string{"webhooks[0].timeoutSeconds: Invalid value: 31: must be from 1 to 30 seconds"}},
		{name: "an unknown context version", path: path, obj: riwc(func(w *configv1alpha1.ResourceInterpreterWebhook) { w.InterpreterContextVersions = []string{"v2"} }),
			want: []string{`webhooks[0].interpreterContextVersions: Invalid value: []string{"v2"}: must include a version Karmada speaks: [v1alpha1]`}},
		{name: "a short name", path: path, obj: riwc(func(w *configv1alpha1.ResourceInterpreterWebhook) { w.Name = "workloads" }),
			want: []string{`webhooks[0].name: Invalid value: "workloads": must be fully qualified, with at least three segments separated by dots`}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if diff := cmp.Diff(tc.want, admit(t, tc.path, tc.obj, tc.old)); diff != "" {
				t.Errorf("causes (-want +got):\n%s", diff)
			}
		})
	}
	twice := validRIWC()
	twice.Webhooks = append(twice.Webhooks, twice.Webhooks[0])
	if got := admit(t, path, twice, nil); len(got) != 1 || !strings.Contains(got[0], `webhooks[1].name: Duplicate value: "workloads.example.com"`) {
		t.Errorf("two webhooks of one name: %v", got)
	}
}
