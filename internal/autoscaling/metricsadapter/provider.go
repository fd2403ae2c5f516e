// Package metricsadapter is karmada-metrics-adapter's server: the control
// plane's metrics.k8s.io/v1beta1 (PodMetrics, NodeMetrics), answered from
// every Ready member's own metrics.k8s.io at the time of the request and
// each item annotated with the member it came from, so that `kubectl top`
// and HPA-style readers work against the karmada-apiserver.
//
// Nothing is cached: a request asks the Ready members in parallel (with
// the adapter's member clients) and merges their answers. Who may read
// what is decided before that, by the karmada-apiserver for the caller
// (delegated authorization: the caller's get or list of pods or nodes of
// metrics.k8s.io, in the request's namespace).
package metricsadapter

import (
	"context"
	"encoding/json"
	"fmt"
	"sort"
	"strings"
	"sync"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/client-go/rest"
	"k8s.io/klog/v2"
	metricsv1beta1 "k8s.io/metrics/pkg/apis/metrics/v1beta1"

	autoscalingv1alpha1 "github.com/karmada-go/karmada/api/autoscaling/v1alpha1"
)

// Members are the member clusters a request asks.
type Members interface {
	// Ready names the members to ask: the Ready ones, in name order.
	Ready(ctx context.Context) ([]string, error)
	// Client reaches one member's API server (its aggregation layer
	// serves metrics.k8s.io there).
	Client(ctx context.Context, cluster string) (rest.Interface, error)
}

// Provider answers metrics.k8s.io requests from the members.
type Provider struct {
	Members Members
	// Timeout bounds each member's answer: a slow member is left out of
	// the answer rather than holding it.
	Timeout time.Duration
}

// Query is what a request selects.
type Query struct {
	// Namespace is empty for every namespace (and for nodes).
	Namespace string
	// Name, when set, selects one object (a get).
	Name                         string
	LabelSelector, FieldSelector string
}

// resource is "pods" or "nodes".
func (q Query) path(resource string) (string, error) {
	p := "/apis/metrics.k8s.io/v1beta1/"
	if q.Namespace != "" {
		// The namespace is the request's own, already a path segment the
		// API server accepted; it is checked again before it becomes part
		// of another path.
		if errs := validation.IsDNS1123Label(q.Namespace); len(errs) > 0 {
			return "", apierrors.NewBadRequest(fmt.Sprintf("namespace %q: %s", q.Namespace, strings.Join(errs, "; ")))
		}
		p += "namespaces/" + q.Namespace + "/"
	}
	p += resource
	if q.Name != "" {
		if errs := validation.IsDNS1123Subdomain(q.Name); len(errs) > 0 {
			return "", apierrors.NewBadRequest(fmt.Sprintf("name %q: %s", q.Name, strings.Join(errs, "; ")))
		}
		p += "/" + q.Name
	}
	return p, nil
}

// answer is one member's.
type answer struct {
	cluster string
	raw     []byte
	err     error
}

// ask sends the query to every Ready member at once.
func (p *Provider) ask(ctx context.Context, resource string, q Query) ([]answer, error) {
	path, err := q.path(resource)
	if err != nil {
		return nil, err
	}
	var params []param
	if q.LabelSelector != "" {
		params = append(params, param{"labelSelector", q.LabelSelector})
	}
	if q.FieldSelector != "" {
		params = append(params, param{"fieldSelector", q.FieldSelector})
	}
	return p.askAll(ctx, resource, path, params)
}

// param is one query parameter of a member request.
type param struct{ name, value string }

// askAll sends a GET of path to every Ready member at once; label names
// the request in the adapter's metric.
func (p *Provider) askAll(ctx context.Context, label, path string, params []param) ([]answer, error) {
	clusters, err := p.Members.Ready(ctx)
	if err != nil {
		return nil, apierrors.NewServiceUnavailable(fmt.Sprintf("listing the member clusters: %v", err))
	}
	answers := make([]answer, len(clusters))
	var wg sync.WaitGroup
	for i, cluster := range clusters {
		wg.Add(1)
		go func() {
			defer wg.Done()
			start := time.Now()
			answers[i] = answer{cluster: cluster}
			answers[i].raw, answers[i].err = p.askOne(ctx, cluster, path, params)
			outcome := "success"
			if answers[i].err != nil {
				outcome = "error"
				if apierrors.IsNotFound(answers[i].err) {
					outcome = "not_found"
				}
			}
			memberRequestDuration.WithLabelValues(label, outcome).Observe(time.Since(start).Seconds())
		}()
	}
	wg.Wait()
	return answers, nil
}

func (p *Provider) askOne(ctx context.Context, cluster, path string, params []param) ([]byte, error) {
	c, err := p.Members.Client(ctx, cluster)
	if err != nil {
		return nil, err
	}
	if p.Timeout > 0 {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, p.Timeout)
		defer cancel()
	}
	req := c.Get().AbsPath(path)
	for _, pr := range params {
		req = req.Param(pr.name, pr.value)
	}
	return req.DoRaw(ctx)
}

