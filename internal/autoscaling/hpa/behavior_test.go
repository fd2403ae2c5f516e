package hpa

import (
	"testing"
	"time"

	autoscalingv2 "k8s.io/api/autoscaling/v2"
	"k8s.io/utils/ptr"
)

func rules(window int32, sel autoscalingv2.ScalingPolicySelect, policies ...autoscalingv2.HPAScalingPolicy) *autoscalingv2.HPAScalingRules {
	return &autoscalingv2.HPAScalingRules{StabilizationWindowSeconds: ptr.To(window), SelectPolicy: ptr.To(sel), Policies: policies}
}

func pods(n int32, period int32) autoscalingv2.HPAScalingPolicy {
	return autoscalingv2.HPAScalingPolicy{Type: autoscalingv2.PodsScalingPolicy, Value: n, PeriodSeconds: period}
}

func percent(n int32, period int32) autoscalingv2.HPAScalingPolicy {
	return autoscalingv2.HPAScalingPolicy{Type: autoscalingv2.PercentScalingPolicy, Value: n, PeriodSeconds: period}
}

// Without a behaviour (kube-controller-manager's flags): the highest
// recommendation of the last 5 minutes; a scale up to at most
// max(2 × current, 4); then [min, max].
func TestNormalizeWithoutBehavior(t *testing.T) {
	r := NewRecommender()
	r.Start("ns/a", 5, now)
	n := r.Normalize("ns/a", nil, 5, 2, 1, 10, now.Add(time.Minute))
	if n.Replicas != 5 || n.StabilizedReason != ReasonScaleDownStabilized || n.StabilizedMessage != MessageScaleDownStabilized || n.Limited {
		t.Errorf("a scale down within the window: %+v, want 5 (ScaleDownStabilized)", n)
	}
	n = r.Normalize("ns/a", nil, 5, 2, 1, 10, now.Add(6*time.Minute+time.Second))
	if n.Replicas != 2 || n.StabilizedReason != ReasonReadyForNewScale || n.LimitReason != ReasonDesiredWithinRange {
		t.Errorf("after the window: %+v, want 2", n)
	}

	r = NewRecommender()
	r.Start("ns/b", 3, now)
	if n := r.Normalize("ns/b", nil, 3, 20, 1, 30, now); n.Replicas != 6 || n.LimitReason != ReasonScaleUpLimit || n.LimitMessage != MessageScaleUpLimit || !n.Limited {
		t.Errorf("3 → 20: %+v, want 6 (ScaleUpLimit)", n)
	}
	if n := r.Normalize("ns/b", nil, 1, 10, 1, 3, now); n.Replicas != 3 || n.LimitReason != ReasonTooManyReplicas {
		t.Errorf("1 → 10 with max 3: %+v, want 3 (TooManyReplicas)", n)
	}
	r = NewRecommender()
	if n := r.Normalize("ns/c", nil, 4, 1, 2, 10, now); n.Replicas != 2 || n.LimitReason != ReasonTooFewReplicas || n.LimitMessage != MessageTooFewReplicas {
		t.Errorf("4 → 1 with min 2: %+v, want 2 (TooFewReplicas)", n)
	}
}

