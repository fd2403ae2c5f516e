// Package hpa is the Kubernetes HPA algorithm as kube-controller-manager
// documents it, on pods gathered from every member: the replica count a
// metric asks for (tolerance, pods set aside for readiness or missing
// metrics), and the normalisation of that count by the stabilisation
// windows and scaling policies (behaviour) or, without a behaviour, by the
// downscale window and the scale-up limit. It holds no clients: the
// FederatedHPA controller gives it pods and metric values.
package hpa

import (
	"errors"
	"fmt"
	"math"
	"time"

	corev1 "k8s.io/api/core/v1"
)

// Config are kube-controller-manager's HPA settings (its flags' defaults
// unless set).
type Config struct {
	// Tolerance is how far the usage ratio may be from 1 without a scale
	// (--horizontal-pod-autoscaler-tolerance, 0.1).
	Tolerance float64
	// CPUInitializationPeriod is how long after a pod's start its CPU
	// samples may be skipped (--horizontal-pod-autoscaler-cpu-initialization-period, 5m).
	CPUInitializationPeriod time.Duration
	// InitialReadinessDelay is how long after a pod's start a readiness
	// change counts as its first (--horizontal-pod-autoscaler-initial-readiness-delay, 30s).
	InitialReadinessDelay time.Duration
}

// DefaultConfig is kube-controller-manager's.
var DefaultConfig = Config{Tolerance: 0.1, CPUInitializationPeriod: 5 * time.Minute, InitialReadinessDelay: 30 * time.Second}

// Sample is one pod's metric value, in milli-units (millicores for cpu,
// milli-bytes for memory, thousandths for custom metrics), with when it
// was taken and over what window.
type Sample struct {
	Milli     int64
	Timestamp time.Time
	Window    time.Duration
}

// Samples are the pods' samples by pod name (pods of several members are
// told apart by their names, as the metrics adapter serves them).
type Samples map[string]Sample

// ErrNoMetrics is returned when no pod has a metric.
var ErrNoMetrics = errors.New("did not receive metrics for targeted pods (pods might be unready)")

// ErrNoReadyMetrics is returned when only pods set aside have metrics.
var ErrNoReadyMetrics = errors.New("did not receive metrics for any ready pods")

// Result is what a metric asks for.
type Result struct {
	Replicas int32
	// Utilization is the average utilisation in percent of the requests
	// (resource metrics with a utilisation target).
	Utilization int32
	// Average is the average value per pod, in milli-units.
	Average int64
	// Timestamp is the earliest sample's.
	Timestamp time.Time
}

// groups sorts pods the way the HPA does: ignored (being deleted or
// failed), unready (pending, or for cpu not ready or sampled before they
// were ready while starting up), missing (no sample) and ready.
type groups struct {
	ready   int
	unready map[string]bool
	missing map[string]bool
	ignored map[string]bool
}

func group(pods []*corev1.Pod, samples Samples, resource corev1.ResourceName, cfg Config, now time.Time) groups {
	g := groups{unready: map[string]bool{}, missing: map[string]bool{}, ignored: map[string]bool{}}
	for _, p := range pods {
		if p.DeletionTimestamp != nil || p.Status.Phase == corev1.PodFailed {
			g.ignored[p.Name] = true
			continue
		}
		if p.Status.Phase == corev1.PodPending {
			g.unready[p.Name] = true
			continue
		}
		s, ok := samples[p.Name]
		if !ok {
			g.missing[p.Name] = true
			continue
		}
		if resource == corev1.ResourceCPU && cpuUnready(p, s, cfg, now) {
			g.unready[p.Name] = true
			continue
		}
		g.ready++
	}
	return g
}

// cpuUnready says whether a running pod's cpu sample is set aside: while
// the pod may still be initialising, when it is not ready or the sample
// predates its readiness; afterwards, only when it never became ready
// since its start.
func cpuUnready(p *corev1.Pod, s Sample, cfg Config, now time.Time) bool {
	var ready *corev1.PodCondition
	for i := range p.Status.Conditions {
		if p.Status.Conditions[i].Type == corev1.PodReady {
			ready = &p.Status.Conditions[i]
		}
	}
	if ready == nil || p.Status.StartTime == nil {
		return true
	}
	start := p.Status.StartTime.Time
	if start.Add(cfg.CPUInitializationPeriod).After(now) {
		return ready.Status == corev1.ConditionFalse || s.Timestamp.Before(ready.LastTransitionTime.Add(s.Window))
	}
	return ready.Status == corev1.ConditionFalse && start.Add(cfg.InitialReadinessDelay).After(ready.LastTransitionTime.Time)
}

