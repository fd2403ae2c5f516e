package cluster

import (
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

func TestTaintsForReadiness(t *testing.T) {
	now := time.Now()
	user := corev1.Taint{Key: "dedicated", Value: "gpu", Effect: corev1.TaintEffectNoSchedule}
	notReady := corev1.Taint{Key: TaintNotReady, Effect: corev1.TaintEffectNoSchedule}
	unreachable := corev1.Taint{Key: TaintUnreachable, Effect: corev1.TaintEffectNoSchedule}
	// A NoExecute taint of the same key belongs to failover, not to us.
	notReadyExecute := corev1.Taint{Key: TaintNotReady, Effect: corev1.TaintEffectNoExecute}
	cond := func(s metav1.ConditionStatus) *metav1.Condition { return &metav1.Condition{Status: s} }
	cases := []struct {
		name        string
		taints      []corev1.Taint
		ready       *metav1.Condition
		want        []string
		wantChanged bool
	}{
		{"no condition yet: nothing", []corev1.Taint{user}, nil, []string{"dedicated"}, false},
		{"ready: nothing to add", []corev1.Taint{user}, cond(metav1.ConditionTrue), []string{"dedicated"}, false},
		{"not ready: not-ready added", []corev1.Taint{user}, cond(metav1.ConditionFalse), []string{"dedicated", TaintNotReady}, true},
		{"not ready again: unchanged", []corev1.Taint{user, notReady}, cond(metav1.ConditionFalse), []string{"dedicated", TaintNotReady}, false},
		{"unknown: unreachable replaces not-ready", []corev1.Taint{notReady, user}, cond(metav1.ConditionUnknown), []string{"dedicated", TaintUnreachable}, true},
		{"ready: both removed, others kept", []corev1.Taint{notReady, user, unreachable, notReadyExecute}, cond(metav1.ConditionTrue), []string{"dedicated", TaintNotReady + ":NoExecute"}, true},
	}
	for _, c := range cases {
		got, changed := TaintsForReadiness(c.taints, c.ready, now)
		var keys []string
		for _, t := range got {
			k := t.Key
			if t.Effect == corev1.TaintEffectNoExecute {
				k += ":NoExecute"
			}
			keys = append(keys, k)
		}
		if changed != c.wantChanged || len(keys) != len(c.want) {
			t.Errorf("%s: got %v changed=%v, want %v changed=%v", c.name, keys, changed, c.want, c.wantChanged)
			continue
		}
		for i := range keys {
			if keys[i] != c.want[i] {
				t.Errorf("%s: got %v, want %v", c.name, keys, c.want)
				break
			}
		}
	}
}
