package workstatus

import (
	"errors"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"

	workv1alpha1 "github.com/karmada-go/karmada/api/work/v1alpha1"
	"github.com/karmada-go/karmada/internal/clusters/clusterclient"
	"github.com/karmada-go/karmada/internal/interpreter"
	"github.com/karmada-go/karmada/internal/propagation/settle"
)

// A cached Work at the resourceVersion the last write went over waits for
// that write's event; a released Work keeps nothing.
func TestBehindOwnWriteAndRelease(t *testing.T) {
	r := &Reconciler{Members: clusterclient.NewCache(nil, clusterclient.Options{})}
	w := types.NamespacedName{Namespace: "karmada-es-member1", Name: "web"}
	r.progress.Wrote(w, settle.Write{At: time.Now(), Note: "41"})
	work := &workv1alpha1.Work{ObjectMeta: metav1.ObjectMeta{Namespace: w.Namespace, Name: w.Name, ResourceVersion: "41"}}
	if !r.behindOwnWrite(work) {
		t.Error("a cached Work at the version written over must wait for the write's event")
	}
	work.ResourceVersion = "42"
	if r.behindOwnWrite(work) {
		t.Error("a cached Work past the version written over is current")
	}
	r.progress.Begin(w, 4, time.Now())
	r.release("member1", w)
	if !r.progress.LastWrite(w).At.IsZero() {
		t.Error("a released Work kept its records")
	}
}

