package cluster

import (
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apiserver/pkg/registry/generic"
	genericregistry "k8s.io/apiserver/pkg/registry/generic/registry"
	"k8s.io/apiserver/pkg/registry/rest"

	clusterv1alpha1 "github.com/karmada-go/karmada/api/cluster/v1alpha1"
	"github.com/karmada-go/karmada/internal/apiserverapp"
)

// Storage is the Cluster kind's storage: the resource, its status and its
// proxy.
type Storage struct {
	Cluster *REST
	Status  *apiserverapp.StatusREST
	Proxy   *ProxyREST
}

// REST is the Cluster resource.
type REST struct {
	*genericregistry.Store
}

var _ rest.CategoriesProvider = &REST{}

// Categories puts Clusters in `kubectl get karmada-io`.
func (*REST) Categories() []string { return []string{"karmada-io"} }

// NewStorage makes the storage of Clusters. proxy reaches the members (see
// ProxyREST).
func NewStorage(scheme *runtime.Scheme, optsGetter generic.RESTOptionsGetter, proxy Dialer) (*Storage, error) {
	s := newStrategy(scheme)
	store := &genericregistry.Store{
		NewFunc:                   func() runtime.Object { return &clusterv1alpha1.Cluster{} },
		NewListFunc:               func() runtime.Object { return &clusterv1alpha1.ClusterList{} },
		PredicateFunc:             matcher,
		DefaultQualifiedResource:  clusterv1alpha1.SchemeGroupVersion.WithResource("clusters").GroupResource(),
		SingularQualifiedResource: clusterv1alpha1.SchemeGroupVersion.WithResource("cluster").GroupResource(),

		CreateStrategy:      s,
		UpdateStrategy:      s,
		DeleteStrategy:      s,
		ResetFieldsStrategy: s,

		TableConvertor: tableConvertor{},
	}
	if err := store.CompleteWithOptions(&generic.StoreOptions{RESTOptions: optsGetter, AttrFunc: GetAttrs}); err != nil {
		return nil, err
	}
	status := *store
	st := statusStrategy{s}
	status.UpdateStrategy = st
	status.ResetFieldsStrategy = st
	return &Storage{
		Cluster: &REST{store},
		Status:  &apiserverapp.StatusREST{Store: &status, NewFunc: store.NewFunc},
		Proxy:   &ProxyREST{clusters: store, dialer: proxy},
	}, nil
}
