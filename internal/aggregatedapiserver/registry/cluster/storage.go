package cluster

import (
	"context"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apiserver/pkg/registry/generic"
	genericregistry "k8s.io/apiserver/pkg/registry/generic/registry"
	"k8s.io/apiserver/pkg/registry/rest"
	"sigs.k8s.io/structured-merge-diff/v4/fieldpath"

	clusterv1alpha1 "github.com/karmada-go/karmada/api/cluster/v1alpha1"
)

// Storage is the Cluster kind's storage: the resource, its status and its
// proxy.
type Storage struct {
	Cluster *REST
	Status  *StatusREST
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
		Status:  &StatusREST{store: &status},
		Proxy:   &ProxyREST{clusters: store, dialer: proxy},
	}, nil
}

// StatusREST is the status subresource.
type StatusREST struct {
	store *genericregistry.Store
}

var _ rest.Patcher = &StatusREST{}

// New is an empty Cluster.
func (r *StatusREST) New() runtime.Object { return &clusterv1alpha1.Cluster{} }

// Destroy: the store is the main resource's, destroyed with it.
func (r *StatusREST) Destroy() {}

// Get reads a Cluster for a status update.
func (r *StatusREST) Get(ctx context.Context, name string, options *metav1.GetOptions) (runtime.Object, error) {
	return r.store.Get(ctx, name, options)
}

// Update writes a Cluster's status only.
func (r *StatusREST) Update(ctx context.Context, name string, objInfo rest.UpdatedObjectInfo, createValidation rest.ValidateObjectFunc,
	updateValidation rest.ValidateObjectUpdateFunc, forceAllowCreate bool, options *metav1.UpdateOptions) (runtime.Object, bool, error) {
	// A status update never creates.
	return r.store.Update(ctx, name, objInfo, createValidation, updateValidation, false, options)
}

// GetResetFields is what a status write leaves alone.
func (r *StatusREST) GetResetFields() map[fieldpath.APIVersion]*fieldpath.Set {
	return r.store.GetResetFields()
}

// ConvertToTable prints Clusters read through the status subresource.
func (r *StatusREST) ConvertToTable(ctx context.Context, object runtime.Object, tableOptions runtime.Object) (*metav1.Table, error) {
	return r.store.ConvertToTable(ctx, object, tableOptions)
}
