package compactobj

import (
	"context"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/tools/cache"

	"github.com/karmada-go/karmada/internal/cache/pagedlist"
)

// ListWatch lists and watches ri for an informer whose transform is
// transform, a page of pageSize objects at a time (pagedlist.ListWatch): a
// dynamic informer would otherwise decode the whole list into unstructured
// objects before its transform sees the first one, most of a gigabyte for
// ten thousand objects. tweak, when not nil, edits the options of every list
// and watch (a label selector, say). NewInformer gives the informer the same
// transform, for the objects its watch delivers.
func ListWatch(ri dynamic.ResourceInterface, tweak func(*metav1.ListOptions), transform cache.TransformFunc, pageSize int64) *cache.ListWatch {
	return pagedlist.ListWatch(listerWatcher(ri, tweak), transform, pageSize)
}

// listerWatcher lists and watches ri, each request's options edited by
// tweak when not nil.
func listerWatcher(ri dynamic.ResourceInterface, tweak func(*metav1.ListOptions)) *cache.ListWatch {
	return &cache.ListWatch{
		ListWithContextFunc: func(ctx context.Context, opts metav1.ListOptions) (runtime.Object, error) {
			if tweak != nil {
				tweak(&opts)
			}
			return ri.List(ctx, opts)
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
// pagedlist.DefaultPageSize) and kept so as the watch delivers changes. The
// transform passes through what it already made, as the informer's relists
// require.
func NewInformer(ri dynamic.ResourceInterface, tweak func(*metav1.ListOptions), m Metadata, indexers cache.Indexers) cache.SharedIndexInformer {
	return pagedlist.NewInformer(listerWatcher(ri, tweak), &unstructured.Unstructured{}, m.Transform, 0, indexers)
}
