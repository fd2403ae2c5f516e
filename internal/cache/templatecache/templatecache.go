// Package templatecache caches resource templates of every kind in use for
// the controllers that read them whole (the binding controller builds Works
// from them, the binding status controller writes their status), holding
// each as compact JSON (compactobj) rather than as an unstructured object,
// a quarter of the memory.
package templatecache

import (
	"context"
	"fmt"
	"sync"
	"time"

	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/tools/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/karmada-go/karmada/internal/cache/compactobj"
)

// Reader reads one object by key; client.Client is one (reading through
// the manager's cache), Store another.
type Reader interface {
	Get(ctx context.Context, key client.ObjectKey, obj client.Object, opts ...client.GetOption) error
}

// DefaultSyncTimeout bounds how long a read waits for the first list of a
// kind not read before.
const DefaultSyncTimeout = 2 * time.Minute

// Store is a Reader of templates backed by one informer per kind read, each
// started on the first read of its kind and run until the context given to
// Start ends. Add it to the manager (it is a manager.Runnable).
type Store struct {
	dynamic dynamic.Interface
	mapper  meta.RESTMapper
	// SyncTimeout bounds the wait for a kind's first list
	// (DefaultSyncTimeout when zero).
	SyncTimeout time.Duration

	mu        sync.Mutex
	ctx       context.Context
	started   chan struct{}
	informers map[schema.GroupVersionKind]cache.SharedIndexInformer
}

// New returns a Store reading through dyn and mapping kinds with mapper.
func New(dyn dynamic.Interface, mapper meta.RESTMapper) *Store {
	return &Store{dynamic: dyn, mapper: mapper, started: make(chan struct{}), informers: map[schema.GroupVersionKind]cache.SharedIndexInformer{}}
}

// Start lets reads start informers, which run until ctx ends; it returns
// when ctx ends.
func (s *Store) Start(ctx context.Context) error {
	s.mu.Lock()
	s.ctx = ctx
	close(s.started)
	s.mu.Unlock()
	<-ctx.Done()
	return nil
}

// Get fills obj, an *unstructured.Unstructured whose apiVersion and kind are
// set, with the cached template of that kind under key; a NotFound error when
// there is none.
func (s *Store) Get(ctx context.Context, key client.ObjectKey, obj client.Object, _ ...client.GetOption) error {
	u, ok := obj.(*unstructured.Unstructured)
	if !ok {
		return fmt.Errorf("templatecache: %T is not an unstructured object", obj)
	}
	inf, gr, err := s.informer(ctx, u.GroupVersionKind())
	if err != nil {
		return err
	}
	return read(inf, gr, key, u)
}

// read fills u with the object under key in the synced informer inf of gr.
func read(inf cache.SharedIndexInformer, gr schema.GroupResource, key client.ObjectKey, u *unstructured.Unstructured) error {
	got, err := compactobj.Lister{Indexer: inf.GetIndexer(), Resource: gr, Namespace: key.Namespace}.Get(key.Name)
	if err != nil {
		return err
	}
	u.Object = got.(*unstructured.Unstructured).Object
	return nil
}

// GetIfSynced is Get for a caller that has another way to read the
// template and should not wait for the cache: when the Store has not started
// or the kind's first list is not complete (the kind's informer is started
// if need be), it returns false and leaves obj alone.
func (s *Store) GetIfSynced(_ context.Context, key client.ObjectKey, obj client.Object) (bool, error) {
	u, ok := obj.(*unstructured.Unstructured)
	if !ok {
		return false, fmt.Errorf("templatecache: %T is not an unstructured object", obj)
	}
	select {
	case <-s.started:
	default:
		return false, nil
	}
	mapping, err := s.mapper.RESTMapping(u.GroupVersionKind().GroupKind(), u.GroupVersionKind().Version)
	if err != nil {
		return false, err
	}
	inf := s.start(u.GroupVersionKind(), mapping)
	if !inf.HasSynced() {
		return false, nil
	}
	return true, read(inf, mapping.Resource.GroupResource(), key, u)
}

// informer returns the synced informer of gvk, starting it on first use.
func (s *Store) informer(ctx context.Context, gvk schema.GroupVersionKind) (cache.SharedIndexInformer, schema.GroupResource, error) {
	mapping, err := s.mapper.RESTMapping(gvk.GroupKind(), gvk.Version)
	if err != nil {
		return nil, schema.GroupResource{}, err
	}
	gr := mapping.Resource.GroupResource()
	select {
	case <-s.started:
	case <-ctx.Done():
		return nil, gr, ctx.Err()
	}
	inf := s.start(gvk, mapping)
	if inf.HasSynced() {
		return inf, gr, nil
	}
	timeout := s.SyncTimeout
	if timeout == 0 {
		timeout = DefaultSyncTimeout
	}
	wctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	if !cache.WaitForCacheSync(wctx.Done(), inf.HasSynced) {
		return nil, gr, fmt.Errorf("templatecache: %s not listed within %s (can the controller manager list and watch it?)", gr, timeout)
	}
	return inf, gr, nil
}

// start returns the informer of gvk, started on first use (after Start).
func (s *Store) start(gvk schema.GroupVersionKind, mapping *meta.RESTMapping) cache.SharedIndexInformer {
	s.mu.Lock()
	defer s.mu.Unlock()
	inf, ok := s.informers[gvk]
	if !ok {
		inf = compactobj.NewInformer(s.dynamic.Resource(mapping.Resource), nil, compactobj.Metadata{}, cache.Indexers{})
		s.informers[gvk] = inf
		go inf.Run(s.ctx.Done())
	}
	return inf
}
