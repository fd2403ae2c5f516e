package metricsadapter

import (
	"context"
	"fmt"

	"k8s.io/apimachinery/pkg/api/resource"
	metainternalversion "k8s.io/apimachinery/pkg/apis/meta/internalversion"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/runtime/serializer"
	genericapirequest "k8s.io/apiserver/pkg/endpoints/request"
	"k8s.io/apiserver/pkg/registry/rest"
	genericapiserver "k8s.io/apiserver/pkg/server"
	"k8s.io/metrics/pkg/apis/metrics"
	"k8s.io/metrics/pkg/apis/metrics/install"
	metricsv1beta1 "k8s.io/metrics/pkg/apis/metrics/v1beta1"

	autoscalingv1alpha1 "github.com/karmada-go/karmada/api/autoscaling/v1alpha1"
)

// Scheme and Codecs serve metrics.k8s.io (internal and v1beta1).
var (
	Scheme = runtime.NewScheme()
	Codecs = serializer.NewCodecFactory(Scheme)
)

func init() {
	install.Install(Scheme)
	metav1.AddToGroupVersion(Scheme, schema.GroupVersion{Version: "v1"})
	unversioned := schema.GroupVersion{Group: "", Version: "v1"}
	Scheme.AddUnversionedTypes(unversioned, &metav1.Status{}, &metav1.APIVersions{}, &metav1.APIGroupList{}, &metav1.APIGroup{}, &metav1.APIResourceList{})
}

// Install serves metrics.k8s.io/v1beta1 pods and nodes from p.
func Install(server *genericapiserver.GenericAPIServer, p *Provider) error {
	info := genericapiserver.NewDefaultAPIGroupInfo(metrics.GroupName, Scheme, metav1.ParameterCodec, Codecs)
	info.VersionedResourcesStorageMap[metricsv1beta1.SchemeGroupVersion.Version] = map[string]rest.Storage{
		"pods":  &podStorage{p: p},
		"nodes": &nodeStorage{p: p},
	}
	return server.InstallAPIGroup(&info)
}

func selectors(o *metainternalversion.ListOptions) (label, field string) {
	if o == nil {
		return "", ""
	}
	if o.LabelSelector != nil && !o.LabelSelector.Empty() {
		label = o.LabelSelector.String()
	}
	if o.FieldSelector != nil && !o.FieldSelector.Empty() {
		field = o.FieldSelector.String()
	}
	return label, field
}

// podStorage serves PodMetrics.
type podStorage struct{ p *Provider }

var (
	_ rest.Storage              = &podStorage{}
	_ rest.Getter               = &podStorage{}
	_ rest.Lister               = &podStorage{}
	_ rest.Scoper               = &podStorage{}
	_ rest.KindProvider         = &podStorage{}
	_ rest.SingularNameProvider = &podStorage{}
)

func (s *podStorage) New() runtime.Object     { return &metrics.PodMetrics{} }
func (s *podStorage) NewList() runtime.Object { return &metrics.PodMetricsList{} }
func (s *podStorage) Destroy()                {}
func (s *podStorage) NamespaceScoped() bool   { return true }
func (s *podStorage) Kind() string            { return "PodMetrics" }
func (s *podStorage) GetSingularName() string { return "pod" }
func (s *podStorage) Get(ctx context.Context, name string, _ *metav1.GetOptions) (runtime.Object, error) {
	m, err := s.p.PodMetric(ctx, genericapirequest.NamespaceValue(ctx), name)
	if err != nil {
		return nil, err
	}
	out := &metrics.PodMetrics{}
	if err := Scheme.Convert(m, out, nil); err != nil {
		return nil, err
	}
	return out, nil
}

func (s *podStorage) List(ctx context.Context, o *metainternalversion.ListOptions) (runtime.Object, error) {
	label, field := selectors(o)
	ms, err := s.p.PodMetrics(ctx, Query{Namespace: genericapirequest.NamespaceValue(ctx), LabelSelector: label, FieldSelector: field})
	if err != nil {
		return nil, err
	}
	out := &metrics.PodMetricsList{Items: make([]metrics.PodMetrics, len(ms))}
	for i := range ms {
		if err := Scheme.Convert(&ms[i], &out.Items[i], nil); err != nil {
			return nil, err
		}
	}
	return out, nil
}

