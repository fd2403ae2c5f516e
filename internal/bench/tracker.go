package bench

import (
	"fmt"
	"sort"
	"sync"
	"time"
)

// Mode is how the benchmark's policy places each template.
type Mode string

// The modes of `propagate`.
const (
	// Duplicated puts every replica in every member.
	Duplicated Mode = "duplicated"
	// Divided splits the replicas over the members by equal static weights.
	Divided Mode = "divided"
)

// ParseMode accepts duplicated or divided.
func ParseMode(s string) (Mode, error) {
	switch Mode(s) {
	case Duplicated, Divided:
		return Mode(s), nil
	}
	return "", fmt.Errorf("--mode %q: must be duplicated or divided", s)
}

// copyState is what a member's watch last showed of one template's copy.
type copyState struct {
	replicas, available int32
}

type templateState struct {
	start  time.Time
	copies map[string]copyState
	// aggregated is the template's status.availableReplicas in the
	// control plane.
	aggregated int32
	// The first moment each milestone was seen; zero until then.
	existAt, availableAt, aggregatedAt time.Time
}

func (s *templateState) complete() bool {
	return !s.existAt.IsZero() && !s.availableAt.IsZero() && !s.aggregatedAt.IsZero()
}

// Tracker keeps, per template, what the watches of the members and of the
// control plane have shown, and the moment each milestone was first reached:
// the template exists in every member it is meant for, its pods are available
// there, and the control plane's aggregated status shows every replica
// available. It is safe for concurrent use by the watch handlers.
type Tracker struct {
	mode     Mode
	members  []string
	replicas int32

	mu        sync.Mutex
	templates map[string]*templateState
	pending   int // started templates not complete yet
	copies    int // member copies present now, of started templates
	allDone   chan struct{}
	doneOnce  bool
	// sealed is set once no template will start any more: before that,
	// the templates started so far being complete says nothing of the run.
	sealed bool
	// emptyWait is closed when no member copy is left, once asked for.
	emptyWait chan struct{}
}

// NewTracker expects templates of the given replicas placed on members in
// the given mode.
func NewTracker(mode Mode, members []string, replicas int32) *Tracker {
	return &Tracker{
		mode: mode, members: members, replicas: replicas,
		templates: map[string]*templateState{},
		allDone:   make(chan struct{}),
	}
}

// Start registers a template just before it is created; its latencies count
// from at. Events about templates that were never started are ignored.
func (t *Tracker) Start(name string, at time.Time) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if _, ok := t.templates[name]; ok {
		return
	}
	t.templates[name] = &templateState{start: at, copies: map[string]copyState{}}
	t.pending++
}

// Forget drops a template whose creation failed.
func (t *Tracker) Forget(name string) {
	t.mu.Lock()
	defer t.mu.Unlock()
	s, ok := t.templates[name]
	if !ok {
		return
	}
	if !s.complete() {
		t.pending--
	}
	t.copies -= len(s.copies)
	delete(t.templates, name)
	t.checkLocked()
}

// Member records a member's copy of a template as its watch shows it at.
func (t *Tracker) Member(member, name string, replicas, available int32, at time.Time) {
	t.mu.Lock()
	defer t.mu.Unlock()
	s, ok := t.templates[name]
	if !ok {
		return
	}
	if _, had := s.copies[member]; !had {
		t.copies++
	}
	s.copies[member] = copyState{replicas: replicas, available: available}
	t.advanceLocked(s, at)
}

// MemberGone records that a member's copy of a template was deleted.
func (t *Tracker) MemberGone(member, name string) {
	t.mu.Lock()
	defer t.mu.Unlock()
	s, ok := t.templates[name]
	if !ok {
		return
	}
	if _, had := s.copies[member]; had {
		delete(s.copies, member)
		t.copies--
		t.checkLocked()
	}
}

// Template records the control plane's aggregated status of a template.
func (t *Tracker) Template(name string, available int32, at time.Time) {
	t.mu.Lock()
	defer t.mu.Unlock()
	s, ok := t.templates[name]
	if !ok {
		return
	}
	s.aggregated = available
	t.advanceLocked(s, at)
}

// expectedTotal is the replicas the aggregated status shows when every copy
// is available.
func (t *Tracker) expectedTotal() int32 {
	if t.mode == Duplicated {
		return t.replicas * int32(len(t.members))
	}
	return t.replicas
}

