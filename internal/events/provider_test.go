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

// Warnings and Normal events go through their own recorders, and every
// event is counted.
func TestSplitByType(t *testing.T) {
	normal, warnings := record.NewFakeRecorder(10), record.NewFakeRecorder(10)
	s := &split{source: "split-test", normal: normal, warnings: warnings}
	w := &workv1alpha1.Work{ObjectMeta: metav1.ObjectMeta{Namespace: "karmada-es-m1", Name: "a"}}
	s.Eventf(w, corev1.EventTypeNormal, SyncSucceed, "synced %d", 1)
	s.Eventf(w, corev1.EventTypeWarning, SyncFailed, "failed %d", 1)
	s.Event(w, corev1.EventTypeNormal, SyncSucceed, "synced")
	if len(normal.Events) != 2 || len(warnings.Events) != 1 {
		t.Fatalf("normal recorder got %d events, warnings %d; want 2 and 1", len(normal.Events), len(warnings.Events))
	}
	if got := <-warnings.Events; got != "Warning SyncFailed failed 1" {
		t.Errorf("warning recorded as %q", got)
	}
	if got := testutil.ToFloat64(recorded.WithLabelValues("split-test", corev1.EventTypeNormal, SyncSucceed)); got != 2 {
		t.Errorf("karmada_events_recorded_total counted %v Normal SyncSucceed, want 2", got)
	}
}

func TestHelpers(t *testing.T) {
	ref := Template(workv1alpha2.ObjectReference{APIVersion: "apps/v1", Kind: "Deployment", Namespace: "default", Name: "nginx", UID: "u"})
	if ref == nil || ref.APIVersion != "apps/v1" || ref.Kind != "Deployment" || ref.UID != "u" {
		t.Errorf("Template = %+v", ref)
	}
	if Template(workv1alpha2.ObjectReference{APIVersion: "a/b/c", Kind: "X", Name: "n"}) != nil {
		t.Error("Template of an invalid apiVersion is not nil")
	}
	// A nil recorder records nothing, and does not panic.
	Normal(nil, ref, SyncSucceed, "nothing")
	Warning(nil, ref, SyncFailed, "nothing")
	OnBinding(nil, ref, workv1alpha2.ObjectReference{}, corev1.EventTypeNormal, SyncWorkSucceed, "nothing")
	// OnBinding records on the binding and on its template.
	f := record.NewFakeRecorder(10)
	OnBinding(f, &workv1alpha2.ResourceBinding{}, workv1alpha2.ObjectReference{APIVersion: "apps/v1", Kind: "Deployment", Name: "n"}, corev1.EventTypeNormal, ScheduleBindingSucceed, "to %s", "m1")
	if len(f.Events) != 2 {
		t.Errorf("OnBinding recorded %d events, want 2", len(f.Events))
	}
}
