package server

import (
	"context"
	"fmt"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/dynamic"
)

// PodLister lists a namespace's pods matching a selector (an informer's
// lister).
type PodLister func(namespace string, selector labels.Selector) ([]*corev1.Pod, error)

// Workloads finds a member workload's pod selector: spec.selector of the
// object, read with the estimator's own identity.
type Workloads struct {
	Client dynamic.Interface
	Mapper meta.RESTMapper
}

// Selector is the workload's spec.selector.
func (w *Workloads) Selector(ctx context.Context, apiVersion, kind, namespace, name string) (labels.Selector, error) {
	gv, err := schema.ParseGroupVersion(apiVersion)
	if err != nil {
		return nil, fmt.Errorf("resource.apiVersion %q: %w", apiVersion, err)
	}
	m, err := w.Mapper.RESTMapping(gv.WithKind(kind).GroupKind(), gv.Version)
	if err != nil {
		return nil, fmt.Errorf("resource %s %s: %w", apiVersion, kind, err)
	}
	obj, err := w.Client.Resource(m.Resource).Namespace(namespace).Get(ctx, name, metav1.GetOptions{})
	if err != nil {
		return nil, err
	}
	raw, found, err := unstructured.NestedMap(obj.Object, "spec", "selector")
	if err != nil || !found {
		return nil, fmt.Errorf("%s %s/%s has no spec.selector: its pods cannot be told apart", kind, namespace, name)
	}
	var ls metav1.LabelSelector
	if err := runtime.DefaultUnstructuredConverter.FromUnstructured(raw, &ls); err != nil {
		return nil, fmt.Errorf("%s %s/%s: spec.selector: %w", kind, namespace, name, err)
	}
	sel, err := metav1.LabelSelectorAsSelector(&ls)
	if err != nil {
		return nil, fmt.Errorf("%s %s/%s: spec.selector: %w", kind, namespace, name, err)
	}
	if sel.Empty() {
		return nil, fmt.Errorf("%s %s/%s: spec.selector selects every pod of the namespace", kind, namespace, name)
	}
	return sel, nil
}

// unschedulableFor says whether a pod has waited at least threshold for a
// node: not bound, not being deleted, and PodScheduled=False with reason
// Unschedulable since before now-threshold.
func unschedulableFor(p *corev1.Pod, threshold time.Duration, now time.Time) bool {
	if p.Spec.NodeName != "" || p.DeletionTimestamp != nil {
		return false
	}
	for _, c := range p.Status.Conditions {
		if c.Type == corev1.PodScheduled {
			return c.Status == corev1.ConditionFalse && c.Reason == corev1.PodReasonUnschedulable &&
				!c.LastTransitionTime.Time.After(now.Add(-threshold))
		}
	}
	return false
}

// CountUnschedulable is how many of the pods have been unschedulable for
// at least threshold.
func CountUnschedulable(pods []*corev1.Pod, threshold time.Duration, now time.Time) int32 {
	var n int32
	for _, p := range pods {
		if unschedulableFor(p, threshold, now) {
			n++
		}
	}
	return n
}
