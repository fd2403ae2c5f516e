package luavm

import (
	"context"
	"fmt"
	"runtime/metrics"
	"sync"
	"sync/atomic"
	"time"
)

// budget is the context of one pooled interpreter: gopher-lua checks its
// Done channel before every instruction, and the watcher closes it when the
// running call is over its time or memory.
type budget struct {
	limits Budget

	mu       sync.Mutex // guards done and reason against the watcher
	done     chan struct{}
	reason   error
	deadline time.Time
	alloc    uint64 // the process's allocations when the watcher first saw the call; 0: not yet
}

func newBudget(b Budget) *budget { return &budget{limits: b, done: make(chan struct{})} }

var _ context.Context = &budget{}

func (b *budget) Deadline() (time.Time, bool) { return time.Time{}, false }
func (b *budget) Done() <-chan struct{}       { return b.done }
func (b *budget) Value(any) any               { return nil }

// Err is what gopher-lua raises in the script when Done is closed.
func (b *budget) Err() error {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.reason
}

// start arms the budget for a call.
func (b *budget) start(limits Budget) {
	b.mu.Lock()
	b.limits = limits
	b.deadline = time.Now().Add(limits.Timeout)
	b.alloc = 0
	b.mu.Unlock()
	watch.add(b)
}

// stop disarms it and returns why the call was stopped, or nil.
func (b *budget) stop() error {
	watch.remove(b)
	b.mu.Lock()
	defer b.mu.Unlock()
	r := b.reason
	if r != nil {
		b.reason = nil
		b.done = make(chan struct{})
	}
	return r
}

// exceed stops the call, once.
func (b *budget) exceed(reason error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.reason == nil {
		b.reason = reason
		close(b.done)
	}
}

// watcher samples the running calls every tick: one goroutine for the
// process, running only while calls run, so a call costs two map updates.
type watcher struct {
	mu      sync.Mutex
	active  map[*budget]struct{}
	running bool
}

var watch = &watcher{active: map[*budget]struct{}{}}

// tick is how often the watcher samples. Calls shorter than a tick are
// never measured; they cannot have allocated much.
const tick = 2 * time.Millisecond

// Stopped counts calls stopped by their budget (for tests and metrics).
var Stopped atomic.Int64

func (w *watcher) add(b *budget) {
	w.mu.Lock()
	w.active[b] = struct{}{}
	if !w.running {
		w.running = true
		go w.run()
	}
	w.mu.Unlock()
}

func (w *watcher) remove(b *budget) {
	w.mu.Lock()
	delete(w.active, b)
	w.mu.Unlock()
}

func (w *watcher) run() {
	sample := []metrics.Sample{{Name: "/gc/heap/allocs:bytes"}}
	t := time.NewTicker(tick)
	defer t.Stop()
	idle := 0
	for range t.C {
		metrics.Read(sample)
		var allocs uint64
		if sample[0].Value.Kind() == metrics.KindUint64 {
			allocs = sample[0].Value.Uint64()
		}
		now := time.Now()
		w.mu.Lock()
		if len(w.active) == 0 {
			// Linger a little: calls come in bursts.
			if idle++; idle > 500 {
				w.running = false
				w.mu.Unlock()
				return
			}
		} else {
			idle = 0
		}
		for b := range w.active {
			b.mu.Lock()
			deadline, limits := b.deadline, b.limits
			if b.alloc == 0 {
				b.alloc = allocs
			}
			used := allocs - b.alloc
			b.mu.Unlock()
			switch {
			case now.After(deadline):
				Stopped.Add(1)
				b.exceed(fmt.Errorf("%w: ran longer than %s", ErrBudget, limits.Timeout))
			case limits.Memory > 0 && used > limits.Memory:
				Stopped.Add(1)
				b.exceed(fmt.Errorf("%w: allocated more than %d MiB", ErrBudget, limits.Memory>>20))
			}
		}
		w.mu.Unlock()
	}
}
