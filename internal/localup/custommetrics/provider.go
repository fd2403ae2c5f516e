// Package custommetrics is the local fleet's custom metrics source in each
// push member: a custom.metrics.k8s.io server (on the
// sigs.k8s.io/custom-metrics-apiserver library) whose values are what
// `karmada-local usage set --metric NAME=QUANTITY` wrote on the objects, as
// kwok's emulated usage stands in for the members' kubelets. In a real
// member this place is taken by prometheus-adapter or another adapter; the
// control plane's karmada-metrics-adapter reads either through the same API.
//
// An object's metric NAME is its annotation
// custom-metrics.local.karmada.io/NAME (a quantity). Pods are served from
// an informer; other kinds (Object metrics: a Service, an Ingress, a
// Deployment) are read when asked.
package custommetrics

import (
	"context"
	"fmt"
	"sort"
	"strings"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	apimeta "k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/dynamic"
	corelisters "k8s.io/client-go/listers/core/v1"
	"k8s.io/metrics/pkg/apis/custom_metrics"
	"sigs.k8s.io/custom-metrics-apiserver/pkg/provider"

	autoscalingv1alpha1 "github.com/karmada-go/karmada/api/autoscaling/v1alpha1"
)

// Provider serves the annotated values.
type Provider struct {
	Pods    corelisters.PodLister
	Dynamic dynamic.Interface
	Mapper  apimeta.RESTMapper
	// Now stamps the values (time.Now when nil).
	Now func() time.Time
}

var _ provider.CustomMetricsProvider = &Provider{}

var podsResource = schema.GroupResource{Resource: "pods"}

func (p *Provider) now() time.Time {
	if p.Now != nil {
		return p.Now()
	}
	return time.Now()
}

// valueOf is the object's value of the metric, if it carries one.
func valueOf(annotations map[string]string, metric string) (resource.Quantity, bool, error) {
	v, ok := annotations[autoscalingv1alpha1.LocalCustomMetricAnnotationPrefix+metric]
	if !ok {
		return resource.Quantity{}, false, nil
	}
	q, err := resource.ParseQuantity(v)
	if err != nil {
		return resource.Quantity{}, false, fmt.Errorf("annotation %s%s=%q: %w", autoscalingv1alpha1.LocalCustomMetricAnnotationPrefix, metric, v, err)
	}
	return q, true, nil
}

// emulated metrics carry no labels: a metric selector that needs one
// selects nothing.
func metricSelected(metricSelector labels.Selector) bool {
	return metricSelector == nil || metricSelector.Matches(labels.Set{})
}

func (p *Provider) value(obj metav1.Object, gvk schema.GroupVersionKind, info provider.CustomMetricInfo) (*custom_metrics.MetricValue, bool, error) {
	q, ok, err := valueOf(obj.GetAnnotations(), info.Metric)
	if err != nil || !ok {
		return nil, false, err
	}
	return &custom_metrics.MetricValue{
		DescribedObject: custom_metrics.ObjectReference{
			APIVersion: gvk.GroupVersion().String(), Kind: gvk.Kind,
			Namespace: obj.GetNamespace(), Name: obj.GetName(),
		},
		Metric:    custom_metrics.MetricIdentifier{Name: info.Metric},
		Timestamp: metav1.NewTime(p.now()),
		Value:     q,
	}, true, nil
}

// GetMetricByName is one object's value.
func (p *Provider) GetMetricByName(ctx context.Context, name types.NamespacedName, info provider.CustomMetricInfo, metricSelector labels.Selector) (*custom_metrics.MetricValue, error) {
	if !metricSelected(metricSelector) {
		return nil, provider.NewMetricNotFoundForError(info.GroupResource, info.Metric, name.Name)
	}
	if info.GroupResource == podsResource {
		pod, err := p.Pods.Pods(name.Namespace).Get(name.Name)
		if err != nil {
			if apierrors.IsNotFound(err) {
				return nil, provider.NewMetricNotFoundForError(info.GroupResource, info.Metric, name.Name)
			}
			return nil, err
		}
		v, ok, err := p.value(pod, schema.GroupVersionKind{Version: "v1", Kind: "Pod"}, info)
		if err != nil {
			return nil, apierrors.NewInternalError(err)
		}
		if !ok {
			return nil, provider.NewMetricNotFoundForError(info.GroupResource, info.Metric, name.Name)
		}
		return v, nil
	}
	gvr, gvk, err := p.mapping(info)
	if err != nil {
		return nil, err
	}
	ri := p.Dynamic.Resource(gvr)
	var obj metav1.Object
	if info.Namespaced {
		obj, err = ri.Namespace(name.Namespace).Get(ctx, name.Name, metav1.GetOptions{})
	} else {
		obj, err = ri.Get(ctx, name.Name, metav1.GetOptions{})
	}
	if err != nil {
		if apierrors.IsNotFound(err) {
			return nil, provider.NewMetricNotFoundForError(info.GroupResource, info.Metric, name.Name)
		}
		return nil, err
	}
	v, ok, err := p.value(obj, gvk, info)
	if err != nil {
		return nil, apierrors.NewInternalError(err)
	}
	if !ok {
		return nil, provider.NewMetricNotFoundForError(info.GroupResource, info.Metric, name.Name)
	}
	return v, nil
}

