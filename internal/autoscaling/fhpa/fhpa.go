// Package fhpa is the FederatedHPA controller: for each FederatedHPA it
// gathers the target's pods from every member the binding placed it in,
// and their samples from each member's metrics.k8s.io (MemberMetrics; or
// the control plane's, served by a metrics adapter: MetricsAPI), runs the
// Kubernetes HPA
// algorithm (package hpa) and writes the count to the template's scale
// subresource; the scheduler then divides it over the clusters. Status,
// conditions and events are those of kube-controller-manager's HPA with
// Karmada's additions (FailedGetBindings, FailedGetTargetClusters).
package fhpa

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	autoscalingv1 "k8s.io/api/autoscaling/v1"
	autoscalingv2 "k8s.io/api/autoscaling/v2"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/tools/record"
	"k8s.io/client-go/util/workqueue"
	"k8s.io/utils/ptr"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/builder"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/predicate"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	autoscalingv1alpha1 "github.com/karmada-go/karmada/api/autoscaling/v1alpha1"
	clusterv1alpha1 "github.com/karmada-go/karmada/api/cluster/v1alpha1"
	workv1alpha2 "github.com/karmada-go/karmada/api/work/v1alpha2"
	"github.com/karmada-go/karmada/internal/autoscaling/hpa"
	"github.com/karmada-go/karmada/internal/events"
	"github.com/karmada-go/karmada/internal/metrics"
	"github.com/karmada-go/karmada/internal/names"
	"github.com/karmada-go/karmada/internal/queues"
)

// ControllerName is the controller's name in --controllers (Karmada's).
const ControllerName = "federatedHorizontalPodAutoscaler"

// Members reads what the controller needs of the member clusters.
type Members interface {
	// Scale is the member workload's replicas and pod selector.
	Scale(ctx context.Context, cluster string, gvr schema.GroupVersionResource, namespace, name string) (int32, labels.Selector, error)
	// Pods are the member's pods in a namespace matching a selector.
	Pods(ctx context.Context, cluster, namespace string, selector labels.Selector) ([]*corev1.Pod, error)
}

// Metrics reads pod samples.
type Metrics interface {
	// Resource returns each matching pod's sample of a resource (of one
	// container when named) in the clusters named, keyed by PodKey.
	Resource(ctx context.Context, clusters []string, namespace string, selector labels.Selector, resource corev1.ResourceName, container string) (hpa.Samples, error)
}

// PodKey names a member's pod among every member's (the metrics adapter
// marks each sample with its cluster).
func PodKey(cluster, pod string) string { return cluster + "/" + pod }

// Reconciler runs FederatedHPAs.
type Reconciler struct {
	Client   client.Client
	Recorder record.EventRecorder
	Members  Members
	Metrics  Metrics
	// Custom reads Pods, Object and External metrics (a metric of those
	// types fails, as a missing API would, when nil).
	Custom CustomMetrics
	// SyncPeriod is how often each FederatedHPA is computed
	// (--horizontal-pod-autoscaler-sync-period, 15s).
	SyncPeriod time.Duration
	Config     hpa.Config
	// Recommender keeps the windows' history (NewRecommender when nil).
	Recommender *hpa.Recommender
	Workers     int
	// Now is the clock (time.Now when nil).
	Now func() time.Time
}

// SetupWithManager watches FederatedHPAs' specs; each comes back every
// SyncPeriod.
func (r *Reconciler) SetupWithManager(mgr ctrl.Manager) error {
	r.defaults()
	opts := queues.Options(r.Workers)
	opts.RateLimiter = workqueue.NewTypedItemExponentialFailureRateLimiter[reconcile.Request](50*time.Millisecond, r.SyncPeriod)
	return ctrl.NewControllerManagedBy(mgr).Named(ControllerName).
		For(&autoscalingv1alpha1.FederatedHPA{}, builder.WithPredicates(predicate.GenerationChangedPredicate{})).
		// A failure is retried soon at first, and at the latest after
		// SyncPeriod (kube-controller-manager's HPA retries at its resync
		// period; backing off for minutes would leave a workload unscaled).
		WithOptions(opts).
		Complete(r)
}

