package yield

import (
	"context"
	"errors"
	"math"
	"net/http"
	"net/http/httptest"
	"sync/atomic"
	"testing"
	"time"
)

func TestNext(t *testing.T) {
	ms := time.Millisecond
	for _, tc := range []struct {
		name           string
		window         float64
		queued, target time.Duration
		want           float64
	}{
		{"no queue grows by one write per window", 4, 0, 10 * ms, 4.25},
		{"half the target grows by half as much", 4, 5 * ms, 10 * ms, 4.125},
		{"at the target it stays", 4, 10 * ms, 10 * ms, 4},
		{"twice the target shrinks by half a write", 4, 20 * ms, 10 * ms, 3.5},
		{"far above the target shrinks by no more than half a write", 4, time.Second, 10 * ms, 3.5},
		{"below one it shrinks by a share of itself", 0.5, time.Second, 10 * ms, 0.25},
		{"below one it grows by at most one", 0.5, 0, 10 * ms, 1.5},
		{"never below the least", MinWindow, time.Second, 10 * ms, MinWindow},
		{"never above the most", MaxWindow, 0, 10 * ms, MaxWindow},
		{"a faster write than the base counts as no queue", 2, -5 * ms, 10 * ms, 2.5},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := next(tc.window, tc.queued, tc.target); math.Abs(got-tc.want) > 1e-9 {
				t.Errorf("next(%v, %s, %s) = %v, want %v", tc.window, tc.queued, tc.target, got, tc.want)
			}
		})
	}
}

func TestBaseIsTheLeastOfTheLastTwoMinutes(t *testing.T) {
	var b base
	t0 := time.Unix(1_000_000, 0)
	if got := b.add(t0, 30*time.Millisecond); got != 30*time.Millisecond {
		t.Fatalf("first latency: base %s, want 30ms", got)
	}
	if got := b.add(t0.Add(time.Second), 5*time.Millisecond); got != 5*time.Millisecond {
		t.Fatalf("a lower latency: base %s, want 5ms", got)
	}
	if got := b.add(t0.Add(time.Minute), 40*time.Millisecond); got != 5*time.Millisecond {
		t.Fatalf("a minute on: base %s, want the 5ms still", got)
	}
	// Past two minutes the 5 ms bucket is gone; the minute-old 40 ms stays.
	if got := b.add(t0.Add(2*time.Minute+time.Second), 50*time.Millisecond); got != 40*time.Millisecond {
		t.Fatalf("two minutes on: base %s, want 40ms", got)
	}
	if got := b.add(t0.Add(2*time.Minute+2*time.Second), 60*time.Millisecond); got != 40*time.Millisecond {
		t.Fatalf("base %s, want 40ms (the bucket reused by the latest is replaced, not kept at 5ms)", got)
	}
}

// acquired runs Acquire in a goroutine and reports its result.
func acquired(l *Limiter, ctx context.Context) <-chan func(bool) {
	ch := make(chan func(bool), 1)
	go func() {
		done, err := l.Acquire(ctx)
		if err != nil {
			close(ch)
			return
		}
		ch <- done
	}()
	return ch
}

func waitFor(t *testing.T, ch <-chan func(bool)) func(bool) {
	t.Helper()
	select {
	case d, ok := <-ch:
		if !ok {
			t.Fatal("Acquire failed")
		}
		return d
	case <-time.After(10 * time.Second):
		t.Fatal("Acquire did not return within 10s")
		return nil
	}
}

func TestWindowHoldsWritesFirstComeFirstSent(t *testing.T) {
	l := New(10 * time.Millisecond)
	l.window = 2
	ctx := context.Background()
	first, second := waitFor(t, acquired(l, ctx)), waitFor(t, acquired(l, ctx))
	third := acquired(l, ctx)
	// The third is queued before the fourth is made.
	deadline := time.Now().Add(10 * time.Second)
	for {
		l.mu.Lock()
		n := len(l.waiting)
		l.mu.Unlock()
		if n == 1 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("the third write was not held")
		}
		time.Sleep(time.Millisecond)
	}
	fourth := acquired(l, ctx)
	select {
	case <-third:
		t.Fatal("a third write was sent with a window of two")
	default:
	}
	// A write that never reached the server frees its slot and leaves the
	// window alone.
	first(false)
	d3 := waitFor(t, third)
	if l.window != 2 {
		t.Errorf("window %v after a write that failed on the way, want 2", l.window)
	}
	select {
	case <-fourth:
		t.Fatal("the fourth write went before a slot was free")
	default:
	}
	second(true)
	second(true) // twice is once
	d4 := waitFor(t, fourth)
	d3(true)
	d4(true)
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.inflight != 0 || len(l.waiting) != 0 {
		t.Errorf("in flight %d, waiting %d after every write completed; want 0 and 0", l.inflight, len(l.waiting))
	}
}

