package fhpa

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	autoscalingv1 "k8s.io/api/autoscaling/v1"
	autoscalingv2 "k8s.io/api/autoscaling/v2"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/tools/record"
	"k8s.io/utils/ptr"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"
	"sigs.k8s.io/controller-runtime/pkg/client/interceptor"

	autoscalingv1alpha1 "github.com/karmada-go/karmada/api/autoscaling/v1alpha1"
	clusterv1alpha1 "github.com/karmada-go/karmada/api/cluster/v1alpha1"
	workv1alpha2 "github.com/karmada-go/karmada/api/work/v1alpha2"
	"github.com/karmada-go/karmada/internal/autoscaling/hpa"
	"github.com/karmada-go/karmada/internal/scheme"
)

// members is two members each running one pod of "web" asking 1 cpu.
type members struct{ replicas int32 }

func (m members) Scale(_ context.Context, cluster string, gvr schema.GroupVersionResource, ns, name string) (int32, labels.Selector, error) {
	if gvr.Resource != "deployments" || ns != "team" || name != "web" {
		return 0, nil, errors.New("not found")
	}
	return m.replicas, labels.SelectorFromSet(labels.Set{"app": "web"}), nil
}

func (m members) Pods(_ context.Context, cluster, ns string, sel labels.Selector) ([]*corev1.Pod, error) {
	if !sel.Matches(labels.Set{"app": "web"}) {
		return nil, nil
	}
	p := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "web-" + cluster, Labels: map[string]string{"app": "web"}},
		Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "app", Resources: corev1.ResourceRequirements{Requests: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("1")}}}}},
		Status: corev1.PodStatus{Phase: corev1.PodRunning, StartTime: &metav1.Time{Time: time.Now().Add(-time.Hour)},
			Conditions: []corev1.PodCondition{{Type: corev1.PodReady, Status: corev1.ConditionTrue, LastTransitionTime: metav1.Time{Time: time.Now().Add(-time.Hour)}}}}}
	return []*corev1.Pod{p}, nil
}

// usage answers every pod's cpu with one value, or fails.
type usage struct {
	milli int64
	err   error
}

func (u *usage) Resource(_ context.Context, _ []string, ns string, sel labels.Selector, res corev1.ResourceName, _ string) (hpa.Samples, error) {
	if u.err != nil {
		return nil, u.err
	}
	s := hpa.Samples{}
	for _, c := range []string{"member1", "member2"} {
		s[PodKey(c, "web-"+c)] = hpa.Sample{Milli: u.milli, Timestamp: time.Now().Add(-5 * time.Second), Window: 15 * time.Second}
	}
	return s, nil
}

// typedScales lets the fake client, which serves Deployments' scale only
// typed, answer the controller's unstructured scale reads and writes.
var typedScales = interceptor.Funcs{
	SubResourceGet: func(ctx context.Context, c client.Client, sub string, obj, body client.Object, _ ...client.SubResourceGetOption) error {
		u, ok := body.(*unstructured.Unstructured)
		if !ok {
			return c.SubResource(sub).Get(ctx, obj, body)
		}
		d := &appsv1.Deployment{ObjectMeta: metav1.ObjectMeta{Namespace: obj.GetNamespace(), Name: obj.GetName()}}
		typed := &autoscalingv1.Scale{}
		if err := c.SubResource(sub).Get(ctx, d, typed); err != nil {
			return err
		}
		m, err := runtime.DefaultUnstructuredConverter.ToUnstructured(typed)
		u.Object = m
		return err
	},
	SubResourceUpdate: func(ctx context.Context, c client.Client, sub string, obj client.Object, opts ...client.SubResourceUpdateOption) error {
		o := (&client.SubResourceUpdateOptions{}).ApplyOptions(opts)
		u, ok := o.SubResourceBody.(*unstructured.Unstructured)
		if !ok {
			return c.SubResource(sub).Update(ctx, obj, opts...)
		}
		typed := &autoscalingv1.Scale{}
		if err := runtime.DefaultUnstructuredConverter.FromUnstructured(u.Object, typed); err != nil {
			return err
		}
		d := &appsv1.Deployment{ObjectMeta: metav1.ObjectMeta{Namespace: obj.GetNamespace(), Name: obj.GetName()}}
		return c.SubResource(sub).Update(ctx, d, client.WithSubResourceBody(typed))
	},
}

// mapper knows the kinds the tests read.
func mapper() meta.RESTMapper {
	m := meta.NewDefaultRESTMapper(nil)
	m.Add(appsv1.SchemeGroupVersion.WithKind("Deployment"), meta.RESTScopeNamespace)
	m.Add(clusterv1alpha1.SchemeGroupVersion.WithKind("Cluster"), meta.RESTScopeRoot)
	m.Add(workv1alpha2.SchemeGroupVersion.WithKind("ResourceBinding"), meta.RESTScopeNamespace)
	m.Add(autoscalingv1alpha1.SchemeGroupVersion.WithKind("FederatedHPA"), meta.RESTScopeNamespace)
	return m
}

