package workstatus

import (
	"testing"

	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/event"

	workv1alpha1 "github.com/karmada-go/karmada/api/work/v1alpha1"
	"github.com/karmada-go/karmada/internal/clusterclient"
)

func TestAppliedHandoff(t *testing.T) {
	r := &Reconciler{Members: clusterclient.NewCache(nil, clusterclient.Options{}), memberEvents: make(chan event.TypedGenericEvent[*workv1alpha1.Work], 8)}
	w := types.NamespacedName{Namespace: "karmada-es-member1", Name: "web"}

	r.Applied(w, 2)
	if len(r.memberEvents) != 1 {
		t.Fatalf("Applied queued %d reconciles of the Work, want 1", len(r.memberEvents))
	}
	if !r.isPending(w, 2) || r.isPending(w, 1) || r.isPending(w, 3) {
		t.Error("Pending must hold for the generation applied, and only for it")
	}
	first, _ := r.handedOff(w)
	r.Applied(w, 2)
	if again, _ := r.handedOff(w); again != first {
		t.Error("applying the same generation again moved its time: its settle period would never end")
	}

	// A write of an older record leaves the newer one pending.
	older := appliedAt{generation: 1, at: first.at}
	r.wrote(w, &older)
	if !r.isPending(w, 2) {
		t.Error("a write for another generation dropped the pending one")
	}
	if r.lastWritten(w).IsZero() {
		t.Error("the write's time was not recorded")
	}
	r.wrote(w, &first)
	if r.isPending(w, 2) {
		t.Error("the condition was written, yet still pending")
	}

	r.Applied(w, 3)
	r.Forget(w)
	if r.isPending(w, 3) {
		t.Error("Forget left the Work pending")
	}
	r.Applied(w, 4)
	r.release("member1", w)
	if r.isPending(w, 4) || !r.lastWritten(w).IsZero() {
		t.Error("a released Work kept its records")
	}
}

// isPending reports whether the Work's generation was handed over and its
// Applied condition is not written yet.
func (r *Reconciler) isPending(work types.NamespacedName, generation int64) bool {
	p, ok := r.handedOff(work)
	return ok && p.generation == generation
}