func (s *podStorage) ConvertToTable(_ context.Context, obj runtime.Object, _ runtime.Object) (*metav1.Table, error) {
	t := &metav1.Table{ColumnDefinitions: []metav1.TableColumnDefinition{
		{Name: "Name", Type: "string", Format: "name", Description: "the pod's name"},
		{Name: "Cluster", Type: "string", Description: "the member cluster that answered"},
		{Name: "CPU", Type: "string", Description: "the pod's CPU usage (its containers' sum)"},
		{Name: "Memory", Type: "string", Description: "the pod's memory working set (its containers' sum)"},
		{Name: "Window", Type: "string", Description: "the window the usage is measured over"},
	}}
	var items []metrics.PodMetrics
	switch o := obj.(type) {
	case *metrics.PodMetrics:
		items = []metrics.PodMetrics{*o}
	case *metrics.PodMetricsList:
		items = o.Items
	default:
		return nil, fmt.Errorf("a table of %T", obj)
	}
	for i := range items {
		m := &items[i]
		cpu, mem := resource.Quantity{}, resource.Quantity{}
		for _, c := range m.Containers {
			cpu.Add(c.Usage["cpu"])
			mem.Add(c.Usage["memory"])
		}
		t.Rows = append(t.Rows, metav1.TableRow{
			Cells:  []any{m.Name, m.Annotations[autoscalingv1alpha1.QueryFromClusterAnnotation], cpu.String(), mem.String(), m.Window.Duration.String()},
			Object: runtime.RawExtension{Object: m},
		})
	}
	return t, nil
}

// nodeStorage serves NodeMetrics.
type nodeStorage struct{ p *Provider }

var (
	_ rest.Storage              = &nodeStorage{}
	_ rest.Getter               = &nodeStorage{}
	_ rest.Lister               = &nodeStorage{}
	_ rest.Scoper               = &nodeStorage{}
	_ rest.KindProvider         = &nodeStorage{}
	_ rest.SingularNameProvider = &nodeStorage{}
)

func (s *nodeStorage) New() runtime.Object     { return &metrics.NodeMetrics{} }
func (s *nodeStorage) NewList() runtime.Object { return &metrics.NodeMetricsList{} }
func (s *nodeStorage) Destroy()                {}
func (s *nodeStorage) NamespaceScoped() bool   { return false }
func (s *nodeStorage) Kind() string            { return "NodeMetrics" }
func (s *nodeStorage) GetSingularName() string { return "node" }
func (s *nodeStorage) Get(ctx context.Context, name string, _ *metav1.GetOptions) (runtime.Object, error) {
	m, err := s.p.NodeMetric(ctx, name)
	if err != nil {
		return nil, err
	}
	out := &metrics.NodeMetrics{}
	if err := Scheme.Convert(m, out, nil); err != nil {
		return nil, err
	}
	return out, nil
}

func (s *nodeStorage) List(ctx context.Context, o *metainternalversion.ListOptions) (runtime.Object, error) {
	label, field := selectors(o)
	ms, err := s.p.NodeMetrics(ctx, Query{LabelSelector: label, FieldSelector: field})
	if err != nil {
		return nil, err
	}
	out := &metrics.NodeMetricsList{Items: make([]metrics.NodeMetrics, len(ms))}
	for i := range ms {
		if err := Scheme.Convert(&ms[i], &out.Items[i], nil); err != nil {
			return nil, err
		}
	}
	return out, nil
}

func (s *nodeStorage) ConvertToTable(_ context.Context, obj runtime.Object, _ runtime.Object) (*metav1.Table, error) {
	t := &metav1.Table{ColumnDefinitions: []metav1.TableColumnDefinition{
		{Name: "Name", Type: "string", Format: "name", Description: "the node's name"},
		{Name: "Cluster", Type: "string", Description: "the member cluster that answered"},
		{Name: "CPU", Type: "string", Description: "the node's CPU usage"},
		{Name: "Memory", Type: "string", Description: "the node's memory working set"},
		{Name: "Window", Type: "string", Description: "the window the usage is measured over"},
	}}
	var items []metrics.NodeMetrics
	switch o := obj.(type) {
	case *metrics.NodeMetrics:
		items = []metrics.NodeMetrics{*o}
	case *metrics.NodeMetricsList:
		items = o.Items
	default:
		return nil, fmt.Errorf("a table of %T", obj)
	}
	for i := range items {
		m := &items[i]
		cpu, mem := m.Usage["cpu"], m.Usage["memory"]
		t.Rows = append(t.Rows, metav1.TableRow{
			Cells:  []any{m.Name, m.Annotations[autoscalingv1alpha1.QueryFromClusterAnnotation], cpu.String(), mem.String(), m.Window.Duration.String()},
			Object: runtime.RawExtension{Object: m},
		})
	}
	return t, nil
}
