package execution

import (
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/types"
)

// A Work waiting for its type retries every second five times, then backs
// off from 2 s to 5 min; another Work's
// waits are its own; clearing starts over; the Cluster finds its Works.
func TestWaitingWorksBackOff(t *testing.T) {
	var w waitingWorks
	a := types.NamespacedName{Namespace: "karmada-es-member1", Name: "a"}
	b := types.NamespacedName{Namespace: "karmada-es-member2", Name: "b"}
	var got []time.Duration
	for i := 0; i < 16; i++ {
		got = append(got, w.next(a, "member1"))
	}
	want := []time.Duration{1, 1, 1, 1, 1, 2, 4, 8, 16, 32, 64, 128, 256, 300, 300, 300}
	for i := range want {
		if got[i] != want[i]*time.Second {
			t.Fatalf("waits %v, want %v seconds", got, want)
		}
	}
	if d := w.next(b, "member2"); d != time.Second {
		t.Fatalf("another Work's first wait is %v", d)
	}
	if r := w.on("member1"); len(r) != 1 || r[0].NamespacedName != a {
		t.Fatalf("member1's waiting Works: %v", r)
	}
	w.clear(a)
	if r := w.on("member1"); len(r) != 0 {
		t.Fatalf("a cleared Work still waits: %v", r)
	}
	if d := w.next(a, "member1"); d != time.Second {
		t.Fatalf("after clearing, the first wait is %v", d)
	}
}
