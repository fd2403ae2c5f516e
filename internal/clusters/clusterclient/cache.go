package clusterclient

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"net/http"
	"sync"
	"sync/atomic"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	utilnet "k8s.io/apimachinery/pkg/util/net"
	"k8s.io/client-go/discovery"
	"k8s.io/client-go/discovery/cached/memory"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/kubernetes"
	corelisters "k8s.io/client-go/listers/core/v1"
	"k8s.io/client-go/metadata"
	"k8s.io/client-go/rest"

	"github.com/karmada-go/karmada/internal/certexpiry"
	"github.com/karmada-go/karmada/internal/leaderfence"
	"k8s.io/client-go/restmapper"
	"k8s.io/client-go/tools/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"

	clusterv1alpha1 "github.com/karmada-go/karmada/api/cluster/v1alpha1"
	workv1alpha1 "github.com/karmada-go/karmada/api/work/v1alpha1"
	"github.com/karmada-go/karmada/internal/cache/compactobj"
	"github.com/karmada-go/karmada/internal/cache/intern"
	"github.com/karmada-go/karmada/internal/cache/pagedlist"
	"github.com/karmada-go/karmada/internal/interpreter"
	"github.com/karmada-go/karmada/internal/names"
)

// Cache keeps one set of clients per member cluster, rebuilt when the
// cluster's endpoint or credentials change, so that controllers share
// connections and informers instead of each dialling the member.
type Cache struct {
	karmada client.Reader
	opts    Options

	mu      sync.Mutex
	members map[string]*Member
}

// NewCache returns a cache that reads Clusters' credentials through karmada.
func NewCache(karmada client.Reader, opts Options) *Cache {
	return &Cache{karmada: karmada, opts: opts, members: map[string]*Member{}}
}

// Member holds the clients of one member cluster.
type Member struct {
	Name    string
	Config  *rest.Config
	Kube    kubernetes.Interface
	Dynamic dynamic.Interface
	// Metadata lists and reads objects' metadata only.
	Metadata metadata.Interface
	// Mapper maps kinds to resources with the member's discovery, cached.
	Mapper meta.ResettableRESTMapper

	key string
	// token is the member token, sent with every request: a renewed one
	// replaces it without rebuilding clients and informers.
	token atomic.Pointer[string]
	// checked is when the credentials were last read; clusterGeneration
	// the Cluster's generation then (its spec holds the connection details;
	// status updates, every few seconds, leave it alone).
	checked           time.Time
	clusterGeneration int64
	// revalidating is set while one caller reads the credentials again.
	revalidating atomic.Bool

	stop chan struct{}
	// The node and pod informers of the cluster's summaries: started on
	// first use, restarted by RestartNodesAndPods.
	summaryMu   sync.Mutex
	summaryStop chan struct{}
	nodes       corelisters.NodeLister
	pods        cache.Store
	synced      []cache.InformerSynced

	managedMu sync.Mutex
	managed   map[schema.GroupVersionResource]*managedInformer

	refreshMu   sync.Mutex
	refreshedAt time.Time
}

