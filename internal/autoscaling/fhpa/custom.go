package fhpa

import (
	"context"
	"fmt"
	"math"
	"strings"
	"time"

	autoscalingv2 "k8s.io/api/autoscaling/v2"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime/schema"
	customclient "k8s.io/metrics/pkg/client/custom_metrics"
	externalclient "k8s.io/metrics/pkg/client/external_metrics"

	autoscalingv1alpha1 "github.com/karmada-go/karmada/api/autoscaling/v1alpha1"
	"github.com/karmada-go/karmada/internal/autoscaling/hpa"
	"github.com/karmada-go/karmada/internal/metrics"
)

// CustomMetrics reads the metrics that are not a pod's resources: Pods
// and Object metrics (custom.metrics.k8s.io) and External metrics
// (external.metrics.k8s.io).
type CustomMetrics interface {
	// Pods is each matching pod's value of the metric, by pod name.
	Pods(ctx context.Context, namespace string, selector labels.Selector, metric autoscalingv2.MetricIdentifier) (hpa.Samples, error)
	// Object is the described object's value, in milli-units.
	Object(ctx context.Context, namespace string, ref autoscalingv2.CrossVersionObjectReference, metric autoscalingv2.MetricIdentifier) (int64, time.Time, error)
	// External is the sum of the metric's values, in milli-units.
	External(ctx context.Context, namespace string, metric autoscalingv2.MetricIdentifier) (int64, time.Time, error)
}

// ControlPlaneMetrics reads them from the karmada-apiserver, as Karmada's
// FederatedHPA does: custom.metrics.k8s.io is karmada-metrics-adapter's
// (the members' values added up by object); external.metrics.k8s.io is
// whatever the control plane registers for it (karmada-metrics-adapter
// serves none, as Karmada's does not).
type ControlPlaneMetrics struct {
	CustomClient   customclient.CustomMetricsClient
	ExternalClient externalclient.ExternalMetricsClient
}

func selectorOf(s *metav1.LabelSelector) (labels.Selector, error) {
	if s == nil {
		return labels.Everything(), nil
	}
	return metav1.LabelSelectorAsSelector(s)
}

// Pods lists the metric of the pods the selector picks.
func (m ControlPlaneMetrics) Pods(_ context.Context, namespace string, selector labels.Selector, metric autoscalingv2.MetricIdentifier) (hpa.Samples, error) {
	ms, err := selectorOf(metric.Selector)
	if err != nil {
		return nil, err
	}
	list, err := m.CustomClient.NamespacedMetrics(namespace).GetForObjects(schema.GroupKind{Kind: "Pod"}, selector, metric.Name, ms)
	if err != nil {
		return nil, fmt.Errorf("unable to fetch metrics from custom metrics API: %w", err)
	}
	if len(list.Items) == 0 {
		return nil, fmt.Errorf("no metrics returned from custom metrics API")
	}
	out := make(hpa.Samples, len(list.Items))
	for _, v := range list.Items {
		window := time.Minute
		if v.WindowSeconds != nil {
			window = time.Duration(*v.WindowSeconds) * time.Second
		}
		out[v.DescribedObject.Name] = hpa.Sample{Milli: v.Value.MilliValue(), Timestamp: v.Timestamp.Time, Window: window}
	}
	return out, nil
}

// Object gets the metric of the object the reference names.
func (m ControlPlaneMetrics) Object(_ context.Context, namespace string, ref autoscalingv2.CrossVersionObjectReference, metric autoscalingv2.MetricIdentifier) (int64, time.Time, error) {
	gv, err := schema.ParseGroupVersion(ref.APIVersion)
	if err != nil {
		return 0, time.Time{}, fmt.Errorf("unable to parse the described object's apiVersion %q: %w", ref.APIVersion, err)
	}
	ms, err := selectorOf(metric.Selector)
	if err != nil {
		return 0, time.Time{}, err
	}
	gk := schema.GroupKind{Group: gv.Group, Kind: ref.Kind}
	if gk.Kind == "Namespace" && gk.Group == "" {
		// A namespace's metric is asked of the root scope.
		val, err := m.CustomClient.RootScopedMetrics().GetForObject(gk, namespace, metric.Name, ms)
		if err != nil {
			return 0, time.Time{}, fmt.Errorf("unable to fetch metrics from custom metrics API: %w", err)
		}
		return val.Value.MilliValue(), val.Timestamp.Time, nil
	}
	val, err := m.CustomClient.NamespacedMetrics(namespace).GetForObject(gk, ref.Name, metric.Name, ms)
	if err != nil {
		return 0, time.Time{}, fmt.Errorf("unable to fetch metrics from custom metrics API: %w", err)
	}
	return val.Value.MilliValue(), val.Timestamp.Time, nil
}

