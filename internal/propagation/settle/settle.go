// Package settle paces the status writes of the two status controllers
// (workstatus and bindingstatus). A state still in progress (a copy not
// observed or not healthy yet, a binding whose Works have not all reported)
// is written at most once per settle period: counted from when the wait
// began or from the object's last status write, whichever is later. A
// settled state is written at once. A rollout that reaches its end within
// the period so costs one write instead of one per step; the figures are in
// docs/performance.md.
//
// Both controllers also delay the events that bring an object back by a
// short window (their Window), so that changes arriving together are
// written together.
package settle

import (
	"sync"
	"time"
)

// Tracker remembers, per object, since when a state in progress has waited
// to be written (Begin, for a tag such as the generation it is about) and
// the object's last status write (Wrote). It is safe for concurrent use.
type Tracker[K comparable] struct {
	mu    sync.Mutex
	began map[K]mark
	wrote map[K]Write
}

type mark struct {
	tag int64
	at  time.Time
}

// Write is one status write: when, and what its writer notes with it (the
// workstatus controller: the resourceVersion it wrote over).
type Write struct {
	At   time.Time
	Note string
}

// Begin returns since when the object's state of tag has waited, recording
// now when this is the first time (or the tag changed).
func (t *Tracker[K]) Begin(key K, tag int64, now time.Time) time.Time {
	t.mu.Lock()
	defer t.mu.Unlock()
	if m, ok := t.began[key]; ok && m.tag == tag {
		return m.at
	}
	if t.began == nil {
		t.began = map[K]mark{}
	}
	t.began[key] = mark{tag: tag, at: now}
	return now
}

// EndWait drops what Begin recorded for the object; its writes are kept.
func (t *Tracker[K]) EndWait(key K) {
	t.mu.Lock()
	defer t.mu.Unlock()
	delete(t.began, key)
}

// Wrote records a status write of the object.
func (t *Tracker[K]) Wrote(key K, w Write) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.wrote == nil {
		t.wrote = map[K]Write{}
	}
	t.wrote[key] = w
}

// LastWrite is the object's last recorded status write (zero when none).
func (t *Tracker[K]) LastWrite(key K) Write {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.wrote[key]
}

// Forget drops everything recorded of the object.
func (t *Tracker[K]) Forget(key K) {
	t.mu.Lock()
	defer t.mu.Unlock()
	delete(t.began, key)
	delete(t.wrote, key)
}

// Wait is how long a state in progress must still wait before it is
// written: what is left of the settle period counted from since or from
// lastWrite, whichever is later (zero or less: write now).
func Wait(settle time.Duration, since, lastWrite, now time.Time) time.Duration {
	if lastWrite.After(since) {
		since = lastWrite
	}
	return settle - now.Sub(since)
}
