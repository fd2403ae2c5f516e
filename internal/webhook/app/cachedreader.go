package app

import (
	"context"
	"sync/atomic"
	"time"

	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/karmada-go/karmada/internal/scheme"
)

// cachedReader reads one kind from an informer once it has synced, and
// from the API server before: the webhook starts before the CRDs exist
// (the setup that installs them registers it), so the informer may only
// sync later, and admission must not wait for it.
type cachedReader struct {
	cache  cache.Cache
	live   client.Reader
	obj    client.Object
	synced atomic.Bool
}

func newCachedReader(cfg *rest.Config, live client.Reader, obj client.Object) (*cachedReader, error) {
	c, err := cache.New(cfg, cache.Options{Scheme: scheme.Scheme})
	if err != nil {
		return nil, err
	}
	return &cachedReader{cache: c, live: live, obj: obj}, nil
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

// List reads from the cache once synced.
func (r *cachedReader) List(ctx context.Context, list client.ObjectList, opts ...client.ListOption) error {
	if r.synced.Load() {
		return r.cache.List(ctx, list, opts...)
	}
	return r.live.List(ctx, list, opts...)
}