// External adds up the metric's values.
func (m ControlPlaneMetrics) External(_ context.Context, namespace string, metric autoscalingv2.MetricIdentifier) (int64, time.Time, error) {
	ms, err := selectorOf(metric.Selector)
	if err != nil {
		return 0, time.Time{}, err
	}
	list, err := m.ExternalClient.NamespacedMetrics(namespace).List(metric.Name, ms)
	if err != nil {
		return 0, time.Time{}, fmt.Errorf("unable to fetch metrics from external metrics API: %w", err)
	}
	if len(list.Items) == 0 {
		return 0, time.Time{}, fmt.Errorf("no metrics returned from external metrics API")
	}
	var sum int64
	for _, v := range list.Items {
		sum += v.Value.MilliValue()
	}
	return sum, list.Items[0].Timestamp.Time, nil
}

// computeCustomMetric runs a Pods, Object or External metric as
// kube-controller-manager's HPA does (its reasons, messages and status).
func (r *Reconciler) computeCustomMetric(ctx context.Context, f *autoscalingv1alpha1.FederatedHPA, m autoscalingv2.MetricSpec, g *gathered, current int32, now time.Time) (int32, string, autoscalingv2.MetricStatus, error) {
	reason := "FailedGet" + string(m.Type) + "Metric"
	fail := func(err error) (int32, string, autoscalingv2.MetricStatus, error) {
		r.Recorder.Event(f, corev1.EventTypeWarning, reason, err.Error())
		setCondition(f, autoscalingv2.ScalingActive, corev1.ConditionFalse, reason, "the HPA was unable to compute the replica count: %v", err, now)
		return 0, "", autoscalingv2.MetricStatus{}, err
	}
	if r.Custom == nil {
		return fail(fmt.Errorf("no client of the custom and external metrics APIs is configured"))
	}
	var (
		replicas int32
		name     string
		st       autoscalingv2.MetricStatus
		err      error
	)
	switch m.Type {
	case autoscalingv2.PodsMetricSourceType:
		if m.Pods == nil {
			return r.invalidMetric(f, m, now)
		}
		replicas, name, st, err = r.podsMetric(ctx, f.Namespace, m, g, current, now)
	case autoscalingv2.ObjectMetricSourceType:
		if m.Object == nil {
			return r.invalidMetric(f, m, now)
		}
		replicas, name, st, err = r.objectMetric(ctx, f.Namespace, m, g, current)
	default: // External
		if m.External == nil {
			return r.invalidMetric(f, m, now)
		}
		replicas, name, st, err = r.externalMetric(ctx, f.Namespace, m, g, current)
	}
	if err != nil {
		return fail(err)
	}
	return replicas, name, st, nil
}

// observePull records how long a pull from the metrics APIs took.
func observePull(label string, since time.Time, err error) {
	metrics.FederatedHPAPullMetricsDuration.WithLabelValues(metrics.ResultOf(err), label).Observe(time.Since(since).Seconds())
}

// podsMetric is a Pods metric's proposal: the pods' average against the
// target average value.
func (r *Reconciler) podsMetric(ctx context.Context, namespace string, m autoscalingv2.MetricSpec, g *gathered, current int32, now time.Time) (int32, string, autoscalingv2.MetricStatus, error) {
	if m.Pods.Target.AverageValue == nil {
		return 0, "", autoscalingv2.MetricStatus{}, fmt.Errorf("invalid pods metric source: the target average value must be set")
	}
	pull := time.Now()
	samples, err := r.Custom.Pods(ctx, namespace, g.selector, m.Pods.Metric)
	observePull("pods", pull, err)
	if err != nil {
		return 0, "", autoscalingv2.MetricStatus{}, fmt.Errorf("failed to get pods metric value: unable to get metric %s: %w", m.Pods.Metric.Name, err)
	}
	// The adapter names pods without their member (a name found in two
	// members is one value, added up, as Karmada's adapter answers).
	known := make(hpa.Samples, len(samples))
	for _, p := range g.pods {
		_, name, _ := strings.Cut(p.Name, "/")
		if s, ok := samples[name]; ok {
			known[p.Name] = s
		}
	}
	result, err := hpa.AverageValue(current, m.Pods.Target.AverageValue.MilliValue(), "", g.pods, known, r.Config, now)
	if err != nil {
		return 0, "", autoscalingv2.MetricStatus{}, fmt.Errorf("failed to get pods metric value: %w", err)
	}
	return result.Replicas, fmt.Sprintf("pods metric %s", m.Pods.Metric.Name), autoscalingv2.MetricStatus{Type: m.Type, Pods: &autoscalingv2.PodsMetricStatus{
		Metric: m.Pods.Metric, Current: autoscalingv2.MetricValueStatus{AverageValue: resource.NewMilliQuantity(result.Average, resource.DecimalSI)}}}, nil
}

