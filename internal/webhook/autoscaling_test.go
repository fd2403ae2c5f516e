package webhook

import (
	"context"
	"testing"

	"github.com/google/go-cmp/cmp"
	authenticationv1 "k8s.io/api/authentication/v1"
	autoscalingv2 "k8s.io/api/autoscaling/v2"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	autoscalingv1alpha1 "github.com/karmada-go/karmada/api/autoscaling/v1alpha1"
	"github.com/karmada-go/karmada/internal/scheme"
)

func validFHPA() *autoscalingv1alpha1.FederatedHPA {
	return &autoscalingv1alpha1.FederatedHPA{ObjectMeta: metav1.ObjectMeta{Namespace: "shop", Name: "web"},
		Spec: autoscalingv1alpha1.FederatedHPASpec{
			ScaleTargetRef: autoscalingv2.CrossVersionObjectReference{APIVersion: "apps/v1", Kind: "Deployment", Name: "web"},
			MinReplicas:    ptr.To[int32](1), MaxReplicas: 10,
			Metrics: []autoscalingv2.MetricSpec{{Type: autoscalingv2.ResourceMetricSourceType, Resource: &autoscalingv2.ResourceMetricSource{
				Name: "cpu", Target: autoscalingv2.MetricTarget{Type: autoscalingv2.UtilizationMetricType, AverageUtilization: ptr.To[int32](50)}}}},
		}}
}

func validCronFHPA() *autoscalingv1alpha1.CronFederatedHPA {
	return &autoscalingv1alpha1.CronFederatedHPA{ObjectMeta: metav1.ObjectMeta{Namespace: "shop", Name: "web"},
		Spec: autoscalingv1alpha1.CronFederatedHPASpec{
			ScaleTargetRef: autoscalingv2.CrossVersionObjectReference{APIVersion: "apps/v1", Kind: "Deployment", Name: "web"},
			Rules:          []autoscalingv1alpha1.CronFederatedHPARule{{Name: "morning", Schedule: "0 8 * * 1-5", TargetReplicas: ptr.To[int32](5), TimeZone: ptr.To("Europe/Paris")}},
		}}
}

