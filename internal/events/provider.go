package events

import (
	"context"

	"github.com/prometheus/client_golang/prometheus"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/kubernetes"
	typedcorev1 "k8s.io/client-go/kubernetes/typed/core/v1"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/record"
	"sigs.k8s.io/controller-runtime/pkg/metrics"
)

// Provider makes event recorders that write through two client-go
// broadcasters, each with its own correlator (aggregation, per-object spam
// filter), queue and writer: one for Normal events, one for Warnings. In a
// burst the Normal writer, waiting for each write in turn, falls behind and
// client-go drops what its queue cannot hold; Warnings are few, so their
// queue does not fill and a burst of Normal events cannot crowd a failure
// out. (The correlator keys by type as well: nothing it would aggregate is
// split.) Events are not logged (klog): the API server has them.
type Provider struct {
	scheme           *runtime.Scheme
	normal, warnings record.EventBroadcaster
}

// The correlators' cache sizes: a quarter of client-go's default (4,096
// each for the aggregator, the spam filter and the log of written events),
// which a burst like the W1 benchmark fills. What they are for, aggregating
// an object's repeated events and rate-limiting them, needs only the
// recent ones.
const (
	normalEntries  = 1024
	warningEntries = 256
)

// NewProvider starts the broadcasters, writing to the API server of cfg.
func NewProvider(cfg *rest.Config, scheme *runtime.Scheme) (*Provider, error) {
	cs, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		return nil, err
	}
	sink := &typedcorev1.EventSinkImpl{Interface: cs.CoreV1().Events("")}
	start := func(entries int) record.EventBroadcaster {
		b := record.NewBroadcaster(record.WithCorrelatorOptions(record.CorrelatorOptions{LRUCacheSize: entries}))
		b.StartRecordingToSink(sink)
		return b
	}
	return &Provider{scheme: scheme, normal: start(normalEntries), warnings: start(warningEntries)}, nil
}

// RecorderFor returns a recorder whose events name source as their origin.
func (p *Provider) RecorderFor(source string) record.EventRecorder {
	from := corev1.EventSource{Component: source}
	return &split{source: source, normal: p.normal.NewRecorder(p.scheme, from), warnings: p.warnings.NewRecorder(p.scheme, from)}
}

// Start waits for ctx to end, then stops the broadcasters (a manager
// Runnable).
func (p *Provider) Start(ctx context.Context) error {
	<-ctx.Done()
	p.normal.Shutdown()
	p.warnings.Shutdown()
	return nil
}

// recorded counts the events handed to the recorders, by source, type and
// reason: beside the API server's count of event writes, it shows how many
// the broadcasters aggregated or dropped.
var recorded = prometheus.NewCounterVec(prometheus.CounterOpts{
	Name: "karmada_events_recorded_total",
	Help: "Events handed to the event recorders, by source, type and reason.",
}, []string{"source", "type", "reason"})

func init() { metrics.Registry.MustRegister(recorded) }

// split sends Warnings and Normal events through their own broadcasters.
type split struct {
	source           string
	normal, warnings record.EventRecorder
}

func (s *split) Event(obj runtime.Object, eventType, reason, message string) {
	recorded.WithLabelValues(s.source, eventType, reason).Inc()
	s.recorder(eventType).Event(obj, eventType, reason, message)
}

func (s *split) Eventf(obj runtime.Object, eventType, reason, format string, args ...any) {
	recorded.WithLabelValues(s.source, eventType, reason).Inc()
	s.recorder(eventType).Eventf(obj, eventType, reason, format, args...)
}

func (s *split) AnnotatedEventf(obj runtime.Object, annotations map[string]string, eventType, reason, format string, args ...any) {
	recorded.WithLabelValues(s.source, eventType, reason).Inc()
	s.recorder(eventType).AnnotatedEventf(obj, annotations, eventType, reason, format, args...)
}

func (s *split) recorder(eventType string) record.EventRecorder {
	if eventType == corev1.EventTypeWarning {
		return s.warnings
	}
	return s.normal
}