func (r *Reconciler) defaults() {
	if r.Recommender == nil {
		r.Recommender = hpa.NewRecommender()
	}
	if r.SyncPeriod == 0 {
		r.SyncPeriod = 15 * time.Second
	}
	if r.Config == (hpa.Config{}) {
		r.Config = hpa.DefaultConfig
	}
}

func (r *Reconciler) now() time.Time {
	if r.Now != nil {
		return r.Now()
	}
	return time.Now()
}

// Reconcile computes one FederatedHPA.
func (r *Reconciler) Reconcile(ctx context.Context, req ctrl.Request) (res ctrl.Result, err error) {
	r.defaults()
	f := &autoscalingv1alpha1.FederatedHPA{}
	if err := r.Client.Get(ctx, req.NamespacedName, f); err != nil {
		if client.IgnoreNotFound(err) == nil {
			r.Recommender.Forget(req.String())
		}
		return ctrl.Result{}, client.IgnoreNotFound(err)
	}
	if !f.DeletionTimestamp.IsZero() {
		return ctrl.Result{}, nil
	}
	start := time.Now()
	defer func() {
		metrics.FederatedHPADuration.WithLabelValues(metrics.ResultOf(err)).Observe(time.Since(start).Seconds())
	}()
	before := f.Status.DeepCopy()
	err = r.run(ctx, f)
	if !equality.Semantic.DeepEqual(before, &f.Status) {
		if uerr := r.Client.Status().Update(ctx, f); uerr != nil && err == nil {
			err = uerr
		}
	}
	if err != nil {
		return ctrl.Result{}, err
	}
	return ctrl.Result{RequeueAfter: r.SyncPeriod}, nil
}

// failure records a step that failed: an event, AbleToScale False.
func (r *Reconciler) failure(f *autoscalingv1alpha1.FederatedHPA, event, reason, format string, err error) error {
	r.Recorder.Event(f, corev1.EventTypeWarning, event, err.Error())
	setCondition(f, autoscalingv2.AbleToScale, corev1.ConditionFalse, reason, format, err, r.now())
	return err
}

// target is what the controller found of the scale target.
type target struct {
	template *unstructured.Unstructured
	gvr      schema.GroupVersionResource
	clusters []string
}

func (r *Reconciler) findTarget(ctx context.Context, f *autoscalingv1alpha1.FederatedHPA) (*target, error) {
	ref := f.Spec.ScaleTargetRef
	gv, err := schema.ParseGroupVersion(ref.APIVersion)
	if err != nil {
		return nil, r.failure(f, events.FailedGetScale, "FailedGetScale", "the HPA controller was unable to get the target's current scale: %v", err)
	}
	tpl := &unstructured.Unstructured{}
	tpl.SetGroupVersionKind(gv.WithKind(ref.Kind))
	// Always in the FederatedHPA's own namespace: the reference has none.
	if err := r.Client.Get(ctx, client.ObjectKey{Namespace: f.Namespace, Name: ref.Name}, tpl); err != nil {
		return nil, r.failure(f, events.FailedGetScaleTargetRef, "FailedGetScaleTargetRef", "the HPA controller was unable to get the target reference object: %v", err)
	}
	rb := &workv1alpha2.ResourceBinding{}
	if err := r.Client.Get(ctx, client.ObjectKey{Namespace: f.Namespace, Name: names.BindingName(ref.Kind, ref.Name)}, rb); err != nil {
		return nil, r.failure(f, events.FailedGetBindings, "FailedGetBinding", "the HPA controller was unable to get the binding by scaleTargetRef: %v", err)
	}
	clusters, err := r.readyClusters(ctx, rb)
	if err != nil {
		return nil, r.failure(f, events.FailedGetTargetClusters, "FailedGetTargetClusters", "the HPA controller was unable to get the target clusters from binding: %v", err)
	}
	mapping, err := r.Client.RESTMapper().RESTMapping(gv.WithKind(ref.Kind).GroupKind(), gv.Version)
	if err != nil {
		return nil, r.failure(f, events.FailedGetScale, "FailedGetScale", "the HPA controller was unable to get the target's current scale: %v", err)
	}
	return &target{template: tpl, gvr: mapping.Resource, clusters: clusters}, nil
}

