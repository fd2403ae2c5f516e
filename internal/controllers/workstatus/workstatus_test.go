package workstatus

import (
	"testing"

	"k8s.io/apimachinery/pkg/types"

	"github.com/karmada-go/karmada/internal/clusterclient"
)

// The time a generation was first seen applied starts its settle period:
// seeing the same generation again keeps it, a new generation starts anew,
// and a released Work keeps nothing.
func TestAppliedSeen(t *testing.T) {
	r := &Reconciler{Members: clusterclient.NewCache(nil, clusterclient.Options{})}
	w := types.NamespacedName{Namespace: "karmada-es-member1", Name: "web"}

	first := r.appliedSeen(w, 2)
	if again := r.appliedSeen(w, 2); !again.Equal(first) {
		t.Error("seeing the same generation again moved its time: its settle period would never end")
	}
	if next := r.appliedSeen(w, 3); next.Before(first) || r.seen[w].generation != 3 {
		t.Errorf("a new generation was not recorded anew: %+v", r.seen[w])
	}
	r.forgetSeen(w)
	if _, ok := r.seen[w]; ok {
		t.Error("forgetSeen left the Work's record")
	}

	r.wrote(w)
	if r.lastWritten(w).IsZero() {
		t.Error("the write's time was not recorded")
	}
	r.appliedSeen(w, 4)
	r.release("member1", w)
	if _, ok := r.seen[w]; ok || !r.lastWritten(w).IsZero() {
		t.Error("a released Work kept its records")
	}
}
