package detector

import (
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	policyv1alpha1 "github.com/karmada-go/karmada/api/policy/v1alpha1"
)

func TestOwnOrStatusWrite(t *testing.T) {
	pm := func(gen int64, labels, annotations map[string]string) *metav1.PartialObjectMetadata {
		return &metav1.PartialObjectMetadata{ObjectMeta: metav1.ObjectMeta{Generation: gen, Labels: labels, Annotations: annotations}}
	}
	claim := map[string]string{policyv1alpha1.PropagationPolicyNamespaceAnnotation: "default", policyv1alpha1.PropagationPolicyNameAnnotation: "web"}
	claimed := func(extra map[string]string) map[string]string {
		out := map[string]string{}
		for k, v := range claim {
			out[k] = v
		}
		for k, v := range extra {
			out[k] = v
		}
		return out
	}
	idLabel := map[string]string{"app": "web", policyv1alpha1.PropagationPolicyPermanentIDLabel: "id-1"}
	app := map[string]string{"app": "web"}
	for _, tc := range []struct {
		name     string
		old, new *metav1.PartialObjectMetadata
		want     bool
	}{
		{"status only", pm(1, app, nil), pm(1, app, nil), true},
		{"claim written, generation kept", pm(1, app, nil), pm(1, idLabel, claim), true},
		{"claim written, Deployment counts it as a generation", pm(1, app, nil), pm(2, idLabel, claim), true},
		{"claim rewritten to another policy", pm(2, idLabel, claim), pm(3, idLabel, map[string]string{policyv1alpha1.PropagationPolicyNamespaceAnnotation: "default", policyv1alpha1.PropagationPolicyNameAnnotation: "other"}), true},
		{"spec changed", pm(2, idLabel, claim), pm(3, idLabel, claim), false},
		{"claim taken away", pm(2, idLabel, claim), pm(3, app, nil), false},
		{"claim taken away, generation kept", pm(2, idLabel, claim), pm(2, app, nil), false},
		{"a label changed", pm(2, idLabel, claim), pm(2, map[string]string{"app": "api", policyv1alpha1.PropagationPolicyPermanentIDLabel: "id-1"}, claim), false},
		{"another annotation changed with the claim", pm(1, app, nil), pm(2, idLabel, claimed(map[string]string{"note": "x"})), false},
		{"claim written and more generations passed", pm(1, app, nil), pm(3, idLabel, claim), false},
		{"no generation (kinds without one)", pm(0, app, nil), pm(0, app, nil), false},
	} {
		if got := ownOrStatusWrite(tc.old, tc.new); got != tc.want {
			t.Errorf("%s: ownOrStatusWrite = %v, want %v", tc.name, got, tc.want)
		}
	}
}
