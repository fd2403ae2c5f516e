// Package registry is the storage of ResourceRegistries in karmada-search:
// the resource and its status subresource, and their validation.
package registry

import (
	"context"
	"fmt"

	apiequality "k8s.io/apimachinery/pkg/api/equality"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/apimachinery/pkg/util/validation/field"
	"k8s.io/apiserver/pkg/registry/generic"
	genericregistry "k8s.io/apiserver/pkg/registry/generic/registry"
	"k8s.io/apiserver/pkg/registry/rest"
	"k8s.io/apiserver/pkg/storage"
	"k8s.io/apiserver/pkg/storage/names"
	"sigs.k8s.io/structured-merge-diff/v4/fieldpath"

	searchv1alpha1 "github.com/karmada-go/karmada/api/search/v1alpha1"
	"github.com/karmada-go/karmada/internal/apiserverapp"
)

// Storage is the resource and its status.
type Storage struct {
	Registry *genericregistry.Store
	Status   *apiserverapp.StatusREST
}

// NewStorage makes the storage of ResourceRegistries.
func NewStorage(scheme *runtime.Scheme, optsGetter generic.RESTOptionsGetter) (*Storage, error) {
	s := strategy{scheme, names.SimpleNameGenerator}
	store := &genericregistry.Store{
		NewFunc:                   func() runtime.Object { return &searchv1alpha1.ResourceRegistry{} },
		NewListFunc:               func() runtime.Object { return &searchv1alpha1.ResourceRegistryList{} },
		PredicateFunc:             matcher,
		DefaultQualifiedResource:  searchv1alpha1.SchemeGroupVersion.WithResource("resourceregistries").GroupResource(),
		SingularQualifiedResource: searchv1alpha1.SchemeGroupVersion.WithResource("resourceregistry").GroupResource(),
		CreateStrategy:            s,
		UpdateStrategy:            s,
		DeleteStrategy:            s,
		ResetFieldsStrategy:       s,
		TableConvertor:            rest.NewDefaultTableConvertor(searchv1alpha1.SchemeGroupVersion.WithResource("resourceregistries").GroupResource()),
	}
	if err := store.CompleteWithOptions(&generic.StoreOptions{RESTOptions: optsGetter, AttrFunc: getAttrs}); err != nil {
		return nil, err
	}
	status := *store
	st := statusStrategy{s}
	status.UpdateStrategy = st
	status.ResetFieldsStrategy = st
	return &Storage{Registry: store, Status: &apiserverapp.StatusREST{Store: &status, NewFunc: store.NewFunc}}, nil
}

type strategy struct {
	runtime.ObjectTyper
	names.NameGenerator
}

func (strategy) NamespaceScoped() bool { return false }

func (strategy) GetResetFields() map[fieldpath.APIVersion]*fieldpath.Set {
	return map[fieldpath.APIVersion]*fieldpath.Set{
		fieldpath.APIVersion(searchv1alpha1.SchemeGroupVersion.String()): fieldpath.NewSet(fieldpath.MakePathOrDie("status")),
	}
}

func (strategy) PrepareForCreate(_ context.Context, obj runtime.Object) {
	r := obj.(*searchv1alpha1.ResourceRegistry)
	r.Status = searchv1alpha1.ResourceRegistryStatus{}
	r.Generation = 1
}

func (strategy) PrepareForUpdate(_ context.Context, obj, old runtime.Object) {
	r, prev := obj.(*searchv1alpha1.ResourceRegistry), old.(*searchv1alpha1.ResourceRegistry)
	r.Status = prev.Status
	if !apiequality.Semantic.DeepEqual(r.Spec, prev.Spec) {
		r.Generation = prev.Generation + 1
	}
}

func (strategy) Validate(_ context.Context, obj runtime.Object) field.ErrorList {
	return Validate(obj.(*searchv1alpha1.ResourceRegistry))
}

