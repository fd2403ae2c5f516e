// Package leaderfence keeps a leader-elected process from writing once its
// lease may have passed to another replica.
//
// Kubernetes' leader election tells a leader it lost only when its renewal
// loop next runs and fails. A leader that was paused (SIGSTOP, a stalled VM,
// a long GC) for longer than the lease resumes believing it still leads, and
// until its renewal loop notices (up to the renew deadline), its workers
// act on what they had queued, beside the replica that took over: two
// leaders. The fence closes that window on the writing side: every
// mutating request of the process passes through Fence.Wrap, which refuses
// it unless the lease was renewed (successfully, by this process) less than
// the renew deadline ago, by the monotonic clock. A standby's lease is never
// renewed, so a standby writes nothing either. Reads, the lease's own
// requests and the token and access reviews of /metrics authentication are
// not fenced.
package leaderfence

import (
	"context"
	"fmt"
	"net/http"
	"strings"
	"sync/atomic"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"k8s.io/client-go/tools/leaderelection/resourcelock"
	"k8s.io/klog/v2"
	"sigs.k8s.io/controller-runtime/pkg/metrics"
)

// Fence is the process's state: disabled (every request passes: no
// election), or open until a deadline set by each renewal.
type Fence struct {
	enabled atomic.Bool
	// validFor is how long after a renewal was sent writes stay allowed.
	validFor atomic.Int64
	// until is the end of the current allowance, as nanoseconds since base
	// (monotonic); 0 when closed.
	until atomic.Int64
	base  time.Time
	now   func() time.Duration
}

// New returns a disabled fence.
func New() *Fence {
	f := &Fence{base: time.Now()}
	f.now = func() time.Duration { return time.Since(f.base) }
	return f
}

// Default is the process's fence: what NewManager enables, and what every
// client of the process (the karmada-apiserver's, the members') is wrapped
// with.
var Default = New()

var refused = prometheus.NewCounter(prometheus.CounterOpts{
	Name: "karmada_leader_fence_refused_requests_total",
	Help: "Writes refused because this replica's lease was not renewed within its renew deadline (it was paused, cut off, or is a standby).",
})

func init() { metrics.Registry.MustRegister(refused) }

// Enable turns the fence on: from now, writes are allowed only for
// validFor after each renewal. Until the first, none is.
func (f *Fence) Enable(validFor time.Duration) {
	f.validFor.Store(int64(validFor))
	f.enabled.Store(true)
}

// renewed records a successful renewal sent at sent.
func (f *Fence) renewed(sent time.Duration) {
	f.until.Store(int64(sent) + f.validFor.Load())
}

// close refuses every write until the next renewal.
func (f *Fence) close() { f.until.Store(0) }

// Check returns an error when a write must not be sent now.
func (f *Fence) Check() error {
	if !f.enabled.Load() {
		return nil
	}
	until := time.Duration(f.until.Load())
	if now := f.now(); until == 0 || now >= until {
		if until == 0 {
			return fmt.Errorf("refusing to write: this replica does not hold its leader election lease")
		}
		return fmt.Errorf("refusing to write: this replica's lease was last renewed %s ago, longer than its renew deadline (%s): another replica may lead now",
			(now - until + time.Duration(f.validFor.Load())).Round(time.Millisecond), time.Duration(f.validFor.Load()))
	}
	return nil
}

// Wrap is a rest.Config WrapTransport: mutating requests pass only while
// Check allows them.
func (f *Fence) Wrap(rt http.RoundTripper) http.RoundTripper {
	return roundTripper{f: f, next: rt}
}

type roundTripper struct {
	f    *Fence
	next http.RoundTripper
}

func (r roundTripper) RoundTrip(req *http.Request) (*http.Response, error) {
	if Fenced(req) {
		if err := r.f.Check(); err != nil {
			refused.Inc()
			klog.FromContext(req.Context()).V(1).Info("Write refused by the leader fence", "method", req.Method, "path", req.URL.Path, "reason", err.Error())
			return nil, err
		}
	}
	return r.next.RoundTrip(req)
}

// unfencedGroups are API groups whose writes are not the process's state:
// its lease, and the reviews that authenticate requests to its /metrics.
var unfencedGroups = []string{"/apis/coordination.k8s.io/", "/apis/authentication.k8s.io/", "/apis/authorization.k8s.io/"}

// Fenced tells the requests the fence holds: writes of the process's
// state (not reads, watches, the lease or reviews).
func Fenced(req *http.Request) bool {
	switch req.Method {
	case http.MethodGet, http.MethodHead, http.MethodOptions:
		return false
	}
	for _, g := range unfencedGroups {
		if strings.HasPrefix(req.URL.Path, g) {
			return false
		}
	}
	return true
}

// Lock wraps a resource lock so that each renewal this process makes
// opens the fence, and giving the lease up closes it.
func (f *Fence) Lock(l resourcelock.Interface) resourcelock.Interface {
	return &lock{Interface: l, f: f}
}

type lock struct {
	resourcelock.Interface
	f *Fence
}

func (l *lock) Create(ctx context.Context, ler resourcelock.LeaderElectionRecord) error {
	sent := l.f.now()
	err := l.Interface.Create(ctx, ler)
	l.record(ler, sent, err)
	return err
}

func (l *lock) Update(ctx context.Context, ler resourcelock.LeaderElectionRecord) error {
	sent := l.f.now()
	err := l.Interface.Update(ctx, ler)
	l.record(ler, sent, err)
	return err
}

func (l *lock) record(ler resourcelock.LeaderElectionRecord, sent time.Duration, err error) {
	switch {
	case err != nil:
		// The allowance of the last success stands until it ends.
	case ler.HolderIdentity == l.Identity():
		l.f.renewed(sent)
	default:
		// Released (ReleaseOnCancel writes an empty holder).
		l.f.close()
	}
}