// TestAutoscalingRules: the rules of FederatedHPA and CronFederatedHPA,
// with the exact causes (Kubernetes' HPA messages, Karmada's cron ones).
func TestAutoscalingRules(t *testing.T) {
	fhpa := func(mutate func(*autoscalingv1alpha1.FederatedHPA)) *autoscalingv1alpha1.FederatedHPA {
		f := validFHPA()
		mutate(f)
		return f
	}
	cron := func(mutate func(*autoscalingv1alpha1.CronFederatedHPA)) *autoscalingv1alpha1.CronFederatedHPA {
		c := validCronFHPA()
		mutate(c)
		return c
	}
	onFHPA := func(c *autoscalingv1alpha1.CronFederatedHPA) {
		c.Spec.ScaleTargetRef = autoscalingv2.CrossVersionObjectReference{APIVersion: "autoscaling.karmada.io/v1alpha1", Kind: "FederatedHPA", Name: "web"}
		c.Spec.Rules[0].TargetReplicas = nil
		c.Spec.Rules[0].TargetMinReplicas, c.Spec.Rules[0].TargetMaxReplicas = ptr.To[int32](2), ptr.To[int32](8)
	}
	const fp, cp = "/validate-federatedhpa", "/validate-cronfederatedhpa"
	for _, tc := range []ruleCase{
		{name: "a valid FederatedHPA", path: fp, obj: validFHPA()},
		{name: "bounds out of order", path: fp, obj: fhpa(func(f *autoscalingv1alpha1.FederatedHPA) {
			f.Spec.MinReplicas, f.Spec.MaxReplicas = ptr.To[int32](5), 3
		}),
			want: []string{"spec.maxReplicas: Invalid value: 3: must be greater than or equal to `minReplicas`"}},
		{name: "scale to zero", path: fp, obj: fhpa(func(f *autoscalingv1alpha1.FederatedHPA) {
			f.Spec.MinReplicas, f.Spec.MaxReplicas = ptr.To[int32](0), 0
		}),
			want: []string{"spec.minReplicas: Invalid value: 0: must be greater than or equal to 1", "spec.maxReplicas: Invalid value: 0: must be greater than 0"}},
		{name: "no target", path: fp, obj: fhpa(func(f *autoscalingv1alpha1.FederatedHPA) {
			f.Spec.ScaleTargetRef = autoscalingv2.CrossVersionObjectReference{}
		}),
			want: []string{"spec.scaleTargetRef.kind: Required value", "spec.scaleTargetRef.name: Required value"}},
		{name: "a target without a scale subresource", path: fp, obj: fhpa(func(f *autoscalingv1alpha1.FederatedHPA) {
			f.Spec.ScaleTargetRef = autoscalingv2.CrossVersionObjectReference{APIVersion: "v1", Kind: "ConfigMap", Name: "web"}
		}), want: []string{`spec.scaleTargetRef.kind: Invalid value: "ConfigMap": v1 ConfigMap has no scale subresource: only kinds that serve one (Deployments, StatefulSets, ...) can be scaled`}},
		{name: "metrics: two sources, a wrong target, a missing source", path: fp, obj: fhpa(func(f *autoscalingv1alpha1.FederatedHPA) {
			f.Spec.Metrics[0].Pods = &autoscalingv2.PodsMetricSource{Metric: autoscalingv2.MetricIdentifier{Name: "qps"}}
			f.Spec.Metrics = append(f.Spec.Metrics,
				autoscalingv2.MetricSpec{Type: autoscalingv2.PodsMetricSourceType, Pods: &autoscalingv2.PodsMetricSource{Metric: autoscalingv2.MetricIdentifier{Name: "qps"},
					Target: autoscalingv2.MetricTarget{Type: autoscalingv2.UtilizationMetricType, AverageUtilization: ptr.To[int32](0)}}},
				autoscalingv2.MetricSpec{Type: autoscalingv2.ExternalMetricSourceType},
				autoscalingv2.MetricSpec{Type: "Queue"},
				autoscalingv2.MetricSpec{Type: autoscalingv2.ObjectMetricSourceType, Object: &autoscalingv2.ObjectMetricSource{
					DescribedObject: autoscalingv2.CrossVersionObjectReference{Kind: "Ingress", Name: "web"}, Metric: autoscalingv2.MetricIdentifier{Name: "rps"},
					Target: autoscalingv2.MetricTarget{Type: autoscalingv2.ValueMetricType, Value: resource.NewQuantity(-1, resource.DecimalSI)}}})
		}), want: []string{
			"spec.metrics[0].pods: Forbidden: must populate the given metric source only",
			`spec.metrics[1].pods.target.type: Invalid value: "Utilization": utilization is a target of resource metrics only`,
			"spec.metrics[1].pods.target.averageUtilization: Invalid value: 0: must be greater than 0",
			"spec.metrics[2].external: Required value: must populate information for the given metric source",
			`spec.metrics[3].type: Unsupported value: "Queue": supported values: "ContainerResource", "External", "Object", "Pods", "Resource"`,
			`spec.metrics[4].object.target.value: Invalid value: "-1": must be positive`,
		}},
		{name: "behaviour out of bounds", path: fp, obj: fhpa(func(f *autoscalingv1alpha1.FederatedHPA) {
			f.Spec.Behavior = &autoscalingv2.HorizontalPodAutoscalerBehavior{
				ScaleUp: &autoscalingv2.HPAScalingRules{StabilizationWindowSeconds: ptr.To[int32](3601), SelectPolicy: ptr.To(autoscalingv2.ScalingPolicySelect("Any")),
					Policies: []autoscalingv2.HPAScalingPolicy{{Type: "Nodes", Value: 0, PeriodSeconds: 1801}}},
				ScaleDown: &autoscalingv2.HPAScalingRules{SelectPolicy: ptr.To(autoscalingv2.DisabledPolicySelect)},
			}
		}), want: []string{
			"spec.behavior.scaleUp.stabilizationWindowSeconds: Invalid value: 3601: must be between 0 and 3600",
			`spec.behavior.scaleUp.selectPolicy: Unsupported value: "Any": supported values: "Disabled", "Max", "Min"`,
			`spec.behavior.scaleUp.policies[0].type: Unsupported value: "Nodes": supported values: "Percent", "Pods"`,
			"spec.behavior.scaleUp.policies[0].value: Invalid value: 0: must be greater than zero",
			"spec.behavior.scaleUp.policies[0].periodSeconds: Invalid value: 1801: must be between 1 and 1800",
		}},
		{name: "a valid CronFederatedHPA", path: cp, obj: validCronFHPA()},
		{name: "a valid CronFederatedHPA of a FederatedHPA", path: cp, obj: cron(onFHPA)},
		{name: "a bad schedule, time zone and duplicate rule", path: cp, obj: cron(func(c *autoscalingv1alpha1.CronFederatedHPA) {
			c.Spec.Rules = append(c.Spec.Rules, autoscalingv1alpha1.CronFederatedHPARule{Name: "morning", Schedule: "61 * * * *", TargetReplicas: ptr.To[int32](1), TimeZone: ptr.To("Mars/Olympus")},
				autoscalingv1alpha1.CronFederatedHPARule{Name: "tz", Schedule: "CRON_TZ=UTC 0 8 * * *", TargetReplicas: ptr.To[int32](1)})
		}), want: []string{
			`spec.rules[1].name: Duplicate value: "morning"`,
			`spec.rules[1].schedule: Invalid value: "61 * * * *": invalid cron format: end of range (61) above maximum (59): 61`,
			`spec.rules[1].timeZone: Invalid value: "Mars/Olympus": unknown time zone Mars/Olympus`,
			`spec.rules[2].schedule: Invalid value: "CRON_TZ=UTC 0 8 * * *": invalid cron format: the time zone is set with timeZone, not in the schedule`,
		}},
		{name: "a workload rule without replicas", path: cp, obj: cron(func(c *autoscalingv1alpha1.CronFederatedHPA) { c.Spec.Rules[0].TargetReplicas = nil }),
			want: []string{`spec.rules[0]: Invalid value: "": targetReplicas cannot be nil if you want to scale Deployment`}},
		{name: "a FederatedHPA rule without bounds, and one out of order", path: cp, obj: cron(func(c *autoscalingv1alpha1.CronFederatedHPA) {
			onFHPA(c)
			c.Spec.Rules[0].TargetMinReplicas, c.Spec.Rules[0].TargetMaxReplicas = nil, nil
			c.Spec.Rules = append(c.Spec.Rules, autoscalingv1alpha1.CronFederatedHPARule{Name: "night", Schedule: "@daily", TargetMinReplicas: ptr.To[int32](5), TargetMaxReplicas: ptr.To[int32](2)})
		}), want: []string{
			`spec.rules[0]: Invalid value: "": targetMinReplicas and targetMaxReplicas cannot be nil at the same time if you want to scale FederatedHPA`,
			"spec.rules[1].targetMaxReplicas: Invalid value: 2: must be greater than or equal to targetMinReplicas",
		}},
		{name: "a karmada.io kind other than FederatedHPA", path: cp, obj: cron(func(c *autoscalingv1alpha1.CronFederatedHPA) {
			c.Spec.ScaleTargetRef = autoscalingv2.CrossVersionObjectReference{APIVersion: "autoscaling.karmada.io/v1alpha1", Kind: "CronFederatedHPA", Name: "web"}
		}), want: []string{`spec.scaleTargetRef.kind: Invalid value: "CronFederatedHPA": invalid scaleTargetRef kind: CronFederatedHPA, only support FederatedHPA`}},
		{name: "a workload without a scale subresource", path: cp, obj: cron(func(c *autoscalingv1alpha1.CronFederatedHPA) {
			c.Spec.ScaleTargetRef = autoscalingv2.CrossVersionObjectReference{APIVersion: "v1", Kind: "ConfigMap", Name: "web"}
		}), want: []string{`spec.scaleTargetRef.kind: Invalid value: "ConfigMap": v1 ConfigMap has no scale subresource: only kinds that serve one (Deployments, StatefulSets, ...) can be scaled`}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if diff := cmp.Diff(tc.want, admit(t, tc.path, tc.obj, tc.old)); diff != "" {
				t.Errorf("causes (-want +got):\n%s", diff)
			}
		})
	}
}

