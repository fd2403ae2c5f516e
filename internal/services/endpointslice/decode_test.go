package endpointslice

import (
	"strings"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"

	workv1alpha1 "github.com/karmada-go/karmada/api/work/v1alpha1"
)

// A collected Work holds exactly one EndpointSlice of the Service its
// labels name; anything else is refused with what is wrong.
func TestDecode(t *testing.T) {
	labels := map[string]string{"endpointslice.karmada.io/namespace": "shop", "endpointslice.karmada.io/name": "serve"}
	slice := func(ns, svc string) string {
		return `{"apiVersion":"discovery.k8s.io/v1","kind":"EndpointSlice","metadata":{"namespace":"` + ns + `","name":"s","labels":{"kubernetes.io/service-name":"` + svc + `"}},"addressType":"IPv4","endpoints":[]}`
	}
	for _, tc := range []struct {
		name      string
		manifests []string
		wantErr   string
	}{
		{"the Service's slice", []string{slice("shop", "serve")}, ""},
		{"another namespace's slice", []string{slice("bank", "serve")}, "does not belong to the Service shop/serve"},
		{"another Service's slice", []string{slice("shop", "vault")}, "does not belong to the Service shop/serve"},
		{"two slices", []string{slice("shop", "serve"), slice("shop", "serve")}, "2 manifests"},
		{"not a slice", []string{`{"apiVersion":"v1","kind":"Secret","metadata":{"namespace":"shop","name":"s"}}`}, "is not a discovery.k8s.io/v1 EndpointSlice"},
		{"not JSON", []string{`{`}, "spec.workload.manifests[0]"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			w := &workv1alpha1.Work{ObjectMeta: metav1.ObjectMeta{Labels: labels}}
			for _, m := range tc.manifests {
				w.Spec.Workload.Manifests = append(w.Spec.Workload.Manifests, workv1alpha1.Manifest{RawExtension: runtime.RawExtension{Raw: []byte(m)}})
			}
			_, err := decode(w)
			switch {
			case tc.wantErr == "" && err != nil:
				t.Errorf("refused: %v", err)
			case tc.wantErr != "" && (err == nil || !strings.Contains(err.Error(), tc.wantErr)):
				t.Errorf("error %v, want one saying %q", err, tc.wantErr)
			}
		})
	}
}
