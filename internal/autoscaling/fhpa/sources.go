package fhpa

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime/schema"
	metricsv1beta1 "k8s.io/metrics/pkg/apis/metrics/v1beta1"
	metricsclient "k8s.io/metrics/pkg/client/clientset/versioned/typed/metrics/v1beta1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	clusterv1alpha1 "github.com/karmada-go/karmada/api/cluster/v1alpha1"
	searchv1alpha1 "github.com/karmada-go/karmada/api/search/v1alpha1"
	"github.com/karmada-go/karmada/internal/autoscaling/hpa"
	"github.com/karmada-go/karmada/internal/clusters/clusterclient"
)

// MemberClients reads members with the controller manager's member
// clients (push clusters, or pull clusters reached through their proxy).
type MemberClients struct {
	Karmada client.Reader
	Cache   *clusterclient.Cache
}

func (m MemberClients) member(ctx context.Context, name string) (*clusterclient.Member, error) {
	c := &clusterv1alpha1.Cluster{}
	if err := m.Karmada.Get(ctx, client.ObjectKey{Name: name}, c); err != nil {
		return nil, err
	}
	return m.Cache.Get(ctx, c)
}

// Scale reads the member workload's scale subresource.
func (m MemberClients) Scale(ctx context.Context, cluster string, gvr schema.GroupVersionResource, namespace, name string) (int32, labels.Selector, error) {
	mem, err := m.member(ctx, cluster)
	if err != nil {
		return 0, nil, err
	}
	s, err := mem.Dynamic.Resource(gvr).Namespace(namespace).Get(ctx, name, metav1.GetOptions{}, "scale")
	if err != nil {
		return 0, nil, err
	}
	replicas, _, _ := unstructured.NestedInt64(s.Object, "spec", "replicas")
	sel, _, _ := unstructured.NestedString(s.Object, "status", "selector")
	if sel == "" {
		return 0, nil, fmt.Errorf("the scale of %s %s/%s has no selector", gvr.Resource, namespace, name)
	}
	parsed, err := labels.Parse(sel)
	if err != nil {
		return 0, nil, fmt.Errorf("the scale's selector %q: %w", sel, err)
	}
	return int32(replicas), parsed, nil
}

// Pods lists the member's matching pods (from its API server's watch
// cache).
func (m MemberClients) Pods(ctx context.Context, cluster, namespace string, selector labels.Selector) ([]*corev1.Pod, error) {
	mem, err := m.member(ctx, cluster)
	if err != nil {
		return nil, err
	}
	list, err := mem.Kube.CoreV1().Pods(namespace).List(ctx, metav1.ListOptions{LabelSelector: selector.String(), ResourceVersion: "0"})
	if err != nil {
		return nil, err
	}
	out := make([]*corev1.Pod, len(list.Items))
	for i := range list.Items {
		out[i] = &list.Items[i]
	}
	return out, nil
}

// MetricsAPI reads pod samples from the control plane's metrics.k8s.io
// (a metrics adapter), whose items name their member in
// resource.karmada.io/cached-from-cluster.
type MetricsAPI struct {
	Client metricsclient.MetricsV1beta1Interface
}

// Resource sums each pod's containers (or takes the named one).
func (m MetricsAPI) Resource(ctx context.Context, _ []string, namespace string, selector labels.Selector, res corev1.ResourceName, container string) (hpa.Samples, error) {
	list, err := m.Client.PodMetricses(namespace).List(ctx, metav1.ListOptions{LabelSelector: selector.String()})
	if err != nil {
		return nil, fmt.Errorf("unable to get metrics for resource %s: %w", res, err)
	}
	if len(list.Items) == 0 {
		return nil, fmt.Errorf("unable to get metrics for resource %s: no metrics returned from resource metrics API", res)
	}
	return samplesOf(list.Items, "", res, container), nil
}

// MemberMetrics reads pod samples from each member's own metrics.k8s.io
// (metrics-server there) with the controller manager's member clients,
// as it reads the pods.
type MemberMetrics struct {
	Members MemberClients
}

// Resource asks every cluster named; the samples of those that answer
// count (a member without metrics leaves its pods without samples, which
// the algorithm handles as missing), and it fails only when none does.
func (m MemberMetrics) Resource(ctx context.Context, clusters []string, namespace string, selector labels.Selector, res corev1.ResourceName, container string) (hpa.Samples, error) {
	out := hpa.Samples{}
	var errs []string
	for _, cluster := range clusters {
		mem, err := m.Members.member(ctx, cluster)
		if err != nil {
			errs = append(errs, fmt.Sprintf("cluster %s: %v", cluster, err))
			continue
		}
		// Through the member's own client (its connections reused).
		raw, err := mem.Kube.CoreV1().RESTClient().Get().AbsPath("/apis/metrics.k8s.io/v1beta1/namespaces", namespace, "pods").
			Param("labelSelector", selector.String()).DoRaw(ctx)
		if err != nil {
			errs = append(errs, fmt.Sprintf("cluster %s: %v", cluster, err))
			continue
		}
		list := &metricsv1beta1.PodMetricsList{}
		if err := json.Unmarshal(raw, list); err != nil {
			errs = append(errs, fmt.Sprintf("cluster %s: reading pod metrics: %v", cluster, err))
			continue
		}
		for k, v := range samplesOf(list.Items, cluster, res, container) {
			out[k] = v
		}
	}
	if len(out) == 0 {
		if len(errs) > 0 {
			return nil, fmt.Errorf("unable to get metrics for resource %s: %s", res, strings.Join(errs, "; "))
		}
		return nil, fmt.Errorf("unable to get metrics for resource %s: no metrics returned from resource metrics API", res)
	}
	return out, nil
}

// samplesOf turns pod metrics into samples keyed by PodKey: the cluster
// given, or the one each item names.
func samplesOf(items []metricsv1beta1.PodMetrics, cluster string, res corev1.ResourceName, container string) hpa.Samples {
	out := make(hpa.Samples, len(items))
	for _, pm := range items {
		var sum int64
		found := false
		for _, c := range pm.Containers {
			if container != "" && c.Name != container {
				continue
			}
			q, ok := c.Usage[res]
			if !ok {
				found = false
				break
			}
			sum += q.MilliValue()
			found = true
		}
		if !found {
			continue
		}
		from := cluster
		if from == "" {
			from = pm.Annotations[searchv1alpha1.CachedFromClusterAnnotation]
		}
		key := pm.Name
		if from != "" {
			key = PodKey(from, pm.Name)
		}
		out[key] = hpa.Sample{Milli: sum, Timestamp: pm.Timestamp.Time, Window: pm.Window.Duration}
	}
	return out
}
