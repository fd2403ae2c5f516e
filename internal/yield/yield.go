// Package yield makes a component's writes to the karmada-apiserver give
// way to its users' requests.
//
// The controllers write as fast as their workers find work, so while they
// propagate a thousand templates the API server's CPU is theirs and a user's
// `kubectl apply` waits behind them (API Priority and Fairness cannot help:
// it shares seats, and seats are not what runs out; docs/performance.md,
// "Users' requests while propagating"). A Limiter bounds how many writes the
// process has in flight by how long they take, the way a background transfer
// yields to interactive traffic on a shared link: the least latency seen
// recently is what a write costs on an idle server; what a write takes
// beyond it is time spent queued behind others. While that queueing delay
// stays under the target the window grows by about one write per round
// trip; above it, it shrinks in proportion to the excess, down to one write
// at a time. A burst of users' requests raises every write's latency, so the
// controllers step back within a few round trips and come back as the
// burst ends. Reads, watches, the lease and the reviews of /metrics
// authentication are never held.
package yield

import (
	"context"
	"net/http"
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"sigs.k8s.io/controller-runtime/pkg/metrics"

	"github.com/karmada-go/karmada/internal/leaderfence"
)

// Bounds of the window, in writes in flight. Below one, one write is in
// flight and the next waits (1/window - 1) times the last one's latency,
// at most maxGap: at MinWindow, a write in every ten round trips.
const (
	MinWindow = 0.1
	MaxWindow = 128
	// startWindow is the window before any write has completed.
	startWindow = 16
	// maxGap bounds the spacing below one write: after an outage of the
	// API server (writes that took seconds) the next write does not wait
	// ten times that.
	maxGap = time.Second
	// decreaseGain is how much of one write a completion above the target
	// (by the target or more) takes off the window: a window of n writes
	// all late halves in one round trip.
	decreaseGain = 0.5
)

// The least latency is the minimum over baseBuckets buckets of baseBucket:
// a server that stays slower (larger objects, more watchers) becomes the
// new base within two minutes.
const (
	baseBucket  = 10 * time.Second
	baseBuckets = 12
)

var (
	windowGauge = prometheus.NewGauge(prometheus.GaugeOpts{
		Name: "karmada_write_yield_window",
		Help: "How many writes to the karmada-apiserver this process may have in flight: it shrinks while they queue longer than --write-queue-target.",
	})
	baseGauge = prometheus.NewGauge(prometheus.GaugeOpts{
		Name: "karmada_write_yield_base_latency_seconds",
		Help: "The least latency of this process's writes to the karmada-apiserver over the last two minutes: what a write costs unqueued.",
	})
	waitSeconds = prometheus.NewHistogram(prometheus.HistogramOpts{
		Name:    "karmada_write_yield_wait_seconds",
		Help:    "How long writes waited for room in the window before being sent.",
		Buckets: []float64{0.001, 0.005, 0.025, 0.1, 0.5, 2.5, 10},
	})
)

func init() { metrics.Registry.MustRegister(windowGauge, baseGauge, waitSeconds) }

// Limiter holds writes beyond the window. Its zero value is not usable; use
// New.
type Limiter struct {
	target time.Duration
	now    func() time.Time

	mu       sync.Mutex
	window   float64
	inflight int
	// waiting are the held writes, first come first sent.
	waiting []chan struct{}
	// notBefore is when the next write may go, while the window is below
	// one; timer hands over then.
	notBefore time.Time
	timer     *time.Timer
	base      base
}

// New returns a limiter aiming at target queueing delay (positive).
func New(target time.Duration) *Limiter {
	l := &Limiter{target: target, now: time.Now, window: startWindow}
	windowGauge.Set(startWindow)
	return l
}

// Acquire waits for room in the window, or for ctx to end. done must be
// called once the write's response came, with whether it reached the
// server (a write that failed on the way says nothing of its queue).
func (l *Limiter) Acquire(ctx context.Context) (done func(reached bool), err error) {
	l.mu.Lock()
	if l.inflight < l.room() && len(l.waiting) == 0 && !l.now().Before(l.notBefore) {
		l.inflight++
		l.mu.Unlock()
		return l.doneFunc(l.now()), nil
	}
	ch := make(chan struct{})
	l.waiting = append(l.waiting, ch)
	l.handOver() // arms the timer when it is the spacing that holds it
	l.mu.Unlock()
	held := l.now()
	select {
	case <-ch:
		// A slot was handed over: inflight already counts it.
		waitSeconds.Observe(l.now().Sub(held).Seconds())
		return l.doneFunc(l.now()), nil
	case <-ctx.Done():
		l.mu.Lock()
		defer l.mu.Unlock()
		for i, w := range l.waiting {
			if w == ch {
				l.waiting = append(l.waiting[:i], l.waiting[i+1:]...)
				return nil, ctx.Err()
			}
		}
		// Handed a slot as the context ended: give it on.
		l.inflight--
		l.handOver()
		return nil, ctx.Err()
	}
}

