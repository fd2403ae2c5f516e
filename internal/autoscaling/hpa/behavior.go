package hpa

import (
	"math"
	"sync"
	"time"

	autoscalingv2 "k8s.io/api/autoscaling/v2"
	"k8s.io/utils/ptr"
)

// Condition reasons and messages of AbleToScale and ScalingLimited, as
// kube-controller-manager's HPA (and Karmada's FederatedHPA) write them.
const (
	ReasonReadyForNewScale    = "ReadyForNewScale"
	ReasonScaleUpStabilized   = "ScaleUpStabilized"
	ReasonScaleDownStabilized = "ScaleDownStabilized"
	ReasonDesiredWithinRange  = "DesiredWithinRange"
	ReasonTooManyReplicas     = "TooManyReplicas"
	ReasonTooFewReplicas      = "TooFewReplicas"
	ReasonScaleUpLimit        = "ScaleUpLimit"
	ReasonScaleDownLimit      = "ScaleDownLimit"

	MessageReadyForNewScale    = "recommended size matches current size"
	MessageScaleUpStabilized   = "recent recommendations were lower than current one, applying the lowest recent recommendation"
	MessageScaleDownStabilized = "recent recommendations were higher than current one, applying the highest recent recommendation"
	MessageDesiredWithinRange  = "the desired count is within the acceptable range"
	MessageTooManyReplicas     = "the desired replica count is more than the maximum replica count"
	MessageTooFewReplicas      = "the desired replica count is less than the minimum replica count"
	MessageScaleUpLimit        = "the desired replica count is increasing faster than the maximum scale rate"
	MessageScaleDownLimit      = "the desired replica count is decreasing faster than the maximum scale rate"
)

// Without a behaviour, a scale up is at most to max(2 × current, 4).
const (
	scaleUpLimitFactor  = 2.0
	scaleUpLimitMinimum = 4.0
)

// DefaultBehavior fills what a behaviour leaves out with the API's
// defaults for autoscaling/v2 (scale up: no window, the larger of 100 %
// and 4 pods per 15 s; scale down: a 300 s window, 100 % per 15 s).
func DefaultBehavior(b *autoscalingv2.HorizontalPodAutoscalerBehavior) *autoscalingv2.HorizontalPodAutoscalerBehavior {
	out := &autoscalingv2.HorizontalPodAutoscalerBehavior{}
	if b != nil {
		out = b.DeepCopy()
	}
	if out.ScaleUp == nil {
		out.ScaleUp = &autoscalingv2.HPAScalingRules{}
	}
	if out.ScaleUp.StabilizationWindowSeconds == nil {
		out.ScaleUp.StabilizationWindowSeconds = ptr.To(int32(0))
	}
	if out.ScaleUp.SelectPolicy == nil {
		out.ScaleUp.SelectPolicy = ptr.To(autoscalingv2.MaxChangePolicySelect)
	}
	if len(out.ScaleUp.Policies) == 0 {
		out.ScaleUp.Policies = []autoscalingv2.HPAScalingPolicy{
			{Type: autoscalingv2.PodsScalingPolicy, Value: 4, PeriodSeconds: 15},
			{Type: autoscalingv2.PercentScalingPolicy, Value: 100, PeriodSeconds: 15},
		}
	}
	if out.ScaleDown == nil {
		out.ScaleDown = &autoscalingv2.HPAScalingRules{}
	}
	if out.ScaleDown.StabilizationWindowSeconds == nil {
		out.ScaleDown.StabilizationWindowSeconds = ptr.To(int32(300))
	}
	if out.ScaleDown.SelectPolicy == nil {
		out.ScaleDown.SelectPolicy = ptr.To(autoscalingv2.MaxChangePolicySelect)
	}
	if len(out.ScaleDown.Policies) == 0 {
		out.ScaleDown.Policies = []autoscalingv2.HPAScalingPolicy{{Type: autoscalingv2.PercentScalingPolicy, Value: 100, PeriodSeconds: 15}}
	}
	return out
}

