package clustertaint

import (
	"sort"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	clusterv1alpha1 "github.com/karmada-go/karmada/api/cluster/v1alpha1"
	policyv1alpha1 "github.com/karmada-go/karmada/api/policy/v1alpha1"
)

func cond(t string, s metav1.ConditionStatus) metav1.Condition {
	return metav1.Condition{Type: t, Status: s}
}

func mc(t string, op policyv1alpha1.MatchConditionOperator, vals ...metav1.ConditionStatus) policyv1alpha1.MatchCondition {
	return policyv1alpha1.MatchCondition{ConditionType: t, Operator: op, StatusValues: vals}
}

func TestMatches(t *testing.T) {
	ready := []metav1.Condition{cond("Ready", metav1.ConditionTrue), cond("NetworkAvailable", metav1.ConditionFalse)}
	for _, tc := range []struct {
		name  string
		conds []policyv1alpha1.MatchCondition
		want  bool
	}{
		{"no conditions match nothing", nil, false},
		{"In the status", []policyv1alpha1.MatchCondition{mc("Ready", "In", "True")}, true},
		{"In another status", []policyv1alpha1.MatchCondition{mc("Ready", "In", "False", "Unknown")}, false},
		{"NotIn the status", []policyv1alpha1.MatchCondition{mc("Ready", "NotIn", "True")}, false},
		{"NotIn other statuses", []policyv1alpha1.MatchCondition{mc("Ready", "NotIn", "False")}, true},
		{"ANDed: one fails", []policyv1alpha1.MatchCondition{mc("Ready", "In", "True"), mc("NetworkAvailable", "In", "True")}, false},
		{"ANDed: both hold", []policyv1alpha1.MatchCondition{mc("Ready", "In", "True"), mc("NetworkAvailable", "NotIn", "True")}, true},
		{"a condition the cluster lacks: In never", []policyv1alpha1.MatchCondition{mc("SchedulerDown", "In", "True", "False", "Unknown")}, false},
		{"a condition the cluster lacks: NotIn always", []policyv1alpha1.MatchCondition{mc("SchedulerDown", "NotIn", "True")}, true},
		{"an unknown operator never matches", []policyv1alpha1.MatchCondition{mc("Ready", "Exists", "True")}, false},
	} {
		if got := Matches(tc.conds, ready); got != tc.want {
			t.Errorf("%s: got %v, want %v", tc.name, got, tc.want)
		}
	}
}