// readyClusters are the binding's clusters that are Ready.
func (r *Reconciler) readyClusters(ctx context.Context, rb *workv1alpha2.ResourceBinding) ([]string, error) {
	if len(rb.Spec.Clusters) == 0 {
		return nil, errors.New("binding has no schedulable clusters")
	}
	var out []string
	for _, tc := range rb.Spec.Clusters {
		c := &clusterv1alpha1.Cluster{}
		if err := r.Client.Get(ctx, client.ObjectKey{Name: tc.Name}, c); err != nil {
			continue
		}
		if meta.IsStatusConditionTrue(c.Status.Conditions, clusterv1alpha1.ClusterConditionReady) {
			out = append(out, tc.Name)
		}
	}
	if len(out) == 0 {
		return nil, errors.New("no ready cluster in the binding")
	}
	return out, nil
}

// gathered are the members' scales and pods.
type gathered struct {
	replicas int32
	pods     []*corev1.Pod
	selector labels.Selector
	// clusters are those that answered.
	clusters []string
}

func (r *Reconciler) gather(ctx context.Context, f *autoscalingv1alpha1.FederatedHPA, t *target) (*gathered, error) {
	g := &gathered{}
	var errs []string
	for _, cluster := range t.clusters {
		n, sel, err := r.Members.Scale(ctx, cluster, t.gvr, f.Namespace, f.Spec.ScaleTargetRef.Name)
		if err != nil {
			errs = append(errs, fmt.Sprintf("cluster %s: %v", cluster, err))
			continue
		}
		pods, err := r.Members.Pods(ctx, cluster, f.Namespace, sel)
		if err != nil {
			errs = append(errs, fmt.Sprintf("cluster %s: %v", cluster, err))
			continue
		}
		g.replicas += n
		g.selector = sel
		g.clusters = append(g.clusters, cluster)
		for _, p := range pods {
			cp := p.DeepCopy()
			cp.Name = PodKey(cluster, p.Name)
			g.pods = append(g.pods, cp)
		}
	}
	if g.selector == nil {
		return nil, fmt.Errorf("no member answered: %s", strings.Join(errs, "; "))
	}
	return g, nil
}

