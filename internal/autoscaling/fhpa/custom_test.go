package fhpa

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	autoscalingv2 "k8s.io/api/autoscaling/v2"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/client-go/tools/record"
	"k8s.io/utils/ptr"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"

	autoscalingv1alpha1 "github.com/karmada-go/karmada/api/autoscaling/v1alpha1"
	workv1alpha2 "github.com/karmada-go/karmada/api/work/v1alpha2"
	"github.com/karmada-go/karmada/internal/autoscaling/hpa"
	"github.com/karmada-go/karmada/internal/scheme"
)

// customValues answers Pods metrics per pod name (as the adapter names
// them, without the member), an Object metric, an External metric, or
// fails.
type customValues struct {
	pods     map[string]int64
	object   int64
	external int64
	err      error
	asked    []string
}

func (c *customValues) Pods(_ context.Context, ns string, sel labels.Selector, m autoscalingv2.MetricIdentifier) (hpa.Samples, error) {
	c.asked = append(c.asked, "pods "+ns+" "+sel.String()+" "+m.Name)
	if c.err != nil {
		return nil, c.err
	}
	s := hpa.Samples{}
	for name, v := range c.pods {
		s[name] = hpa.Sample{Milli: v, Timestamp: time.Now(), Window: time.Minute}
	}
	return s, nil
}

func (c *customValues) Object(_ context.Context, ns string, ref autoscalingv2.CrossVersionObjectReference, m autoscalingv2.MetricIdentifier) (int64, time.Time, error) {
	c.asked = append(c.asked, "object "+ns+" "+ref.Kind+"/"+ref.Name+" "+m.Name)
	return c.object, time.Now(), c.err
}

func (c *customValues) External(_ context.Context, ns string, m autoscalingv2.MetricIdentifier) (int64, time.Time, error) {
	c.asked = append(c.asked, "external "+ns+" "+m.Name)
	return c.external, time.Now(), c.err
}

func customFixture(t *testing.T, metric autoscalingv2.MetricSpec) (*Reconciler, client.Client, *appsv1.Deployment, *autoscalingv1alpha1.FederatedHPA, *record.FakeRecorder) {
	t.Helper()
	d := &appsv1.Deployment{ObjectMeta: metav1.ObjectMeta{Namespace: "team", Name: "web"}, Spec: appsv1.DeploymentSpec{Replicas: ptr.To(int32(2)),
		Selector: &metav1.LabelSelector{MatchLabels: map[string]string{"app": "web"}}}}
	rb := &workv1alpha2.ResourceBinding{ObjectMeta: metav1.ObjectMeta{Namespace: "team", Name: "web-deployment"},
		Spec: workv1alpha2.ResourceBindingSpec{Clusters: []workv1alpha2.TargetCluster{{Name: "member1", Replicas: 1}, {Name: "member2", Replicas: 1}}}}
	f := &autoscalingv1alpha1.FederatedHPA{ObjectMeta: metav1.ObjectMeta{Namespace: "team", Name: "web"},
		Spec: autoscalingv1alpha1.FederatedHPASpec{ScaleTargetRef: autoscalingv2.CrossVersionObjectReference{APIVersion: "apps/v1", Kind: "Deployment", Name: "web"},
			MinReplicas: ptr.To(int32(1)), MaxReplicas: 10, Metrics: []autoscalingv2.MetricSpec{metric},
			// No scale-up limit: the proposal itself is checked.
			Behavior: &autoscalingv2.HorizontalPodAutoscalerBehavior{ScaleUp: &autoscalingv2.HPAScalingRules{StabilizationWindowSeconds: ptr.To(int32(0)),
				Policies: []autoscalingv2.HPAScalingPolicy{{Type: autoscalingv2.PodsScalingPolicy, Value: 100, PeriodSeconds: 15}}}}}}
	c := fake.NewClientBuilder().WithScheme(scheme.Scheme).WithRESTMapper(mapper()).WithInterceptorFuncs(typedScales).
		WithObjects(d, rb, f, readyCluster("member1"), readyCluster("member2")).WithStatusSubresource(f).Build()
	rec := record.NewFakeRecorder(20)
	return &Reconciler{Client: c, Recorder: rec, Members: members{replicas: 1}, Metrics: &usage{milli: 500}}, c, d, f, rec
}

