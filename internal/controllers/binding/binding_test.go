package binding

import (
	"context"
	"slices"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"

	workv1alpha1 "github.com/karmada-go/karmada/api/work/v1alpha1"
	"github.com/karmada-go/karmada/internal/scheme"
)

func TestWorksOfSelectsOneBindingsWorks(t *testing.T) {
	work := func(ns, name string, labels map[string]string) *workv1alpha1.Work {
		return &workv1alpha1.Work{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name, Labels: labels}}
	}
	rb := func(ns, name string) map[string]string {
		return map[string]string{BindingNamespaceLabel: ns, BindingNameLabel: name}
	}
	crb := map[string]string{ClusterBindingNameLabel: "web"}
	c := fake.NewClientBuilder().WithScheme(scheme.Scheme).
		WithIndex(&workv1alpha1.Work{}, workBindingField, workBindingIndex).
		WithObjects(
			work("karmada-es-member1", "a", rb("default", "web")),
			work("karmada-es-member2", "b", rb("default", "web")),
			// Same binding name in another namespace, and a cluster binding
			// of the same name: neither is the default/web binding's.
			work("karmada-es-member1", "c", rb("other", "web")),
			work("karmada-es-member1", "d", crb),
			work("karmada-es-member1", "e", nil),
		).Build()

	for _, tc := range []struct {
		labels map[string]string
		want   []string
	}{
		{rb("default", "web"), []string{"a", "b"}},
		{rb("other", "web"), []string{"c"}},
		{crb, []string{"d"}},
		{rb("default", "gone"), nil},
	} {
		works := &workv1alpha1.WorkList{}
		if err := c.List(context.Background(), works, WorksOf(tc.labels)); err != nil {
			t.Fatalf("List(%v): %v", tc.labels, err)
		}
		var got []string
		for _, w := range works.Items {
			got = append(got, w.Name)
		}
		slices.Sort(got)
		if !slices.Equal(got, tc.want) {
			t.Errorf("WorksOf(%v) = %v, want %v", tc.labels, got, tc.want)
		}
	}
}
