package detector

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"sync"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/uuid"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/discovery"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/metadata"
	"k8s.io/client-go/metadata/metadatainformer"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/cache"
	"k8s.io/client-go/util/workqueue"
	"k8s.io/klog/v2"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller/controllerutil"
	"sigs.k8s.io/controller-runtime/pkg/manager"

	policyv1alpha1 "github.com/karmada-go/karmada/api/policy/v1alpha1"
	workv1alpha2 "github.com/karmada-go/karmada/api/work/v1alpha2"
	"github.com/karmada-go/karmada/internal/interpreter"
)

// ControllerName is the name of the detector in --controllers.
const ControllerName = "detector"

// ignoredResources are never templates: they describe the control plane
// itself, change constantly, or are handled elsewhere (namespaces).
var ignoredResources = map[schema.GroupResource]bool{
	{Resource: "events"}:                                       true,
	{Group: "events.k8s.io", Resource: "events"}:               true,
	{Group: "coordination.k8s.io", Resource: "leases"}:         true,
	{Resource: "endpoints"}:                                    true,
	{Group: "discovery.k8s.io", Resource: "endpointslices"}:    true,
	{Resource: "nodes"}:                                        true,
	{Resource: "namespaces"}:                                   true,
	{Resource: "componentstatuses"}:                            true,
	{Group: "apiregistration.k8s.io", Resource: "apiservices"}: true,
	{Group: "apps", Resource: "controllerrevisions"}:           true,
}

// IgnoredNamespace reports whether templates in a namespace are never
// propagated: the control plane's own.
func IgnoredNamespace(ns string) bool {
	return ns == "kube-system" || ns == "kube-public" || ns == "kube-node-lease" || strings.HasPrefix(ns, "karmada-")
}

