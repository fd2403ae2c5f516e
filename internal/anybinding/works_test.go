package anybinding

import (
	"context"
	"slices"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"

	workv1alpha1 "github.com/karmada-go/karmada/api/work/v1alpha1"
	workv1alpha2 "github.com/karmada-go/karmada/api/work/v1alpha2"
	"github.com/karmada-go/karmada/internal/scheme"
)

func TestWorksSelectsOneBindingsWorks(t *testing.T) {
	work := func(ns, name string, labels map[string]string) *workv1alpha1.Work {
		return &workv1alpha1.Work{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name, Labels: labels}}
	}
	rb := func(ns, name string) map[string]string {
		return map[string]string{workv1alpha2.ResourceBindingNamespaceLabel: ns, workv1alpha2.ResourceBindingNameLabel: name}
	}
	crb := map[string]string{workv1alpha2.ClusterResourceBindingLabel: "web"}
	c := fake.NewClientBuilder().WithScheme(scheme.Scheme).
		WithIndex(&workv1alpha1.Work{}, workBindingField, func(o client.Object) []string {
			if k := indexKey(o.GetLabels()); k != "" {
				return []string{k}
			}
			return nil
		}).
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
		b := bindingOf(tc.labels)
		works, err := b.Works(context.Background(), c)
		if err != nil {
			t.Fatalf("Works(%v): %v", tc.labels, err)
		}
		var got []string
		for _, w := range works {
			got = append(got, w.Name)
		}
		slices.Sort(got)
		if !slices.Equal(got, tc.want) {
			t.Errorf("Works(%v) = %v, want %v", tc.labels, got, tc.want)
		}
	}
}

// bindingOf is the binding whose Works carry labels.
func bindingOf(labels map[string]string) Binding {
	for _, k := range Kinds {
		if key, ok := k.OfWork(&workv1alpha1.Work{ObjectMeta: metav1.ObjectMeta{Labels: labels}}); ok {
			b := k.New()
			b.Object.SetNamespace(key.Namespace)
			b.Object.SetName(key.Name)
			return b
		}
	}
	panic("labels name no binding")
}