// An autoscaler's author needs the right it will have the controller
// manager use: update on the target's scale subresource (or, for a
// CronFederatedHPA of a FederatedHPA, on the FederatedHPA) in its
// namespace. An update that keeps the target is not asked again.
func TestAutoscalerAuthorMayScaleItsTarget(t *testing.T) {
	admin := authenticationv1.UserInfo{Username: "admin", Groups: []string{"system:masters"}}
	tenant := authenticationv1.UserInfo{Username: "tenant-a", Groups: []string{"system:authenticated"}}
	auth := &testAuthorizer{}
	admitWith := func(path string, user authenticationv1.UserInfo, obj, old client.Object) []string {
		t.Helper()
		for _, e := range EndpointsWith(scheme.Scheme, Options{Authorizer: auth, ScaleTargets: testScaleTargets{}}) {
			if e.Path == path {
				req := request(t, e, obj, old)
				req.UserInfo = user
				return denials(t, e.Handler().Handle(context.Background(), req))
			}
		}
		t.Fatalf("no endpoint %s", path)
		return nil
	}
	if got := admitWith("/validate-federatedhpa", admin, validFHPA(), nil); got != nil {
		t.Errorf("an administrator's FederatedHPA denied: %v", got)
	}
	if len(auth.asked) != 1 || auth.asked[0].Resource != "deployments" || auth.asked[0].Subresource != "scale" || auth.asked[0].Group != "apps" ||
		auth.asked[0].Namespace != "shop" || auth.asked[0].Name != "web" || auth.asked[0].Verb != "update" {
		t.Errorf("asked %+v, want update deployments/scale apps shop/web", auth.asked)
	}
	want := `spec.scaleTargetRef: Forbidden: tenant-a may not update deployments/scale.apps "web" in namespace shop: the autoscaler would have the controller manager do it, so its author needs that right`
	if d := cmp.Diff([]string{want}, admitWith("/validate-federatedhpa", tenant, validFHPA(), nil)); d != "" {
		t.Errorf("a tenant's FederatedHPA (-want,+got):\n%s", d)
	}
	if d := cmp.Diff([]string{want}, admitWith("/validate-cronfederatedhpa", tenant, validCronFHPA(), nil)); d != "" {
		t.Errorf("a tenant's CronFederatedHPA (-want,+got):\n%s", d)
	}
	ofFHPA := validCronFHPA()
	ofFHPA.Spec.ScaleTargetRef = autoscalingv2.CrossVersionObjectReference{APIVersion: "autoscaling.karmada.io/v1alpha1", Kind: "FederatedHPA", Name: "web"}
	ofFHPA.Spec.Rules[0].TargetReplicas, ofFHPA.Spec.Rules[0].TargetMinReplicas = nil, ptr.To[int32](2)
	wantFHPA := `spec.scaleTargetRef: Forbidden: tenant-a may not update federatedhpas.autoscaling.karmada.io "web" in namespace shop: the autoscaler would have the controller manager do it, so its author needs that right`
	if d := cmp.Diff([]string{wantFHPA}, admitWith("/validate-cronfederatedhpa", tenant, ofFHPA, nil)); d != "" {
		t.Errorf("a tenant's CronFederatedHPA of a FederatedHPA (-want,+got):\n%s", d)
	}
	// The target unchanged: a tenant may edit an administrator's bounds.
	auth.asked = nil
	changed := validFHPA()
	changed.Spec.MaxReplicas = 20
	if got := admitWith("/validate-federatedhpa", tenant, changed, validFHPA()); got != nil || len(auth.asked) != 0 {
		t.Errorf("an update keeping the target: %v (asked %v)", got, auth.asked)
	}
	retarget := validFHPA()
	retarget.Spec.ScaleTargetRef.Name = "other"
	if got := admitWith("/validate-federatedhpa", tenant, retarget, validFHPA()); len(got) != 1 {
		t.Errorf("a tenant retargeting: %v, want refused", got)
	}
}

