// Package export is the service export controller: for each member cluster
// it serves (the control plane its push-mode members, an agent its own
// pull-mode cluster), it watches the member's ServiceExports and, for the
// exported Services, their EndpointSlices, and keeps one Work per slice in
// the cluster's execution namespace (karmada-es-<cluster>) holding the
// slice as the member shows it. The Works are collected, not dispatched
// (spec.suspendDispatching), labelled as Karmada labels them
// (endpointslice.karmada.io/namespace, /name, /managed-by=ServiceExport);
// the endpointslice controller turns them into the control plane's
// imported EndpointSlices.
//
// The Services a MultiClusterService claims (labelled
// multiclusterservice.karmada.io/permanent-id, which their copies carry) are
// collected the same way, labelled multiclusterservice.karmada.io/namespace,
// /name and managed-by MultiClusterService; the multiclusterservice
// controller dispatches those of the providers.
//
// A member's informers start when the Cluster is Ready: on its claimed
// Services, and on its ServiceExports when it serves the kind; its
// EndpointSlice informer only once the member has an export or a claimed
// Service, and then lists only slices of a Service (kubernetes.io/
// service-name set).
package export

import (
	"context"
	"fmt"
	"sync"
	"time"

	discoveryv1 "k8s.io/api/discovery/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/tools/cache"
	"k8s.io/client-go/util/workqueue"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/builder"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller"
	"sigs.k8s.io/controller-runtime/pkg/event"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	"sigs.k8s.io/controller-runtime/pkg/manager"
	"sigs.k8s.io/controller-runtime/pkg/predicate"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"
	"sigs.k8s.io/controller-runtime/pkg/source"

	clusterv1alpha1 "github.com/karmada-go/karmada/api/cluster/v1alpha1"
	mcsv1alpha1 "github.com/karmada-go/karmada/api/multicluster/v1alpha1"
	networkingv1alpha1 "github.com/karmada-go/karmada/api/networking/v1alpha1"
	workv1alpha1 "github.com/karmada-go/karmada/api/work/v1alpha1"
	"github.com/karmada-go/karmada/internal/clusters/clusterclient"
	"github.com/karmada-go/karmada/internal/clusters/clusterready"
	"github.com/karmada-go/karmada/internal/queues"
)

// ControllerName is the controller's name in --controllers (Karmada's).
const ControllerName = "serviceExport"

// CollectControllerName is Karmada's name for collecting the providers'
// EndpointSlices of MultiClusterServices, which this controller does too:
// in the controller manager, --controllers turns each half on or off
// (NoExports, NoProvided).
const CollectControllerName = "endpointsliceCollect"

// serviceExports is the member resource an export is.
var serviceExports = mcsv1alpha1.SchemeGroupVersion.WithResource("serviceexports")

// Key names one exported Service of one member.
type Key struct {
	Cluster, Namespace, Name string
}

// Reconciler collects the exported Services' EndpointSlices of the members
// it serves.
type Reconciler struct {
	// Client reads Clusters and writes the Works (the control plane).
	Client  client.Client
	Members *clusterclient.Cache
	Workers int
	// NoExports leaves ServiceExports alone (serviceExport disabled, only
	// endpointsliceCollect on); NoProvided leaves the Services
	// MultiClusterServices claim alone (endpointsliceCollect disabled).
	NoExports, NoProvided bool

	// side is where it runs (ForControlPlane, ForAgent).
	side clusterclient.Side

	mu      sync.Mutex
	members map[string]*memberWatch
	queue   workqueue.TypedRateLimitingInterface[Key]
}

// ForControlPlane returns r as karmada-controller-manager runs it: for the
// push-mode members.
func ForControlPlane(r *Reconciler) *Reconciler {
	r.side = clusterclient.ControlPlane
	return r
}

// ForAgent returns r as a karmada-agent runs it: for its own cluster.
func ForAgent(r *Reconciler) *Reconciler {
	r.side = clusterclient.Agent
	return r
}

// memberWatch is the informers of one member.
type memberWatch struct {
	member  *clusterclient.Member
	stop    chan struct{}
	exports cache.SharedIndexInformer
	// services are the member's Services a MultiClusterService claims.
	services cache.SharedIndexInformer
	// slices starts with the member's first export, and with it
	// allServices (the Services an export's Valid condition and record
	// are made of).
	slicesOnce  sync.Once
	slices      cache.SharedIndexInformer
	allServices cache.SharedIndexInformer
}

