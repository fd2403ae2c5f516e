package metricsadapter

import (
	"context"
	"encoding/json"
	"fmt"
	"regexp"
	"sort"
	"strings"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/klog/v2"
	"k8s.io/metrics/pkg/apis/custom_metrics"
	custommetricsv1beta2 "k8s.io/metrics/pkg/apis/custom_metrics/v1beta2"
	"sigs.k8s.io/custom-metrics-apiserver/pkg/provider"
)

// customPrefix is where the members serve custom metrics: v1beta2, the
// version every current adapter (prometheus-adapter, KEDA's, the
// custom-metrics-apiserver library's) serves.
const customPrefix = "/apis/custom.metrics.k8s.io/v1beta2"

// CustomProvider serves custom.metrics.k8s.io from the members' own
// custom.metrics.k8s.io, as Karmada's adapter does: each request is asked
// of every Ready member, and the values of one described object found in
// several members are added up (a metric of pods that share a name across
// members, or of an object every member has, counts each member's share).
type CustomProvider struct {
	*Provider
}

var _ provider.CustomMetricsProvider = CustomProvider{}

// segment is what may stand between two slashes of a member path: no
// slash, and never "." or ".." (a client would resolve them).
var segment = regexp.MustCompile(`^[A-Za-z0-9_:.\-]+$`)

func checkSegment(what, v string) error {
	if !segment.MatchString(v) || v == "." || v == ".." {
		return apierrors.NewBadRequest(fmt.Sprintf("%s %q: only letters, digits, '_', ':', '.' and '-' are allowed, and not %q or %q alone", what, v, ".", ".."))
	}
	return nil
}

// customPath is the member path of a metric of one object (name) or of
// every object a selector picks (name "*").
func customPath(info provider.CustomMetricInfo, namespace, name string) (string, error) {
	if err := checkSegment("metric", info.Metric); err != nil {
		return "", err
	}
	if name != custommetricsv1beta2.AllObjects {
		if errs := validation.IsDNS1123Subdomain(name); len(errs) > 0 {
			return "", apierrors.NewBadRequest(fmt.Sprintf("name %q: %s", name, strings.Join(errs, "; ")))
		}
	}
	if info.GroupResource == (schema.GroupResource{Resource: "namespaces"}) {
		// A namespace's own metrics: /namespaces/NAME/metrics/METRIC.
		return customPrefix + "/namespaces/" + name + "/metrics/" + info.Metric, nil
	}
	resource := info.GroupResource.String()
	if err := checkSegment("resource", resource); err != nil {
		return "", err
	}
	p := customPrefix
	if info.Namespaced {
		if errs := validation.IsDNS1123Label(namespace); len(errs) > 0 {
			return "", apierrors.NewBadRequest(fmt.Sprintf("namespace %q: %s", namespace, strings.Join(errs, "; ")))
		}
		p += "/namespaces/" + namespace
	}
	return p + "/" + resource + "/" + name + "/" + info.Metric, nil
}

// values asks every Ready member and returns the items of those that
// answered; members that failed are logged and left out, as Karmada's
// adapter leaves them out.
func (c CustomProvider) values(ctx context.Context, path string, selector, metricSelector labels.Selector) []custom_metrics.MetricValue {
	var params []param
	if selector != nil && !selector.Empty() {
		params = append(params, param{"labelSelector", selector.String()})
	}
	if metricSelector != nil && !metricSelector.Empty() {
		params = append(params, param{"metricLabelSelector", metricSelector.String()})
	}
	answers, err := c.askAll(ctx, "custom", path, params)
	if err != nil {
		klog.FromContext(ctx).Info("Custom metrics asked of no member", "err", err.Error())
		return nil
	}
	var out []custom_metrics.MetricValue
	for _, a := range answers {
		l := &custommetricsv1beta2.MetricValueList{}
		if a.err == nil {
			a.err = json.Unmarshal(a.raw, l)
		}
		internal := &custom_metrics.MetricValueList{}
		if a.err == nil {
			a.err = custommetricsv1beta2.Convert_v1beta2_MetricValueList_To_custom_metrics_MetricValueList(l, internal, nil)
		}
		if a.err != nil {
			if !apierrors.IsNotFound(a.err) {
				klog.FromContext(ctx).Info("Member left out of the answer", "cluster", a.cluster, "resource", "custom", "path", path, "err", a.err.Error())
			}
			continue
		}
		out = append(out, internal.Items...)
	}
	return out
}

