package cache

import (
	"context"
	"fmt"
	"math"
	"sort"
	"sync"
	"time"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/tools/cache"
	"k8s.io/klog/v2"

	"github.com/karmada-go/karmada/internal/cache/compactobj"
)

// Want is a store to keep: a cluster's objects of a resource, in one
// namespace or ("") all.
type Want struct {
	Cluster   string
	Resource  schema.GroupVersionResource
	Kind      string
	Namespace string
}

func (w Want) String() string {
	r := w.Resource.Resource
	if w.Resource.Group != "" {
		r += "." + w.Resource.Group
	}
	if w.Namespace != "" {
		return fmt.Sprintf("%s %s in %s", w.Cluster, r, w.Namespace)
	}
	return w.Cluster + " " + r
}

// Source lists and watches a member's resource.
type Source func(w Want) (dynamic.ResourceInterface, error)

// Manager runs a reflector per wanted store.
type Manager struct {
	mu      sync.RWMutex
	running map[Want]*running
}

type running struct {
	store  *Store
	cancel context.CancelFunc

	mu  sync.Mutex
	err error
}

func (r *running) setErr(err error) {
	r.mu.Lock()
	r.err = err
	r.mu.Unlock()
}

// NewManager returns a manager running nothing.
func NewManager() *Manager { return &Manager{running: map[Want]*running{}} }

// Ensure runs the stores of wants (a namespace's store is not run when its
// cluster's whole resource is) and stops the others. source reaches the
// members; a store it cannot reach is reported in the error and not run.
func (m *Manager) Ensure(ctx context.Context, wants []Want, source Source) map[Want]error {
	all := map[Want]bool{}
	for _, w := range wants {
		all[w] = true
	}
	keep := map[Want]bool{}
	for w := range all {
		if w.Namespace != "" && all[Want{Cluster: w.Cluster, Resource: w.Resource, Kind: w.Kind}] {
			continue
		}
		keep[w] = true
	}
	errs := map[Want]error{}
	m.mu.Lock()
	defer m.mu.Unlock()
	for w, r := range m.running {
		if !keep[w] {
			r.cancel()
			delete(m.running, w)
			klog.InfoS("Stopped caching", "what", w.String())
		}
	}
	for w := range keep {
		if _, ok := m.running[w]; ok {
			continue
		}
		ri, err := source(w)
		if err != nil {
			errs[w] = err
			continue
		}
		r := &running{store: NewStore(w.Cluster, w.Resource)}
		r.store.Kind = w.Kind
		rctx, cancel := context.WithCancel(ctx)
		r.cancel = cancel
		// A page at a time, each made compact before the next is read.
		lw := compactobj.ListWatch(ri, nil, r.store.Transform, 0)
		reflector := cache.NewReflectorWithOptions(lw, &unstructured.Unstructured{}, r.store, cache.ReflectorOptions{Name: "karmada-search " + w.String()})
		m.running[w] = r
		go func() {
			// ListAndWatch returns when the list or the watch fails; the
			// error is the store's status until a list succeeds.
			backoff := wait.Backoff{Duration: time.Second, Factor: 2, Steps: math.MaxInt32, Cap: 30 * time.Second}
			for rctx.Err() == nil {
				err := reflector.ListAndWatchWithContext(rctx)
				if rctx.Err() != nil {
					return
				}
				if err != nil {
					r.setErr(err)
					klog.V(2).InfoS("Caching failed, retrying", "what", w.String(), "err", err)
				}
				select {
				case <-rctx.Done():
				case <-time.After(backoff.Step()):
				}
			}
		}()
		klog.InfoS("Caching", "what", w.String())
	}
	return errs
}

// Status says, of a store, whether its first list arrived and its last
// error.
func (m *Manager) Status(w Want) (synced bool, err error, ok bool) {
	m.mu.RLock()
	r, found := m.running[w]
	if !found && w.Namespace != "" {
		r, found = m.running[Want{Cluster: w.Cluster, Resource: w.Resource, Kind: w.Kind}]
	}
	m.mu.RUnlock()
	if !found {
		return false, nil, false
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	synced = r.store.Synced()
	if synced {
		return true, nil, true
	}
	return false, r.err, true
}

// Stores returns the stores of a resource, by cluster name (then
// namespace).
func (m *Manager) Stores(gr schema.GroupResource) []*Store {
	m.mu.RLock()
	var out []*Store
	for w, r := range m.running {
		if w.Resource.GroupResource() == gr {
			out = append(out, r.store)
		}
	}
	m.mu.RUnlock()
	sort.Slice(out, func(i, j int) bool { return out[i].Cluster < out[j].Cluster })
	return out
}

// Close stops every store.
func (m *Manager) Close() {
	m.mu.Lock()
	defer m.mu.Unlock()
	for w, r := range m.running {
		r.cancel()
		delete(m.running, w)
	}
}