// Get returns the clients of a member, building them on first use or when
// the Cluster's connection details changed.
func (c *Cache) Get(ctx context.Context, cluster *clusterv1alpha1.Cluster) (*Member, error) {
	// Every Work applied asks for its member's clients: reading the
	// credentials Secret each time would add an API call per Work. They are
	// read again at most every revalidateAfter (or when the Cluster changes),
	// which bounds how long a rotated token takes to be picked up.
	c.mu.Lock()
	if m, ok := c.members[cluster.Name]; ok && m.clusterGeneration == cluster.Generation {
		if time.Since(m.checked) < revalidateAfter {
			c.mu.Unlock()
			return m, nil
		}
		// One caller reads the Secret again; the others, many workers at
		// once, keep using the clients they have meanwhile.
		if !m.revalidating.CompareAndSwap(false, true) {
			c.mu.Unlock()
			return m, nil
		}
		defer m.revalidating.Store(false)
	}
	c.mu.Unlock()
	var cfg *rest.Config
	static, isStatic := c.opts.Static[cluster.Name]
	if isStatic {
		cfg = rest.CopyConfig(static)
	} else {
		var err error
		if cfg, err = RESTConfig(ctx, c.karmada, cluster, c.opts); err != nil {
			return nil, err
		}
	}
	key := configKey(cfg, cluster.Spec.ProxyURL)
	c.mu.Lock()
	if m, ok := c.members[cluster.Name]; ok && m.key == key {
		// A renewed token is taken as it is: the connection and its
		// informers stay.
		m.token.Store(&cfg.BearerToken)
		m.checked, m.clusterGeneration = time.Now(), cluster.Generation
		c.mu.Unlock()
		return m, nil
	}
	c.mu.Unlock()
	// A new connection: first make sure it reaches the member the Cluster
	// names (outside the lock: it is a request to the member).
	if err := checkIdentity(ctx, cfg, cluster); err != nil {
		return nil, err
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if m, ok := c.members[cluster.Name]; ok {
		if m.key == key {
			m.token.Store(&cfg.BearerToken)
			m.checked, m.clusterGeneration = time.Now(), cluster.Generation
			return m, nil
		}
		m.close()
	}
	m := &Member{Name: cluster.Name, key: key, stop: make(chan struct{}), checked: time.Now(), clusterGeneration: cluster.Generation}
	m.token.Store(&cfg.BearerToken)
	if !isStatic {
		cfg = rest.CopyConfig(cfg)
		cfg.BearerToken = ""
		cfg.WrapTransport = m.authenticate
	}
	// A leader-elected process writes to members only while it holds its
	// lease (leaderfence; open in a process without an election).
	cfg = rest.CopyConfig(cfg)
	cfg.Wrap(leaderfence.Default.Wrap)
	cfg.Wrap(certexpiry.Wrap(cluster.Name))
	kc, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		return nil, fmt.Errorf("clients for cluster %s: %w", cluster.Name, err)
	}
	dc, err := dynamic.NewForConfig(cfg)
	if err != nil {
		return nil, fmt.Errorf("clients for cluster %s: %w", cluster.Name, err)
	}
	disc, err := discovery.NewDiscoveryClientForConfig(cfg)
	if err != nil {
		return nil, fmt.Errorf("clients for cluster %s: %w", cluster.Name, err)
	}
	mc, err := metadata.NewForConfig(cfg)
	if err != nil {
		return nil, fmt.Errorf("clients for cluster %s: %w", cluster.Name, err)
	}
	m.Config, m.Kube, m.Dynamic, m.Metadata = cfg, kc, dc, mc
	m.Mapper = newMappingCache(restmapper.NewDeferredDiscoveryRESTMapper(memory.NewMemCacheClient(disc)))
	c.members[cluster.Name] = m
	return m, nil
}

// ErrIdentityChanged says a Cluster's endpoint and credentials reach a
// cluster other than the one it joined (another kube-system namespace UID
// than spec.id): nothing is sent to it.
var ErrIdentityChanged = errors.New("the cluster's identity changed")

// checkIdentity reads the kube-system namespace through cfg and fails
// unless its UID is the Cluster's spec.id (a Cluster without one, made
// before ids existed, is not checked).
func checkIdentity(ctx context.Context, cfg *rest.Config, cluster *clusterv1alpha1.Cluster) error {
	if cluster.Spec.ID == "" {
		return nil
	}
	probe := rest.CopyConfig(cfg)
	probe.Timeout = ProbeTimeout
	kc, err := kubernetes.NewForConfig(probe)
	if err != nil {
		return fmt.Errorf("clients for cluster %s: %w", cluster.Name, err)
	}
	ns, err := kc.CoreV1().Namespaces().Get(ctx, metav1.NamespaceSystem, metav1.GetOptions{})
	if err != nil {
		return fmt.Errorf("reading the kube-system namespace of cluster %s to check its identity: %w", cluster.Name, err)
	}
	if string(ns.UID) != cluster.Spec.ID {
		return fmt.Errorf("%w: %s at %s has kube-system UID %s, but spec.id is %s; nothing is sent to it (unjoin and join the cluster again if it was rebuilt)",
			ErrIdentityChanged, cluster.Name, cluster.Spec.APIEndpoint, ns.UID, cluster.Spec.ID)
	}
	return nil
}