// run computes and applies one FederatedHPA, recording its status.
func (r *Reconciler) run(ctx context.Context, f *autoscalingv1alpha1.FederatedHPA) error {
	now := r.now()
	key := client.ObjectKeyFromObject(f).String()
	t, err := r.findTarget(ctx, f)
	if err != nil {
		return err
	}
	g, err := r.gather(ctx, f, t)
	if err != nil {
		return r.failure(f, events.FailedGetScale, "FailedGetScale", "the HPA controller was unable to get the target's current scale: %v", err)
	}
	// Read and written unstructured, as the template is.
	scale := &unstructured.Unstructured{}
	scale.SetGroupVersionKind(autoscalingv1.SchemeGroupVersion.WithKind("Scale"))
	if err := r.Client.SubResource("scale").Get(ctx, t.template, scale); err != nil {
		return r.failure(f, events.FailedGetScale, "FailedGetScale", "the HPA controller was unable to get the target's current scale: %v", err)
	}
	current64, _, _ := unstructured.NestedInt64(scale.Object, "spec", "replicas")
	current := int32(current64)
	setCondition(f, autoscalingv2.AbleToScale, corev1.ConditionTrue, "SucceededGetScale", "the HPA controller was able to get the target's current scale", nil, now)
	r.Recommender.Start(key, current, now)

	minReplicas := int32(1)
	if f.Spec.MinReplicas != nil {
		minReplicas = *f.Spec.MinReplicas
	}
	var desired int32
	var reason string
	var statuses []autoscalingv2.MetricStatus
	var metricErr error
	rescale := true
	switch {
	case g.replicas == 0 && minReplicas != 0:
		rescale = false
		setCondition(f, autoscalingv2.ScalingActive, corev1.ConditionFalse, "ScalingDisabled", "scaling is disabled since the replica count of the target is zero", nil, now)
	case current > f.Spec.MaxReplicas:
		reason, desired = "Current number of replicas above Spec.MaxReplicas", f.Spec.MaxReplicas
	case current < minReplicas:
		reason, desired = "Current number of replicas below Spec.MinReplicas", minReplicas
	default:
		proposed, name, sts, err := r.computeReplicas(ctx, f, g, current, now)
		statuses = sts
		if err != nil && proposed == -1 {
			f.Status.CurrentReplicas = current
			f.Status.CurrentMetrics = statuses
			r.Recorder.Event(f, corev1.EventTypeWarning, events.FailedComputeMetricsReplicas, err.Error())
			return fmt.Errorf("failed to compute desired number of replicas based on listed metrics for %s/%s/%s: %w", f.Spec.ScaleTargetRef.Kind, f.Namespace, f.Spec.ScaleTargetRef.Name, err)
		}
		metricErr = err
		desired = proposed
		if desired > current {
			reason = name + " above target"
		} else if desired < current {
			reason = "All metrics below target"
		}
		n := r.Recommender.Normalize(key, f.Spec.Behavior, current, desired, minReplicas, f.Spec.MaxReplicas, now)
		setCondition(f, autoscalingv2.AbleToScale, corev1.ConditionTrue, n.StabilizedReason, n.StabilizedMessage, nil, now)
		limited := corev1.ConditionFalse
		if n.Limited {
			limited = corev1.ConditionTrue
		}
		setCondition(f, autoscalingv2.ScalingLimited, limited, n.LimitReason, n.LimitMessage, nil, now)
		desired = n.Replicas
		rescale = desired != current
	}
	f.Status.CurrentReplicas = current
	f.Status.CurrentMetrics = statuses
	if !rescale {
		f.Status.DesiredReplicas = current
		if g.replicas == 0 && minReplicas != 0 {
			f.Status.DesiredReplicas = 0
		}
		return metricErr
	}
	if err := unstructured.SetNestedField(scale.Object, int64(desired), "spec", "replicas"); err != nil {
		return err
	}
	if err := r.Client.SubResource("scale").Update(ctx, t.template, client.WithSubResourceBody(scale)); err != nil {
		r.Recorder.Eventf(f, corev1.EventTypeWarning, events.FailedRescale, "New size: %d; reason: %s; error: %v", desired, reason, err)
		setCondition(f, autoscalingv2.AbleToScale, corev1.ConditionFalse, "FailedUpdateScale", "the HPA controller was unable to update the target scale: %v", err, now)
		f.Status.DesiredReplicas = current
		return fmt.Errorf("failed to rescale %s/%s: %w", f.Namespace, f.Spec.ScaleTargetRef.Name, err)
	}
	setCondition(f, autoscalingv2.AbleToScale, corev1.ConditionTrue, "SucceededRescale", fmt.Sprintf("the HPA controller was able to update the target scale to %d", desired), nil, now)
	r.Recorder.Eventf(f, corev1.EventTypeNormal, events.SuccessfulRescale, "New size: %d; reason: %s", desired, reason)
	r.Recommender.Record(key, f.Spec.Behavior, current, desired, now)
	f.Status.DesiredReplicas = desired
	f.Status.LastScaleTime = &metav1.Time{Time: now}
	ctrl.LoggerFrom(ctx).Info("Rescaled", "from", current, "to", desired, "reason", reason)
	return metricErr
}

