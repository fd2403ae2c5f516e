package workstatus

import (
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	workv1alpha1 "github.com/karmada-go/karmada/api/work/v1alpha1"
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

	r.wrote(w, "41")
	if r.lastWritten(w).IsZero() {
		t.Error("the write's time was not recorded")
	}
	work := &workv1alpha1.Work{ObjectMeta: metav1.ObjectMeta{Namespace: w.Namespace, Name: w.Name, ResourceVersion: "41"}}
	if !r.behindOwnWrite(work) {
		t.Error("a cached Work at the version written over must wait for the write's event")
	}
	work.ResourceVersion = "42"
	if r.behindOwnWrite(work) {
		t.Error("a cached Work past the version written over is current")
	}
	r.appliedSeen(w, 4)
	r.release("member1", w)
	if _, ok := r.seen[w]; ok || !r.lastWritten(w).IsZero() {
		t.Error("a released Work kept its records")
	}
}
