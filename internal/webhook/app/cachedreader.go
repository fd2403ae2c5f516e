package app

import (
	"context"
	"sync/atomic"
	"time"

	"k8s.io/apimachinery/pkg/api/meta"
	utilcache "k8s.io/apimachinery/pkg/util/cache"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/karmada-go/karmada/internal/scheme"
)

// liveLookupTTL is how long a live list made because the cache held
// nothing in a namespace stands in for the cache there.
const liveLookupTTL = 30 * time.Second

// cachedReader reads one kind from an informer once it has synced, and
// from the API server before: the webhook starts before the CRDs exist
// (the setup that installs them registers it), so the informer may only
// sync later, and admission must not wait for it.
//
// A namespaced list the cache answers with nothing is asked of the API
// server too, and that answer is kept for liveLookupTTL (as
// kube-apiserver's ResourceQuota admission does): an informer that fell
// behind (its watch broken by an API server restart waits up to its
// back-off before listing again) must not admit a placement past a quota
// created meanwhile, and a namespace without quotas costs one live list
// per TTL, not one per placement.
type cachedReader struct {
	cache  cache.Cache
	live   client.Reader
	obj    client.Object
	synced atomic.Bool
	// lookups maps a namespace to the list the API server returned for it.
	lookups *utilcache.LRUExpireCache
}

func newCachedReader(cfg *rest.Config, live client.Reader, obj client.Object) (*cachedReader, error) {
	c, err := cache.New(cfg, cache.Options{Scheme: scheme.Scheme})
	if err != nil {
		return nil, err
	}
	return &cachedReader{cache: c, live: live, obj: obj, lookups: utilcache.NewLRUExpireCache(4096)}, nil
}

// reader is nil for a nil cachedReader (no enforcement).
func (r *cachedReader) reader() client.Reader {
	if r == nil {
		return nil
	}
	return r
}

// start runs the cache and notes when the kind's informer has synced.
func (r *cachedReader) start(ctx context.Context) error {
	go func() {
		t := time.NewTicker(time.Second)
		defer t.Stop()
		for {
			inf, err := r.cache.GetInformer(ctx, r.obj, cache.BlockUntilSynced(false))
			if err == nil && inf.HasSynced() {
				r.synced.Store(true)
				return
			}
			select {
			case <-ctx.Done():
				return
			case <-t.C:
			}
		}
	}()
	return r.cache.Start(ctx)
}

// Get reads from the cache once synced.
func (r *cachedReader) Get(ctx context.Context, key client.ObjectKey, obj client.Object, opts ...client.GetOption) error {
	if r.synced.Load() {
		return r.cache.Get(ctx, key, obj, opts...)
	}
	return r.live.Get(ctx, key, obj, opts...)
}

// List reads from the cache once synced; a namespaced list it answers
// with nothing is confirmed with the API server (see cachedReader).
func (r *cachedReader) List(ctx context.Context, list client.ObjectList, opts ...client.ListOption) error {
	if !r.synced.Load() {
		return r.live.List(ctx, list, opts...)
	}
	if err := r.cache.List(ctx, list, opts...); err != nil {
		return err
	}
	lo := (&client.ListOptions{}).ApplyOptions(opts)
	if lo.Namespace == "" || meta.LenList(list) > 0 {
		return nil
	}
	key := lo.Namespace
	if lo.LabelSelector != nil || lo.FieldSelector != nil {
		// Only plain namespace lists are kept; others go live each time.
		return r.live.List(ctx, list, opts...)
	}
	if kept, ok := r.lookups.Get(key); ok {
		items, err := meta.ExtractList(kept.(client.ObjectList).DeepCopyObject())
		if err != nil {
			return err
		}
		return meta.SetList(list, items)
	}
	if err := r.live.List(ctx, list, opts...); err != nil {
		return err
	}
	r.lookups.Add(key, list.DeepCopyObject(), liveLookupTTL)
	return nil
}
