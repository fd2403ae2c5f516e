package events

import (
	"testing"

	"github.com/prometheus/client_golang/prometheus/testutil"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/tools/record"

	workv1alpha1 "github.com/karmada-go/karmada/api/work/v1alpha1"
	workv1alpha2 "github.com/karmada-go/karmada/api/work/v1alpha2"
)

// Every event of one object goes through the same shard (so the
// correlator aggregates them), and objects spread over the shards.
func TestShardedKeepsAnObjectOnOneShard(t *testing.T) {
	fakes := []*record.FakeRecorder{record.NewFakeRecorder(100), record.NewFakeRecorder(100), record.NewFakeRecorder(100), record.NewFakeRecorder(100)}
	s := &sharded{source: "shard-test"}
	for _, f := range fakes {
		s.recorders = append(s.recorders, f)
	}
	used := map[int]bool{}
	for _, name := range []string{"a", "b", "c", "d", "e", "f", "g", "h", "i", "j"} {
		w := &workv1alpha1.Work{ObjectMeta: metav1.ObjectMeta{Namespace: "karmada-es-m1", Name: name}}
		for range 3 {
			s.Eventf(w, corev1.EventTypeNormal, SyncSucceed, "synced %s", name)
		}
		holding := -1
		for i, f := range fakes {
			if n := len(f.Events); n > 0 {
				if holding >= 0 || n != 3 {
					t.Fatalf("events of Work %s spread over shards (shard %d holds %d)", name, i, n)
				}
				holding = i
				for range n {
					<-f.Events
				}
			}
		}
		if holding < 0 {
			t.Fatalf("no shard got the events of Work %s", name)
		}
		used[holding] = true
	}
	if got := testutil.ToFloat64(recorded.WithLabelValues("shard-test", corev1.EventTypeNormal, SyncSucceed)); got != 30 {
		t.Errorf("karmada_events_recorded_total counted %v events, want 30", got)
	}
	if len(used) < 2 {
		t.Errorf("10 objects all went to one shard of %d", len(fakes))
	}
	// A template reference and nil-safe helpers.
	ref := Template(workv1alpha2.ObjectReference{APIVersion: "apps/v1", Kind: "Deployment", Namespace: "default", Name: "nginx", UID: "u"})
	if ref == nil || ref.APIVersion != "apps/v1" || ref.UID != "u" {
		t.Errorf("Template = %+v", ref)
	}
	if Template(workv1alpha2.ObjectReference{APIVersion: "a/b/c", Kind: "X", Name: "n"}) != nil {
		t.Error("Template of an invalid apiVersion is not nil")
	}
	Normal(nil, ref, SyncSucceed, "no recorder: nothing happens")
	OnBinding(nil, ref, workv1alpha2.ObjectReference{}, corev1.EventTypeNormal, SyncWorkSucceed, "nothing")
}