func (strategy) WarningsOnCreate(context.Context, runtime.Object) []string { return nil }
func (strategy) AllowCreateOnUpdate() bool                                 { return false }
func (strategy) AllowUnconditionalUpdate() bool                            { return true }
func (strategy) Canonicalize(runtime.Object)                               {}
func (strategy) ValidateUpdate(_ context.Context, obj, _ runtime.Object) field.ErrorList {
	return Validate(obj.(*searchv1alpha1.ResourceRegistry))
}
func (strategy) WarningsOnUpdate(context.Context, runtime.Object, runtime.Object) []string {
	return nil
}

type statusStrategy struct{ strategy }

func (statusStrategy) GetResetFields() map[fieldpath.APIVersion]*fieldpath.Set {
	return map[fieldpath.APIVersion]*fieldpath.Set{
		fieldpath.APIVersion(searchv1alpha1.SchemeGroupVersion.String()): fieldpath.NewSet(fieldpath.MakePathOrDie("spec"), fieldpath.MakePathOrDie("metadata")),
	}
}

func (statusStrategy) PrepareForUpdate(_ context.Context, obj, old runtime.Object) {
	r, prev := obj.(*searchv1alpha1.ResourceRegistry), old.(*searchv1alpha1.ResourceRegistry)
	r.Spec = prev.Spec
	metav1.ResetObjectMetaForStatus(r, prev)
}

func (statusStrategy) ValidateUpdate(context.Context, runtime.Object, runtime.Object) field.ErrorList {
	return nil
}

// Validate checks a registry, naming the field, the value and what is
// allowed.
func Validate(r *searchv1alpha1.ResourceRegistry) field.ErrorList {
	var errs field.ErrorList
	spec := field.NewPath("spec")
	if len(r.Spec.ResourceSelectors) == 0 {
		errs = append(errs, field.Required(spec.Child("resourceSelectors"), "at least one kind to cache"))
	}
	for i, s := range r.Spec.ResourceSelectors {
		p := spec.Child("resourceSelectors").Index(i)
		if s.APIVersion == "" {
			errs = append(errs, field.Required(p.Child("apiVersion"), "e.g. v1 or apps/v1"))
		} else if _, err := schema.ParseGroupVersion(s.APIVersion); err != nil {
			errs = append(errs, field.Invalid(p.Child("apiVersion"), s.APIVersion, "must be <version> or <group>/<version>"))
		}
		if s.Kind == "" {
			errs = append(errs, field.Required(p.Child("kind"), "e.g. Pod or Deployment"))
		}
		if s.Namespace != "" {
			for _, msg := range validation.IsDNS1123Label(s.Namespace) {
				errs = append(errs, field.Invalid(p.Child("namespace"), s.Namespace, msg))
			}
		}
	}
	for _, n := range r.Spec.TargetCluster.ClusterNames {
		if n == "" {
			errs = append(errs, field.Invalid(spec.Child("targetCluster", "clusterNames"), n, "a cluster name"))
		}
	}
	if r.Spec.TargetCluster.LabelSelector != nil {
		if _, err := metav1.LabelSelectorAsSelector(r.Spec.TargetCluster.LabelSelector); err != nil {
			errs = append(errs, field.Invalid(spec.Child("targetCluster", "labelSelector"), r.Spec.TargetCluster.LabelSelector, err.Error()))
		}
	}
	if r.Spec.BackendStore != nil && r.Spec.BackendStore.OpenSearch != nil {
		errs = append(errs, field.NotSupported(spec.Child("backendStore", "openSearch"), "openSearch", []string{"(none: karmada-search keeps its cache in memory)"}))
	}
	return errs
}

func getAttrs(obj runtime.Object) (labels.Set, fields.Set, error) {
	r, ok := obj.(*searchv1alpha1.ResourceRegistry)
	if !ok {
		return nil, nil, fmt.Errorf("not a ResourceRegistry: %T", obj)
	}
	return r.Labels, generic.ObjectMetaFieldsSet(&r.ObjectMeta, false), nil
}

func matcher(label labels.Selector, field fields.Selector) storage.SelectionPredicate {
	return storage.SelectionPredicate{Label: label, Field: field, GetAttrs: getAttrs}
}
