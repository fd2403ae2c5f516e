package reload

import (
	"context"
	"sync/atomic"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/wait"
	"sigs.k8s.io/controller-runtime/pkg/cache/informertest"

	"github.com/karmada-go/karmada/internal/scheme"
)

// Every change of the type brings a call; none comes before a change or
// after ctx ends.
func TestOnChange(t *testing.T) {
	informers := &informertest.FakeInformers{Scheme: scheme.Scheme}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	var calls atomic.Int32
	if err := OnChange(ctx, informers, &corev1.ConfigMap{}, func(context.Context) { calls.Add(1) }); err != nil {
		t.Fatal(err)
	}
	inf, err := informers.FakeInformerFor(ctx, &corev1.ConfigMap{})
	if err != nil {
		t.Fatal(err)
	}
	if n := calls.Load(); n != 0 {
		t.Fatalf("%d calls before any change", n)
	}
	cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: "a"}}
	for i, change := range []func(){func() { inf.Add(cm) }, func() { inf.Update(cm, cm) }, func() { inf.Delete(cm) }} {
		before := calls.Load()
		change()
		if err := wait.PollUntilContextTimeout(ctx, 5*time.Millisecond, 5*time.Second, true, func(context.Context) (bool, error) {
			return calls.Load() > before, nil
		}); err != nil {
			t.Fatalf("change %d brought no call", i)
		}
	}
	cancel()
}
