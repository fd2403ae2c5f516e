// Package framework defines the scheduler's extension points. Each is one
// small interface; a plugin implements the ones it needs and is registered
// by name.
package framework

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	clusterv1alpha1 "github.com/karmada-go/karmada/api/cluster/v1alpha1"
	workv1alpha2 "github.com/karmada-go/karmada/api/work/v1alpha2"
	"github.com/karmada-go/karmada/internal/features"
	"github.com/karmada-go/karmada/internal/metrics"
)

// Code is the outcome of a plugin call.
type Code int

// Codes of a Status.
const (
	// Success: the cluster passes.
	Success Code = iota
	// Unschedulable: the cluster cannot take the workload now; it may once
	// the cluster or the placement changes.
	Unschedulable
	// Error: the plugin failed and has no verdict on the cluster; the
	// scheduling cycle stops, the placement is kept, and the binding is
	// retried with backoff.
	Error
)

// Status is a plugin's verdict with the reasons behind it. A nil Status is
// Success.
type Status struct {
	code    Code
	reasons []string
	plugin  string
}

// NewStatus returns a status with reasons.
func NewStatus(code Code, reasons ...string) *Status {
	return &Status{code: code, reasons: reasons}
}

// Code returns the code; nil is Success.
func (s *Status) Code() Code {
	if s == nil {
		return Success
	}
	return s.code
}

// IsSuccess reports whether the status is Success.
func (s *Status) IsSuccess() bool { return s.Code() == Success }

// Reasons returns why the status is not Success.
func (s *Status) Reasons() []string {
	if s == nil {
		return nil
	}
	return s.reasons
}

// Plugin names the plugin that returned the status.
func (s *Status) Plugin() string {
	if s == nil {
		return ""
	}
	return s.plugin
}

// WithPlugin records which plugin returned the status.
func (s *Status) WithPlugin(name string) *Status {
	if s != nil {
		s.plugin = name
	}
	return s
}

// Message is the reasons joined.
func (s *Status) Message() string { return strings.Join(s.Reasons(), "; ") }

// Plugin is what every plugin is.
type Plugin interface {
	// Name is the plugin's name in --plugins and in diagnoses.
	Name() string
}

// FilterPlugin rules out clusters that cannot take a binding. Filter is
// called once per binding and cluster; it must not modify its arguments and
// must be safe to call concurrently.
type FilterPlugin interface {
	Plugin
	Filter(ctx context.Context, spec *workv1alpha2.ResourceBindingSpec, cluster *clusterv1alpha1.Cluster) *Status
}

// ScorePlugin ranks the clusters that passed the filters; a higher score is
// better, within [MinScore, MaxScore].
type ScorePlugin interface {
	Plugin
	Score(ctx context.Context, spec *workv1alpha2.ResourceBindingSpec, cluster *clusterv1alpha1.Cluster) (int64, *Status)
}

// ScoreNormalizer is implemented by score plugins whose raw scores are not
// already in [MinScore, MaxScore]: it rescales the scores of one cycle
// (cluster name to score) in place.
type ScoreNormalizer interface {
	NormalizeScores(scores map[string]int64)
}

// Score bounds.
const (
	MinScore int64 = 0
	MaxScore int64 = 100
)

// Factory builds a plugin.
type Factory func() (Plugin, error)

// Registry maps plugin names to factories.
type Registry map[string]Factory

// ReplicaEstimator estimates, for the clusters that passed the filters,
// how many more replicas of the binding (or, for a multi-component
// workload, whole sets of its components) each can take: the answers are
// in the clusters' order. Without one the general estimator answers from
// each Cluster's resource summary.
type ReplicaEstimator interface {
	Estimate(ctx context.Context, spec *workv1alpha2.ResourceBindingSpec, clusters []*clusterv1alpha1.Cluster) []Estimate
}

// Estimate is one cluster's estimate and the estimator that gave it (the
// lowest answer wins), named in placement explanations.
type Estimate struct {
	Replicas int32
	By       string
}

// Framework runs the enabled plugins.
type Framework struct {
	// Estimator replaces the general estimator when set.
	Estimator ReplicaEstimator

	filters []FilterPlugin
	scores  []ScorePlugin
	// filterTimes and scoreTimes time each plugin (the observers resolved
	// once: a cycle calls them per cluster).
	filterTimes, scoreTimes []timer
}

// timer observes a duration under a result label resolved in advance.
type timer struct{ success, failure prometheus.Observer }