func readyCluster(name string) *clusterv1alpha1.Cluster {
	return &clusterv1alpha1.Cluster{ObjectMeta: metav1.ObjectMeta{Name: name},
		Status: clusterv1alpha1.ClusterStatus{Conditions: []metav1.Condition{{Type: clusterv1alpha1.ClusterConditionReady, Status: metav1.ConditionTrue}}}}
}

func condition(f *autoscalingv1alpha1.FederatedHPA, t autoscalingv2.HorizontalPodAutoscalerConditionType) autoscalingv2.HorizontalPodAutoscalerCondition {
	for _, c := range f.Status.Conditions {
		if c.Type == t {
			return c
		}
	}
	return autoscalingv2.HorizontalPodAutoscalerCondition{}
}

// A FederatedHPA over a Deployment divided over two members: cpu at twice
// the target doubles the template's replicas through its scale
// subresource, with the HPA's event, status and conditions; metrics that
// cannot be read leave the replicas alone and say why; a FederatedHPA in
// another namespace naming "web" reaches only its own namespace's.
func TestFederatedHPAScalesTheTemplate(t *testing.T) {
	ctx := context.Background()
	d := &appsv1.Deployment{ObjectMeta: metav1.ObjectMeta{Namespace: "team", Name: "web"}, Spec: appsv1.DeploymentSpec{Replicas: ptr.To(int32(2)),
		Selector: &metav1.LabelSelector{MatchLabels: map[string]string{"app": "web"}}}}
	rb := &workv1alpha2.ResourceBinding{ObjectMeta: metav1.ObjectMeta{Namespace: "team", Name: "web-deployment"},
		Spec: workv1alpha2.ResourceBindingSpec{Clusters: []workv1alpha2.TargetCluster{{Name: "member1", Replicas: 1}, {Name: "member2", Replicas: 1}}}}
	f := &autoscalingv1alpha1.FederatedHPA{ObjectMeta: metav1.ObjectMeta{Namespace: "team", Name: "web"},
		Spec: autoscalingv1alpha1.FederatedHPASpec{ScaleTargetRef: autoscalingv2.CrossVersionObjectReference{APIVersion: "apps/v1", Kind: "Deployment", Name: "web"},
			MinReplicas: ptr.To(int32(1)), MaxReplicas: 10,
			Metrics: []autoscalingv2.MetricSpec{{Type: autoscalingv2.ResourceMetricSourceType, Resource: &autoscalingv2.ResourceMetricSource{Name: corev1.ResourceCPU,
				Target: autoscalingv2.MetricTarget{Type: autoscalingv2.UtilizationMetricType, AverageUtilization: ptr.To(int32(50))}}}}}}
	intruder := f.DeepCopy()
	intruder.Namespace = "tenant"
	c := fake.NewClientBuilder().WithScheme(scheme.Scheme).WithRESTMapper(mapper()).WithInterceptorFuncs(typedScales).WithObjects(d, rb, f, intruder, readyCluster("member1"), readyCluster("member2")).
		WithStatusSubresource(f, intruder).Build()
	rec := record.NewFakeRecorder(20)
	u := &usage{milli: 1000}
	r := &Reconciler{Client: c, Recorder: rec, Members: members{replicas: 1}, Metrics: u}

	res, err := r.Reconcile(ctx, ctrl.Request{NamespacedName: client.ObjectKeyFromObject(f)})
	if err != nil {
		t.Fatal(err)
	}
	if res.RequeueAfter != 15*time.Second {
		t.Errorf("comes back after %s, want the 15 s sync period", res.RequeueAfter)
	}
	if err := c.Get(ctx, client.ObjectKeyFromObject(d), d); err != nil || *d.Spec.Replicas != 4 {
		t.Fatalf("template replicas %d (%v), want 4", *d.Spec.Replicas, err)
	}
	want := "Normal SuccessfulRescale New size: 4; reason: cpu resource utilization (percentage of request) above target"
	if got := <-rec.Events; got != want {
		t.Errorf("event %q, want %q", got, want)
	}
	if err := c.Get(ctx, client.ObjectKeyFromObject(f), f); err != nil {
		t.Fatal(err)
	}
	st := f.Status
	if st.CurrentReplicas != 2 || st.DesiredReplicas != 4 || st.LastScaleTime == nil || len(st.CurrentMetrics) != 1 ||
		*st.CurrentMetrics[0].Resource.Current.AverageUtilization != 100 || st.CurrentMetrics[0].Resource.Current.AverageValue.String() != "1" {
		t.Errorf("status %+v", st)
	}
	if c := condition(f, autoscalingv2.AbleToScale); c.Status != corev1.ConditionTrue || c.Reason != "SucceededRescale" || c.Message != "the HPA controller was able to update the target scale to 4" {
		t.Errorf("AbleToScale %+v", c)
	}
	if c := condition(f, autoscalingv2.ScalingActive); c.Reason != "ValidMetricFound" || c.Message != "the HPA was able to successfully calculate a replica count from cpu resource utilization (percentage of request)" {
		t.Errorf("ScalingActive %+v", c)
	}
	if c := condition(f, autoscalingv2.ScalingLimited); c.Status != corev1.ConditionFalse || c.Reason != "DesiredWithinRange" {
		t.Errorf("ScalingLimited %+v", c)
	}

	// Metrics unreadable: nothing scaled, the HPA's reasons.
	u.err = errors.New("the server could not find the requested resource (get pods.metrics.k8s.io)")
	if _, err := r.Reconcile(ctx, ctrl.Request{NamespacedName: client.ObjectKeyFromObject(f)}); err == nil || !strings.Contains(err.Error(), "failed to compute desired number of replicas") {
		t.Errorf("unreadable metrics: %v", err)
	}
	if err := c.Get(ctx, client.ObjectKeyFromObject(d), d); err != nil || *d.Spec.Replicas != 4 {
		t.Errorf("template replicas %d after a metrics failure, want 4 kept", *d.Spec.Replicas)
	}
	if got := <-rec.Events; !strings.HasPrefix(got, "Warning FailedGetResourceMetric failed to get cpu utilization: unable") && !strings.HasPrefix(got, "Warning FailedGetResourceMetric failed to get cpu utilization") {
		t.Errorf("event %q", got)
	}
	if got := <-rec.Events; !strings.HasPrefix(got, "Warning FailedComputeMetricsReplicas invalid metrics (1 invalid out of 1)") {
		t.Errorf("event %q", got)
	}
	if err := c.Get(ctx, client.ObjectKeyFromObject(f), f); err != nil {
		t.Fatal(err)
	}
	if c := condition(f, autoscalingv2.ScalingActive); c.Status != corev1.ConditionFalse || c.Reason != "FailedGetResourceMetric" ||
		!strings.HasPrefix(c.Message, "the HPA was unable to compute the replica count: failed to get cpu utilization") {
		t.Errorf("ScalingActive %+v", c)
	}

	// The tenant's FederatedHPA of the same name: its own namespace only.
	u.err = nil
	if _, err := r.Reconcile(ctx, ctrl.Request{NamespacedName: client.ObjectKeyFromObject(intruder)}); err == nil {
		t.Error("a FederatedHPA in tenant reached team's Deployment")
	}
	if err := c.Get(ctx, client.ObjectKeyFromObject(d), d); err != nil || *d.Spec.Replicas != 4 {
		t.Errorf("team's replicas %d after tenant's FederatedHPA", *d.Spec.Replicas)
	}
	if got := <-rec.Events; !strings.HasPrefix(got, "Warning FailedGetScaleTargetRef") {
		t.Errorf("tenant's event %q", got)
	}
}

