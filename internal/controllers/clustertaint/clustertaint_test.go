package clustertaint

import (
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
		got, changed := Apply(tc.cluster, tc.policies, now)
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
