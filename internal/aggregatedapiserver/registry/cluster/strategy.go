// Package cluster is the storage of the Cluster kind in
// karmada-aggregated-apiserver: its strategies (what create, update and
// status updates may change), its validation (what the CRD's schema
// checked; the rules of karmada-webhook still apply through the admission
// webhook plugin), its table, and the proxy subresource.
package cluster

import (
	"context"
	"fmt"

	apiequality "k8s.io/apimachinery/pkg/api/equality"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/validation/field"
	"k8s.io/apiserver/pkg/registry/generic"
	"k8s.io/apiserver/pkg/storage"
	"k8s.io/apiserver/pkg/storage/names"
	"sigs.k8s.io/structured-merge-diff/v4/fieldpath"

	clusterv1alpha1 "github.com/karmada-go/karmada/api/cluster/v1alpha1"
)

// strategy is how Clusters are created, updated and deleted.
type strategy struct {
	runtime.ObjectTyper
	names.NameGenerator
}

// newStrategy is the strategy of the main resource.
func newStrategy(typer runtime.ObjectTyper) strategy {
	return strategy{typer, names.SimpleNameGenerator}
}

func (strategy) NamespaceScoped() bool { return false }

// GetResetFields: a write of the main resource leaves the status alone.
func (strategy) GetResetFields() map[fieldpath.APIVersion]*fieldpath.Set {
	return map[fieldpath.APIVersion]*fieldpath.Set{
		fieldpath.APIVersion(clusterv1alpha1.SchemeGroupVersion.String()): fieldpath.NewSet(fieldpath.MakePathOrDie("status")),
	}
}

// PrepareForCreate: a new Cluster has no status and generation 1.
func (strategy) PrepareForCreate(_ context.Context, obj runtime.Object) {
	c := obj.(*clusterv1alpha1.Cluster)
	c.Status = clusterv1alpha1.ClusterStatus{}
	c.Generation = 1
}

// PrepareForUpdate keeps the status, and moves the generation when the spec
// changes.
func (strategy) PrepareForUpdate(_ context.Context, obj, old runtime.Object) {
	c, prev := obj.(*clusterv1alpha1.Cluster), old.(*clusterv1alpha1.Cluster)
	c.Status = prev.Status
	if !apiequality.Semantic.DeepEqual(c.Spec, prev.Spec) {
		c.Generation = prev.Generation + 1
	}
}

func (strategy) Validate(_ context.Context, obj runtime.Object) field.ErrorList {
	return Validate(obj.(*clusterv1alpha1.Cluster), nil)
}

func (strategy) WarningsOnCreate(context.Context, runtime.Object) []string { return nil }

func (strategy) AllowCreateOnUpdate() bool { return false }

func (strategy) AllowUnconditionalUpdate() bool { return true }

func (strategy) Canonicalize(runtime.Object) {}

func (strategy) ValidateUpdate(_ context.Context, obj, old runtime.Object) field.ErrorList {
	return Validate(obj.(*clusterv1alpha1.Cluster), old.(*clusterv1alpha1.Cluster))
}

func (strategy) WarningsOnUpdate(context.Context, runtime.Object, runtime.Object) []string {
	return nil
}

// statusStrategy is how the status subresource updates a Cluster: only its
// status.
type statusStrategy struct{ strategy }

// GetResetFields: a write of the status leaves the rest alone.
func (statusStrategy) GetResetFields() map[fieldpath.APIVersion]*fieldpath.Set {
	return map[fieldpath.APIVersion]*fieldpath.Set{
		fieldpath.APIVersion(clusterv1alpha1.SchemeGroupVersion.String()): fieldpath.NewSet(
			fieldpath.MakePathOrDie("spec"), fieldpath.MakePathOrDie("metadata", "labels"), fieldpath.MakePathOrDie("metadata", "annotations"),
			fieldpath.MakePathOrDie("metadata", "finalizers"), fieldpath.MakePathOrDie("metadata", "ownerReferences")),
	}
}

func (statusStrategy) PrepareForUpdate(_ context.Context, obj, old runtime.Object) {
	c, prev := obj.(*clusterv1alpha1.Cluster), old.(*clusterv1alpha1.Cluster)
	c.Spec = prev.Spec
	metav1.ResetObjectMetaForStatus(c, prev)
}

func (statusStrategy) ValidateUpdate(_ context.Context, obj, _ runtime.Object) field.ErrorList {
	return validateStatus(&obj.(*clusterv1alpha1.Cluster).Status, field.NewPath("status"))
}

// GetAttrs is what label and field selectors see of a Cluster.
func GetAttrs(obj runtime.Object) (labels.Set, fields.Set, error) {
	c, ok := obj.(*clusterv1alpha1.Cluster)
	if !ok {
		return nil, nil, fmt.Errorf("not a Cluster: %T", obj)
	}
	return c.Labels, generic.ObjectMetaFieldsSet(&c.ObjectMeta, false), nil
}

// matcher selects Clusters by label and field.
func matcher(label labels.Selector, field fields.Selector) storage.SelectionPredicate {
	return storage.SelectionPredicate{Label: label, Field: field, GetAttrs: GetAttrs}
}
