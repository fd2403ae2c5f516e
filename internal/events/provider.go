package events

import (
	"context"
	"hash/fnv"

	"github.com/prometheus/client_golang/prometheus"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/kubernetes"
	typedcorev1 "k8s.io/client-go/kubernetes/typed/core/v1"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/record"
	"sigs.k8s.io/controller-runtime/pkg/metrics"
)

// Provider makes event recorders that write through several client-go
// broadcasters, each with its own correlator (aggregation, per-object spam
// filter) and its own writer. An object's events always go through the
// same broadcaster, so they are aggregated and ordered as with one; the
// writers together keep up with a busy control plane, where one writer
// waiting for each write in turn would fill its queue and drop events.
type Provider struct {
	scheme     *runtime.Scheme
	broadcasts []record.EventBroadcaster
}

// DefaultShards is the number of broadcasters a Provider writes through.
const DefaultShards = 4

// NewProvider starts shards broadcasters writing to the API server of cfg.
func NewProvider(cfg *rest.Config, scheme *runtime.Scheme, shards int) (*Provider, error) {
	cs, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		return nil, err
	}
	p := &Provider{scheme: scheme}
	for range max(shards, 1) {
		b := record.NewBroadcaster()
		b.StartRecordingToSink(&typedcorev1.EventSinkImpl{Interface: cs.CoreV1().Events("")})
		b.StartStructuredLogging(4)
		p.broadcasts = append(p.broadcasts, b)
	}
	return p, nil
}

// RecorderFor returns a recorder whose events name source as their origin.
func (p *Provider) RecorderFor(source string) record.EventRecorder {
	r := &sharded{source: source}
	for _, b := range p.broadcasts {
		r.recorders = append(r.recorders, b.NewRecorder(p.scheme, corev1.EventSource{Component: source}))
	}
	return r
}

// Start waits for ctx to end, then stops the broadcasters (a manager
// Runnable).
func (p *Provider) Start(ctx context.Context) error {
	<-ctx.Done()
	for _, b := range p.broadcasts {
		b.Shutdown()
	}
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

type sharded struct {
	source    string
	recorders []record.EventRecorder
}

func (s *sharded) pick(obj runtime.Object) record.EventRecorder {
	if len(s.recorders) == 1 {
		return s.recorders[0]
	}
	h := fnv.New32a()
	if ref, ok := obj.(*corev1.ObjectReference); ok {
		h.Write([]byte(ref.Kind + "/" + ref.Namespace + "/" + ref.Name))
	} else if m, err := meta.Accessor(obj); err == nil {
		h.Write([]byte(obj.GetObjectKind().GroupVersionKind().Kind + "/" + m.GetNamespace() + "/" + m.GetName()))
	}
	return s.recorders[h.Sum32()%uint32(len(s.recorders))]
}

func (s *sharded) Event(obj runtime.Object, eventType, reason, message string) {
	recorded.WithLabelValues(s.source, eventType, reason).Inc()
	s.pick(obj).Event(obj, eventType, reason, message)
}

func (s *sharded) Eventf(obj runtime.Object, eventType, reason, format string, args ...any) {
	recorded.WithLabelValues(s.source, eventType, reason).Inc()
	s.pick(obj).Eventf(obj, eventType, reason, format, args...)
}

func (s *sharded) AnnotatedEventf(obj runtime.Object, annotations map[string]string, eventType, reason, format string, args ...any) {
	recorded.WithLabelValues(s.source, eventType, reason).Inc()
	s.pick(obj).AnnotatedEventf(obj, annotations, eventType, reason, format, args...)
}
