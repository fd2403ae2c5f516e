package binding

import (
	"strings"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	workv1alpha1 "github.com/karmada-go/karmada/api/work/v1alpha1"
	workv1alpha2 "github.com/karmada-go/karmada/api/work/v1alpha2"
	"github.com/karmada-go/karmada/internal/anybinding"
)

// A Work whose name two templates share is written only by the binding it
// belongs to.
func TestOtherBinding(t *testing.T) {
	mine, err := anybinding.Of(&workv1alpha2.ResourceBinding{ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: "a-deployment"}})
	if err != nil {
		t.Fatal(err)
	}
	work := func(labels map[string]string) *workv1alpha1.Work {
		return &workv1alpha1.Work{ObjectMeta: metav1.ObjectMeta{Namespace: "karmada-es-m1", Name: "w", Labels: labels, CreationTimestamp: metav1.NewTime(time.Now())}}
	}
	rb := func(ns, name string) map[string]string {
		return map[string]string{workv1alpha2.ResourceBindingNamespaceLabel: ns, workv1alpha2.ResourceBindingNameLabel: name}
	}
	for _, c := range []struct {
		name string
		work *workv1alpha1.Work
		want string
	}{
		{"new", &workv1alpha1.Work{}, ""},
		{"mine", work(rb("default", "a-deployment")), ""},
		{"no binding named", work(nil), ""},
		{"another binding", work(rb("default", "b-deployment")), "default/b-deployment"},
		{"another namespace", work(rb("other", "a-deployment")), "other/a-deployment"},
		{"a cluster binding", work(map[string]string{workv1alpha2.ClusterResourceBindingLabel: "a-deployment"}), "a-deployment"},
	} {
		got := otherBinding(c.work, mine)
		if (c.want == "") != (got == "") || !strings.Contains(got, c.want) {
			t.Errorf("%s: %q, want naming %q", c.name, got, c.want)
		}
	}
}
