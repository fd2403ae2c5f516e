package compactobj_test

import (
	"context"
	"fmt"
	"sync"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/tools/cache"

	"github.com/karmada-go/karmada/internal/cache/compactobj"
	"github.com/karmada-go/karmada/internal/testenv"
)

// countingLister records every list request and the size of its answer.
type countingLister struct {
	dynamic.ResourceInterface
	mu    sync.Mutex
	calls []metav1.ListOptions
	sizes []int
}

func (c *countingLister) List(ctx context.Context, opts metav1.ListOptions) (*unstructured.UnstructuredList, error) {
	l, err := c.ResourceInterface.List(ctx, opts)
	c.mu.Lock()
	defer c.mu.Unlock()
	c.calls = append(c.calls, opts)
	if l != nil {
		c.sizes = append(c.sizes, len(l.Items))
	}
	return l, err
}

// An informer on ListWatch lists a page at a time however large the list,
// even on its first list (resourceVersion "0", which the watch cache would
// answer whole), keeps only compact Objects of what the selector matches,
// and then follows the watch.
func TestListWatchListsPageByPage(t *testing.T) {
	env := testenv.StartMember(t)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	const n, page = 25, 10
	for i := 0; i < n+1; i++ {
		cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: fmt.Sprintf("cm-%d", i), Namespace: "default", Labels: map[string]string{"listed": "yes"}},
			Data: map[string]string{"i": fmt.Sprint(i)}}
		if i == n {
			cm.Labels = nil // not selected
		}
		if err := env.Client.Create(ctx, cm); err != nil {
			t.Fatal(err)
		}
	}
	dyn, err := dynamic.NewForConfig(env.Config)
	if err != nil {
		t.Fatal(err)
	}
	ri := &countingLister{ResourceInterface: dyn.Resource(schema.GroupVersionResource{Version: "v1", Resource: "configmaps"})}
	transform := compactobj.Metadata{Labels: true}.Transform
	lw := compactobj.ListWatch(ri, func(o *metav1.ListOptions) { o.LabelSelector = "listed=yes" }, transform, page)
	inf := cache.NewSharedIndexInformer(lw, &unstructured.Unstructured{}, 0, cache.Indexers{})
	if err := inf.SetTransform(transform); err != nil { // as NewInformer does, with a smaller page
		t.Fatal(err)
	}
	testenv.RunInformer(ctx, t, inf)

	ri.mu.Lock()
	calls, sizes := append([]metav1.ListOptions(nil), ri.calls...), append([]int(nil), ri.sizes...)
	ri.mu.Unlock()
	if len(calls) != 3 {
		t.Fatalf("%d list requests (answers of %v objects), want 3 pages of at most %d for %d objects", len(calls), sizes, page, n)
	}
	for i, c := range calls {
		if c.Limit != page || c.LabelSelector != "listed=yes" {
			t.Errorf("request %d: limit %d selector %q, want %d and listed=yes", i, c.Limit, c.LabelSelector, page)
		}
		if c.ResourceVersion == "0" {
			t.Errorf("request %d asked for resourceVersion 0, which the watch cache answers whole", i)
		}
		if (i == 0) != (c.Continue == "") {
			t.Errorf("request %d: continue %q", i, c.Continue)
		}
		if sizes[i] > page {
			t.Errorf("request %d was answered with %d objects, more than a page", i, sizes[i])
		}
	}

	items := inf.GetStore().List()
	if len(items) != n {
		t.Fatalf("the cache holds %d objects, want the %d selected", len(items), n)
	}
	for _, it := range items {
		o, ok := it.(*compactobj.Object)
		if !ok {
			t.Fatalf("the cache holds a %T, want *compactobj.Object", it)
		}
		u, err := o.Decode()
		if err != nil {
			t.Fatal(err)
		}
		if len(u.GetManagedFields()) != 0 {
			t.Errorf("%s kept its managedFields", u.GetName())
		}
		if u.GetName() == fmt.Sprintf("cm-%d", n) {
			t.Errorf("%s is cached though the selector excludes it", u.GetName())
		}
	}

	// The watch: a new object arrives compact.
	added := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "cm-late", Namespace: "default", Labels: map[string]string{"listed": "yes"}}}
	if err := env.Client.Create(ctx, added); err != nil {
		t.Fatal(err)
	}
	testenv.Eventually(t, time.Minute, "the watched object in the cache", func(context.Context) error {
		it, ok, err := inf.GetStore().GetByKey("default/cm-late")
		if err != nil {
			return err
		}
		if !ok {
			return fmt.Errorf("default/cm-late not cached")
		}
		if _, ok := it.(*compactobj.Object); !ok {
			return fmt.Errorf("cached as %T", it)
		}
		return nil
	})
}