// computeReplicas runs every metric: the largest count any asks for,
// with the name of that metric; -1 when none could be computed, or when
// some could not and the others ask to scale down (a missing metric must
// not shrink the workload).
func (r *Reconciler) computeReplicas(ctx context.Context, f *autoscalingv1alpha1.FederatedHPA, g *gathered, current int32, now time.Time) (int32, string, []autoscalingv2.MetricStatus, error) {
	specs := metricsOf(f)
	statuses := make([]autoscalingv2.MetricStatus, len(specs))
	var replicas int32 = -1
	var name string
	var invalid int
	var lastErr error
	for i, m := range specs {
		n, metricName, st, err := r.computeMetric(ctx, f, m, g, current, now)
		if err != nil {
			invalid++
			lastErr = err
			continue
		}
		statuses[i] = st
		if replicas == -1 || n > replicas {
			replicas, name = n, metricName
		}
	}
	if invalid > 0 && (invalid == len(specs) || replicas < current) {
		return -1, "", statuses, fmt.Errorf("invalid metrics (%d invalid out of %d), first error is: %v", invalid, len(specs), lastErr)
	}
	setCondition(f, autoscalingv2.ScalingActive, corev1.ConditionTrue, "ValidMetricFound", fmt.Sprintf("the HPA was able to successfully calculate a replica count from %s", name), nil, now)
	return replicas, name, statuses, lastErr
}

// metricsOf are the FederatedHPA's metrics; without any, cpu at 80 % of
// the requests (the default of autoscaling/v2, which Karmada's webhook
// applies).
func metricsOf(f *autoscalingv1alpha1.FederatedHPA) []autoscalingv2.MetricSpec {
	if len(f.Spec.Metrics) > 0 {
		return f.Spec.Metrics
	}
	return []autoscalingv2.MetricSpec{{Type: autoscalingv2.ResourceMetricSourceType, Resource: &autoscalingv2.ResourceMetricSource{
		Name: corev1.ResourceCPU, Target: autoscalingv2.MetricTarget{Type: autoscalingv2.UtilizationMetricType, AverageUtilization: ptr.To(int32(80))}}}}
}