func TestAHeldWriteGivesUpWithItsContext(t *testing.T) {
	l := New(10 * time.Millisecond)
	l.window = 1
	first := waitFor(t, acquired(l, context.Background()))
	ctx, cancel := context.WithCancel(context.Background())
	held := make(chan error, 1)
	go func() {
		_, err := l.Acquire(ctx)
		held <- err
	}()
	cancel()
	select {
	case err := <-held:
		if !errors.Is(err, context.Canceled) {
			t.Fatalf("Acquire after cancel: %v, want context.Canceled", err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("a held write did not give up when its context ended")
	}
	first(true)
	// The slot is free for the next write, nothing is left waiting.
	waitFor(t, acquired(l, context.Background()))(true)
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.inflight != 0 || len(l.waiting) != 0 {
		t.Errorf("in flight %d, waiting %d; want 0 and 0", l.inflight, len(l.waiting))
	}
}

func TestBelowOneWindowWritesAreSpaced(t *testing.T) {
	l := New(time.Millisecond)
	l.window = 0.5
	l.base.add(time.Now(), time.Millisecond)
	// A write that took 60 ms, far past the target: the window halves to
	// 0.25, so the next waits 3 × 60 ms.
	now := time.Now()
	l.now = func() time.Time { return now }
	l.inflight = 1
	l.complete(60*time.Millisecond, true)
	if math.Abs(l.window-0.25) > 1e-9 {
		t.Fatalf("window %v, want 0.25", l.window)
	}
	l.now = time.Now
	start := time.Now()
	waitFor(t, acquired(l, context.Background()))
	if waited := time.Since(start); waited < 150*time.Millisecond {
		t.Errorf("the next write went after %s, want at least 180ms less the time the test took", waited)
	}
}

func TestSpacingIsBoundedAfterAnOutage(t *testing.T) {
	l := New(10 * time.Millisecond)
	l.window = MinWindow
	now := time.Now()
	l.now = func() time.Time { return now }
	l.base.add(now, time.Millisecond)
	l.inflight = 1
	// A write that took 30 s (the API server's etcd was away) would space
	// the next 270 s at the floor; it waits maxGap.
	l.complete(30*time.Second, true)
	if gap := l.notBefore.Sub(now); gap != maxGap {
		t.Errorf("the next write may go %s after, want %s", gap, maxGap)
	}
}

func TestOnlyWritesAreHeld(t *testing.T) {
	var got atomic.Int32
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { got.Add(1) }))
	defer srv.Close()
	l := New(10 * time.Millisecond)
	l.window = 1
	hold := waitFor(t, acquired(l, context.Background())) // the window is full
	rt := l.Wrap(http.DefaultTransport)
	do := func(method, path string, ctx context.Context) error {
		req, _ := http.NewRequestWithContext(ctx, method, srv.URL+path, nil)
		resp, err := rt.RoundTrip(req)
		if err == nil {
			resp.Body.Close()
		}
		return err
	}
	for _, r := range []struct{ method, path string }{
		{http.MethodGet, "/apis/work.karmada.io/v1alpha1/works"},
		{http.MethodGet, "/apis/work.karmada.io/v1alpha1/works?watch=true"},
		{http.MethodPut, "/apis/coordination.k8s.io/v1/namespaces/karmada-system/leases/karmada-controller-manager"},
		{http.MethodPost, "/apis/authorization.k8s.io/v1/subjectaccessreviews"},
	} {
		if err := do(r.method, r.path, context.Background()); err != nil {
			t.Errorf("%s %s with the window full: %v, want it sent", r.method, r.path, err)
		}
	}
	ctx, cancel := context.WithTimeout(context.Background(), 50*time.Millisecond)
	defer cancel()
	if err := do(http.MethodPost, "/apis/work.karmada.io/v1alpha1/namespaces/karmada-es-member1/works", ctx); !errors.Is(err, context.DeadlineExceeded) {
		t.Errorf("a write with the window full: %v, want it held until its context ended", err)
	}
	if n := got.Load(); n != 4 {
		t.Errorf("the server saw %d requests, want the 4 that are not held", n)
	}
	hold(true)
	if err := do(http.MethodPatch, "/apis/work.karmada.io/v1alpha1/namespaces/karmada-es-member1/works/w/status", context.Background()); err != nil {
		t.Errorf("a write with room: %v", err)
	}
}