// Forget stops and drops the clients of a member.
func (c *Cache) Forget(name string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if m, ok := c.members[name]; ok {
		m.close()
		delete(c.members, name)
	}
}

// Close stops and drops the clients and informers of every member.
func (c *Cache) Close() {
	c.mu.Lock()
	defer c.mu.Unlock()
	for name, m := range c.members {
		m.close()
		delete(c.members, name)
	}
}

func (m *Member) close() {
	select {
	case <-m.stop:
	default:
		close(m.stop)
	}
}

// NodesAndPods returns a lister of the member's nodes and its pods' usage,
// starting their informers on first use. synced is false until both caches
// are filled.
func (m *Member) NodesAndPods() (nodes corelisters.NodeLister, pods PodUsageLister, synced bool) {
	m.summaryMu.Lock()
	defer m.summaryMu.Unlock()
	if m.summaryStop == nil {
		m.summaryStop = make(chan struct{})
		stop := mergeStop(m.stop, m.summaryStop)
		// Listed a page at a time and trimmed page by page: a member may run
		// tens of thousands of pods, which decoded whole at once would
		// cost hundreds of megabytes on every start.
		rc := m.Kube.CoreV1().RESTClient()
		nodes := pagedlist.NewInformer(cache.NewListWatchFromClient(rc, "nodes", metav1.NamespaceAll, fields.Everything()),
			&corev1.Node{}, trimForSummary, 0, cache.Indexers{})
		pods := pagedlist.NewInformer(cache.NewListWatchFromClient(rc, "pods", metav1.NamespaceAll, fields.Everything()),
			&corev1.Pod{}, trimForSummary, 0, cache.Indexers{})
		m.nodes = corelisters.NewNodeLister(nodes.GetIndexer())
		m.pods = pods.GetStore()
		m.synced = []cache.InformerSynced{nodes.HasSynced, pods.HasSynced}
		go nodes.Run(stop)
		go pods.Run(stop)
	}
	for _, s := range m.synced {
		if !s() {
			return m.nodes, PodUsageLister{m.pods}, false
		}
	}
	return m.nodes, PodUsageLister{m.pods}, true
}

// RestartNodesAndPods stops the node and pod informers; the next
// NodesAndPods lists the member afresh. After an outage a watch that failed
// is retried with a back-off that may reach a minute, during which the
// summaries would describe the member as it was before: listing again as
// soon as it answers brings them up to date in one round trip.
func (m *Member) RestartNodesAndPods() {
	m.summaryMu.Lock()
	defer m.summaryMu.Unlock()
	if m.summaryStop != nil {
		close(m.summaryStop)
		m.summaryStop = nil
	}
}

// PodUsage is what a cluster's resource summary needs of one pod, and all
// that the member's pod informer keeps of it: a corev1.Pod, even emptied,
// takes over 1 KiB, and a member may run many thousands.
type PodUsage struct {
	metav1.TypeMeta
	// ObjectMeta holds name, namespace, uid and resourceVersion.
	metav1.ObjectMeta
	NodeName string
	Phase    corev1.PodPhase
	// Requests is what the pod asks of its node (interpreter.PodRequests).
	Requests corev1.ResourceList
}

// DeepCopyObject implements runtime.Object.
func (p *PodUsage) DeepCopyObject() runtime.Object {
	return &PodUsage{TypeMeta: p.TypeMeta, ObjectMeta: *p.ObjectMeta.DeepCopy(), NodeName: p.NodeName, Phase: p.Phase, Requests: p.Requests.DeepCopy()}
}

