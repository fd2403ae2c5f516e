package detector

import (
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	policyv1alpha1 "github.com/karmada-go/karmada/api/policy/v1alpha1"
	"github.com/karmada-go/karmada/internal/queues"
)

// What a start lists, and a policy's own label writes, wait behind fresh
// changes; a template created, or a policy's spec changed or deletion
// begun, does not.
func TestPriorities(t *testing.T) {
	if initialPriority(true) != queues.Low || initialPriority(false) != 0 {
		t.Errorf("initial list %d, creation %d", initialPriority(true), initialPriority(false))
	}
	policy := func(generation int64, label string, deleting bool) *policyv1alpha1.PropagationPolicy {
		p := &policyv1alpha1.PropagationPolicy{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "p", Generation: generation}}
		if label != "" {
			p.Labels = map[string]string{policyv1alpha1.PropagationPolicyPermanentIDLabel: label}
		}
		if deleting {
			now := metav1.Now()
			p.DeletionTimestamp = &now
		}
		return p
	}
	for _, tc := range []struct {
		name     string
		old, new *policyv1alpha1.PropagationPolicy
		want     int
	}{
		{"permanent id written", policy(1, "", false), policy(1, "id", false), queues.Low},
		{"spec changed", policy(1, "id", false), policy(2, "id", false), 0},
		{"deletion begun", policy(1, "id", false), policy(1, "id", true), 0},
	} {
		if got := policyUpdatePriority(tc.old, tc.new); got != tc.want {
			t.Errorf("%s: priority %d, want %d", tc.name, got, tc.want)
		}
	}
}
