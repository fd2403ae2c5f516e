package apiserverapp

import (
	"context"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	genericregistry "k8s.io/apiserver/pkg/registry/generic/registry"
	"k8s.io/apiserver/pkg/registry/rest"
	"sigs.k8s.io/structured-merge-diff/v4/fieldpath"
)

// StatusREST is a status subresource: a copy of the resource's store whose
// update strategy writes the status only.
type StatusREST struct {
	Store   *genericregistry.Store
	NewFunc func() runtime.Object
}

var _ rest.Patcher = &StatusREST{}

// New is an empty object of the resource.
func (r *StatusREST) New() runtime.Object { return r.NewFunc() }

// Destroy: the store is the main resource's, destroyed with it.
func (r *StatusREST) Destroy() {}

// Get reads an object for a status update.
func (r *StatusREST) Get(ctx context.Context, name string, options *metav1.GetOptions) (runtime.Object, error) {
	return r.Store.Get(ctx, name, options)
}

// Update writes an object's status only; it never creates.
func (r *StatusREST) Update(ctx context.Context, name string, objInfo rest.UpdatedObjectInfo, createValidation rest.ValidateObjectFunc,
	updateValidation rest.ValidateObjectUpdateFunc, _ bool, options *metav1.UpdateOptions) (runtime.Object, bool, error) {
	return r.Store.Update(ctx, name, objInfo, createValidation, updateValidation, false, options)
}

// GetResetFields is what a status write leaves alone.
func (r *StatusREST) GetResetFields() map[fieldpath.APIVersion]*fieldpath.Set {
	return r.Store.GetResetFields()
}

// ConvertToTable prints objects read through the status subresource.
func (r *StatusREST) ConvertToTable(ctx context.Context, object runtime.Object, tableOptions runtime.Object) (*metav1.Table, error) {
	return r.Store.ConvertToTable(ctx, object, tableOptions)
}