// computeMetric runs one metric; a failure sets ScalingActive False and
// records an event, as the HPA does.
func (r *Reconciler) computeMetric(ctx context.Context, f *autoscalingv1alpha1.FederatedHPA, m autoscalingv2.MetricSpec, g *gathered, current int32, now time.Time) (int32, string, autoscalingv2.MetricStatus, error) {
	var (
		res       corev1.ResourceName
		container string
		target    autoscalingv2.MetricTarget
		event     string
		reason    string
		label     string
	)
	switch m.Type {
	case autoscalingv2.ResourceMetricSourceType:
		if m.Resource == nil {
			return r.invalidMetric(f, m, now)
		}
		res, target = m.Resource.Name, m.Resource.Target
		event, reason, label = events.FailedGetResourceMetric, "FailedGetResourceMetric", "resource"
	case autoscalingv2.ContainerResourceMetricSourceType:
		if m.ContainerResource == nil {
			return r.invalidMetric(f, m, now)
		}
		res, container, target = m.ContainerResource.Name, m.ContainerResource.Container, m.ContainerResource.Target
		event, reason, label = events.FailedGetContainerResource, "FailedGetContainerResourceMetric", "container_resource"
	case autoscalingv2.PodsMetricSourceType, autoscalingv2.ObjectMetricSourceType, autoscalingv2.ExternalMetricSourceType:
		return r.computeCustomMetric(ctx, f, m, g, current, now)
	default:
		return r.invalidMetric(f, m, now)
	}
	fail := func(err error) (int32, string, autoscalingv2.MetricStatus, error) {
		r.Recorder.Event(f, corev1.EventTypeWarning, event, err.Error())
		setCondition(f, autoscalingv2.ScalingActive, corev1.ConditionFalse, reason, "the HPA was unable to compute the replica count: %v", err, now)
		return 0, "", autoscalingv2.MetricStatus{}, err
	}
	pull := time.Now()
	samples, err := r.Metrics.Resource(ctx, g.clusters, f.Namespace, g.selector, res, container)
	metrics.FederatedHPAPullMetricsDuration.WithLabelValues(metrics.ResultOf(err), label).Observe(time.Since(pull).Seconds())
	if err != nil {
		return fail(fmt.Errorf("failed to get %s utilization: %w", res, err))
	}
	// Only the target's pods, from the clusters that answered.
	known := make(hpa.Samples, len(samples))
	for _, p := range g.pods {
		if s, ok := samples[p.Name]; ok {
			known[p.Name] = s
		}
	}
	var result hpa.Result
	var name string
	current0 := autoscalingv2.MetricValueStatus{}
	switch {
	case target.AverageUtilization != nil:
		result, err = hpa.ResourceUtilization(current, *target.AverageUtilization, res, container, g.pods, known, r.Config, now)
		if err != nil {
			return fail(fmt.Errorf("failed to get %s utilization: %w", res, err))
		}
		current0.AverageUtilization = &result.Utilization
		name = fmt.Sprintf("%s resource utilization (percentage of request)", res)
		if container != "" {
			name = fmt.Sprintf("%s container resource utilization (percentage of request)", res)
		}
	case target.AverageValue != nil:
		result, err = hpa.AverageValue(current, target.AverageValue.MilliValue(), res, g.pods, known, r.Config, now)
		if err != nil {
			return fail(fmt.Errorf("failed to get %s usage: %w", res, err))
		}
		name = fmt.Sprintf("%s resource", res)
		if container != "" {
			name = fmt.Sprintf("%s container resource", res)
		}
	default:
		return fail(fmt.Errorf("invalid resource metric source: neither an average utilization target nor an average value target was set"))
	}
	current0.AverageValue = resource.NewMilliQuantity(result.Average, resource.DecimalSI)
	st := autoscalingv2.MetricStatus{Type: m.Type}
	if container != "" {
		st.ContainerResource = &autoscalingv2.ContainerResourceMetricStatus{Name: res, Container: container, Current: current0}
	} else {
		st.Resource = &autoscalingv2.ResourceMetricStatus{Name: res, Current: current0}
	}
	return result.Replicas, name, st, nil
}

func (r *Reconciler) invalidMetric(f *autoscalingv1alpha1.FederatedHPA, m autoscalingv2.MetricSpec, now time.Time) (int32, string, autoscalingv2.MetricStatus, error) {
	err := fmt.Errorf("unknown metric source type %q", m.Type)
	r.Recorder.Event(f, corev1.EventTypeWarning, events.InvalidMetricSourceType, "unknown metric source type")
	setCondition(f, autoscalingv2.ScalingActive, corev1.ConditionFalse, "InvalidMetricSourceType", "the HPA was unable to compute the replica count: %v", err, now)
	return 0, "", autoscalingv2.MetricStatus{}, err
}

// setCondition sets a condition, keeping its transition time while its
// status stays; a format with %v takes err.
func setCondition(f *autoscalingv1alpha1.FederatedHPA, t autoscalingv2.HorizontalPodAutoscalerConditionType, status corev1.ConditionStatus, reason, format string, err error, now time.Time) {
	msg := format
	if err != nil && strings.Contains(format, "%") {
		msg = fmt.Sprintf(format, err)
	}
	for i := range f.Status.Conditions {
		c := &f.Status.Conditions[i]
		if c.Type != t {
			continue
		}
		if c.Status != status {
			c.LastTransitionTime = metav1.Time{Time: now}
		}
		c.Status, c.Reason, c.Message = status, reason, msg
		return
	}
	f.Status.Conditions = append(f.Status.Conditions, autoscalingv2.HorizontalPodAutoscalerCondition{
		Type: t, Status: status, Reason: reason, Message: msg, LastTransitionTime: metav1.Time{Time: now}})
}
