// Package detector watches every resource template the control plane serves,
// claims each one for the propagation policy that selects it (the choice is
// policymatch's) and keeps one ResourceBinding or ClusterResourceBinding per
// claimed template.
//
// Files: detector.go (the runnable: discovery and informers; its workers
// are a controller-runtime controller's), discovery.go (which types are
// watched), events.go (which template and policy events cause a
// reconcile), claim.go (one template's reconcile: the claim), binding.go
// (the binding written from the template and the policy).
package detector

import (
	"context"
	"sync"
	"time"

	"github.com/go-logr/logr"
	apiextensionsclient "k8s.io/apiextensions-apiserver/pkg/client/clientset/clientset/typed/apiextensions/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/metadata"
	"k8s.io/client-go/metadata/metadatainformer"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/cache"
	"k8s.io/client-go/tools/record"
	"k8s.io/client-go/util/workqueue"
	"k8s.io/klog/v2"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller"
	"sigs.k8s.io/controller-runtime/pkg/manager"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	policyv1alpha1 "github.com/karmada-go/karmada/api/policy/v1alpha1"
	workv1alpha2 "github.com/karmada-go/karmada/api/work/v1alpha2"
	"github.com/karmada-go/karmada/internal/cache/intern"
	"github.com/karmada-go/karmada/internal/interpreter"
	"github.com/karmada-go/karmada/internal/queues"
	"github.com/karmada-go/karmada/internal/requeue"
)

// ControllerName is the name of the detector in --controllers.
const ControllerName = "detector"

// Detector claims templates for policies and keeps their bindings.
type Detector struct {
	// Interpreter answers what the controller must know of each kind
	// (replicas, status, health, ...): the binary's, with the
	// customizations and interpreter webhooks in force; nil knows the
	// built-in kinds only.
	Interpreter *interpreter.Interpreter
	Client      client.Client
	Config      *rest.Config
	// Recorder records events on templates; nil records none.
	Recorder record.EventRecorder
	// RediscoverEvery is how often the served APIs are discovered again
	// (aggregated APIs, CRD versions added later); a new CRD's type is
	// watched as soon as the CRD is Established.
	RediscoverEvery time.Duration
	Workers         int
	// Templates, when not nil, is read for the whole template of one
	// already claimed; a version other than the metadata cache's, or one it
	// cannot answer at once, is read from the API server.
	Templates TemplateCache

	dynamic  dynamic.Interface
	factory  metadatainformer.SharedInformerFactory
	queue    workqueue.TypedRateLimitingInterface[key]
	mu       sync.RWMutex
	watching map[schema.GroupVersionResource]schema.GroupVersionKind

	// givenIDs are the permanent ids this detector gave, by policy UID.
	idMu       sync.Mutex
	givenIDs   map[types.UID]string
	kinds      map[schema.GroupVersionKind]schema.GroupVersionResource
	namespaced map[schema.GroupVersionResource]bool
	// crds reads CRDs, to watch a new type once its CRD is Established.
	crds apiextensionsclient.CustomResourceDefinitionInterface
	// stop ends the informers started outside discovery.
	stop <-chan struct{}
}

// TemplateCache reads whole templates without waiting for a cache still
// making its first list (templatecache.Store is one): false when it cannot
// answer yet.
type TemplateCache interface {
	GetIfSynced(ctx context.Context, key client.ObjectKey, obj client.Object) (bool, error)
}

type key struct {
	gvr             schema.GroupVersionResource
	namespace, name string
}

var _ manager.Runnable = &Detector{}

