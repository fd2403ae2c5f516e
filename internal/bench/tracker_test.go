package bench

import (
	"testing"
	"time"
)

func closed(ch <-chan struct{}) bool {
	select {
	case <-ch:
		return true
	default:
		return false
	}
}

func TestTrackerDuplicated(t *testing.T) {
	t0 := time.Unix(1000, 0)
	at := func(s int) time.Time { return t0.Add(time.Duration(s) * time.Second) }
	tr := NewTracker(Duplicated, []string{"m1", "m2"}, 2)
	tr.Start("a", t0)
	tr.Start("b", t0)

	tr.Member("m1", "a", 2, 0, at(1))
	tr.Member("m2", "a", 2, 1, at(2)) // in every member now, not available
	tr.Member("m1", "a", 2, 2, at(3))
	tr.Template("a", 3, at(3)) // 3 of 4 is not the whole
	tr.Member("m2", "a", 2, 2, at(4))
	tr.Template("a", 4, at(5))
	// Events of a template never started are ignored.
	tr.Member("m1", "zzz", 2, 2, at(1))
	tr.Template("zzz", 4, at(1))

	if closed(tr.Done()) {
		t.Fatal("done before b made any progress")
	}
	l := tr.Latencies()
	if l.Started != 2 || l.Complete != 1 || len(l.Incomplete) != 1 || l.Incomplete[0] != "b" {
		t.Fatalf("latencies = %+v", l)
	}
	if len(l.Exist) != 1 || l.Exist[0] != 2*time.Second || l.Available[0] != 4*time.Second || l.Aggregated[0] != 5*time.Second {
		t.Fatalf("a: exist %v available %v aggregated %v, want 2s 4s 5s", l.Exist, l.Available, l.Aggregated)
	}
	// A milestone keeps its first time even if the state regresses.
	tr.Member("m1", "a", 2, 0, at(6))
	if l := tr.Latencies(); l.Available[0] != 4*time.Second {
		t.Errorf("available moved to %v", l.Available[0])
	}

	tr.Member("m1", "b", 2, 2, at(7))
	tr.Member("m2", "b", 2, 2, at(8))
	tr.Template("b", 4, at(9))
	if closed(tr.Done()) {
		t.Fatal("done before the tracker was sealed: more templates may still start")
	}
	tr.Seal()
	if !closed(tr.Done()) {
		t.Fatal("not done with every template complete")
	}
	if l := tr.Latencies(); !l.Last.Equal(at(9)) || !l.First.Equal(t0) || l.Complete != 2 {
		t.Errorf("first %v last %v complete %d", l.First, l.Last, l.Complete)
	}
}

func TestTrackerDividedCountsReplicasAcrossMembers(t *testing.T) {
	t0 := time.Unix(0, 0)
	tr := NewTracker(Divided, []string{"m1", "m2", "m3"}, 3)
	tr.Start("a", t0)
	tr.Member("m1", "a", 2, 2, t0.Add(time.Second))
	if l := tr.Latencies(); len(l.Exist) != 0 {
		t.Fatal("placed with 2 of 3 replicas in members")
	}
	tr.Member("m3", "a", 1, 0, t0.Add(2*time.Second))
	tr.Template("a", 3, t0.Add(3*time.Second))
	l := tr.Latencies()
	if len(l.Exist) != 1 || l.Exist[0] != 2*time.Second || len(l.Available) != 0 {
		t.Fatalf("exist %v available %v", l.Exist, l.Available)
	}
	tr.Member("m3", "a", 1, 1, t0.Add(4*time.Second))
	tr.Seal()
	if !closed(tr.Done()) {
		t.Fatal("not done")
	}
}

func TestTrackerEmptiedAndForget(t *testing.T) {
	tr := NewTracker(Duplicated, []string{"m1", "m2"}, 1)
	if !closed(tr.Emptied()) {
		t.Fatal("no copies yet, but not emptied")
	}
	now := time.Now()
	tr.Start("a", now)
	tr.Start("b", now)
	tr.Member("m1", "a", 1, 1, now)
	tr.Member("m2", "a", 1, 1, now)
	tr.Member("m1", "b", 1, 1, now)
	tr.Member("m1", "b", 1, 1, now) // an update, not another copy
	if tr.Copies() != 3 {
		t.Fatalf("copies = %d, want 3", tr.Copies())
	}
	empty := tr.Emptied()
	if tr.Emptied() != empty {
		t.Error("two waits for the same emptiness got different channels")
	}
	tr.MemberGone("m1", "a")
	tr.MemberGone("m1", "a") // twice is once
	tr.MemberGone("m2", "a")
	if closed(empty) || tr.Copies() != 1 {
		t.Fatalf("emptied with %d copies left", tr.Copies())
	}
	// A template whose creation failed is dropped with its copies.
	tr.Forget("b")
	if !closed(empty) {
		t.Fatal("not emptied after the last copy went")
	}
	if l := tr.Latencies(); l.Started != 1 {
		t.Errorf("started = %d after Forget, want 1", l.Started)
	}
}

func TestParseMode(t *testing.T) {
	for _, ok := range []string{"duplicated", "divided"} {
		if _, err := ParseMode(ok); err != nil {
			t.Errorf("%s: %v", ok, err)
		}
	}
	if _, err := ParseMode("Duplicated"); err == nil {
		t.Error("accepted a mode in the wrong case")
	}
}