// SetupWithManager registers two controllers: one over Clusters that
// starts and stops the members' informers, one over exported Services
// (Key) fed by those informers.
func (r *Reconciler) SetupWithManager(mgr ctrl.Manager) error {
	r.members = map[string]*memberWatch{}
	workers := r.Workers
	if workers <= 0 {
		workers = 2
	}
	opts := queues.TypedOptions[Key](workers)
	opts.Reconciler = reconcile.TypedFunc[Key](r.Reconcile)
	c, err := controller.NewTyped[Key](ControllerName, mgr, opts)
	if err != nil {
		return err
	}
	if err := c.Watch(source.TypedFunc[Key](func(_ context.Context, q workqueue.TypedRateLimitingInterface[Key]) error {
		r.mu.Lock()
		r.queue = q
		r.mu.Unlock()
		return nil
	})); err != nil {
		return err
	}
	// The Works it wrote: one deleted or changed by someone else is put
	// back.
	if err := c.Watch(source.TypedKind[client.Object, Key](mgr.GetCache(), client.Object(&workv1alpha1.Work{}), handler.TypedEnqueueRequestsFromMapFunc(workKey),
		predicate.NewPredicateFuncs(collected))); err != nil {
		return err
	}
	// The members' informers stop with the manager (their watches would
	// otherwise hold the members' API servers open past a shutdown).
	if err := mgr.Add(manager.RunnableFunc(func(ctx context.Context) error {
		<-ctx.Done()
		r.stopAll()
		return nil
	})); err != nil {
		return err
	}
	if r.side == clusterclient.ControlPlane && !r.NoExports {
		if err := setupJudge(mgr, workers); err != nil {
			return err
		}
	}
	return ctrl.NewControllerManagedBy(mgr).Named(ControllerName+"Members").
		For(&clusterv1alpha1.Cluster{}, builder.WithPredicates(predicate.Or[client.Object](clusterready.Changed, predicate.Funcs{
			// The ServiceExport kind appearing or going (its CRD
			// propagated to the member) starts or stops the informers.
			UpdateFunc: func(e event.UpdateEvent) bool {
				o, ok1 := e.ObjectOld.(*clusterv1alpha1.Cluster)
				n, ok2 := e.ObjectNew.(*clusterv1alpha1.Cluster)
				return ok1 && ok2 && servesExports(o) != servesExports(n)
			},
			CreateFunc:  func(event.CreateEvent) bool { return false },
			DeleteFunc:  func(event.DeleteEvent) bool { return true },
			GenericFunc: func(event.GenericEvent) bool { return false },
		}))).
		WithOptions(queues.Options(1)).
		Complete(reconcile.Func(r.reconcileCluster))
}

// reconcileCluster starts the informers of a member it serves that is Ready
// and serves ServiceExports, and stops those of any other.
func (r *Reconciler) reconcileCluster(ctx context.Context, req reconcile.Request) (reconcile.Result, error) {
	cl := &clusterv1alpha1.Cluster{}
	err := r.Client.Get(ctx, req.NamespacedName, cl)
	if client.IgnoreNotFound(err) != nil {
		return reconcile.Result{}, err
	}
	if err != nil || !cl.DeletionTimestamp.IsZero() || !r.side.Serves(cl) || !clusterready.IsReady(cl) {
		r.stopWatch(req.Name)
		return reconcile.Result{}, nil
	}
	member, err := r.Members.Get(ctx, cl)
	if err != nil {
		return reconcile.Result{}, err
	}
	r.mu.Lock()
	w := r.members[cl.Name]
	if w != nil && w.member == member && (w.exports != nil) == servesExports(cl) {
		r.mu.Unlock()
		return reconcile.Result{}, nil
	}
	if w != nil {
		close(w.stop)
	}
	w = r.startWatch(cl.Name, member, servesExports(cl))
	r.members[cl.Name] = w
	r.mu.Unlock()
	ctrl.LoggerFrom(ctx).Info("Watching the member's ServiceExports", "cluster", cl.Name)
	return reconcile.Result{}, nil
}

// servesExports reports whether the member serves the ServiceExport kind.
func servesExports(cl *clusterv1alpha1.Cluster) bool {
	for _, e := range cl.Status.APIEnablements {
		if e.GroupVersion != serviceExports.GroupVersion().String() {
			continue
		}
		for _, r := range e.Resources {
			if r.Name == serviceExports.Resource {
				return true
			}
		}
	}
	return false
}