// UsageOf returns what a summary needs of pod.
func UsageOf(pod *corev1.Pod) *PodUsage {
	return &PodUsage{
		ObjectMeta: metav1.ObjectMeta{Name: pod.Name, Namespace: intern.String(pod.Namespace), UID: pod.UID, ResourceVersion: pod.ResourceVersion},
		NodeName:   intern.String(pod.Spec.NodeName),
		Phase:      corev1.PodPhase(intern.String(string(pod.Status.Phase))),
		Requests:   interpreter.PodRequests(&pod.Spec),
	}
}

// PodUsageLister lists the pods' usage from a member's pod informer.
type PodUsageLister struct{ store cache.Store }

// List returns every pod's usage; the caller must not change them.
func (l PodUsageLister) List() []*PodUsage {
	if l.store == nil {
		return nil
	}
	items := l.store.List()
	out := make([]*PodUsage, 0, len(items))
	for _, it := range items {
		if p, ok := it.(*PodUsage); ok {
			out = append(out, p)
		}
	}
	return out
}

// trimForSummary keeps only what resource summaries need of nodes and pods,
// so that caching every pod of a large member stays cheap.
func trimForSummary(obj any) (any, error) {
	switch o := obj.(type) {
	case *corev1.Pod:
		return UsageOf(o), nil
	case *corev1.Node:
		o.ManagedFields = nil
		o.Status.Images = nil
		return o, nil
	}
	return obj, nil
}

// authenticate sends the member's current token with each request.
func (m *Member) authenticate(rt http.RoundTripper) http.RoundTripper {
	return bearer{m: m, rt: rt}
}

type bearer struct {
	m  *Member
	rt http.RoundTripper
}

func (b bearer) RoundTrip(r *http.Request) (*http.Response, error) {
	if t := b.m.token.Load(); r.Header.Get("Authorization") != "" || t == nil || *t == "" {
		return b.rt.RoundTrip(r)
	}
	r = utilnet.CloneRequest(r)
	r.Header.Set("Authorization", "Bearer "+*b.m.token.Load())
	return b.rt.RoundTrip(r)
}

func (b bearer) WrappedRoundTripper() http.RoundTripper { return b.rt }

// configKey identifies a connection: endpoint, TLS and proxy, not the token
// (renewed tokens keep the connection).
func configKey(cfg *rest.Config, proxyURL string) string {
	h := sha256.New()
	fmt.Fprintf(h, "%s\x00%t\x00%s\x00", cfg.Host, cfg.Insecure, proxyURL)
	h.Write(cfg.CAData)
	return hex.EncodeToString(h.Sum(nil))
}

// revalidateAfter is how long clients are reused before the credentials are
// read again.
const revalidateAfter = 10 * time.Second

// ProbeTimeout bounds one health probe of a member.
const ProbeTimeout = 5 * time.Second

// managedInformer watches the objects of one type that Karmada manages in a
// member, for as long as some Work has such an object.
type managedInformer struct {
	informer cache.SharedIndexInformer
	lister   cache.GenericLister
	stop     chan struct{}
	users    map[types.NamespacedName]bool
	// onChange is the first non-nil function a caller gave.
	onChange atomic.Pointer[func(work types.NamespacedName)]
}