// GetMetricBySelector lists the values of the selected objects that carry
// one, in name order.
func (p *Provider) GetMetricBySelector(ctx context.Context, namespace string, selector labels.Selector, info provider.CustomMetricInfo, metricSelector labels.Selector) (*custom_metrics.MetricValueList, error) {
	out := &custom_metrics.MetricValueList{}
	if !metricSelected(metricSelector) {
		return out, nil
	}
	if info.GroupResource == podsResource {
		pods, err := p.Pods.Pods(namespace).List(selector)
		if err != nil {
			return nil, err
		}
		for _, pod := range pods {
			v, ok, err := p.value(pod, schema.GroupVersionKind{Version: "v1", Kind: "Pod"}, info)
			if err != nil {
				return nil, apierrors.NewInternalError(err)
			}
			if ok {
				out.Items = append(out.Items, *v)
			}
		}
	} else {
		gvr, gvk, err := p.mapping(info)
		if err != nil {
			return nil, err
		}
		ri := p.Dynamic.Resource(gvr)
		opts := metav1.ListOptions{LabelSelector: selector.String()}
		var items []metav1.Object
		if info.Namespaced {
			l, err := ri.Namespace(namespace).List(ctx, opts)
			if err != nil {
				return nil, err
			}
			for i := range l.Items {
				items = append(items, &l.Items[i])
			}
		} else {
			l, err := ri.List(ctx, opts)
			if err != nil {
				return nil, err
			}
			for i := range l.Items {
				items = append(items, &l.Items[i])
			}
		}
		for _, obj := range items {
			v, ok, err := p.value(obj, gvk, info)
			if err != nil {
				return nil, apierrors.NewInternalError(err)
			}
			if ok {
				out.Items = append(out.Items, *v)
			}
		}
	}
	sort.Slice(out.Items, func(i, j int) bool { return out.Items[i].DescribedObject.Name < out.Items[j].DescribedObject.Name })
	return out, nil
}

func (p *Provider) mapping(info provider.CustomMetricInfo) (schema.GroupVersionResource, schema.GroupVersionKind, error) {
	gvr, err := p.Mapper.ResourceFor(info.GroupResource.WithVersion(""))
	if err != nil {
		return schema.GroupVersionResource{}, schema.GroupVersionKind{}, apierrors.NewBadRequest(fmt.Sprintf("resource %q: %v", info.GroupResource.String(), err))
	}
	gvk, err := p.Mapper.KindFor(gvr)
	if err != nil {
		return schema.GroupVersionResource{}, schema.GroupVersionKind{}, apierrors.NewBadRequest(fmt.Sprintf("resource %q: %v", info.GroupResource.String(), err))
	}
	return gvr, gvk, nil
}

// ListAllMetrics names the pod metrics some pod carries (discovery only:
// a metric of another kind is served when asked).
func (p *Provider) ListAllMetrics() []provider.CustomMetricInfo {
	pods, err := p.Pods.List(labels.Everything())
	if err != nil {
		return nil
	}
	seen := map[string]bool{}
	for _, pod := range pods {
		for k := range pod.Annotations {
			if m, ok := strings.CutPrefix(k, autoscalingv1alpha1.LocalCustomMetricAnnotationPrefix); ok && m != "" {
				seen[m] = true
			}
		}
	}
	out := make([]provider.CustomMetricInfo, 0, len(seen))
	for m := range seen {
		out = append(out, provider.CustomMetricInfo{GroupResource: podsResource, Namespaced: true, Metric: m})
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Metric < out[j].Metric })
	return out
}