// SetupWithManager adds the detector to the manager, with handlers that
// re-evaluate templates when policies change.
func (d *Detector) SetupWithManager(ctx context.Context, mgr manager.Manager) error {
	if d.RediscoverEvery == 0 {
		d.RediscoverEvery = 30 * time.Second
	}
	var err error
	if d.dynamic, err = dynamic.NewForConfig(d.Config); err != nil {
		return err
	}
	mc, err := metadata.NewForConfig(d.Config)
	if err != nil {
		return err
	}
	// Nothing here reads managedFields; they are often most of a
	// template's metadata, and every template of every kind is cached.
	d.factory = metadatainformer.NewSharedInformerFactoryWithOptions(mc, 0, metadatainformer.WithTransform(func(o any) (any, error) {
		if m, ok := o.(*metav1.PartialObjectMetadata); ok {
			m.ManagedFields = nil
			intern.Meta(m)
		}
		return o, nil
	}))
	ac, err := apiextensionsclient.NewForConfig(d.Config)
	if err != nil {
		return err
	}
	d.crds = ac.CustomResourceDefinitions()
	if queues.Prioritised() {
		d.queue = queues.NewPriority(ControllerName, workqueue.DefaultTypedControllerRateLimiter[key]())
	} else {
		d.queue = workqueue.NewTypedRateLimitingQueueWithConfig(workqueue.DefaultTypedControllerRateLimiter[key](), workqueue.TypedRateLimitingQueueConfig[key]{Name: ControllerName})
	}
	d.watching = map[schema.GroupVersionResource]schema.GroupVersionKind{}
	d.kinds = map[schema.GroupVersionKind]schema.GroupVersionResource{}
	d.namespaced = map[schema.GroupVersionResource]bool{}
	for _, obj := range []client.Object{&policyv1alpha1.PropagationPolicy{}, &policyv1alpha1.ClusterPropagationPolicy{}} {
		inf, err := mgr.GetCache().GetInformer(ctx, obj)
		if err != nil {
			return err
		}
		if _, err := inf.AddEventHandler(cache.ResourceEventHandlerDetailedFuncs{
			AddFunc:    func(o any, initial bool) { d.policyChanged(o, initialPriority(initial)) },
			UpdateFunc: func(old, o any) { d.policyChanged(o, policyUpdatePriority(old, o)) },
			DeleteFunc: func(o any) { d.policyChanged(o, 0) },
		}); err != nil {
			return err
		}
	}
	// A binding that goes while its template stays (the template was
	// re-created under the same name while the old binding was collected)
	// must be made again.
	for _, obj := range []client.Object{&workv1alpha2.ResourceBinding{}, &workv1alpha2.ClusterResourceBinding{}} {
		inf, err := mgr.GetCache().GetInformer(ctx, obj)
		if err != nil {
			return err
		}
		if _, err := inf.AddEventHandler(cache.ResourceEventHandlerFuncs{DeleteFunc: d.bindingDeleted}); err != nil {
			return err
		}
	}
	// The workers are a controller-runtime controller's, on the queue the
	// informers fill (made above, so that events before it starts wait
	// there): reconcile metrics, panic recovery and rate-limited retries as
	// every other controller has them.
	if _, err := controller.NewTyped(ControllerName, mgr, controller.TypedOptions[key]{
		MaxConcurrentReconciles: max(d.Workers, 1),
		Reconciler: reconcile.TypedFunc[key](func(ctx context.Context, k key) (reconcile.Result, error) {
			return requeue.OnConflict(d.reconcile(ctx, k))
		}),
		NewQueue: func(string, workqueue.TypedRateLimiter[key]) workqueue.TypedRateLimitingInterface[key] {
			return d.queue
		},
		LogConstructor: func(k *key) logr.Logger {
			log := mgr.GetLogger().WithValues("controller", ControllerName)
			if k != nil {
				log = log.WithValues("resource", k.gvr.GroupResource().String(), "template", klog.KRef(k.namespace, k.name))
			}
			return log
		},
	}); err != nil {
		return err
	}
	return mgr.Add(d)
}

// Start runs discovery and the informers until ctx ends; the controller
// made in SetupWithManager runs the workers.
func (d *Detector) Start(ctx context.Context) error {
	log := klog.FromContext(ctx).WithName(ControllerName)
	ctx = klog.NewContext(ctx, log)
	d.stop = ctx.Done()
	go func() {
		tick := time.NewTicker(d.RediscoverEvery)
		defer tick.Stop()
		for {
			d.discover(ctx)
			select {
			case <-ctx.Done():
				return
			case <-tick.C:
			}
		}
	}()
	<-ctx.Done()
	return nil
}