func TestDecide(t *testing.T) {
	const period = 5 * time.Second
	now := time.Unix(10_000, 0)
	id := func(name string) workv1alpha1.ResourceIdentifier {
		return workv1alpha1.ResourceIdentifier{Group: "apps", Version: "v1", Kind: "Deployment", Resource: "deployments", Namespace: "default", Name: name}
	}
	status := func(name string, h workv1alpha1.ResourceHealth) workv1alpha1.ManifestStatus {
		return workv1alpha1.ManifestStatus{Identifier: id(name), Health: h, Status: &runtime.RawExtension{Raw: []byte(`{"replicas":1}`)}}
	}
	copyOf := func(name string, stamped bool, h workv1alpha1.ResourceHealth) manifestState {
		return manifestState{id: id(name), present: true, readable: true, stamped: stamped, status: status(name, h)}
	}
	missing := manifestState{id: id("a"), present: false}
	unobserved := manifestState{id: id("a"), present: true, readable: true, stamped: true, unobserved: true}
	applied := func(s metav1.ConditionStatus, gen int64) []metav1.Condition {
		return []metav1.Condition{{Type: workv1alpha1.WorkApplied, Status: s, ObservedGeneration: gen, Reason: "r"}}
	}
	work := func(conds []metav1.Condition, manifests ...workv1alpha1.ManifestStatus) *workv1alpha1.Work {
		w := &workv1alpha1.Work{ObjectMeta: metav1.ObjectMeta{Generation: 2}}
		w.Spec.Workload.Manifests = []workv1alpha1.Manifest{{RawExtension: runtime.RawExtension{Raw: []byte(`{}`)}}}
		w.Status.Conditions, w.Status.ManifestStatuses = conds, manifests
		return w
	}
	cases := []struct {
		name         string
		work         *workv1alpha1.Work
		states       []manifestState
		appliedSince time.Duration // before now
		lastWrite    time.Duration // before now; 0: none
		want         action
		wantWait     time.Duration
		wantApplied  bool // the write sets Applied True of generation 2
		wantLock     bool
		wantStatuses []workv1alpha1.ManifestStatus
	}{
		{name: "not applied yet, nothing in the member", work: work(nil), states: []manifestState{missing}, want: leave},
		{name: "applied, not stamped yet", work: work(nil), states: []manifestState{copyOf("a", false, workv1alpha1.ResourceHealthy)}, want: leave},
		{name: "failing, not stamped: left to the execution controller", work: work(applied(metav1.ConditionFalse, 2)), states: []manifestState{copyOf("a", false, workv1alpha1.ResourceHealthy)}, want: leave},
		{name: "every copy stamped and healthy: Applied at once", work: work(nil), states: []manifestState{copyOf("a", true, workv1alpha1.ResourceHealthy)},
			want: write, wantApplied: true, wantLock: true, wantStatuses: []workv1alpha1.ManifestStatus{status("a", workv1alpha1.ResourceHealthy)}},
		{name: "stamped but unhealthy, first seen now: held a period", work: work(nil), states: []manifestState{copyOf("a", true, workv1alpha1.ResourceUnhealthy)},
			want: hold, wantWait: period},
		{name: "stamped but unhealthy, seen 6 s ago: written", work: work(nil), states: []manifestState{copyOf("a", true, workv1alpha1.ResourceUnhealthy)}, appliedSince: 6 * time.Second,
			want: write, wantApplied: true, wantLock: true, wantStatuses: []workv1alpha1.ManifestStatus{status("a", workv1alpha1.ResourceUnhealthy)}},
		{name: "applied after a failure the execution controller wrote", work: work(applied(metav1.ConditionFalse, 2)), states: []manifestState{copyOf("a", true, workv1alpha1.ResourceHealthy)},
			want: write, wantApplied: true, wantLock: true, wantStatuses: []workv1alpha1.ManifestStatus{status("a", workv1alpha1.ResourceHealthy)}},
		{name: "a new generation not stamped yet keeps the earlier Applied, status written", work: work(applied(metav1.ConditionTrue, 1)), states: []manifestState{copyOf("a", false, workv1alpha1.ResourceHealthy)},
			want: write, wantStatuses: []workv1alpha1.ManifestStatus{status("a", workv1alpha1.ResourceHealthy)}},
		{name: "nothing new", work: work(applied(metav1.ConditionTrue, 2), status("a", workv1alpha1.ResourceHealthy)), states: []manifestState{copyOf("a", true, workv1alpha1.ResourceHealthy)},
			want: same},
		{name: "became healthy: written at once", work: work(applied(metav1.ConditionTrue, 2), status("a", workv1alpha1.ResourceUnhealthy)), states: []manifestState{copyOf("a", true, workv1alpha1.ResourceHealthy)}, lastWrite: time.Second,
			want: write, wantStatuses: []workv1alpha1.ManifestStatus{status("a", workv1alpha1.ResourceHealthy)}},
		{name: "progress 1 s after the last write: held the rest of the period", work: work(applied(metav1.ConditionTrue, 2)), states: []manifestState{copyOf("a", true, workv1alpha1.ResourceUnhealthy)}, lastWrite: time.Second,
			want: hold, wantWait: 4 * time.Second},
		{name: "unobserved: what was reflected before stays", work: work(applied(metav1.ConditionTrue, 2), status("a", workv1alpha1.ResourceHealthy)), states: []manifestState{unobserved},
			want: same},
		{name: "deleted in the member after it was applied: its status goes", work: work(applied(metav1.ConditionTrue, 2), status("a", workv1alpha1.ResourceHealthy)), states: []manifestState{missing},
			want: write},
		{name: "a cached value that is not an object: no status, not stamped", work: work(applied(metav1.ConditionTrue, 2), status("a", workv1alpha1.ResourceHealthy)), states: []manifestState{{id: id("a"), present: true}},
			want: write},
	}
	for _, c := range cases {
		asked := 0
		since := func() time.Time { asked++; return now.Add(-c.appliedSince) }
		var last time.Time
		if c.lastWrite > 0 {
			last = now.Add(-c.lastWrite)
		}
		v := decide(c.work, c.states, since, last, period, now)
		if v.action != c.want || v.wait != c.wantWait {
			t.Errorf("%s: action %d wait %s, want %d %s", c.name, v.action, v.wait, c.want, c.wantWait)
			continue
		}
		if c.want != write {
			continue
		}
		cond := meta.FindStatusCondition(v.status.Conditions, workv1alpha1.WorkApplied)
		if got := cond != nil && cond.Status == metav1.ConditionTrue && cond.ObservedGeneration == 2; v.markApplied != c.wantApplied || (c.wantApplied && !got) {
			t.Errorf("%s: Applied True of generation 2 %v (markApplied %v), want %v", c.name, got, v.markApplied, c.wantApplied)
		}
		if c.wantApplied != (asked > 0) {
			t.Errorf("%s: asked when the copies were first seen applied %d times", c.name, asked)
		}
		if v.lockConditions != c.wantLock {
			t.Errorf("%s: lockConditions %v, want %v", c.name, v.lockConditions, c.wantLock)
		}
		if d := cmp.Diff(c.wantStatuses, v.status.ManifestStatuses); d != "" {
			t.Errorf("%s: manifest statuses (-want +got):\n%s", c.name, d)
		}
	}
}