// The behaviour examples of the documentation ("Configurable scaling
// behavior").
func TestNormalizeWithBehavior(t *testing.T) {
	// Scale down at most 10 % or 5 pods a minute, the larger change.
	down := &autoscalingv2.HorizontalPodAutoscalerBehavior{ScaleDown: rules(0, autoscalingv2.MaxChangePolicySelect, percent(10, 60), pods(5, 60))}
	r := NewRecommender()
	r.Start("k", 80, now)
	n := r.Normalize("k", down, 80, 10, 1, 100, now)
	if n.Replicas != 72 || n.LimitReason != ReasonScaleDownLimit || n.LimitMessage != MessageScaleDownLimit || !n.Limited {
		t.Fatalf("80 → 10 at 10%% or 5 pods a minute: %+v, want 72 (ScaleDownLimit)", n)
	}
	r.Record("k", down, 80, 72, now)
	if n := r.Normalize("k", down, 72, 10, 1, 100, now.Add(30*time.Second)); n.Replicas != 72 {
		t.Errorf("within the same minute: %+v, want 72 (the period's 8 are spent)", n)
	}
	if n := r.Normalize("k", down, 72, 10, 1, 100, now.Add(61*time.Second)); n.Replicas != 64 {
		t.Errorf("the next minute: %+v, want 64 (10%% of 72 rounds to 7, 5 pods: 67; the larger change)", n)
	}

	// Min picks the smaller change.
	minDown := &autoscalingv2.HorizontalPodAutoscalerBehavior{ScaleDown: rules(0, autoscalingv2.MinChangePolicySelect, percent(10, 60), pods(5, 60))}
	r = NewRecommender()
	if n := r.Normalize("k", minDown, 80, 10, 1, 100, now); n.Replicas != 75 {
		t.Errorf("selectPolicy Min: %+v, want 75", n)
	}
	// Disabled: no scale down at all.
	off := &autoscalingv2.HorizontalPodAutoscalerBehavior{ScaleDown: rules(0, autoscalingv2.DisabledPolicySelect, percent(100, 15))}
	r = NewRecommender()
	if n := r.Normalize("k", off, 80, 10, 1, 100, now); n.Replicas != 80 || n.LimitReason != ReasonScaleDownLimit {
		t.Errorf("scale down Disabled: %+v, want 80", n)
	}

	// The default scale up: 4 pods or 100 % per 15 s, the larger.
	def := &autoscalingv2.HorizontalPodAutoscalerBehavior{}
	r = NewRecommender()
	if n := r.Normalize("k", def, 2, 20, 1, 100, now); n.Replicas != 6 || n.LimitReason != ReasonScaleUpLimit {
		t.Errorf("2 → 20 by default: %+v, want 6", n)
	}
	if n := r.Normalize("k", def, 10, 50, 1, 100, now); n.Replicas != 20 {
		t.Errorf("10 → 50 by default: %+v, want 20 (100%%)", n)
	}
	if n := r.Normalize("k", def, 10, 50, 1, 15, now); n.Replicas != 15 || n.LimitReason != ReasonTooManyReplicas {
		t.Errorf("10 → 50 with max 15: %+v, want 15 (TooManyReplicas)", n)
	}
}

// The windows: a scale up no higher than the lowest recommendation of its
// window, a scale down no lower than the highest of its (300 s by
// default).
func TestStabilizationWindows(t *testing.T) {
	up := &autoscalingv2.HorizontalPodAutoscalerBehavior{ScaleUp: rules(60, autoscalingv2.MaxChangePolicySelect, percent(900, 15))}
	r := NewRecommender()
	r.Start("k", 3, now)
	n := r.Normalize("k", up, 3, 10, 1, 100, now.Add(30*time.Second))
	if n.Replicas != 3 || n.StabilizedReason != ReasonScaleUpStabilized || n.StabilizedMessage != MessageScaleUpStabilized {
		t.Errorf("a scale up within the window: %+v, want 3 (ScaleUpStabilized)", n)
	}
	if n := r.Normalize("k", up, 3, 10, 1, 100, now.Add(61*time.Second)); n.Replicas != 10 {
		t.Errorf("once every recommendation of the window asks for 10: %+v", n)
	}

	def := &autoscalingv2.HorizontalPodAutoscalerBehavior{}
	r = NewRecommender()
	r.Start("k", 8, now)
	if n := r.Normalize("k", def, 8, 2, 1, 100, now.Add(4*time.Minute)); n.Replicas != 8 || n.StabilizedReason != ReasonScaleDownStabilized {
		t.Errorf("a scale down 4 minutes after 8 was recommended: %+v, want 8", n)
	}
	if n := r.Normalize("k", def, 8, 2, 1, 100, now.Add(5*time.Minute+time.Second)); n.Replicas != 2 {
		t.Errorf("after 300 s (only the 2 of 4 minutes ago remains): %+v, want 2", n)
	}
}

func TestForget(t *testing.T) {
	r := NewRecommender()
	r.Start("k", 9, now)
	r.Forget("k")
	if n := r.Normalize("k", nil, 9, 2, 1, 10, now); n.Replicas != 2 {
		t.Errorf("a forgotten autoscaler kept its window: %+v", n)
	}
}