// withinTolerance says whether a usage ratio asks for no change.
func (c Config) withinTolerance(ratio float64) bool {
	return math.Abs(1.0-ratio) <= c.Tolerance
}

// requests sums each pod's requests of a resource (of one container when
// named).
func requests(pods []*corev1.Pod, container string, resource corev1.ResourceName) (map[string]int64, error) {
	out := make(map[string]int64, len(pods))
	for _, p := range pods {
		var sum int64
		for _, c := range p.Spec.Containers {
			if container != "" && c.Name != container {
				continue
			}
			r, ok := c.Resources.Requests[resource]
			if !ok {
				return nil, fmt.Errorf("missing request for %s in container %s of Pod %s", resource, c.Name, p.Name)
			}
			sum += r.MilliValue()
		}
		out[p.Name] = sum
	}
	return out, nil
}

// utilization is the ratio of the samples to their pods' requests against
// a target percentage, the percentage itself and the average sample.
func utilization(samples Samples, reqs map[string]int64, target int32) (ratio float64, percent int32, average int64, err error) {
	var used, requested int64
	n := 0
	for name, s := range samples {
		r, ok := reqs[name]
		if !ok {
			continue
		}
		used += s.Milli
		requested += r
		n++
	}
	if requested == 0 {
		return 0, 0, 0, fmt.Errorf("no metrics returned matched known pods")
	}
	percent = int32(used * 100 / requested)
	return float64(percent) / float64(target), percent, used / int64(n), nil
}

// ResourceUtilization is the replica count a resource metric with an
// averageUtilization target asks for.
func ResourceUtilization(current, target int32, resource corev1.ResourceName, container string, pods []*corev1.Pod, samples Samples, cfg Config, now time.Time) (Result, error) {
	if len(samples) == 0 {
		return Result{}, ErrNoMetrics
	}
	if len(pods) == 0 {
		return Result{}, fmt.Errorf("no pods returned by selector while calculating replica count")
	}
	samples = copySamples(samples)
	g := group(pods, samples, resource, cfg, now)
	drop(samples, g.ignored)
	drop(samples, g.unready)
	if len(samples) == 0 {
		return Result{}, ErrNoReadyMetrics
	}
	reqs, err := requests(pods, container, resource)
	if err != nil {
		return Result{}, err
	}
	ts := earliest(samples)
	ratio, percent, average, err := utilization(samples, reqs, target)
	if err != nil {
		return Result{}, err
	}
	res := Result{Utilization: percent, Average: average, Timestamp: ts}
	upWithUnready := len(g.unready) > 0 && ratio > 1.0
	if !upWithUnready && len(g.missing) == 0 {
		if cfg.withinTolerance(ratio) {
			res.Replicas = current
			return res, nil
		}
		res.Replicas = int32(math.Ceil(ratio * float64(g.ready)))
		return res, nil
	}
	// Pods without samples count as using all of their request when the
	// others ask to scale down, nothing when they ask to scale up; pods
	// set aside as unready count as using nothing when scaling up.
	for name := range g.missing {
		if ratio < 1.0 {
			samples[name] = Sample{Milli: reqs[name]}
		} else if ratio > 1.0 {
			samples[name] = Sample{}
		}
	}
	if upWithUnready {
		for name := range g.unready {
			samples[name] = Sample{}
		}
	}
	newRatio, _, _, err := utilization(samples, reqs, target)
	if err != nil {
		return Result{}, err
	}
	res.Replicas = settle(current, ratio, newRatio, len(samples), cfg)
	return res, nil
}

// settle is the count after pods set aside were filled in: none when the
// direction reversed or the ratio is within tolerance.
func settle(current int32, ratio, newRatio float64, pods int, cfg Config) int32 {
	if cfg.withinTolerance(newRatio) || (ratio < 1.0 && newRatio > 1.0) || (ratio > 1.0 && newRatio < 1.0) {
		return current
	}
	n := int32(math.Ceil(newRatio * float64(pods)))
	if (newRatio < 1.0 && n > current) || (newRatio > 1.0 && n < current) {
		return current
	}
	return n
}

