package detector

import (
	"fmt"
	"slices"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/tools/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"

	policyv1alpha1 "github.com/karmada-go/karmada/api/policy/v1alpha1"
	"github.com/karmada-go/karmada/internal/anybinding"
	"github.com/karmada-go/karmada/internal/names"
	"github.com/karmada-go/karmada/internal/queues"
)

func (d *Detector) bindingDeleted(o any) {
	if t, ok := o.(cache.DeletedFinalStateUnknown); ok {
		o = t.Obj
	}
	obj, ok := o.(client.Object)
	if !ok {
		return
	}
	b, err := anybinding.Of(obj)
	if err != nil {
		return
	}
	ref := b.Spec.Resource
	gv, err := schema.ParseGroupVersion(ref.APIVersion)
	if err != nil {
		return
	}
	d.mu.RLock()
	gvr, ok := d.kinds[gv.WithKind(ref.Kind)]
	d.mu.RUnlock()
	if ok && !names.ReservedNamespace(ref.Namespace) {
		d.queue.Add(key{gvr: gvr, namespace: ref.Namespace, name: ref.Name})
	}
}

// enqueue queues a template at priority: 0 for a change, queues.Low for
// one of an informer's initial list, which waits behind every change on
// the priority queue (ControllerPriorityQueue; the plain queue keeps
// arrival order).
func (d *Detector) enqueue(gvr schema.GroupVersionResource, o any, priority int) {
	m, err := meta(o)
	if err != nil || names.ReservedNamespace(m.GetNamespace()) {
		return
	}
	queues.Add(d.queue, priority, key{gvr: gvr, namespace: m.GetNamespace(), name: m.GetName()})
}

// policyUpdatePriority is the priority of a policy's update for the
// templates it selects: 0 when its spec changed or its deletion began (a
// user's change), queues.Low otherwise (its permanent-id label written on
// its first claim, another label or annotation: the templates are looked
// at again, behind fresh changes).
func policyUpdatePriority(old, o any) int {
	om, ok1 := old.(metav1.Object)
	nm, ok2 := o.(metav1.Object)
	if !ok1 || !ok2 || om.GetGeneration() != nm.GetGeneration() || om.GetDeletionTimestamp().IsZero() != nm.GetDeletionTimestamp().IsZero() {
		return 0
	}
	return queues.Low
}

// initialPriority is the priority of an informer's add: queues.Low for one
// of its initial list (a start's backlog), 0 for a creation.
func initialPriority(isInInitialList bool) int {
	if isInInitialList {
		return queues.Low
	}
	return 0
}

// enqueueUpdate skips updates that change nothing a template's binding
// depends on: status-only changes keep the generation and labels.
func (d *Detector) enqueueUpdate(gvr schema.GroupVersionResource, old, o any) {
	om, err1 := meta(old)
	nm, err2 := meta(o)
	if err1 == nil && err2 == nil && ownOrStatusWrite(om, nm) {
		return
	}
	d.enqueue(gvr, o, 0)
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

func withoutClaim(m map[string]string) map[string]string {
	out := make(map[string]string, len(m))
	for k, v := range m {
		if !policyv1alpha1.IsClaimKey(k) {
			out[k] = v
		}
	}
	return out
}

func hasClaim(annotations map[string]string) bool {
	return annotations[policyv1alpha1.PropagationPolicyNameAnnotation] != "" || annotations[policyv1alpha1.ClusterPropagationPolicyAnnotation] != ""
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
func (d *Detector) policyChanged(o any, priority int) {
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
			holds := (namespace != "" && a[policyv1alpha1.PropagationPolicyNameAnnotation] == name && a[policyv1alpha1.PropagationPolicyNamespaceAnnotation] == namespace) ||
				(namespace == "" && a[policyv1alpha1.ClusterPropagationPolicyAnnotation] == name)
			if selected || holds {
				d.enqueue(gvr, m, priority)
			}
		}
	}
}

// KindsReinterpreted interprets again every template of the kinds (their
// customizations changed: replicas, requirements or components may differ
// now), behind fresh changes: it is work on every template of a kind.
func (d *Detector) KindsReinterpreted(kinds []schema.GroupKind) {
	if d.queue == nil {
		return
	}
	d.mu.RLock()
	defer d.mu.RUnlock()
	for gvr, gvk := range d.watching {
		if !slices.Contains(kinds, gvk.GroupKind()) {
			continue
		}
		for _, it := range d.factory.ForResource(gvr).Informer().GetStore().List() {
			if m, err := meta(it); err == nil && m.GetAnnotations()[policyv1alpha1.PropagationPolicyNameAnnotation]+m.GetAnnotations()[policyv1alpha1.ClusterPropagationPolicyAnnotation] != "" {
				d.enqueue(gvr, m, queues.Low)
			}
		}
	}
}