// A Pods metric: the pods' values (named without their member, as the
// adapter serves them) averaged against the target, as the HPA does.
func TestFederatedHPAScalesOnAPodsMetric(t *testing.T) {
	ctx := context.Background()
	r, c, d, f, rec := customFixture(t, autoscalingv2.MetricSpec{Type: autoscalingv2.PodsMetricSourceType, Pods: &autoscalingv2.PodsMetricSource{
		Metric: autoscalingv2.MetricIdentifier{Name: "requests"}, Target: autoscalingv2.MetricTarget{Type: autoscalingv2.AverageValueMetricType, AverageValue: resource.NewQuantity(10, resource.DecimalSI)}}})
	values := &customValues{pods: map[string]int64{"web-member1": 30000, "web-member2": 30000, "web-elsewhere": 99000}}
	r.Custom = values
	if _, err := r.Reconcile(ctx, ctrl.Request{NamespacedName: client.ObjectKeyFromObject(f)}); err != nil {
		t.Fatal(err)
	}
	// 30 per pod against 10: three times the two pods.
	if err := c.Get(ctx, client.ObjectKeyFromObject(d), d); err != nil || *d.Spec.Replicas != 6 {
		t.Fatalf("template replicas %d (%v), want 6", *d.Spec.Replicas, err)
	}
	if got, want := <-rec.Events, "Normal SuccessfulRescale New size: 6; reason: pods metric requests above target"; got != want {
		t.Errorf("event %q, want %q", got, want)
	}
	if err := c.Get(ctx, client.ObjectKeyFromObject(f), f); err != nil {
		t.Fatal(err)
	}
	if st := f.Status.CurrentMetrics; len(st) != 1 || st[0].Pods == nil || st[0].Pods.Current.AverageValue.String() != "30" || st[0].Pods.Metric.Name != "requests" {
		t.Errorf("current metrics %+v", st)
	}
	if want := "pods team app=web requests"; len(values.asked) != 1 || values.asked[0] != want {
		t.Errorf("asked %v, want [%s]", values.asked, want)
	}

	// The API fails: the HPA's reason and message, nothing scaled.
	values.err = errors.New(`the server could not find the requested resource (get pods.custom.metrics.k8s.io *)`)
	if _, err := r.Reconcile(ctx, ctrl.Request{NamespacedName: client.ObjectKeyFromObject(f)}); err == nil {
		t.Error("a failed read scaled")
	}
	if got := <-rec.Events; !strings.HasPrefix(got, "Warning FailedGetPodsMetric failed to get pods metric value: unable to get metric requests:") {
		t.Errorf("event %q", got)
	}
	if err := c.Get(ctx, client.ObjectKeyFromObject(f), f); err != nil {
		t.Fatal(err)
	}
	if cond := condition(f, autoscalingv2.ScalingActive); cond.Status != corev1.ConditionFalse || cond.Reason != "FailedGetPodsMetric" {
		t.Errorf("ScalingActive %+v", cond)
	}
}

// Object and External metrics: a value target scales the ready pods by
// the ratio; an average value target divides the value by it.
func TestFederatedHPAScalesOnObjectAndExternalMetrics(t *testing.T) {
	ctx := context.Background()
	cases := []struct {
		name   string
		metric autoscalingv2.MetricSpec
		values *customValues
		want   int32
		reason string
	}{
		{"object value", autoscalingv2.MetricSpec{Type: autoscalingv2.ObjectMetricSourceType, Object: &autoscalingv2.ObjectMetricSource{
			DescribedObject: autoscalingv2.CrossVersionObjectReference{APIVersion: "v1", Kind: "Service", Name: "web"},
			Metric:          autoscalingv2.MetricIdentifier{Name: "hits"},
			Target:          autoscalingv2.MetricTarget{Type: autoscalingv2.ValueMetricType, Value: resource.NewQuantity(100, resource.DecimalSI)}}},
			&customValues{object: 250000}, 5, "Service metric hits above target"},
		{"object average", autoscalingv2.MetricSpec{Type: autoscalingv2.ObjectMetricSourceType, Object: &autoscalingv2.ObjectMetricSource{
			DescribedObject: autoscalingv2.CrossVersionObjectReference{APIVersion: "v1", Kind: "Service", Name: "web"},
			Metric:          autoscalingv2.MetricIdentifier{Name: "hits"},
			Target:          autoscalingv2.MetricTarget{Type: autoscalingv2.AverageValueMetricType, AverageValue: resource.NewQuantity(50, resource.DecimalSI)}}},
			&customValues{object: 350000}, 7, "Service metric hits above target"},
		{"external value", autoscalingv2.MetricSpec{Type: autoscalingv2.ExternalMetricSourceType, External: &autoscalingv2.ExternalMetricSource{
			Metric: autoscalingv2.MetricIdentifier{Name: "queue_length"},
			Target: autoscalingv2.MetricTarget{Type: autoscalingv2.ValueMetricType, Value: resource.NewQuantity(10, resource.DecimalSI)}}},
			&customValues{external: 40000}, 8, "external metric queue_length() above target"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			r, c, d, f, rec := customFixture(t, tc.metric)
			r.Custom = tc.values
			if _, err := r.Reconcile(ctx, ctrl.Request{NamespacedName: client.ObjectKeyFromObject(f)}); err != nil {
				t.Fatal(err)
			}
			if err := c.Get(ctx, client.ObjectKeyFromObject(d), d); err != nil || *d.Spec.Replicas != tc.want {
				t.Fatalf("template replicas %d (%v), want %d", *d.Spec.Replicas, err, tc.want)
			}
			if got, want := <-rec.Events, "Normal SuccessfulRescale New size: "+itoa(tc.want)+"; reason: "+tc.reason; got != want {
				t.Errorf("event %q, want %q", got, want)
			}
		})
	}
}

func itoa(n int32) string { return resource.NewQuantity(int64(n), resource.DecimalSI).String() }