// AverageValue is the replica count a per-pod metric (a resource with an
// averageValue target, or a Pods metric) asks for; target is in
// milli-units.
func AverageValue(current int32, target int64, resource corev1.ResourceName, pods []*corev1.Pod, samples Samples, cfg Config, now time.Time) (Result, error) {
	if len(samples) == 0 {
		return Result{}, ErrNoMetrics
	}
	if len(pods) == 0 {
		return Result{}, fmt.Errorf("no pods returned by selector while calculating replica count")
	}
	if target <= 0 {
		return Result{}, fmt.Errorf("the target average value must be positive")
	}
	samples = copySamples(samples)
	g := group(pods, samples, resource, cfg, now)
	drop(samples, g.ignored)
	drop(samples, g.unready)
	if len(samples) == 0 {
		return Result{}, ErrNoReadyMetrics
	}
	ts := earliest(samples)
	ratio, average := averageRatio(samples, target)
	res := Result{Average: average, Timestamp: ts}
	upWithUnready := len(g.unready) > 0 && ratio > 1.0
	if !upWithUnready && len(g.missing) == 0 {
		if cfg.withinTolerance(ratio) {
			res.Replicas = current
			return res, nil
		}
		res.Replicas = int32(math.Ceil(ratio * float64(g.ready)))
		return res, nil
	}
	for name := range g.missing {
		if ratio < 1.0 {
			samples[name] = Sample{Milli: target}
		} else {
			samples[name] = Sample{}
		}
	}
	if upWithUnready {
		for name := range g.unready {
			samples[name] = Sample{}
		}
	}
	newRatio, _ := averageRatio(samples, target)
	res.Replicas = settle(current, ratio, newRatio, len(samples), cfg)
	return res, nil
}

func averageRatio(samples Samples, target int64) (float64, int64) {
	var sum int64
	for _, s := range samples {
		sum += s.Milli
	}
	average := sum / int64(len(samples))
	return float64(sum) / float64(len(samples)) / float64(target), average
}

// ObjectValue is the replica count an Object or External metric with a
// value target asks for: the ratio of the value to the target times the
// ready pods (or the current count when none is ready).
func ObjectValue(current int32, value, target int64, readyPods int, cfg Config) (int32, error) {
	if target <= 0 {
		return 0, fmt.Errorf("the target value must be positive")
	}
	ratio := float64(value) / float64(target)
	if cfg.withinTolerance(ratio) {
		return current, nil
	}
	if readyPods == 0 {
		// Scaling from no ready pod: the ratio applies to the current count.
		return int32(math.Ceil(ratio * float64(current))), nil
	}
	return int32(math.Ceil(ratio * float64(readyPods))), nil
}

// ObjectAverage is the replica count an Object or External metric with
// an averageValue target asks for: the value divided by the target per
// pod, unless that is within tolerance of the current count.
func ObjectAverage(current int32, value, targetAverage int64, cfg Config) (int32, error) {
	if targetAverage <= 0 {
		return 0, fmt.Errorf("the target average value must be positive")
	}
	if current > 0 && cfg.withinTolerance(float64(value)/(float64(targetAverage)*float64(current))) {
		return current, nil
	}
	return int32(math.Ceil(float64(value) / float64(targetAverage))), nil
}

// ReadyPods counts the pods that are running and ready (an Object
// metric's value is spread over them).
func ReadyPods(pods []*corev1.Pod) int {
	n := 0
	for _, p := range pods {
		if p.DeletionTimestamp != nil || p.Status.Phase != corev1.PodRunning {
			continue
		}
		for _, c := range p.Status.Conditions {
			if c.Type == corev1.PodReady && c.Status == corev1.ConditionTrue {
				n++
			}
		}
	}
	return n
}

func copySamples(s Samples) Samples {
	out := make(Samples, len(s))
	for k, v := range s {
		out[k] = v
	}
	return out
}

func drop(s Samples, names map[string]bool) {
	for n := range names {
		delete(s, n)
	}
}

func earliest(s Samples) time.Time {
	var t time.Time
	for _, v := range s {
		if t.IsZero() || (!v.Timestamp.IsZero() && v.Timestamp.Before(t)) {
			t = v.Timestamp
		}
	}
	return t
}