// placed reports whether every copy the template is meant to have exists:
// one per member when duplicated; copies whose replicas add up to the
// template's when divided.
func (t *Tracker) placed(s *templateState) bool {
	if t.mode == Duplicated {
		for _, m := range t.members {
			if _, ok := s.copies[m]; !ok {
				return false
			}
		}
		return true
	}
	var sum int32
	for _, c := range s.copies {
		sum += c.replicas
	}
	return sum == t.replicas
}

func (t *Tracker) available(s *templateState) bool {
	for _, c := range s.copies {
		want := c.replicas
		if t.mode == Duplicated {
			want = t.replicas
		}
		if c.available < want {
			return false
		}
	}
	return true
}

func (t *Tracker) advanceLocked(s *templateState, at time.Time) {
	wasComplete := s.complete()
	placed := t.placed(s)
	if placed && s.existAt.IsZero() {
		s.existAt = at
	}
	if placed && s.availableAt.IsZero() && t.available(s) {
		s.availableAt = at
	}
	if s.aggregatedAt.IsZero() && s.aggregated >= t.expectedTotal() {
		s.aggregatedAt = at
	}
	if !wasComplete && s.complete() {
		t.pending--
	}
	t.checkLocked()
}

// Seal says that every template has been started (created): Done may close
// from now on.
func (t *Tracker) Seal() {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.sealed = true
	t.checkLocked()
}

func (t *Tracker) checkLocked() {
	if t.sealed && t.pending == 0 && len(t.templates) > 0 && !t.doneOnce {
		t.doneOnce = true
		close(t.allDone)
	}
	if t.emptyWait != nil && t.copies == 0 {
		close(t.emptyWait)
		t.emptyWait = nil
	}
}

// Done is closed once the tracker is sealed and every started template is
// complete.
func (t *Tracker) Done() <-chan struct{} { return t.allDone }

// Emptied returns a channel closed once no member holds a copy of any
// started template (at once when none does now).
func (t *Tracker) Emptied() <-chan struct{} {
	t.mu.Lock()
	defer t.mu.Unlock()
	ch := make(chan struct{})
	if t.copies == 0 {
		close(ch)
		return ch
	}
	if t.emptyWait != nil {
		return t.emptyWait
	}
	t.emptyWait = ch
	return ch
}

// Copies is the number of member copies present now.
func (t *Tracker) Copies() int {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.copies
}

// CopiesByTemplate returns, for each started template in name order, the
// members holding a copy of it now.
func (t *Tracker) CopiesByTemplate() (names []string, members map[string][]string) {
	t.mu.Lock()
	defer t.mu.Unlock()
	members = map[string][]string{}
	for name, s := range t.templates {
		names = append(names, name)
		members[name] = sortedNames(s.copies)
	}
	sort.Strings(names)
	return names, members
}

// Latencies are the outcome of a run.
type Latencies struct {
	Started    int
	Complete   int
	Incomplete []string // names, sorted, of templates that did not complete
	Exist      []time.Duration
	Available  []time.Duration
	Aggregated []time.Duration
	// First is the earliest start, Last the latest completion (zero when
	// none completed).
	First, Last time.Time
}

// Latencies returns each milestone's latency of every template that reached
// it, measured from the template's start.
func (t *Tracker) Latencies() Latencies {
	t.mu.Lock()
	defer t.mu.Unlock()
	var l Latencies
	for name, s := range t.templates {
		l.Started++
		if l.First.IsZero() || s.start.Before(l.First) {
			l.First = s.start
		}
		if !s.existAt.IsZero() {
			l.Exist = append(l.Exist, s.existAt.Sub(s.start))
		}
		if !s.availableAt.IsZero() {
			l.Available = append(l.Available, s.availableAt.Sub(s.start))
		}
		if !s.aggregatedAt.IsZero() {
			l.Aggregated = append(l.Aggregated, s.aggregatedAt.Sub(s.start))
		}
		if !s.complete() {
			l.Incomplete = append(l.Incomplete, name)
			continue
		}
		l.Complete++
		for _, at := range []time.Time{s.existAt, s.availableAt, s.aggregatedAt} {
			if at.After(l.Last) {
				l.Last = at
			}
		}
	}
	sort.Strings(l.Incomplete)
	return l
}