// recommendation is one past recommendation.
type recommendation struct {
	replicas int32
	at       time.Time
}

// scaleEvent is one past change of the target's replicas.
type scaleEvent struct {
	change int32 // positive up, negative down
	at     time.Time
}

// history is one autoscaler's past recommendations and scale events.
type history struct {
	recommendations []recommendation
	ups, downs      []scaleEvent
}

// Recommender keeps each autoscaler's history (in memory, as
// kube-controller-manager does: a restart starts the windows afresh from
// the current count) and normalises the counts metrics ask for.
type Recommender struct {
	// DownscaleWindow is the window without a behaviour
	// (--horizontal-pod-autoscaler-downscale-stabilization, 5m).
	DownscaleWindow time.Duration

	mu  sync.Mutex
	all map[string]*history
}

// NewRecommender returns a Recommender with kube-controller-manager's
// downscale window.
func NewRecommender() *Recommender {
	return &Recommender{DownscaleWindow: 5 * time.Minute, all: map[string]*history{}}
}

func (r *Recommender) of(key string) *history {
	h := r.all[key]
	if h == nil {
		h = &history{}
		r.all[key] = h
	}
	return h
}

// Forget drops an autoscaler's history (it was deleted).
func (r *Recommender) Forget(key string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	delete(r.all, key)
}

// Start records the current count as the first recommendation of an
// autoscaler seen for the first time.
func (r *Recommender) Start(key string, current int32, now time.Time) {
	r.mu.Lock()
	defer r.mu.Unlock()
	h := r.of(key)
	if len(h.recommendations) == 0 {
		h.recommendations = []recommendation{{current, now}}
	}
}

// Normalized is a normalised count with the reasons of the two conditions
// it sets.
type Normalized struct {
	Replicas int32
	// AbleToScale's reason and message (True).
	StabilizedReason, StabilizedMessage string
	// ScalingLimited's reason and message; Limited says whether the count
	// was clamped (the condition is True).
	LimitReason, LimitMessage string
	Limited                   bool
}

// Normalize turns the count the metrics ask for into the one to apply.
// Without a behaviour: the highest recommendation within the downscale
// window, clamped to [min, max] and to max(2 × current, 4). With one:
// the stabilisation windows of both directions, then the scaling
// policies' rate over their periods, then [min, max].
func (r *Recommender) Normalize(key string, b *autoscalingv2.HorizontalPodAutoscalerBehavior, current, desired, minReplicas, maxReplicas int32, now time.Time) Normalized {
	r.mu.Lock()
	defer r.mu.Unlock()
	h := r.of(key)
	if b == nil {
		return r.normalizeLegacy(h, current, desired, minReplicas, maxReplicas, now)
	}
	b = DefaultBehavior(b)
	out := Normalized{}
	stabilized := h.stabilize(b, current, desired, now)
	out.StabilizedReason, out.StabilizedMessage = ReasonReadyForNewScale, MessageReadyForNewScale
	if stabilized != desired {
		if stabilized < desired {
			out.StabilizedReason, out.StabilizedMessage = ReasonScaleUpStabilized, MessageScaleUpStabilized
		} else {
			out.StabilizedReason, out.StabilizedMessage = ReasonScaleDownStabilized, MessageScaleDownStabilized
		}
	}
	h.prune(b, now)
	out.Replicas, out.LimitReason, out.LimitMessage = rate(h, b, current, stabilized, minReplicas, maxReplicas, now)
	out.Limited = out.Replicas != stabilized
	return out
}