// Members running no replica: scaling is disabled, as the HPA says.
func TestZeroReplicasDisableScaling(t *testing.T) {
	ctx := context.Background()
	d := &appsv1.Deployment{ObjectMeta: metav1.ObjectMeta{Namespace: "team", Name: "web"}, Spec: appsv1.DeploymentSpec{Replicas: ptr.To(int32(0))}}
	rb := &workv1alpha2.ResourceBinding{ObjectMeta: metav1.ObjectMeta{Namespace: "team", Name: "web-deployment"},
		Spec: workv1alpha2.ResourceBindingSpec{Clusters: []workv1alpha2.TargetCluster{{Name: "member1"}}}}
	f := &autoscalingv1alpha1.FederatedHPA{ObjectMeta: metav1.ObjectMeta{Namespace: "team", Name: "web"},
		Spec: autoscalingv1alpha1.FederatedHPASpec{ScaleTargetRef: autoscalingv2.CrossVersionObjectReference{APIVersion: "apps/v1", Kind: "Deployment", Name: "web"}, MaxReplicas: 5}}
	c := fake.NewClientBuilder().WithScheme(scheme.Scheme).WithRESTMapper(mapper()).WithInterceptorFuncs(typedScales).WithObjects(d, rb, f, readyCluster("member1")).WithStatusSubresource(f).Build()
	r := &Reconciler{Client: c, Recorder: record.NewFakeRecorder(5), Members: members{replicas: 0}, Metrics: &usage{milli: 1000}}
	if _, err := r.Reconcile(ctx, ctrl.Request{NamespacedName: client.ObjectKeyFromObject(f)}); err != nil {
		t.Fatal(err)
	}
	if err := c.Get(ctx, client.ObjectKeyFromObject(f), f); err != nil {
		t.Fatal(err)
	}
	if c := condition(f, autoscalingv2.ScalingActive); c.Reason != "ScalingDisabled" || c.Message != "scaling is disabled since the replica count of the target is zero" {
		t.Errorf("ScalingActive %+v", c)
	}
	if err := c.Get(ctx, client.ObjectKeyFromObject(d), d); err != nil || *d.Spec.Replicas != 0 {
		t.Errorf("replicas %d", *d.Spec.Replicas)
	}
}
