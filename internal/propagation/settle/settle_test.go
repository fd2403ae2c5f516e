package settle

import (
	"testing"
	"time"
)

func TestWait(t *testing.T) {
	settle := 2 * time.Second
	t0 := time.Unix(1000, 0)
	cases := []struct {
		name             string
		since, lastWrite time.Time
		now              time.Time
		want             time.Duration
	}{
		{"a wait that begins now waits a full period", t0, time.Time{}, t0, settle},
		{"later, what is left of it", t0, time.Time{}, t0.Add(500 * time.Millisecond), 1500 * time.Millisecond},
		{"after the period, at once", t0, time.Time{}, t0.Add(settle), 0},
		{"a later write restarts the period", t0, t0.Add(time.Second), t0.Add(2 * time.Second), time.Second},
		{"an earlier write does not", t0.Add(time.Second), t0, t0.Add(2 * time.Second), time.Second},
	}
	for _, c := range cases {
		if got := Wait(settle, c.since, c.lastWrite, c.now); got != c.want {
			t.Errorf("%s: %s, want %s", c.name, got, c.want)
		}
	}
	if got := Wait(settle, time.Time{}, time.Time{}, t0); got > 0 {
		t.Errorf("nothing begun or written: a wait of %s, want none", got)
	}
}

func TestTracker(t *testing.T) {
	var tr Tracker[string]
	t0 := time.Unix(1000, 0)
	if got := tr.Begin("a", 2, t0); !got.Equal(t0) {
		t.Fatalf("the first Begin records now, got %s", got)
	}
	if got := tr.Begin("a", 2, t0.Add(time.Second)); !got.Equal(t0) {
		t.Error("Begin again for the same tag moved its time: its period would never end")
	}
	if got := tr.Begin("a", 3, t0.Add(time.Second)); !got.Equal(t0.Add(time.Second)) {
		t.Error("a new tag did not begin anew")
	}
	if got := tr.Begin("b", 3, t0.Add(5*time.Second)); !got.Equal(t0.Add(5 * time.Second)) {
		t.Error("objects wait apart")
	}
	tr.Wrote("a", Write{At: t0.Add(2 * time.Second), Note: "41"})
	if w := tr.LastWrite("a"); !w.At.Equal(t0.Add(2*time.Second)) || w.Note != "41" {
		t.Errorf("last write %+v", w)
	}
	tr.EndWait("a")
	if got := tr.Begin("a", 3, t0.Add(9*time.Second)); !got.Equal(t0.Add(9 * time.Second)) {
		t.Error("EndWait left the wait")
	}
	if tr.LastWrite("a").At.IsZero() {
		t.Error("EndWait dropped the write")
	}
	tr.Forget("a")
	if !tr.LastWrite("a").At.IsZero() || !tr.Begin("a", 3, t0.Add(20*time.Second)).Equal(t0.Add(20*time.Second)) {
		t.Error("Forget left a record")
	}
}