// Detector claims templates for policies and keeps their bindings.
type Detector struct {
	Client client.Client
	Config *rest.Config
	// RediscoverEvery is how often the served APIs are discovered again, so
	// that new CRDs are watched.
	RediscoverEvery time.Duration
	Workers         int

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
	// rediscover asks for discovery now, as when a CRD changes.
	rediscover chan struct{}
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
		}
		return o, nil
	}))
	d.rediscover = make(chan struct{}, 1)
	d.queue = workqueue.NewTypedRateLimitingQueueWithConfig(workqueue.DefaultTypedControllerRateLimiter[key](), workqueue.TypedRateLimitingQueueConfig[key]{Name: ControllerName})
	d.watching = map[schema.GroupVersionResource]schema.GroupVersionKind{}
	d.kinds = map[schema.GroupVersionKind]schema.GroupVersionResource{}
	d.namespaced = map[schema.GroupVersionResource]bool{}
	for _, obj := range []client.Object{&policyv1alpha1.PropagationPolicy{}, &policyv1alpha1.ClusterPropagationPolicy{}} {
		inf, err := mgr.GetCache().GetInformer(ctx, obj)
		if err != nil {
			return err
		}
		if _, err := inf.AddEventHandler(cache.ResourceEventHandlerFuncs{
			AddFunc:    func(o any) { d.policyChanged(o) },
			UpdateFunc: func(_, o any) { d.policyChanged(o) },
			DeleteFunc: func(o any) { d.policyChanged(o) },
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
	return mgr.Add(d)
}

func (d *Detector) bindingDeleted(o any) {
	if t, ok := o.(cache.DeletedFinalStateUnknown); ok {
		o = t.Obj
	}
	var ref workv1alpha2.ObjectReference
	switch b := o.(type) {
	case *workv1alpha2.ResourceBinding:
		ref = b.Spec.Resource
	case *workv1alpha2.ClusterResourceBinding:
		ref = b.Spec.Resource
	default:
		return
	}
	gv, err := schema.ParseGroupVersion(ref.APIVersion)
	if err != nil {
		return
	}
	d.mu.RLock()
	gvr, ok := d.kinds[gv.WithKind(ref.Kind)]
	d.mu.RUnlock()
	if ok && !IgnoredNamespace(ref.Namespace) {
		d.queue.Add(key{gvr: gvr, namespace: ref.Namespace, name: ref.Name})
	}
}

// Start runs discovery, the informers and the workers until ctx ends.
func (d *Detector) Start(ctx context.Context) error {
	log := klog.FromContext(ctx).WithName(ControllerName)
	ctx = klog.NewContext(ctx, log)
	defer d.queue.ShutDown()
	go func() {
		tick := time.NewTicker(d.RediscoverEvery)
		defer tick.Stop()
		for {
			d.discover(ctx)
			select {
			case <-ctx.Done():
				return
			case <-tick.C:
			case <-d.rediscover:
			}
		}
	}()
	for i := 0; i < max(d.Workers, 1); i++ {
		go wait.UntilWithContext(ctx, d.work, time.Second)
	}
	<-ctx.Done()
	return nil
}

// discover starts an informer for every listable, watchable resource type
// the control plane serves that is not ignored.
func (d *Detector) discover(ctx context.Context) {
	log := klog.FromContext(ctx)
	dc, err := discovery.NewDiscoveryClientForConfig(d.Config)
	if err != nil {
		log.Error(err, "Creating discovery client")
		return
	}
	lists, err := dc.ServerPreferredResources()
	if err != nil && !discovery.IsGroupDiscoveryFailedError(err) {
		log.Error(err, "Discovering served resources")
		return
	}
	started := 0
	for _, l := range lists {
		gv, err := schema.ParseGroupVersion(l.GroupVersion)
		if err != nil || strings.HasSuffix(gv.Group, "karmada.io") {
			continue
		}
		for _, r := range l.APIResources {
			gvr := gv.WithResource(r.Name)
			if strings.Contains(r.Name, "/") || ignoredResources[gvr.GroupResource()] || !hasVerbs(r.Verbs, "list", "watch", "get", "patch") {
				continue
			}
			d.mu.Lock()
			_, known := d.watching[gvr]
			if !known {
				gvk := gv.WithKind(r.Kind)
				d.watching[gvr] = gvk
				d.kinds[gvk] = gvr
				d.namespaced[gvr] = r.Namespaced
			}
			d.mu.Unlock()
			if known {
				continue
			}
			inf := d.factory.ForResource(gvr).Informer()
			_, _ = inf.AddEventHandler(cache.ResourceEventHandlerFuncs{
				AddFunc:    func(o any) { d.kickIfCRD(gvr); d.enqueue(gvr, o) },
				UpdateFunc: func(old, o any) { d.kickIfCRD(gvr); d.enqueueUpdate(gvr, old, o) },
			})
			started++
		}
	}
	if started > 0 {
		d.factory.Start(ctx.Done())
		log.Info("Watching resource types", "new", started)
	}
}

func hasVerbs(have metav1.Verbs, want ...string) bool {
	for _, w := range want {
		found := false
		for _, h := range have {
			if h == w {
				found = true
				break
			}
		}
		if !found {
			return false
		}
	}
	return true
}

var crdResource = schema.GroupResource{Group: "apiextensions.k8s.io", Resource: "customresourcedefinitions"}

// kickIfCRD asks for discovery when a CRD appears or changes (including its
// Established status): it may bring a type to watch.
func (d *Detector) kickIfCRD(gvr schema.GroupVersionResource) {
	if gvr.GroupResource() != crdResource {
		return
	}
	select {
	case d.rediscover <- struct{}{}:
	default:
	}
}

func (d *Detector) enqueue(gvr schema.GroupVersionResource, o any) {
	m, err := meta(o)
	if err != nil || IgnoredNamespace(m.GetNamespace()) {
		return
	}
	d.queue.Add(key{gvr: gvr, namespace: m.GetNamespace(), name: m.GetName()})
}

// enqueueUpdate skips updates that change nothing a template's binding
// depends on: status-only changes keep the generation and labels.
func (d *Detector) enqueueUpdate(gvr schema.GroupVersionResource, old, o any) {
	om, err1 := meta(old)
	nm, err2 := meta(o)
	if err1 == nil && err2 == nil && ownOrStatusWrite(om, nm) {
		return
	}
	d.enqueue(gvr, o)
}

// ownOrStatusWrite tells whether a template's update changed nothing but its
// status, or was a claim being written (by this detector: its own writes
// need no second look). A claim taken away by someone else is looked at, and
// put back.
func ownOrStatusWrite(om, nm *metav1.PartialObjectMetadata) bool {
	if om.GetGeneration() == 0 ||
		!mapsEqual(withoutClaim(om.GetLabels()), withoutClaim(nm.GetLabels())) ||
		!mapsEqual(withoutClaim(om.GetAnnotations()), withoutClaim(nm.GetAnnotations())) {
		return false
	}
	sameAnnotations := mapsEqual(om.GetAnnotations(), nm.GetAnnotations())
	if !sameAnnotations && !hasClaim(nm.GetAnnotations()) {
		return false
	}
	if om.GetGeneration() == nm.GetGeneration() {
		return true
	}
	// Some kinds (Deployments) count an annotation change as a new
	// generation. One write that changed the claim annotations and nothing
	// else of the metadata is the detector's merge patch, which touches
	// nothing but metadata; a spec changed in the same write is impossible.
	return !sameAnnotations && nm.GetGeneration() == om.GetGeneration()+1
}

// claimKeys are the labels and annotations a claim consists of.
var claimKeys = map[string]bool{
	PropagationPolicyNamespaceAnnotation: true, PropagationPolicyNameAnnotation: true, ClusterPropagationPolicyAnnotation: true,
	PropagationPolicyPermanentIDLabel: true, ClusterPropagationPolicyPermanentIDLabel: true,
}

func withoutClaim(m map[string]string) map[string]string {
	out := make(map[string]string, len(m))
	for k, v := range m {
		if !claimKeys[k] {
			out[k] = v
		}
	}
	return out
}

func hasClaim(annotations map[string]string) bool {
	return annotations[PropagationPolicyNameAnnotation] != "" || annotations[ClusterPropagationPolicyAnnotation] != ""
}

func meta(o any) (*metav1.PartialObjectMetadata, error) {
	if t, ok := o.(cache.DeletedFinalStateUnknown); ok {
		o = t.Obj
	}
	m, ok := o.(*metav1.PartialObjectMetadata)
	if !ok {
		return nil, fmt.Errorf("unexpected %T", o)
	}
	return m, nil
}

func mapsEqual(a, b map[string]string) bool {
	if len(a) != len(b) {
		return false
	}
	for k, v := range a {
		if bv, ok := b[k]; !ok || bv != v {
			return false
		}
	}
	return true
}

// policyChanged re-evaluates every template the policy may select or holds.
func (d *Detector) policyChanged(o any) {
	if t, ok := o.(cache.DeletedFinalStateUnknown); ok {
		o = t.Obj
	}
	var spec *policyv1alpha1.PropagationSpec
	var namespace, name string
	switch p := o.(type) {
	case *policyv1alpha1.PropagationPolicy:
		spec, namespace, name = &p.Spec, p.Namespace, p.Name
	case *policyv1alpha1.ClusterPropagationPolicy:
		spec, name = &p.Spec, p.Name
	default:
		return
	}
	d.mu.RLock()
	defer d.mu.RUnlock()
	for gvr, gvk := range d.watching {
		selected := false
		for _, s := range spec.ResourceSelectors {
			if s.APIVersion == gvk.GroupVersion().String() && s.Kind == gvk.Kind {
				selected = true
			}
		}
		items := d.factory.ForResource(gvr).Informer().GetStore().List()
		for _, it := range items {
			m, err := meta(it)
			if err != nil {
				continue
			}
			if namespace != "" && m.GetNamespace() != namespace {
				continue
			}
			a := m.GetAnnotations()
			holds := (namespace != "" && a[PropagationPolicyNameAnnotation] == name && a[PropagationPolicyNamespaceAnnotation] == namespace) ||
				(namespace == "" && a[ClusterPropagationPolicyAnnotation] == name)
			if selected || holds {
				d.enqueue(gvr, m)
			}
		}
	}
}

func (d *Detector) work(ctx context.Context) {
	for {
		k, shutdown := d.queue.Get()
		if shutdown {
			return
		}
		err := d.reconcile(ctx, k)
		if err != nil {
			klog.FromContext(ctx).V(2).Info("Retrying template", "resource", k.gvr.String(), "namespace", k.namespace, "name", k.name, "err", err)
			d.queue.AddRateLimited(k)
		} else {
			d.queue.Forget(k)
		}
		d.queue.Done(k)
	}
}

// reconcile claims one template for its policy and keeps its binding. The
// policies are matched against the template's metadata from the informer's
// cache: a template no policy selects costs no API call, and claiming a new
// one costs one patch, whose answer is the full object the binding is built
// from.
func (d *Detector) reconcile(ctx context.Context, k key) error {
	log := klog.FromContext(ctx)
	ri := d.resource(k)
	obj, err := d.cachedMeta(k)
	if apierrors.IsNotFound(err) {
		return nil // the binding follows its template through the owner reference
	}
	if err != nil {
		return err
	}
	if !obj.GetDeletionTimestamp().IsZero() {
		return nil
	}
	pps := &policyv1alpha1.PropagationPolicyList{}
	if obj.GetNamespace() != "" {
		if err := d.Client.List(ctx, pps, client.InNamespace(obj.GetNamespace())); err != nil {
			return err
		}
	}
	cpps := &policyv1alpha1.ClusterPropagationPolicyList{}
	if err := d.Client.List(ctx, cpps); err != nil {
		return err
	}
	current, claimed := ClaimOf(obj)
	chosen, ok := Choose(current, claimed, Candidates(obj, pps.Items, cpps.Items))
	if !ok {
		if claimed {
			log.Info("Releasing template: no policy selects it any more", "resource", k.gvr.Resource, "object", klog.KObj(obj))
			_, err := d.setClaim(ctx, ri, obj, nil)
			return err
		}
		return nil
	}
	if err := d.ensurePermanentID(ctx, &chosen); err != nil {
		return err
	}
	patched, err := d.setClaim(ctx, ri, obj, &chosen)
	if err != nil {
		return err
	}
	if !patched {
		// Already claimed: read the whole template for its binding.
		full, err := ri.Get(ctx, k.name, metav1.GetOptions{})
		if apierrors.IsNotFound(err) {
			return nil
		}
		if err != nil {
			return err
		}
		obj = full
	}
	return d.ensureBinding(ctx, obj, chosen)
}

// cachedMeta returns the template's metadata from the informer's cache as
// an unstructured object with its apiVersion and kind.
func (d *Detector) cachedMeta(k key) (*unstructured.Unstructured, error) {
	d.mu.RLock()
	gvk, ok := d.watching[k.gvr]
	d.mu.RUnlock()
	if !ok {
		return nil, apierrors.NewNotFound(k.gvr.GroupResource(), k.name)
	}
	lister := d.factory.ForResource(k.gvr).Lister()
	var got runtime.Object
	var err error
	if k.namespace != "" {
		got, err = lister.ByNamespace(k.namespace).Get(k.name)
	} else {
		got, err = lister.Get(k.name)
	}
	if err != nil {
		return nil, err
	}
	m, ok := got.(*metav1.PartialObjectMetadata)
	if !ok {
		return nil, fmt.Errorf("unexpected %T in the metadata cache", got)
	}
	u := &unstructured.Unstructured{}
	u.SetGroupVersionKind(gvk)
	u.SetNamespace(m.Namespace)
	u.SetName(m.Name)
	u.SetUID(m.UID)
	u.SetResourceVersion(m.ResourceVersion)
	u.SetGeneration(m.Generation)
	u.SetLabels(m.Labels)
	u.SetAnnotations(m.Annotations)
	u.SetDeletionTimestamp(m.DeletionTimestamp)
	return u, nil
}

func (d *Detector) resource(k key) dynamic.ResourceInterface {
	d.mu.RLock()
	namespaced := d.namespaced[k.gvr]
	d.mu.RUnlock()
	if namespaced {
		return d.dynamic.Resource(k.gvr).Namespace(k.namespace)
	}
	return d.dynamic.Resource(k.gvr)
}

// setClaim writes (or, with nil, removes) the claim annotations and labels
// on the template when they differ. When it patches, obj becomes the whole
// object the API server answered with, and patched is true.
func (d *Detector) setClaim(ctx context.Context, ri dynamic.ResourceInterface, obj *unstructured.Unstructured, c *Candidate) (patched bool, err error) {
	wantA, wantL := ClaimChanges(c)
	md := map[string]any{}
	if p := MergePatch(obj.GetAnnotations(), wantA); p != nil {
		md["annotations"] = p
	}
	if p := MergePatch(obj.GetLabels(), wantL); p != nil {
		md["labels"] = p
	}
	if len(md) == 0 {
		return false, nil
	}
	body := mustJSON(map[string]any{"metadata": md})
	updated, err := ri.Patch(ctx, obj.GetName(), types.MergePatchType, []byte(body), metav1.PatchOptions{})
	if err != nil {
		return false, fmt.Errorf("claiming %s: %w", obj.GetName(), err)
	}
	obj.Object = updated.Object
	return true, nil
}

// ensurePermanentID gives the chosen policy its permanent-id label when it
// has none yet (Karmada's webhook would have added it at creation).
func (d *Detector) ensurePermanentID(ctx context.Context, c *Candidate) error {
	if c.PermanentID != "" {
		return nil
	}
	// Workers reconciling templates of the same new policy at once must
	// agree on one id: the first gives it, the others reuse it (the cache
	// may not show the label yet). A second id would re-label every
	// template and binding of the policy.
	d.idMu.Lock()
	defer d.idMu.Unlock()
	if id, ok := d.givenIDs[c.UID]; ok && c.UID != "" {
		c.PermanentID = id
		return nil
	}
	id := string(uuid.NewUUID())
	var obj client.Object
	label := ClusterPropagationPolicyPermanentIDLabel
	if c.Namespaced {
		obj = &policyv1alpha1.PropagationPolicy{ObjectMeta: metav1.ObjectMeta{Namespace: c.Namespace, Name: c.Name}}
		label = PropagationPolicyPermanentIDLabel
	} else {
		obj = &policyv1alpha1.ClusterPropagationPolicy{ObjectMeta: metav1.ObjectMeta{Name: c.Name}}
	}
	body := mustJSON(map[string]any{"metadata": map[string]any{"labels": map[string]string{label: id}}})
	if err := d.Client.Patch(ctx, obj, client.RawPatch(types.MergePatchType, []byte(body))); err != nil {
		return fmt.Errorf("labelling policy %s with its permanent id: %w", c.Key(), err)
	}
	c.PermanentID = id
	if c.UID != "" {
		if d.givenIDs == nil {
			d.givenIDs = map[types.UID]string{}
		}
		d.givenIDs[c.UID] = id
	}
	return nil
}

// ensureBinding creates or updates the template's binding from the policy.
func (d *Detector) ensureBinding(ctx context.Context, obj *unstructured.Unstructured, c Candidate) error {
	replicas, requirements, err := interpreter.Replicas(obj)
	if err != nil {
		return fmt.Errorf("reading replicas of %s: %w", obj.GetName(), err)
	}
	owner := metav1.OwnerReference{APIVersion: obj.GetAPIVersion(), Kind: obj.GetKind(), Name: obj.GetName(), UID: obj.GetUID(),
		Controller: ptr.To(true), BlockOwnerDeletion: ptr.To(true)}
	wantA, wantL := ClaimChanges(&c)
	fill := func(om *metav1.ObjectMeta, spec *workv1alpha2.ResourceBindingSpec) {
		if om.CreationTimestamp.IsZero() {
			// The binding controller's finalizer from the start saves it a
			// write per binding.
			om.Finalizers = append(om.Finalizers, workv1alpha2.BindingControllerFinalizer)
		}
		om.OwnerReferences = []metav1.OwnerReference{owner}
		om.Annotations = applyChanges(om.Annotations, wantA)
		om.Labels = applyChanges(om.Labels, wantL)
		spec.Resource = workv1alpha2.ObjectReference{APIVersion: obj.GetAPIVersion(), Kind: obj.GetKind(), Namespace: obj.GetNamespace(),
			Name: obj.GetName(), UID: obj.GetUID(), ResourceVersion: obj.GetResourceVersion()}
		spec.Replicas = replicas
		spec.ReplicaRequirements = requirements
		p := c.Spec.Placement
		spec.Placement = &p
		spec.PropagateDeps = c.Spec.PropagateDeps
		spec.ConflictResolution = c.Spec.ConflictResolution
		spec.SchedulerName = c.Spec.SchedulerName
		spec.Failover = c.Spec.Failover
		spec.PreserveResourcesOnDeletion = c.Spec.PreserveResourcesOnDeletion
		if c.Spec.Suspension != nil {
			spec.Suspension = &workv1alpha2.Suspension{Suspension: *c.Spec.Suspension}
		} else if spec.Suspension != nil {
			spec.Suspension.Suspension = policyv1alpha1.Suspension{}
		}
	}
	name := BindingName(obj.GetKind(), obj.GetName())
	if obj.GetNamespace() == "" {
		crb := &workv1alpha2.ClusterResourceBinding{ObjectMeta: metav1.ObjectMeta{Name: name}}
		_, err := controllerutil.CreateOrPatch(ctx, d.Client, crb, func() error { fill(&crb.ObjectMeta, &crb.Spec); return nil })
		return err
	}
	rb := &workv1alpha2.ResourceBinding{ObjectMeta: metav1.ObjectMeta{Namespace: obj.GetNamespace(), Name: name}}
	op, err := controllerutil.CreateOrPatch(ctx, d.Client, rb, func() error { fill(&rb.ObjectMeta, &rb.Spec); return nil })
	if err == nil && op != controllerutil.OperationResultNone {
		klog.FromContext(ctx).V(2).Info("Synced binding", "binding", klog.KObj(rb), "policy", c.Key(), "operation", op)
	}
	return err
}

// applyChanges sets or (for nil values) removes keys of m.
func applyChanges(m map[string]string, changes map[string]*string) map[string]string {
	for k, v := range changes {
		if v == nil {
			delete(m, k)
			continue
		}
		if m == nil {
			m = map[string]string{}
		}
		m[k] = *v
	}
	return m
}

func mustJSON(v any) string {
	b, err := json.Marshal(v)
	if err != nil {
		panic(err)
	}
	return string(b)
}
