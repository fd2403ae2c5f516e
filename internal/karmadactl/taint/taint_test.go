package taint

import (
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
	corev1 "k8s.io/api/core/v1"
)

func TestParse(t *testing.T) {
	cases := []struct {
		args    []string
		want    Change
		wantErr string
	}{
		{args: []string{"dedicated=gpu:NoSchedule"}, want: Change{Add: []corev1.Taint{{Key: "dedicated", Value: "gpu", Effect: "NoSchedule"}}}},
		{args: []string{"dedicated:NoExecute"}, want: Change{Add: []corev1.Taint{{Key: "dedicated", Effect: "NoExecute"}}}},
		{args: []string{"dedicated=gpu:NoSchedule-"}, want: Change{Remove: []corev1.Taint{{Key: "dedicated", Value: "gpu", Effect: "NoSchedule"}}}},
		{args: []string{"dedicated-"}, want: Change{Remove: []corev1.Taint{{Key: "dedicated"}}}},
		{args: []string{"a=b:NoSchedule", "c-"}, want: Change{Add: []corev1.Taint{{Key: "a", Value: "b", Effect: "NoSchedule"}}, Remove: []corev1.Taint{{Key: "c"}}}},
		{args: []string{"dedicated=gpu"}, wantErr: "has no effect"},
		{args: []string{"dedicated=gpu:Sometimes"}, wantErr: `effect "Sometimes"`},
		{args: []string{"bad key=v:NoSchedule"}, wantErr: `key "bad key"`},
		{args: []string{"k=v:NoSchedule", "k:NoSchedule-"}, wantErr: "both added and removed"},
	}
	for _, c := range cases {
		got, err := Parse(c.args)
		if c.wantErr != "" {
			if err == nil || !strings.Contains(err.Error(), c.wantErr) {
				t.Errorf("Parse(%v) error = %v, want one containing %q", c.args, err, c.wantErr)
			}
			continue
		}
		if err != nil {
			t.Errorf("Parse(%v): %v", c.args, err)
			continue
		}
		if diff := cmp.Diff(c.want, got, cmpopts.EquateEmpty()); diff != "" {
			t.Errorf("Parse(%v) (-want,+got):\n%s", c.args, diff)
		}
	}
}

func TestApply(t *testing.T) {
	now := time.Date(2026, 11, 22, 1, 0, 0, 0, time.UTC)
	ns := func(k, v string) corev1.Taint {
		return corev1.Taint{Key: k, Value: v, Effect: corev1.TaintEffectNoSchedule}
	}
	ne := func(k, v string) corev1.Taint {
		return corev1.Taint{Key: k, Value: v, Effect: corev1.TaintEffectNoExecute}
	}
	cases := []struct {
		name        string
		current     []corev1.Taint
		change      Change
		overwrite   bool
		want        []corev1.Taint
		wantChanged bool
		wantErr     string
	}{
		{name: "add to empty", change: Change{Add: []corev1.Taint{ns("a", "1")}}, want: []corev1.Taint{ns("a", "1")}, wantChanged: true},
		{name: "same taint again is no change", current: []corev1.Taint{ns("a", "1")}, change: Change{Add: []corev1.Taint{ns("a", "1")}}, want: []corev1.Taint{ns("a", "1")}},
		{name: "same key other effect is a new taint", current: []corev1.Taint{ns("a", "1")}, change: Change{Add: []corev1.Taint{ne("a", "1")}}, want: []corev1.Taint{ns("a", "1"), ne("a", "1")}, wantChanged: true},
		{name: "new value needs overwrite", current: []corev1.Taint{ns("a", "1")}, change: Change{Add: []corev1.Taint{ns("a", "2")}}, wantErr: "--overwrite"},
		{name: "overwrite changes the value", current: []corev1.Taint{ns("a", "1")}, change: Change{Add: []corev1.Taint{ns("a", "2")}}, overwrite: true, want: []corev1.Taint{ns("a", "2")}, wantChanged: true},
		{name: "remove by key and effect keeps the others", current: []corev1.Taint{ns("a", "1"), ne("a", "1"), ns("b", "")}, change: Change{Remove: []corev1.Taint{{Key: "a", Effect: corev1.TaintEffectNoSchedule}}}, want: []corev1.Taint{ne("a", "1"), ns("b", "")}, wantChanged: true},
		{name: "remove by key removes every effect", current: []corev1.Taint{ns("a", "1"), ne("a", "1"), ns("b", "")}, change: Change{Remove: []corev1.Taint{{Key: "a"}}}, want: []corev1.Taint{ns("b", "")}, wantChanged: true},
		{name: "removing an absent taint fails", current: []corev1.Taint{ns("b", "")}, change: Change{Remove: []corev1.Taint{{Key: "a"}}}, wantErr: `"a" not found`},
	}
	for _, c := range cases {
		got, changed, err := Apply(c.current, c.change, c.overwrite, now)
		if c.wantErr != "" {
			if err == nil || !strings.Contains(err.Error(), c.wantErr) {
				t.Errorf("%s: error = %v, want one containing %q", c.name, err, c.wantErr)
			}
			continue
		}
		if err != nil {
			t.Errorf("%s: %v", c.name, err)
			continue
		}
		if changed != c.wantChanged {
			t.Errorf("%s: changed = %v, want %v", c.name, changed, c.wantChanged)
		}
		if diff := cmp.Diff(c.want, got, cmpopts.EquateEmpty(), cmpopts.IgnoreFields(corev1.Taint{}, "TimeAdded")); diff != "" {
			t.Errorf("%s (-want,+got):\n%s", c.name, diff)
		}
		for _, g := range got {
			if g.TimeAdded == nil && !containsTaint(c.current, g) {
				t.Errorf("%s: added taint %s has no timeAdded", c.name, g.Key)
			}
		}
	}
}

func containsTaint(ts []corev1.Taint, t corev1.Taint) bool {
	for _, x := range ts {
		if x.Key == t.Key && x.Effect == t.Effect {
			return true
		}
	}
	return false
}
