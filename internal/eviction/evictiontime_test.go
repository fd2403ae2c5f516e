package eviction

import (
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
)

func TestEvictionTime(t *testing.T) {
	now := time.Date(2026, 11, 24, 8, 0, 0, 0, time.UTC)
	added := metav1.NewTime(now.Add(-10 * time.Second))
	unreachable := corev1.Taint{Key: "cluster.karmada.io/unreachable", Effect: corev1.TaintEffectNoExecute, TimeAdded: &added}
	notReady := corev1.Taint{Key: "cluster.karmada.io/not-ready", Effect: corev1.TaintEffectNoExecute, TimeAdded: &added}
	noSchedule := corev1.Taint{Key: "cluster.karmada.io/not-ready", Effect: corev1.TaintEffectNoSchedule, TimeAdded: &added}
	tolerate := func(key string, seconds *int64) corev1.Toleration {
		return corev1.Toleration{Key: key, Operator: corev1.TolerationOpExists, Effect: corev1.TaintEffectNoExecute, TolerationSeconds: seconds}
	}
	cases := []struct {
		name        string
		taints      []corev1.Taint
		tolerations []corev1.Toleration
		wantOK      bool
		wantAt      time.Time
		wantWhy     string
	}{
		{"no taint", nil, nil, false, time.Time{}, ""},
		{"NoSchedule never evicts", []corev1.Taint{noSchedule}, nil, false, time.Time{}, ""},
		{"untolerated: at once", []corev1.Taint{unreachable}, nil, true, time.Time{}, "untolerated taint {cluster.karmada.io/unreachable:NoExecute}"},
		{"tolerated for 300 s from timeAdded", []corev1.Taint{unreachable}, []corev1.Toleration{tolerate("cluster.karmada.io/unreachable", ptr.To[int64](300))}, true, added.Add(300 * time.Second), "tolerated for 300s"},
		{"the smallest matching toleration counts", []corev1.Taint{unreachable}, []corev1.Toleration{
			tolerate("cluster.karmada.io/unreachable", ptr.To[int64](300)), {Operator: corev1.TolerationOpExists, TolerationSeconds: ptr.To[int64](60)}}, true, added.Add(60 * time.Second), "tolerated for 60s"},
		{"tolerated for good", []corev1.Taint{unreachable}, []corev1.Toleration{tolerate("cluster.karmada.io/unreachable", nil)}, false, time.Time{}, ""},
		{"one taint tolerated for good, another not at all", []corev1.Taint{unreachable, notReady}, []corev1.Toleration{tolerate("cluster.karmada.io/unreachable", nil)}, true, time.Time{}, "not-ready"},
		{"the earliest taint wins", []corev1.Taint{unreachable, notReady}, []corev1.Toleration{
			tolerate("cluster.karmada.io/unreachable", ptr.To[int64](30)), tolerate("cluster.karmada.io/not-ready", ptr.To[int64](20))}, true, added.Add(20 * time.Second), "not-ready:NoExecute} tolerated for 20s"},
		{"no timeAdded counts from now", []corev1.Taint{{Key: "k", Effect: corev1.TaintEffectNoExecute}}, []corev1.Toleration{tolerate("k", ptr.To[int64](5))}, true, now.Add(5 * time.Second), "tolerated for 5s"},
	}
	for _, c := range cases {
		at, why, ok := EvictionTime(c.taints, c.tolerations, now)
		if ok != c.wantOK || !at.Equal(c.wantAt) || !strings.Contains(why, c.wantWhy) {
			t.Errorf("%s: %v %s %q, want %v %s %q", c.name, ok, at, why, c.wantOK, c.wantAt, c.wantWhy)
		}
	}
}