// stopAll stops every member's informers.
func (r *Reconciler) stopAll() {
	r.mu.Lock()
	defer r.mu.Unlock()
	for c, w := range r.members {
		close(w.stop)
		delete(r.members, c)
	}
}

func (r *Reconciler) stopWatch(cluster string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if w := r.members[cluster]; w != nil {
		close(w.stop)
		delete(r.members, cluster)
	}
}

// startWatch starts the member's ServiceExport informer (when it serves the
// kind); its handlers queue the export's Key (and start the slice
// informer). Called with r.mu held.
func (r *Reconciler) startWatch(cluster string, member *clusterclient.Member, exports bool) *memberWatch {
	w := &memberWatch{member: member, stop: make(chan struct{})}
	f := informers.NewSharedInformerFactoryWithOptions(member.Kube, 0, informers.WithTweakListOptions(func(o *metav1.ListOptions) {
		o.LabelSelector = networkingv1alpha1.MultiClusterServicePermanentIDLabel
	}))
	w.services = f.Core().V1().Services().Informer()
	onService := func(o any) {
		if t, ok := o.(cache.DeletedFinalStateUnknown); ok {
			o = t.Obj
		}
		if m, err := meta.Accessor(o); err == nil {
			r.startSlices(cluster, w)
			r.add(Key{Cluster: cluster, Namespace: m.GetNamespace(), Name: m.GetName()})
		}
	}
	_, _ = w.services.AddEventHandler(cache.ResourceEventHandlerFuncs{AddFunc: onService, DeleteFunc: onService})
	go w.services.Run(w.stop)
	if !exports {
		return w
	}
	w.exports = dynamicInformer(member, serviceExports)
	onExport := func(o any) {
		if t, ok := o.(cache.DeletedFinalStateUnknown); ok {
			o = t.Obj
		}
		m, err := meta.Accessor(o)
		if err != nil {
			return
		}
		r.startSlices(cluster, w)
		r.add(Key{Cluster: cluster, Namespace: m.GetNamespace(), Name: m.GetName()})
	}
	_, _ = w.exports.AddEventHandler(cache.ResourceEventHandlerFuncs{AddFunc: onExport, UpdateFunc: func(_, o any) { onExport(o) }, DeleteFunc: onExport})
	go w.exports.Run(w.stop)
	return w
}

// startSlices starts, once, the member's informer of Services'
// EndpointSlices.
func (r *Reconciler) startSlices(cluster string, w *memberWatch) {
	w.slicesOnce.Do(func() {
		f := informers.NewSharedInformerFactoryWithOptions(w.member.Kube, 0, informers.WithTweakListOptions(func(o *metav1.ListOptions) {
			o.LabelSelector = discoveryv1.LabelServiceName
		}))
		inf := f.Discovery().V1().EndpointSlices().Informer()
		onSlice := func(o any) {
			if t, ok := o.(cache.DeletedFinalStateUnknown); ok {
				o = t.Obj
			}
			s, ok := o.(*discoveryv1.EndpointSlice)
			if !ok {
				return
			}
			r.add(Key{Cluster: cluster, Namespace: s.Namespace, Name: s.Labels[discoveryv1.LabelServiceName]})
		}
		_, _ = inf.AddEventHandler(cache.ResourceEventHandlerFuncs{AddFunc: onSlice, UpdateFunc: func(_, o any) { onSlice(o) }, DeleteFunc: onSlice})
		svcs := informers.NewSharedInformerFactory(w.member.Kube, 0).Core().V1().Services().Informer()
		onService := func(o any) {
			if t, ok := o.(cache.DeletedFinalStateUnknown); ok {
				o = t.Obj
			}
			m, err := meta.Accessor(o)
			if err != nil || w.exports == nil {
				return
			}
			// Only an exported Service's change matters here.
			if _, ok, _ := w.exports.GetIndexer().GetByKey(m.GetNamespace() + "/" + m.GetName()); ok {
				r.add(Key{Cluster: cluster, Namespace: m.GetNamespace(), Name: m.GetName()})
			}
		}
		_, _ = svcs.AddEventHandler(cache.ResourceEventHandlerFuncs{AddFunc: onService, UpdateFunc: func(_, o any) { onService(o) }, DeleteFunc: onService})
		r.mu.Lock()
		w.slices, w.allServices = inf, svcs
		r.mu.Unlock()
		go inf.Run(w.stop)
		go svcs.Run(w.stop)
	})
}

