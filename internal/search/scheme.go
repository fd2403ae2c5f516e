// Package search is karmada-search: it serves search.karmada.io/v1alpha1
// behind the karmada-apiserver's aggregation layer — the ResourceRegistry
// kind (kept in its own etcd prefix), the cache of what registries select
// from the members (/apis/search.karmada.io/v1alpha1/search/cache/<path>),
// and a proxy kubectl can use as a server for those kinds
// (/apis/search.karmada.io/v1alpha1/proxying/karmada/proxy/<path>).
package search

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/runtime/serializer"

	searchv1alpha1 "github.com/karmada-go/karmada/api/search/v1alpha1"
)

var (
	// Scheme knows the served kinds, under their version and, the same Go
	// types, under the internal version (one version: nothing to convert).
	Scheme = runtime.NewScheme()
	// Codecs encode and decode the served kinds.
	Codecs = serializer.NewCodecFactory(Scheme)
	// ParameterCodec decodes query parameters.
	ParameterCodec = runtime.NewParameterCodec(Scheme)
)

var internalVersion = schema.GroupVersion{Group: searchv1alpha1.GroupName, Version: runtime.APIVersionInternal}

func init() {
	if err := searchv1alpha1.AddToScheme(Scheme); err != nil {
		panic(err)
	}
	Scheme.AddKnownTypes(internalVersion, &searchv1alpha1.ResourceRegistry{}, &searchv1alpha1.ResourceRegistryList{})
	metav1.AddToGroupVersion(Scheme, schema.GroupVersion{Version: "v1"})
	unversioned := schema.GroupVersion{Group: "", Version: "v1"}
	Scheme.AddUnversionedTypes(unversioned, &metav1.Status{}, &metav1.APIVersions{}, &metav1.APIGroupList{}, &metav1.APIGroup{}, &metav1.APIResourceList{})
}
