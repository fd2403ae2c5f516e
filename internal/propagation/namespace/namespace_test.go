package namespace

import (
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	policyv1alpha1 "github.com/karmada-go/karmada/api/policy/v1alpha1"
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
		{"kube-flannel", nil, true},
		{"karmada-system", nil, true},
		{"karmada-es-member1", nil, true},
		{"team-a", nil, false},
		{"kubeflow", nil, false}, // only the kube- prefix is reserved
		{"team-b", map[string]string{policyv1alpha1.NamespaceSkipAutoPropagationLabel: "true"}, true},
		{"team-c", map[string]string{policyv1alpha1.NamespaceSkipAutoPropagationLabel: "false"}, false},
	}
	for _, c := range cases {
		ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: c.name, Labels: c.labels}}
		if got := Skipped(ns); got != c.want {
			t.Errorf("Skipped(%s %v) = %v, want %v", c.name, c.labels, got, c.want)
		}
	}
}
