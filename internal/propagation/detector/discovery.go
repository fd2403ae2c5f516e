package detector

import (
	"context"
	"strings"
	"time"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	utilversion "k8s.io/apimachinery/pkg/version"
	"k8s.io/client-go/discovery"
	"k8s.io/client-go/tools/cache"
	"k8s.io/klog/v2"
)

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
		if err != nil {
			continue
		}
		for _, r := range l.APIResources {
			if strings.Contains(r.Name, "/") || !hasVerbs(r.Verbs, "list", "watch", "get", "patch") {
				continue
			}
			if d.watch(gv.WithResource(r.Name), gv.WithKind(r.Kind), r.Namespaced) {
				started++
			}
		}
	}
	if started > 0 {
		d.factory.Start(ctx.Done())
		log.Info("Watching resource types", "new", started)
	}
}

// watch starts watching templates of a resource type, unless it is ignored
// or already watched; it reports whether it added the type. The caller
// starts the factory.
func (d *Detector) watch(gvr schema.GroupVersionResource, gvk schema.GroupVersionKind, namespaced bool) bool {
	if ignoredResources[gvr.GroupResource()] || strings.HasSuffix(gvr.Group, "karmada.io") {
		return false
	}
	d.mu.Lock()
	_, known := d.watching[gvr]
	if !known {
		d.watching[gvr] = gvk
		d.kinds[gvk] = gvr
		d.namespaced[gvr] = namespaced
	}
	d.mu.Unlock()
	if known {
		return false
	}
	inf := d.factory.ForResource(gvr).Informer()
	_, _ = inf.AddEventHandler(cache.ResourceEventHandlerDetailedFuncs{
		AddFunc:    func(o any, initial bool) { d.crdChanged(gvr, o); d.enqueue(gvr, o, initialPriority(initial)) },
		UpdateFunc: func(old, o any) { d.crdChanged(gvr, o); d.enqueueUpdate(gvr, old, o) },
	})
	return true
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

// crdChanged starts watching a CRD's type as soon as the CRD is
// Established (its served version of highest priority, the one discovery
// prefers), so that a custom resource created right after its CRD is seen
// at once; discovery would find the type only later. CRD events are rare:
// the CRD is read from the API server.
func (d *Detector) crdChanged(gvr schema.GroupVersionResource, o any) {
	if gvr.GroupResource() != crdResource || d.crds == nil {
		return
	}
	m, err := meta(o)
	if err != nil {
		return
	}
	// A CRD is named <plural>.<group>: a type discovery already found
	// (every CRD at start-up) needs no read.
	if plural, group, ok := strings.Cut(m.GetName(), "."); ok && d.watchingResource(schema.GroupResource{Group: group, Resource: plural}) {
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	crd, err := d.crds.Get(ctx, m.GetName(), metav1.GetOptions{})
	if err != nil || !established(crd) {
		return
	}
	version := ""
	for _, v := range crd.Spec.Versions {
		if v.Served && (version == "" || utilversion.CompareKubeAwareVersionStrings(v.Name, version) > 0) {
			version = v.Name
		}
	}
	if version == "" {
		return
	}
	gv := schema.GroupVersion{Group: crd.Spec.Group, Version: version}
	if d.watch(gv.WithResource(crd.Spec.Names.Plural), gv.WithKind(crd.Spec.Names.Kind), crd.Spec.Scope == apiextensionsv1.NamespaceScoped) {
		d.factory.Start(d.stop)
		klog.FromContext(ctx).Info("Watching a new custom resource type", "resource", gv.WithResource(crd.Spec.Names.Plural).String())
	}
}

// watchingResource reports whether some version of the resource is watched.
func (d *Detector) watchingResource(gr schema.GroupResource) bool {
	d.mu.RLock()
	defer d.mu.RUnlock()
	for gvr := range d.watching {
		if gvr.GroupResource() == gr {
			return true
		}
	}
	return false
}

func established(crd *apiextensionsv1.CustomResourceDefinition) bool {
	for _, c := range crd.Status.Conditions {
		if c.Type == apiextensionsv1.Established && c.Status == apiextensionsv1.ConditionTrue {
			return true
		}
	}
	return false
}
