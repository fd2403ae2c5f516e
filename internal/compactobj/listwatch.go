package compactobj

import (
	"context"
	"fmt"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/tools/cache"
)

// DefaultPageSize is how many objects ListWatch asks for per list request
// when given no page size; client-go's pager uses the same.
const DefaultPageSize = 500

// List is what ListWatch's list returns: every object of one list, each
// already made compact by the transform. Informers read it like any list.
type List struct {
	metav1.TypeMeta
	metav1.ListMeta
	Items []runtime.Object
}

// DeepCopyObject copies the list's metadata and its slice of items; the
// items are shared (the transform's Objects are never modified).
func (l *List) DeepCopyObject() runtime.Object {
	out := &List{TypeMeta: l.TypeMeta, ListMeta: *l.ListMeta.DeepCopy()}
	out.Items = append([]runtime.Object(nil), l.Items...)
	return out
}

// ListWatch lists and watches ri for an informer whose transform is
// transform. A dynamic informer's list decodes the whole list into
// unstructured objects before its transform sees the first one: for ten
// thousand objects that is most of a gigabyte held at once, on every start.
// This list instead reads pages of pageSize objects (DefaultPageSize when 0)
// and transforms each page before reading the next, so only one page is ever
// held decoded.
//
// The informer's first list asks for resourceVersion "0", which the API
// server's watch cache answers whole, ignoring the limit; ListWatch asks for
// the current state instead ("", a consistent read), which pages. Any other
// resourceVersion is passed on as it is; a continuation that has expired
// fails the list with the API server's error, and the informer lists again.
//
// tweak, when not nil, edits the options of every list and watch (a label
// selector, say). NewInformer gives the informer the same transform, for
// the objects its watch delivers.
func ListWatch(ri dynamic.ResourceInterface, tweak func(*metav1.ListOptions), transform cache.TransformFunc, pageSize int64) *cache.ListWatch {
	if pageSize <= 0 {
		pageSize = DefaultPageSize
	}
	return &cache.ListWatch{
		ListWithContextFunc: func(ctx context.Context, opts metav1.ListOptions) (runtime.Object, error) {
			if tweak != nil {
				tweak(&opts)
			}
			if opts.ResourceVersion == "0" {
				opts.ResourceVersion = ""
				opts.ResourceVersionMatch = ""
			}
			opts.Limit = pageSize
			opts.Continue = ""
			out := &List{}
			for {
				page, err := ri.List(ctx, opts)
				if err != nil {
					return nil, err
				}
				if out.ResourceVersion == "" {
					out.ResourceVersion = page.GetResourceVersion()
				}
				for i := range page.Items {
					o, err := transform(&page.Items[i])
					if err != nil {
						return nil, err
					}
					ro, ok := o.(runtime.Object)
					if !ok {
						return nil, fmt.Errorf("the cache's transform made %T of %s %s/%s, not an object", o, page.Items[i].GetKind(), page.Items[i].GetNamespace(), page.Items[i].GetName())
					}
					out.Items = append(out.Items, ro)
				}
				next := page.GetContinue()
				if next == "" {
					return out, nil
				}
				// A continuation carries its own resourceVersion.
				opts.Continue, opts.ResourceVersion, opts.ResourceVersionMatch = next, "", ""
			}
		},
		WatchFuncWithContext: func(ctx context.Context, opts metav1.ListOptions) (watch.Interface, error) {
			if tweak != nil {
				tweak(&opts)
			}
			return ri.Watch(ctx, opts)
		},
	}
}

// NewInformer returns an informer of ri (not started) whose cache holds
// Objects keeping what m says, listed page by page (ListWatch with
// DefaultPageSize) and kept so as the watch delivers changes. The transform
// passes through what it already made, as the informer's relists require.
func NewInformer(ri dynamic.ResourceInterface, tweak func(*metav1.ListOptions), m Metadata, indexers cache.Indexers) cache.SharedIndexInformer {
	inf := cache.NewSharedIndexInformer(ListWatch(ri, tweak, m.Transform, 0), &unstructured.Unstructured{}, 0, indexers)
	// SetTransform fails only on an informer already started.
	_ = inf.SetTransform(m.Transform)
	return inf
}