func TestApply(t *testing.T) {
	now := time.Date(2026, 11, 24, 0, 0, 0, 0, time.UTC)
	notReady := policyv1alpha1.ClusterTaintPolicy{
		ObjectMeta: metav1.ObjectMeta{Name: "not-ready"},
		Spec: policyv1alpha1.ClusterTaintPolicySpec{
			TargetClusters:     &policyv1alpha1.ClusterAffinity{ClusterNames: []string{"member1", "member2"}},
			AddOnConditions:    []policyv1alpha1.MatchCondition{mc("Ready", "NotIn", "True")},
			RemoveOnConditions: []policyv1alpha1.MatchCondition{mc("Ready", "In", "True")},
			Taints:             []policyv1alpha1.Taint{{Key: "not-ready", Effect: corev1.TaintEffectNoExecute}, {Key: "not-ready", Value: "v", Effect: corev1.TaintEffectNoSchedule}},
		},
	}
	cluster := func(name string, ready metav1.ConditionStatus, taints ...corev1.Taint) *clusterv1alpha1.Cluster {
		c := &clusterv1alpha1.Cluster{ObjectMeta: metav1.ObjectMeta{Name: name}, Spec: clusterv1alpha1.ClusterSpec{Taints: taints}}
		// What the policy added, as recorded: the not-ready taints.
		var ours []string
		for _, t := range taints {
			if t.Key == "not-ready" {
				ours = append(ours, t.Key+":"+string(t.Effect))
			}
		}
		sort.Strings(ours)
		c.Annotations = map[string]string{policyv1alpha1.ClusterTaintPolicyTaintsAnnotation: strings.Join(ours, ",")}
		if ready != "" {
			c.Status.Conditions = []metav1.Condition{cond("Ready", ready)}
		}
		return c
	}
	other := corev1.Taint{Key: "dedicated", Value: "gpu", Effect: corev1.TaintEffectNoSchedule}
	added := func(key, value string, effect corev1.TaintEffect) corev1.Taint {
		return corev1.Taint{Key: key, Value: value, Effect: effect, TimeAdded: &metav1.Time{Time: now}}
	}
	for _, tc := range []struct {
		name     string
		cluster  *clusterv1alpha1.Cluster
		policies []policyv1alpha1.ClusterTaintPolicy
		want     []string
		changed  bool
	}{
		{"not ready: both taints added after the cluster's own", cluster("member1", metav1.ConditionFalse, other), []policyv1alpha1.ClusterTaintPolicy{notReady},
			[]string{"dedicated=gpu:NoSchedule", "not-ready:NoExecute", "not-ready=v:NoSchedule"}, true},
		{"unknown is not True either", cluster("member2", metav1.ConditionUnknown), []policyv1alpha1.ClusterTaintPolicy{notReady},
			[]string{"not-ready:NoExecute", "not-ready=v:NoSchedule"}, true},
		{"already tainted: nothing changes", cluster("member1", metav1.ConditionFalse, added("not-ready", "", "NoExecute"), added("not-ready", "v", "NoSchedule")), []policyv1alpha1.ClusterTaintPolicy{notReady},
			[]string{"not-ready:NoExecute", "not-ready=v:NoSchedule"}, false},
		{"another value: updated", cluster("member1", metav1.ConditionFalse, added("not-ready", "old", "NoExecute"), added("not-ready", "v", "NoSchedule")), []policyv1alpha1.ClusterTaintPolicy{notReady},
			[]string{"not-ready:NoExecute", "not-ready=v:NoSchedule"}, true},
		{"ready again: removed, others kept", cluster("member1", metav1.ConditionTrue, added("not-ready", "", "NoExecute"), other, added("not-ready", "v", "NoSchedule")), []policyv1alpha1.ClusterTaintPolicy{notReady},
			[]string{"dedicated=gpu:NoSchedule"}, true},
		{"not a target: left alone", cluster("member3", metav1.ConditionFalse), []policyv1alpha1.ClusterTaintPolicy{notReady}, nil, false},
		{"not a target any more: its taints stay", cluster("member3", metav1.ConditionTrue, added("not-ready", "", "NoExecute")), []policyv1alpha1.ClusterTaintPolicy{notReady},
			[]string{"not-ready:NoExecute"}, false},
		{"no status yet: NotIn matches (no Ready is not Ready True)", cluster("member1", ""), []policyv1alpha1.ClusterTaintPolicy{notReady},
			[]string{"not-ready:NoExecute", "not-ready=v:NoSchedule"}, true},
		{"a policy being deleted does nothing", cluster("member1", metav1.ConditionFalse), []policyv1alpha1.ClusterTaintPolicy{func() policyv1alpha1.ClusterTaintPolicy {
			p := *notReady.DeepCopy()
			p.DeletionTimestamp = &metav1.Time{Time: now}
			return p
		}()}, nil, false},
	} {
		out := Apply(tc.cluster, tc.policies, now)
		got, changed := out.Taints, out.Changed
		var keys []string
		for _, t := range got {
			s := t.Key
			if t.Value != "" {
				s += "=" + t.Value
			}
			keys = append(keys, s+":"+string(t.Effect))
		}
		if strings.Join(keys, ",") != strings.Join(tc.want, ",") || changed != tc.changed {
			t.Errorf("%s: got %v changed=%v, want %v changed=%v", tc.name, keys, changed, tc.want, tc.changed)
		}
		for _, tt := range got {
			if tt.Key == "not-ready" && tt.TimeAdded == nil {
				t.Errorf("%s: taint %s without timeAdded", tc.name, tt.Key)
			}
		}
		if len(tc.cluster.Spec.Taints) > 0 && &tc.cluster.Spec.Taints[0] == &got[0] {
			t.Errorf("%s: Apply changed the cluster's own slice", tc.name)
		}
	}
}