func (r *Recommender) normalizeLegacy(h *history, current, desired, minReplicas, maxReplicas int32, now time.Time) Normalized {
	out := Normalized{}
	// The highest of the recommendations within the window, this one
	// included; the oldest outside it makes room for this one.
	stabilized := desired
	cutoff := now.Add(-r.DownscaleWindow)
	replaced := false
	for i := range h.recommendations {
		rec := &h.recommendations[i]
		if rec.at.After(cutoff) {
			stabilized = max(stabilized, rec.replicas)
		} else if !replaced {
			*rec = recommendation{desired, now}
			replaced = true
		}
	}
	if !replaced {
		h.recommendations = append(h.recommendations, recommendation{desired, now})
	}
	out.StabilizedReason, out.StabilizedMessage = ReasonReadyForNewScale, MessageReadyForNewScale
	if stabilized != desired {
		out.StabilizedReason, out.StabilizedMessage = ReasonScaleDownStabilized, MessageScaleDownStabilized
	}
	limit := int32(math.Max(scaleUpLimitFactor*float64(current), scaleUpLimitMinimum))
	allowed, reason, message := maxReplicas, ReasonTooManyReplicas, MessageTooManyReplicas
	if maxReplicas > limit {
		allowed, reason, message = limit, ReasonScaleUpLimit, MessageScaleUpLimit
	}
	switch {
	case stabilized < minReplicas:
		out.Replicas, out.LimitReason, out.LimitMessage = minReplicas, ReasonTooFewReplicas, MessageTooFewReplicas
	case stabilized > allowed:
		out.Replicas, out.LimitReason, out.LimitMessage = allowed, reason, message
	default:
		out.Replicas, out.LimitReason, out.LimitMessage = stabilized, ReasonDesiredWithinRange, MessageDesiredWithinRange
	}
	out.Limited = out.Replicas != stabilized
	return out
}

// stabilize applies both windows: a scale up goes no higher than the
// lowest recommendation within the scale-up window, a scale down no lower
// than the highest within the scale-down window; the new recommendation
// takes the place of one older than both windows.
func (h *history) stabilize(b *autoscalingv2.HorizontalPodAutoscalerBehavior, current, desired int32, now time.Time) int32 {
	up, down := desired, desired
	upCutoff := now.Add(-time.Duration(*b.ScaleUp.StabilizationWindowSeconds) * time.Second)
	downCutoff := now.Add(-time.Duration(*b.ScaleDown.StabilizationWindowSeconds) * time.Second)
	oldest := now.Add(-time.Duration(max(*b.ScaleUp.StabilizationWindowSeconds, *b.ScaleDown.StabilizationWindowSeconds)) * time.Second)
	replaced := false
	for i := range h.recommendations {
		rec := &h.recommendations[i]
		if rec.at.After(upCutoff) {
			up = min(up, rec.replicas)
		}
		if rec.at.After(downCutoff) {
			down = max(down, rec.replicas)
		}
		if !replaced && !rec.at.After(oldest) {
			// Outside both windows: it counted for neither.
			*rec = recommendation{desired, now}
			replaced = true
		}
	}
	if !replaced {
		h.recommendations = append(h.recommendations, recommendation{desired, now})
	}
	result := current
	if result < up {
		result = up
	}
	if result > down {
		result = down
	}
	return result
}

// prune forgets scale events older than the longest policy period.
func (h *history) prune(b *autoscalingv2.HorizontalPodAutoscalerBehavior, now time.Time) {
	h.ups = keepWithin(h.ups, longestPeriod(b.ScaleUp), now)
	h.downs = keepWithin(h.downs, longestPeriod(b.ScaleDown), now)
}

func longestPeriod(r *autoscalingv2.HPAScalingRules) time.Duration {
	var p int32
	for _, pol := range r.Policies {
		p = max(p, pol.PeriodSeconds)
	}
	return time.Duration(p) * time.Second
}

func keepWithin(events []scaleEvent, period time.Duration, now time.Time) []scaleEvent {
	out := events[:0]
	for _, e := range events {
		if e.at.After(now.Add(-period)) {
			out = append(out, e)
		}
	}
	return out
}

// changedWithin sums the changes within a period.
func changedWithin(events []scaleEvent, period time.Duration, now time.Time) int32 {
	var sum int32
	for _, e := range events {
		if e.at.After(now.Add(-period)) {
			sum += e.change
		}
	}
	return sum
}

