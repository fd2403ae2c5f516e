// Package pagedlist lists for informers a page at a time.
//
// An informer's first list asks for resourceVersion "0", which the API
// server's watch cache answers whole, ignoring any limit: the client reads
// the whole answer into memory, decodes all of it, and only then hands the
// objects to the informer's transform. For tens of thousands of objects
// that is hundreds of megabytes held at once, on every start, beside the
// cache being filled. ListWatch asks for the current state instead ("", a
// consistent read, which pages), reads pages of a bounded size, and passes
// each page's objects through the transform before reading the next, so
// that only one page is ever held as it came from the server.
package pagedlist

import (
	"context"
	"fmt"
	"time"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/tools/cache"
)

// DefaultPageSize is how many objects a list request asks for when no page
// size is given; client-go's pager uses the same.
const DefaultPageSize = 500

// List is what ListWatch's list returns: every object of one list, each
// already through the transform. Informers read it like any list.
type List struct {
	metav1.TypeMeta
	metav1.ListMeta
	Items []runtime.Object
}

// DeepCopyObject copies the list's metadata and its slice of items; the
// items are shared (an informer never modifies what it lists).
func (l *List) DeepCopyObject() runtime.Object {
	out := &List{TypeMeta: l.TypeMeta, ListMeta: *l.ListMeta.DeepCopy()}
	out.Items = append([]runtime.Object(nil), l.Items...)
	return out
}

// ListWatch wraps lw for an informer: its list reads pages of pageSize
// objects (DefaultPageSize when 0 or less) and passes each object through
// transform (when not nil) before reading the next page; its watch is lw's.
//
// Every list asks for the current state (resourceVersion "", a consistent
// read, which the API server pages), whatever resourceVersion the informer
// gives: its first list's "0" is answered whole by the watch cache, and
// the resourceVersion of its last list, which it gives when it lists again
// after a watch ended, means "not older than" only without a limit; with
// one it means exactly that version, and an informer whose watch from that
// version keeps failing (as after an API server restart, whose watch cache
// starts later) would list the same old state again and again. The current
// state is never older than any version the informer asks for. A
// continuation that has expired fails the list with the API server's
// error, and the informer lists again. The informer should have the same
// transform for what its watch delivers, and the transform must accept its
// own output: the informer applies it again to the listed objects.
func ListWatch(lw cache.ListerWatcher, transform cache.TransformFunc, pageSize int64) *cache.ListWatch {
	if pageSize <= 0 {
		pageSize = DefaultPageSize
	}
	inner := cache.ToListerWatcherWithContext(lw)
	return &cache.ListWatch{
		ListWithContextFunc: func(ctx context.Context, opts metav1.ListOptions) (runtime.Object, error) {
			opts.ResourceVersion, opts.ResourceVersionMatch = "", ""
			opts.Limit = pageSize
			opts.Continue = ""
			out := &List{}
			for {
				page, err := inner.ListWithContext(ctx, opts)
				if err != nil {
					return nil, err
				}
				lm, err := meta.ListAccessor(page)
				if err != nil {
					return nil, fmt.Errorf("listing a page: %w", err)
				}
				if out.ResourceVersion == "" {
					out.ResourceVersion = lm.GetResourceVersion()
				}
				if err := meta.EachListItem(page, func(o runtime.Object) error {
					if transform == nil {
						out.Items = append(out.Items, o)
						return nil
					}
					t, err := transform(o)
					if err != nil {
						return err
					}
					ro, ok := t.(runtime.Object)
					if !ok {
						return fmt.Errorf("the cache's transform made %T of a %T, not an object", t, o)
					}
					out.Items = append(out.Items, ro)
					return nil
				}); err != nil {
					return nil, err
				}
				next := lm.GetContinue()
				if next == "" {
					return out, nil
				}
				// A continuation carries its own resourceVersion.
				opts.Continue, opts.ResourceVersion, opts.ResourceVersionMatch = next, "", ""
			}
		},
		WatchFuncWithContext: inner.WatchWithContext,
	}
}

// NewInformer returns an informer (not started) of what lw lists, listed
// through ListWatch with transform and pageSize, and with transform for what
// its watch delivers too.
func NewInformer(lw cache.ListerWatcher, obj runtime.Object, transform cache.TransformFunc, pageSize int64, indexers cache.Indexers) cache.SharedIndexInformer {
	inf := cache.NewSharedIndexInformer(ListWatch(lw, transform, pageSize), obj, 0, indexers)
	// SetTransform fails only on an informer already started.
	_ = inf.SetTransform(transform)
	return inf
}

// NewInformerFunc returns a constructor of informers whose lists go through
// ListWatch with transform and pageSize, with the signature of
// controller-runtime's cache.Options.NewInformer. transform must be the
// cache's transform for every kind (its DefaultTransform, with no transform
// of its own for any kind), which the cache gives the informer for what its
// watch delivers.
func NewInformerFunc(transform cache.TransformFunc, pageSize int64) func(cache.ListerWatcher, runtime.Object, time.Duration, cache.Indexers) cache.SharedIndexInformer {
	return func(lw cache.ListerWatcher, obj runtime.Object, resync time.Duration, indexers cache.Indexers) cache.SharedIndexInformer {
		return cache.NewSharedIndexInformer(ListWatch(lw, transform, pageSize), obj, resync, indexers)
	}
}