// PodMetrics lists the pods' metrics of every Ready member, each
// annotated with its member, in namespace, name and member order. A member
// that does not answer is left out (and logged).
func (p *Provider) PodMetrics(ctx context.Context, q Query) ([]metricsv1beta1.PodMetrics, error) {
	q.Name = ""
	return list[metricsv1beta1.PodMetrics](ctx, p, "pods", q)
}

// NodeMetrics lists the nodes' metrics of every Ready member, as
// PodMetrics the pods'.
func (p *Provider) NodeMetrics(ctx context.Context, q Query) ([]metricsv1beta1.NodeMetrics, error) {
	q.Name, q.Namespace = "", ""
	return list[metricsv1beta1.NodeMetrics](ctx, p, "nodes", q)
}

// PodMetric gets one pod's metrics: found in no member, it is not found;
// found in more than one, the name is ambiguous (a conflict, as Karmada
// answers).
func (p *Provider) PodMetric(ctx context.Context, namespace, name string) (*metricsv1beta1.PodMetrics, error) {
	return get[metricsv1beta1.PodMetrics](ctx, p, "pods", Query{Namespace: namespace, Name: name})
}

// NodeMetric gets one node's metrics, as PodMetric a pod's.
func (p *Provider) NodeMetric(ctx context.Context, name string) (*metricsv1beta1.NodeMetrics, error) {
	return get[metricsv1beta1.NodeMetrics](ctx, p, "nodes", Query{Name: name})
}

// list asks every Ready member for the resource's list and merges the
// items, annotated, in namespace, name and member order.
func list[T metricsObject](ctx context.Context, p *Provider, resource string, q Query) ([]T, error) {
	answers, err := p.ask(ctx, resource, q)
	if err != nil {
		return nil, err
	}
	var out []T
	for _, a := range answers {
		var l struct {
			Items []T `json:"items"`
		}
		if a.err == nil {
			a.err = json.Unmarshal(a.raw, &l)
		}
		if a.err != nil {
			klog.FromContext(ctx).Info("Member left out of the answer", "cluster", a.cluster, "resource", resource, "err", a.err.Error())
			continue
		}
		for i := range l.Items {
			annotate(&l.Items[i], a.cluster)
		}
		out = append(out, l.Items...)
	}
	sort.SliceStable(out, func(i, j int) bool {
		a, b := metaOf(&out[i]), metaOf(&out[j])
		if a.Namespace != b.Namespace {
			return a.Namespace < b.Namespace
		}
		if a.Name != b.Name {
			return a.Name < b.Name
		}
		return a.Annotations[autoscalingv1alpha1.QueryFromClusterAnnotation] < b.Annotations[autoscalingv1alpha1.QueryFromClusterAnnotation]
	})
	return out, nil
}

// get asks every Ready member for one object; a member that has none
// (404) or does not answer is left out. Found in none it is not found, in
// more than one a conflict.
func get[T metricsObject](ctx context.Context, p *Provider, resource string, q Query) (*T, error) {
	answers, err := p.ask(ctx, resource, q)
	if err != nil {
		return nil, err
	}
	var found []T
	for _, a := range answers {
		var m T
		if a.err == nil {
			a.err = json.Unmarshal(a.raw, &m)
		}
		if a.err != nil {
			if !apierrors.IsNotFound(a.err) {
				klog.FromContext(ctx).Info("Member left out of the answer", "cluster", a.cluster, "resource", resource, "err", a.err.Error())
			}
			continue
		}
		annotate(&m, a.cluster)
		found = append(found, m)
	}
	switch len(found) {
	case 0:
		return nil, apierrors.NewNotFound(metricsv1beta1.Resource(resource), q.Name)
	case 1:
		return &found[0], nil
	}
	return nil, apierrors.NewConflict(metricsv1beta1.Resource(resource), q.Name,
		fmt.Errorf("the %s(%s) found in more than one clusters", strings.TrimSuffix(resource, "s"), q.Name))
}

// metricsObject is PodMetrics or NodeMetrics.
type metricsObject interface {
	metricsv1beta1.PodMetrics | metricsv1beta1.NodeMetrics
}

// metaOf is the object's metadata.
func metaOf[T metricsObject](m *T) *metav1.ObjectMeta {
	switch o := any(m).(type) {
	case *metricsv1beta1.PodMetrics:
		return &o.ObjectMeta
	case *metricsv1beta1.NodeMetrics:
		return &o.ObjectMeta
	}
	panic(fmt.Sprintf("metrics object %T", m))
}

// annotate names the member on the object (the members' own
// resourceVersions mean nothing in the control plane).
func annotate[T metricsObject](m *T, cluster string) {
	meta := metaOf(m)
	if meta.Annotations == nil {
		meta.Annotations = map[string]string{}
	}
	meta.Annotations[autoscalingv1alpha1.QueryFromClusterAnnotation] = cluster
	meta.ResourceVersion = ""
}
