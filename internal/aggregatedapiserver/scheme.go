// Package aggregatedapiserver is karmada-aggregated-apiserver: it serves the
// cluster.karmada.io/v1alpha1 API (the Cluster kind with its status and proxy
// subresources) behind the karmada-apiserver's aggregation layer, from its
// own etcd prefix, built on k8s.io/apiserver.
package aggregatedapiserver

import (
	"net/url"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/conversion"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/runtime/serializer"

	clusterv1alpha1 "github.com/karmada-go/karmada/api/cluster/v1alpha1"
)

var (
	// Scheme knows the served kinds, under their version and, the same Go
	// types, under the internal version k8s.io/apiserver converts through
	// (one version, nothing to convert: the types are their own internal
	// form).
	Scheme = runtime.NewScheme()
	// Codecs encode and decode the served kinds.
	Codecs = serializer.NewCodecFactory(Scheme)
	// ParameterCodec decodes query parameters (the proxy's options).
	ParameterCodec = runtime.NewParameterCodec(Scheme)
)

// internalVersion is the internal version of the group.
var internalVersion = schema.GroupVersion{Group: clusterv1alpha1.GroupName, Version: runtime.APIVersionInternal}

func init() {
	if err := addToScheme(Scheme); err != nil {
		panic(err)
	}
}

func addToScheme(s *runtime.Scheme) error {
	if err := clusterv1alpha1.AddToScheme(s); err != nil {
		return err
	}
	s.AddKnownTypes(internalVersion, &clusterv1alpha1.Cluster{}, &clusterv1alpha1.ClusterList{}, &clusterv1alpha1.ClusterProxyOptions{})
	// The proxy's options come as query parameters.
	if err := s.AddConversionFunc((*url.Values)(nil), (*clusterv1alpha1.ClusterProxyOptions)(nil), func(a, b any, _ conversion.Scope) error {
		b.(*clusterv1alpha1.ClusterProxyOptions).Path = (*a.(*url.Values)).Get("path")
		return nil
	}); err != nil {
		return err
	}
	if err := s.AddFieldLabelConversionFunc(clusterv1alpha1.SchemeGroupVersion.WithKind("Cluster"), func(label, value string) (string, string, error) {
		switch label {
		case "metadata.name":
			return label, value, nil
		}
		return "", "", fieldLabelError(label)
	}); err != nil {
		return err
	}
	// What every API server serves beside its groups.
	metav1.AddToGroupVersion(s, schema.GroupVersion{Version: "v1"})
	unversioned := schema.GroupVersion{Group: "", Version: "v1"}
	s.AddUnversionedTypes(unversioned, &metav1.Status{}, &metav1.APIVersions{}, &metav1.APIGroupList{}, &metav1.APIGroup{}, &metav1.APIResourceList{})
	return nil
}

// fieldLabelError says which field selectors Clusters support.
type fieldLabelError string

func (e fieldLabelError) Error() string {
	return "field label not supported for Cluster: " + string(e) + " (supported: metadata.name)"
}