// A FederatedHPA gets autoscaling/v2's defaults, as Karmada's webhook
// gives them: minReplicas 1, cpu at 80 %, and a behaviour that is given
// completed; without a behaviour it stays unset.
func TestFederatedHPADefaults(t *testing.T) {
	bare := `{"apiVersion":"autoscaling.karmada.io/v1alpha1","kind":"FederatedHPA","metadata":{"name":"web","namespace":"shop"},
		"spec":{"scaleTargetRef":{"apiVersion":"apps/v1","kind":"Deployment","name":"web"},"maxReplicas":5}}`
	got := mutate(t, "/mutate-federatedhpa", "shop", []byte(bare), nil)["spec"].(map[string]any)
	want := fromJSON(t, `{"scaleTargetRef":{"apiVersion":"apps/v1","kind":"Deployment","name":"web"},"maxReplicas":5,"minReplicas":1,
		"metrics":[{"type":"Resource","resource":{"name":"cpu","target":{"type":"Utilization","averageUtilization":80}}}]}`)
	if d := cmp.Diff(want, got); d != "" {
		t.Errorf("a bare FederatedHPA (-want,+got):\n%s", d)
	}
	window := `{"apiVersion":"autoscaling.karmada.io/v1alpha1","kind":"FederatedHPA","metadata":{"name":"web","namespace":"shop"},
		"spec":{"scaleTargetRef":{"apiVersion":"apps/v1","kind":"Deployment","name":"web"},"minReplicas":2,"maxReplicas":5,
		"behavior":{"scaleDown":{"stabilizationWindowSeconds":0}}}}`
	got = mutate(t, "/mutate-federatedhpa", "shop", []byte(window), nil)["spec"].(map[string]any)
	wantBehavior := fromJSON(t, `{
		"scaleUp":{"stabilizationWindowSeconds":0,"selectPolicy":"Max","policies":[{"type":"Pods","value":4,"periodSeconds":15},{"type":"Percent","value":100,"periodSeconds":15}]},
		"scaleDown":{"stabilizationWindowSeconds":0,"selectPolicy":"Max","policies":[{"type":"Percent","value":100,"periodSeconds":15}]}}`)
	if d := cmp.Diff(wantBehavior, got["behavior"]); d != "" {
		t.Errorf("a behaviour with only a scale-down window (-want,+got):\n%s", d)
	}
	if got["minReplicas"] != float64(2) {
		t.Errorf("minReplicas %v, want 2 kept", got["minReplicas"])
	}
}
