package namespace

import (
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

func TestSkipped(t *testing.T) {
	cases := []struct {
		name   string
		labels map[string]string
		want   bool
	}{
		{"default", nil, true},
		{"kube-system", nil, true},
		{"kube-public", nil, true},
		{"karmada-system", nil, true},
		{"karmada-es-member1", nil, true},
		{"team-a", nil, false},
		{"kubeflow", nil, false}, // only the kube- prefix is reserved
		{"team-b", map[string]string{SkipAutoPropagationLabel: "true"}, true},
		{"team-c", map[string]string{SkipAutoPropagationLabel: "false"}, false},
	}
	for _, c := range cases {
		ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: c.name, Labels: c.labels}}
		if got := Skipped(ns); got != c.want {
			t.Errorf("Skipped(%s %v) = %v, want %v", c.name, c.labels, got, c.want)
		}
	}
}