// A taint added by hand is not the policy's: it stays when the policy
// would remove its own, as in a Karmada fleet without such a policy. A
// cluster without a record (an earlier version's) is handled as before,
// once, and then has one.
func TestApplyKeepsTaintsAddedByHand(t *testing.T) {
	now := time.Date(2026, 11, 26, 0, 0, 0, 0, time.UTC)
	notReady := policyv1alpha1.ClusterTaintPolicy{
		ObjectMeta: metav1.ObjectMeta{Name: "cluster-not-ready"},
		Spec: policyv1alpha1.ClusterTaintPolicySpec{
			AddOnConditions:    []policyv1alpha1.MatchCondition{mc("Ready", "NotIn", "True")},
			RemoveOnConditions: []policyv1alpha1.MatchCondition{mc("Ready", "In", "True")},
			Taints:             []policyv1alpha1.Taint{{Key: "cluster.karmada.io/not-ready", Effect: corev1.TaintEffectNoExecute}},
		},
	}
	byHand := corev1.Taint{Key: "cluster.karmada.io/not-ready", Effect: corev1.TaintEffectNoExecute, TimeAdded: &metav1.Time{Time: now}}
	ready := func(record *string, taints ...corev1.Taint) *clusterv1alpha1.Cluster {
		c := &clusterv1alpha1.Cluster{ObjectMeta: metav1.ObjectMeta{Name: "member1"}, Spec: clusterv1alpha1.ClusterSpec{Taints: taints},
			Status: clusterv1alpha1.ClusterStatus{Conditions: []metav1.Condition{cond("Ready", metav1.ConditionTrue)}}}
		if record != nil {
			c.Annotations = map[string]string{policyv1alpha1.ClusterTaintPolicyTaintsAnnotation: *record}
		}
		return c
	}
	empty, ours := "", "cluster.karmada.io/not-ready:NoExecute"
	for _, tc := range []struct {
		name        string
		cluster     *clusterv1alpha1.Cluster
		wantTaints  int
		wantRecord  string
		wantChanged bool
	}{
		{"added by hand, Ready: kept", ready(&empty, byHand), 1, "", false},
		{"added by the policy, Ready: removed", ready(&ours, byHand), 0, "", true},
		{"no record yet: removed as before, and recorded", ready(nil, byHand), 0, "", true},
		{"no record and nothing to do: recorded once", ready(nil), 0, "", true},
	} {
		out := Apply(tc.cluster, []policyv1alpha1.ClusterTaintPolicy{notReady}, now)
		if len(out.Taints) != tc.wantTaints || out.Record != tc.wantRecord || out.Changed != tc.wantChanged {
			t.Errorf("%s: taints %v record %q changed %v, want %d taints, record %q, changed %v", tc.name, out.Taints, out.Record, out.Changed, tc.wantTaints, tc.wantRecord, tc.wantChanged)
		}
	}
	// An earlier version's taint on a cluster still not Ready is recorded
	// as the policy's, so that it goes once the cluster is Ready.
	stale := ready(nil, byHand)
	stale.Status.Conditions[0].Status = metav1.ConditionFalse
	out := Apply(stale, []policyv1alpha1.ClusterTaintPolicy{notReady}, now)
	if len(out.Taints) != 1 || out.Record != ours || !out.Changed {
		t.Errorf("an earlier version's taint, not Ready: %+v, want it kept and recorded", out)
	}
	stale.Spec.Taints, stale.Annotations = out.Taints, map[string]string{policyv1alpha1.ClusterTaintPolicyTaintsAnnotation: out.Record}
	stale.Status.Conditions[0].Status = metav1.ConditionTrue
	if out := Apply(stale, []policyv1alpha1.ClusterTaintPolicy{notReady}, now); len(out.Taints) != 0 || out.Record != "" {
		t.Errorf("an earlier version's taint, Ready again: %+v, want it removed", out)
	}
	// Not Ready: the policy adds its taint and records it.
	c := ready(&empty)
	c.Status.Conditions[0].Status = metav1.ConditionFalse
	if out := Apply(c, []policyv1alpha1.ClusterTaintPolicy{notReady}, now); len(out.Taints) != 1 || out.Record != ours || !out.Changed {
		t.Errorf("not Ready: %+v, want the taint added and recorded", out)
	}
	// A cluster no policy targets gets no record.
	notReady.Spec.TargetClusters = &policyv1alpha1.ClusterAffinity{ClusterNames: []string{"member2"}}
	if out := Apply(ready(nil, byHand), []policyv1alpha1.ClusterTaintPolicy{notReady}, now); out.Changed || len(out.Taints) != 1 {
		t.Errorf("untargeted: %+v, want nothing changed", out)
	}
}