// rate clamps a stabilised count to what the policies allow over their
// periods and to [min, max].
func rate(h *history, b *autoscalingv2.HorizontalPodAutoscalerBehavior, current, desired, minReplicas, maxReplicas int32, now time.Time) (int32, string, string) {
	switch {
	case desired > current:
		limit := upLimit(h, b.ScaleUp, current, now)
		if limit < current {
			limit = current
		}
		allowed, reason, message := maxReplicas, ReasonTooManyReplicas, MessageTooManyReplicas
		if allowed > limit {
			allowed, reason, message = limit, ReasonScaleUpLimit, MessageScaleUpLimit
		}
		if desired > allowed {
			return allowed, reason, message
		}
	case desired < current:
		limit := downLimit(h, b.ScaleDown, current, now)
		if limit > current {
			limit = current
		}
		allowed, reason, message := minReplicas, ReasonTooFewReplicas, MessageTooFewReplicas
		if allowed < limit {
			allowed, reason, message = limit, ReasonScaleDownLimit, MessageScaleDownLimit
		}
		if desired < allowed {
			return allowed, reason, message
		}
	}
	return desired, ReasonDesiredWithinRange, MessageDesiredWithinRange
}

// upLimit is the highest count the scale-up policies allow now: each
// policy from the count at the start of its period; the largest (Max) or
// smallest (Min) of them; the current count when Disabled.
func upLimit(h *history, r *autoscalingv2.HPAScalingRules, current int32, now time.Time) int32 {
	if *r.SelectPolicy == autoscalingv2.DisabledPolicySelect {
		return current
	}
	pickMax := *r.SelectPolicy == autoscalingv2.MaxChangePolicySelect
	result := int32(math.MinInt32)
	if !pickMax {
		result = math.MaxInt32
	}
	for _, p := range r.Policies {
		period := time.Duration(p.PeriodSeconds) * time.Second
		start := current - changedWithin(h.ups, period, now) - changedWithin(h.downs, period, now)
		var proposed int32
		if p.Type == autoscalingv2.PodsScalingPolicy {
			proposed = start + p.Value
		} else {
			proposed = int32(math.Ceil(float64(start) * (1 + float64(p.Value)/100)))
		}
		if pickMax {
			result = max(result, proposed)
		} else {
			result = min(result, proposed)
		}
	}
	return result
}

// downLimit is the lowest count the scale-down policies allow now: Max
// picks the policy allowing the biggest change (the lowest count).
func downLimit(h *history, r *autoscalingv2.HPAScalingRules, current int32, now time.Time) int32 {
	if *r.SelectPolicy == autoscalingv2.DisabledPolicySelect {
		return current
	}
	pickMax := *r.SelectPolicy == autoscalingv2.MaxChangePolicySelect
	result := int32(math.MaxInt32)
	if !pickMax {
		result = math.MinInt32
	}
	for _, p := range r.Policies {
		period := time.Duration(p.PeriodSeconds) * time.Second
		start := current - changedWithin(h.ups, period, now) - changedWithin(h.downs, period, now)
		var proposed int32
		if p.Type == autoscalingv2.PodsScalingPolicy {
			proposed = start - p.Value
		} else {
			proposed = int32(float64(start) * (1 - float64(p.Value)/100))
		}
		if pickMax {
			result = min(result, proposed)
		} else {
			result = max(result, proposed)
		}
	}
	return result
}

// Record notes a scale the controller made (with a behaviour, the
// policies' periods count it).
func (r *Recommender) Record(key string, b *autoscalingv2.HorizontalPodAutoscalerBehavior, from, to int32, now time.Time) {
	if b == nil || from == to {
		return
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	h := r.of(key)
	if to > from {
		h.ups = append(h.ups, scaleEvent{to - from, now})
	} else {
		h.downs = append(h.downs, scaleEvent{to - from, now})
	}
}