// Managed returns a lister of the objects of one resource type that Karmada
// manages in the member (label karmada.io/managed=true), starting an informer
// for the type on first use, and records that work uses it. onChange is
// called with the Work that an added, changed or deleted object came from;
// it is registered once per informer, with the first non-nil function a
// caller gives.
// The informer runs until no Work uses the type any more (see Retain).
func (m *Member) Managed(gvr schema.GroupVersionResource, work types.NamespacedName, onChange func(work types.NamespacedName)) (cache.GenericLister, bool) {
	m.managedMu.Lock()
	defer m.managedMu.Unlock()
	if m.managed == nil {
		m.managed = map[schema.GroupVersionResource]*managedInformer{}
	}
	mi := m.managed[gvr]
	if mi == nil {
		// The copies are kept as compact JSON without managedFields (see
		// compactobj), listed a page at a time: a controller manager holds
		// one per copy. Of their annotations, only the Work's, for the
		// handler below.
		informer := compactobj.NewInformer(m.Dynamic.Resource(gvr), func(o *metav1.ListOptions) {
			o.LabelSelector = workv1alpha1.ManagedLabel + "=true"
		}, compactobj.Metadata{Labels: true, Annotations: []string{workv1alpha1.WorkNamespaceAnnotation, workv1alpha1.WorkNameAnnotation}},
			cache.Indexers{cache.NamespaceIndex: cache.MetaNamespaceIndexFunc})
		mi = &managedInformer{informer: informer, stop: make(chan struct{}), users: map[types.NamespacedName]bool{},
			lister: compactobj.Lister{Indexer: informer.GetIndexer(), Resource: gvr.GroupResource()}}
		notify := func(o any) {
			if t, ok := o.(cache.DeletedFinalStateUnknown); ok {
				o = t.Obj
			}
			s, ok := o.(*compactobj.Object)
			if !ok {
				return
			}
			if fn := mi.onChange.Load(); fn != nil {
				if work, ok := names.WorkOf(s.Annotations); ok {
					(*fn)(work)
				}
			}
		}
		_, _ = mi.informer.AddEventHandler(cache.ResourceEventHandlerFuncs{
			AddFunc:    notify,
			UpdateFunc: func(_, o any) { notify(o) },
			DeleteFunc: notify,
		})
		m.managed[gvr] = mi
		go mi.informer.Run(mergeStop(mi.stop, m.stop))
	}
	if onChange != nil && mi.onChange.Load() == nil {
		mi.onChange.Store(&onChange)
	}
	mi.users[work] = true
	return mi.lister, mi.informer.HasSynced()
}

// WaitManaged waits, until ctx ends, for the informer of a type that Managed
// started to have synced; false when it has not.
func (m *Member) WaitManaged(ctx context.Context, gvr schema.GroupVersionResource) bool {
	m.managedMu.Lock()
	mi := m.managed[gvr]
	m.managedMu.Unlock()
	if mi == nil {
		return false
	}
	return cache.WaitForCacheSync(ctx.Done(), mi.informer.HasSynced)
}

// Retain records that work now uses only the types in keep, and stops the
// informers of types no Work uses any more. Retain(work, nil) releases a
// Work that is gone.
func (m *Member) Retain(work types.NamespacedName, keep ...schema.GroupVersionResource) {
	m.managedMu.Lock()
	defer m.managedMu.Unlock()
	kept := map[schema.GroupVersionResource]bool{}
	for _, g := range keep {
		kept[g] = true
	}
	for gvr, mi := range m.managed {
		if kept[gvr] || !mi.users[work] {
			continue
		}
		delete(mi.users, work)
		if len(mi.users) == 0 {
			close(mi.stop)
			delete(m.managed, gvr)
		}
	}
}

// ManagedTypes lists the types whose managed objects are watched now.
func (m *Member) ManagedTypes() []schema.GroupVersionResource {
	m.managedMu.Lock()
	defer m.managedMu.Unlock()
	out := make([]schema.GroupVersionResource, 0, len(m.managed))
	for gvr := range m.managed {
		out = append(out, gvr)
	}
	return out
}

// mergeStop returns a channel closed when either a or b is.
func mergeStop(a, b <-chan struct{}) <-chan struct{} {
	out := make(chan struct{})
	go func() {
		defer close(out)
		select {
		case <-a:
		case <-b:
		}
	}()
	return out
}

// Lookup returns the clients of a member already built, if any.
func (c *Cache) Lookup(name string) (*Member, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	m, ok := c.members[name]
	return m, ok
}

// minDiscoveryRefresh spaces the discovery refreshes of one member: many
// Works waiting on a kind the member does not serve share one.
const minDiscoveryRefresh = time.Second

// RefreshDiscovery forgets the member's cached discovery, so that the next
// mapping reads it again (the member may have gained an API), at most once
// a second however many callers ask; it reports whether it did.
func (m *Member) RefreshDiscovery() bool {
	m.refreshMu.Lock()
	defer m.refreshMu.Unlock()
	if time.Since(m.refreshedAt) < minDiscoveryRefresh {
		return false
	}
	m.refreshedAt = time.Now()
	m.Mapper.Reset()
	return true
}