func (l *Limiter) doneFunc(sent time.Time) func(bool) {
	var once sync.Once
	return func(reached bool) {
		once.Do(func() { l.complete(l.now().Sub(sent), reached) })
	}
}

// room is the window as a whole number of writes, at least one.
func (l *Limiter) room() int { return max(int(l.window), 1) }

// complete frees the write's slot and, when it reached the server, moves
// the window by its latency.
func (l *Limiter) complete(latency time.Duration, reached bool) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.inflight--
	if reached {
		now := l.now()
		least := l.base.add(now, latency)
		l.window = next(l.window, latency-least, l.target)
		windowGauge.Set(l.window)
		baseGauge.Set(least.Seconds())
		if l.window < 1 {
			l.notBefore = now.Add(min(time.Duration(float64(latency)*(1/l.window-1)), maxGap))
		}
	}
	l.handOver()
}

// handOver sends held writes while there is room and, below a window of
// one, once their time has come; l.mu is held.
func (l *Limiter) handOver() {
	if len(l.waiting) > 0 {
		if wait := l.notBefore.Sub(l.now()); wait > 0 {
			if l.timer == nil {
				l.timer = time.AfterFunc(wait, func() {
					l.mu.Lock()
					defer l.mu.Unlock()
					l.timer = nil
					l.handOver()
				})
			}
			return
		}
	}
	for len(l.waiting) > 0 && l.inflight < l.room() {
		close(l.waiting[0])
		l.waiting = l.waiting[1:]
		l.inflight++
	}
}

// next is the window after a write that queued for queued, aiming at
// target: off-target is (target - queued) / target, at most 1 and at least
// -1; below the target the window grows by off-target / max(window, 1)
// (about one write per window of completions), above it shrinks by
// decreaseGain × |off-target| × min(window, 1) (below one, by a share of
// itself at each write); it stays within [MinWindow, MaxWindow].
func next(window float64, queued, target time.Duration) float64 {
	off := float64(target-queued) / float64(target)
	off = min(max(off, -1), 1)
	if off >= 0 {
		window += off / max(window, 1)
	} else {
		window += decreaseGain * off * min(window, 1)
	}
	return min(max(window, MinWindow), MaxWindow)
}

// base keeps the least latency per bucket of time.
type base struct {
	// mins[i] is the least latency in the bucket that started at starts[i].
	mins   [baseBuckets]time.Duration
	starts [baseBuckets]time.Time
}

// add records a latency at now and returns the least latency of the
// buckets still current.
func (b *base) add(now time.Time, latency time.Duration) time.Duration {
	start := now.Truncate(baseBucket)
	i := int(start.Unix()/int64(baseBucket/time.Second)) % baseBuckets
	if !b.starts[i].Equal(start) {
		b.starts[i], b.mins[i] = start, latency
	} else if latency < b.mins[i] {
		b.mins[i] = latency
	}
	oldest := start.Add(-baseBucket * (baseBuckets - 1))
	least := latency
	for j := range b.mins {
		if !b.starts[j].Before(oldest) && b.mins[j] < least {
			least = b.mins[j]
		}
	}
	return least
}

// Wrap is a rest.Config WrapTransport: the writes leaderfence fences (not
// reads, watches, the lease or reviews) pass through the limiter.
func (l *Limiter) Wrap(rt http.RoundTripper) http.RoundTripper {
	return roundTripper{l: l, next: rt}
}

type roundTripper struct {
	l    *Limiter
	next http.RoundTripper
}

func (r roundTripper) RoundTrip(req *http.Request) (*http.Response, error) {
	if !leaderfence.Fenced(req) {
		return r.next.RoundTrip(req)
	}
	done, err := r.l.Acquire(req.Context())
	if err != nil {
		return nil, err
	}
	resp, err := r.next.RoundTrip(req)
	done(err == nil)
	return resp, err
}