// A copy whose status a customization failed on sets the Work's
// ResourceInterpreted condition False naming the copy, the customization and
// the operation; the next success removes it; a failure already written
// costs no second write.
func TestDecideInterpretFailure(t *testing.T) {
	now := time.Unix(10_000, 0)
	id := workv1alpha1.ResourceIdentifier{Group: "apps.kruise.io", Version: "v1alpha1", Kind: "CloneSet", Resource: "clonesets", Namespace: "default", Name: "web"}
	prev := workv1alpha1.ManifestStatus{Identifier: id, Health: workv1alpha1.ResourceHealthy, Status: &runtime.RawExtension{Raw: []byte(`{"replicas":2}`)}}
	failure := &interpreter.Error{Source: "ResourceInterpreterCustomization/cloneset", Operation: interpreter.OpInterpretStatus, Err: errors.New("attempt to index a nil value")}
	work := &workv1alpha1.Work{ObjectMeta: metav1.ObjectMeta{Generation: 2}}
	work.Spec.Workload.Manifests = []workv1alpha1.Manifest{{RawExtension: runtime.RawExtension{Raw: []byte(`{}`)}}}
	work.Status.Conditions = []metav1.Condition{{Type: workv1alpha1.WorkApplied, Status: metav1.ConditionTrue, ObservedGeneration: 2, Reason: "r"}}
	work.Status.ManifestStatuses = []workv1alpha1.ManifestStatus{prev}
	since := func() time.Time { return now }

	failing := manifestState{id: id, present: true, readable: true, stamped: true, status: prev, interpretErr: failure}
	v := decide(work, []manifestState{failing}, since, time.Time{}, 5*time.Second, now)
	if v.action != write || !v.lockConditions {
		t.Fatalf("a new failure: action %d lock %v, want a locked write", v.action, v.lockConditions)
	}
	cond := meta.FindStatusCondition(v.status.Conditions, workv1alpha1.WorkResourceInterpreted)
	want := "CloneSet default/web: ResourceInterpreterCustomization/cloneset, operation InterpretStatus: attempt to index a nil value"
	if cond == nil || cond.Status != metav1.ConditionFalse || cond.Reason != workv1alpha1.ReasonInterpretFailed || cond.Message != want {
		t.Fatalf("condition %+v, want False with message %q", cond, want)
	}
	if d := cmp.Diff([]workv1alpha1.ManifestStatus{prev}, v.status.ManifestStatuses); d != "" {
		t.Errorf("the last reflected status must be kept (-want +got):\n%s", d)
	}

	work.Status = v.status
	if v := decide(work, []manifestState{failing}, since, time.Time{}, 5*time.Second, now); v.action != same {
		t.Errorf("the same failure again: action %d, want same (no write)", v.action)
	}

	ok := failing
	ok.interpretErr = nil
	v = decide(work, []manifestState{ok}, since, time.Time{}, 5*time.Second, now)
	if v.action != write || meta.FindStatusCondition(v.status.Conditions, workv1alpha1.WorkResourceInterpreted) != nil {
		t.Errorf("success after a failure: action %d conditions %+v, want a write without the condition", v.action, v.status.Conditions)
	}
}