// GetMetricByName adds up the object's metric over the members that have
// it; found in none, the metric is not found.
func (c CustomProvider) GetMetricByName(ctx context.Context, name types.NamespacedName, info provider.CustomMetricInfo, metricSelector labels.Selector) (*custom_metrics.MetricValue, error) {
	path, err := customPath(info, name.Namespace, name.Name)
	if err != nil {
		return nil, err
	}
	items := c.values(ctx, path, nil, metricSelector)
	if len(items) == 0 {
		return nil, provider.NewMetricNotFoundError(info.GroupResource, info.Metric)
	}
	sum := items[0]
	sum.Value = sum.Value.DeepCopy()
	for _, v := range items[1:] {
		sum.Value.Add(v.Value)
	}
	return &sum, nil
}

// GetMetricBySelector lists the metric of the objects the selector
// picks in every member; an object named alike in several members is one
// item with the members' values added up. Items are in name order.
func (c CustomProvider) GetMetricBySelector(ctx context.Context, namespace string, selector labels.Selector, info provider.CustomMetricInfo, metricSelector labels.Selector) (*custom_metrics.MetricValueList, error) {
	path, err := customPath(info, namespace, custommetricsv1beta2.AllObjects)
	if err != nil {
		return nil, err
	}
	items := c.values(ctx, path, selector, metricSelector)
	byName := map[string]int{}
	out := &custom_metrics.MetricValueList{}
	for _, v := range items {
		if i, ok := byName[v.DescribedObject.Name]; ok {
			out.Items[i].Value.Add(v.Value)
			continue
		}
		v.Value = v.Value.DeepCopy()
		byName[v.DescribedObject.Name] = len(out.Items)
		out.Items = append(out.Items, v)
	}
	if len(out.Items) == 0 {
		return nil, provider.NewMetricNotFoundError(info.GroupResource, info.Metric)
	}
	sort.SliceStable(out.Items, func(i, j int) bool {
		return out.Items[i].DescribedObject.Name < out.Items[j].DescribedObject.Name
	})
	return out, nil
}

// ListAllMetrics is the union of the metrics the Ready members list in
// their custom.metrics.k8s.io discovery ("RESOURCE/METRIC" names), in
// name order. It serves discovery only: a request for a metric a member
// did not list is still asked.
func (c CustomProvider) ListAllMetrics() []provider.CustomMetricInfo {
	ctx := context.Background()
	answers, err := c.askAll(ctx, "custom_discovery", customPrefix, nil)
	if err != nil {
		klog.Info("Custom metrics discovery asked of no member", "err", err.Error())
		return nil
	}
	seen := map[provider.CustomMetricInfo]bool{}
	var out []provider.CustomMetricInfo
	for _, a := range answers {
		l := &metav1.APIResourceList{}
		if a.err == nil {
			a.err = json.Unmarshal(a.raw, l)
		}
		if a.err != nil {
			klog.Info("Member left out of custom metrics discovery", "cluster", a.cluster, "err", a.err.Error())
			continue
		}
		for _, r := range l.APIResources {
			resource, metric, ok := strings.Cut(r.Name, "/")
			if !ok || metric == "" {
				continue
			}
			info := provider.CustomMetricInfo{GroupResource: schema.ParseGroupResource(resource), Namespaced: r.Namespaced, Metric: metric}
			if !seen[info] {
				seen[info] = true
				out = append(out, info)
			}
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].String() < out[j].String() })
	return out
}