func newTimer(h *prometheus.HistogramVec, labels ...string) timer {
	return timer{success: h.WithLabelValues(append(labels, metrics.Success)...), failure: h.WithLabelValues(append(labels, metrics.Error)...)}
}

// observe records the time since start: failure when the status is Error,
// success when the plugin gave a verdict (Unschedulable included).
func (t timer) observe(s *Status, start time.Time) {
	if s.Code() == Error {
		t.failure.Observe(metrics.Since(start))
		return
	}
	t.success.Observe(metrics.Since(start))
}

// The extension points' timers.
var (
	filterPoint = newTimer(metrics.FrameworkExtensionPointDuration, "Filter")
	scorePoint  = newTimer(metrics.FrameworkExtensionPointDuration, "Score")
)

// New builds the plugins of the registry that enabled selects, in name order.
// enabled follows the --plugins syntax: "*" for all, "name", "-name".
func New(r Registry, enabled []string) (*Framework, error) {
	names, err := Enabled(r, enabled)
	if err != nil {
		return nil, err
	}
	f := &Framework{}
	for _, n := range names {
		p, err := r[n]()
		if err != nil {
			return nil, fmt.Errorf("building plugin %s: %w", n, err)
		}
		if fp, ok := p.(FilterPlugin); ok {
			f.filters = append(f.filters, fp)
			f.filterTimes = append(f.filterTimes, newTimer(metrics.PluginExecutionDuration, n, "Filter"))
		}
		if sp, ok := p.(ScorePlugin); ok {
			f.scores = append(f.scores, sp)
			f.scoreTimes = append(f.scoreTimes, newTimer(metrics.PluginExecutionDuration, n, "Score"))
		}
	}
	return f, nil
}

// Enabled resolves a --plugins list against the registry.
func Enabled(r Registry, spec []string) ([]string, error) {
	known := make([]string, 0, len(r))
	for n := range r {
		known = append(known, n)
	}
	return features.Enabled("--plugins", "plugin", known, spec)
}

// RunFilters returns nil when every filter passes the cluster, else the
// first failing plugin's status.
func (f *Framework) RunFilters(ctx context.Context, spec *workv1alpha2.ResourceBindingSpec, cluster *clusterv1alpha1.Cluster) *Status {
	start := time.Now()
	for i, p := range f.filters {
		ps := time.Now()
		s := p.Filter(ctx, spec, cluster)
		if i < len(f.filterTimes) {
			f.filterTimes[i].observe(s, ps)
		}
		if !s.IsSuccess() {
			filterPoint.observe(s, start)
			return s.WithPlugin(p.Name())
		}
	}
	filterPoint.observe(nil, start)
	return nil
}

// PluginScores are one cluster's normalised scores, one per score plugin in
// the framework's order.
type PluginScores struct {
	Plugins []string
	Scores  map[string][]int64
}

// Total is the sum of a cluster's scores.
func (p PluginScores) Total(cluster string) int64 {
	var t int64
	for _, s := range p.Scores[cluster] {
		t += s
	}
	return t
}

// RunScores scores every cluster with every score plugin, normalises each
// plugin's scores over the clusters (clamping to [MinScore, MaxScore]), and
// returns them per cluster.
func (f *Framework) RunScores(ctx context.Context, spec *workv1alpha2.ResourceBindingSpec, clusters []*clusterv1alpha1.Cluster) (PluginScores, *Status) {
	start := time.Now()
	out := PluginScores{Scores: make(map[string][]int64, len(clusters))}
	for i, p := range f.scores {
		out.Plugins = append(out.Plugins, p.Name())
		scores := make(map[string]int64, len(clusters))
		ps := time.Now()
		for _, c := range clusters {
			s, st := p.Score(ctx, spec, c)
			if !st.IsSuccess() {
				if i < len(f.scoreTimes) {
					f.scoreTimes[i].observe(st, ps)
				}
				scorePoint.observe(st, start)
				return PluginScores{}, st.WithPlugin(p.Name())
			}
			scores[c.Name] = s
		}
		if i < len(f.scoreTimes) {
			f.scoreTimes[i].observe(nil, ps)
		}
		if n, ok := p.(ScoreNormalizer); ok {
			n.NormalizeScores(scores)
		}
		for _, c := range clusters {
			out.Scores[c.Name] = append(out.Scores[c.Name], min(max(scores[c.Name], MinScore), MaxScore))
		}
	}
	scorePoint.observe(nil, start)
	return out, nil
}
