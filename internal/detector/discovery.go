package detector

import (
	"context"
	"strings"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
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