// objectMetric is an Object metric's proposal: the object's value against
// a value or an average value target.
func (r *Reconciler) objectMetric(ctx context.Context, namespace string, m autoscalingv2.MetricSpec, g *gathered, current int32) (int32, string, autoscalingv2.MetricStatus, error) {
	target := m.Object.Target
	if target.Value == nil && target.AverageValue == nil {
		return 0, "", autoscalingv2.MetricStatus{}, fmt.Errorf("invalid object metric source: neither a value target nor an average value target was set")
	}
	ref := m.Object.DescribedObject
	pull := time.Now()
	value, _, err := r.Custom.Object(ctx, namespace, ref, m.Object.Metric)
	observePull("object", pull, err)
	if err != nil {
		return 0, "", autoscalingv2.MetricStatus{}, fmt.Errorf("failed to get object metric value: unable to get metric %s of %s %s/%s: %w", m.Object.Metric.Name, ref.Kind, namespace, ref.Name, err)
	}
	st := autoscalingv2.MetricStatus{Type: m.Type, Object: &autoscalingv2.ObjectMetricStatus{DescribedObject: ref, Metric: m.Object.Metric}}
	replicas, err := valueProposal(value, target, g, current, &st.Object.Current, r.Config)
	if err != nil {
		return 0, "", autoscalingv2.MetricStatus{}, fmt.Errorf("failed to get object metric value: %w", err)
	}
	return replicas, fmt.Sprintf("%s metric %s", ref.Kind, m.Object.Metric.Name), st, nil
}

// externalMetric is an External metric's proposal: the sum of its values
// against a value or an average value target.
func (r *Reconciler) externalMetric(ctx context.Context, namespace string, m autoscalingv2.MetricSpec, g *gathered, current int32) (int32, string, autoscalingv2.MetricStatus, error) {
	target := m.External.Target
	if target.Value == nil && target.AverageValue == nil {
		return 0, "", autoscalingv2.MetricStatus{}, fmt.Errorf("invalid external metric source: neither a value target nor an average value target was set")
	}
	pull := time.Now()
	value, _, err := r.Custom.External(ctx, namespace, m.External.Metric)
	observePull("external", pull, err)
	if err != nil {
		return 0, "", autoscalingv2.MetricStatus{}, fmt.Errorf("failed to get %s external metric value: %w", m.External.Metric.Name, err)
	}
	st := autoscalingv2.MetricStatus{Type: m.Type, External: &autoscalingv2.ExternalMetricStatus{Metric: m.External.Metric}}
	replicas, err := valueProposal(value, target, g, current, &st.External.Current, r.Config)
	if err != nil {
		return 0, "", autoscalingv2.MetricStatus{}, fmt.Errorf("failed to get %s external metric value: %w", m.External.Metric.Name, err)
	}
	sel := ""
	if m.External.Metric.Selector != nil {
		sel = metav1.FormatLabelSelector(m.External.Metric.Selector)
	}
	return replicas, fmt.Sprintf("external metric %s(%s)", m.External.Metric.Name, sel), st, nil
}

// valueProposal is an Object or External metric's proposal against its
// value target (the ready pods' usage ratio) or its average value target
// (per current replica), with the current value written where the status
// wants it.
func valueProposal(value int64, target autoscalingv2.MetricTarget, g *gathered, current int32, status *autoscalingv2.MetricValueStatus, config hpa.Config) (int32, error) {
	if target.Value != nil {
		status.Value = resource.NewMilliQuantity(value, resource.DecimalSI)
		return hpa.ObjectValue(current, value, target.Value.MilliValue(), hpa.ReadyPods(g.pods), config)
	}
	status.AverageValue = resource.NewMilliQuantity(perPod(value, current), resource.DecimalSI)
	return hpa.ObjectAverage(current, value, target.AverageValue.MilliValue(), config)
}

// perPod is value spread over the current replicas, rounded up (as the
// HPA reports an average value target's current value).
func perPod(value int64, replicas int32) int64 {
	if replicas <= 0 {
		return value
	}
	return int64(math.Ceil(float64(value) / float64(replicas)))
}