// CollectWindow is how long a member's change waits before it is
// collected: a new pod changes its Service's EndpointSlice two or three
// times within a few milliseconds (its address, then ready), and each
// collected change costs a write at every hop to the consumers; the
// changes of one window are written once.
const CollectWindow = 100 * time.Millisecond

func (r *Reconciler) add(k Key) {
	r.mu.Lock()
	q := r.queue
	r.mu.Unlock()
	if q != nil {
		q.AddAfter(k, CollectWindow)
	}
}

// watchOf returns the member's informers, and whether they have synced.
func (r *Reconciler) watchOf(cluster string) (w *memberWatch, slices cache.SharedIndexInformer, synced bool) {
	r.mu.Lock()
	defer r.mu.Unlock()
	w = r.members[cluster]
	if w == nil {
		return nil, nil, false
	}
	return w, w.slices, (w.exports == nil || w.exports.HasSynced()) && w.services.HasSynced() && (w.slices == nil || w.slices.HasSynced()) &&
		(w.allServices == nil || w.allServices.HasSynced())
}

// syncRetry is when a Key whose informers are still syncing is looked at
// again.
const syncRetry = 200 * time.Millisecond

// Reconcile makes the Works of one exported Service of one member match
// its EndpointSlices there: one Work per slice while the ServiceExport
// exists, none otherwise.
func (r *Reconciler) Reconcile(ctx context.Context, k Key) (reconcile.Result, error) {
	w, slices, synced := r.watchOf(k.Cluster)
	if w == nil {
		// Not watched (not Ready, not served here): what was collected
		// stays until the cluster is watched again or removed.
		return reconcile.Result{}, nil
	}
	if !synced {
		return reconcile.Result{RequeueAfter: syncRetry}, nil
	}
	exported := false
	var export *unstructured.Unstructured
	if w.exports != nil {
		o, ok, err := w.exports.GetIndexer().GetByKey(k.Namespace + "/" + k.Name)
		if err != nil {
			return reconcile.Result{}, err
		}
		export, _ = o.(*unstructured.Unstructured)
		exported = ok && export != nil && !r.NoExports
	}
	provided, err := r.provides(w, k)
	if err != nil {
		return reconcile.Result{}, err
	}
	provided = provided && !r.NoProvided
	var want []*discoveryv1.EndpointSlice
	if exported || provided {
		if slices == nil {
			r.startSlices(k.Cluster, w)
			return reconcile.Result{RequeueAfter: syncRetry}, nil
		}
		objs, err := slices.GetIndexer().ByIndex(cache.NamespaceIndex, k.Namespace)
		if err != nil {
			return reconcile.Result{}, err
		}
		for _, o := range objs {
			if s, ok := o.(*discoveryv1.EndpointSlice); ok && s.Labels[discoveryv1.LabelServiceName] == k.Name {
				want = append(want, s)
			}
		}
	}
	if err := r.sync(ctx, k, want, exported, provided); err != nil {
		return reconcile.Result{}, err
	}
	if w.exports == nil || r.NoExports {
		return reconcile.Result{}, nil
	}
	return reconcile.Result{}, r.syncExport(ctx, k, w, export)
}

// provides reports whether the member's Service is claimed by a
// MultiClusterService (the permanent-id label travels with its copy):
// its slices are collected for the control plane, which dispatches those of
// the clusters the MultiClusterService names providers.
func (r *Reconciler) provides(w *memberWatch, k Key) (bool, error) {
	_, ok, err := w.services.GetIndexer().GetByKey(k.Namespace + "/" + k.Name)
	return ok, err
}

// dynamicInformer is an informer on every object of one resource of the
// member.
func dynamicInformer(m *clusterclient.Member, gvr schema.GroupVersionResource) cache.SharedIndexInformer {
	ri := m.Dynamic.Resource(gvr)
	return cache.NewSharedIndexInformer(&cache.ListWatch{
		ListWithContextFunc: func(ctx context.Context, o metav1.ListOptions) (runtime.Object, error) {
			return ri.List(ctx, o)
		},
		WatchFuncWithContext: func(ctx context.Context, o metav1.ListOptions) (watch.Interface, error) {
			return ri.Watch(ctx, o)
		},
	}, &unstructured.Unstructured{}, 0, cache.Indexers{cache.NamespaceIndex: cache.MetaNamespaceIndexFunc})
}

// String names a Key in logs.
func (k Key) String() string { return fmt.Sprintf("%s/%s/%s", k.Cluster, k.Namespace, k.Name) }
