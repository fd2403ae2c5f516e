package detector

import (
	"context"
	"fmt"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/dynamic"
	"sigs.k8s.io/controller-runtime/pkg/client"

	policyv1alpha1 "github.com/karmada-go/karmada/api/policy/v1alpha1"
	workv1alpha2 "github.com/karmada-go/karmada/api/work/v1alpha2"
	"github.com/karmada-go/karmada/internal/anybinding"
	"github.com/karmada-go/karmada/internal/names"
	"github.com/karmada-go/karmada/internal/propagation/policymatch"
)

// lazyWait reports whether the binding of obj, claimed by c, is left as it
// is because c is Lazy (activationPreference: Lazy) and the template has not
// changed: a change of a lazy policy reaches a template only when the
// template itself next changes, as in Karmada.
//
//   - With a binding: the template is what the binding was last made from
//     (its digest), so the policy's change waits.
//   - Without one: a template created since the policy was is a change of
//     its own and gets its binding now; one that was there before is marked
//     with its digest (LazyActivationAnnotation) and gets its binding once
//     it differs from it.
func (d *Detector) lazyWait(ctx context.Context, ri dynamic.ResourceInterface, obj *unstructured.Unstructured, c policymatch.Candidate) (bool, error) {
	if c.Spec == nil || c.Spec.ActivationPreference != policyv1alpha1.LazyActivation {
		return false, nil
	}
	hash, err := anybinding.TemplateHash(obj)
	if err != nil {
		return false, err
	}
	b := anybinding.KindFor(obj.GetNamespace()).New().Object
	err = d.Client.Get(ctx, client.ObjectKey{Namespace: obj.GetNamespace(), Name: names.BindingName(obj.GetKind(), obj.GetName())}, b)
	switch {
	case err == nil:
		return b.GetAnnotations()[workv1alpha2.TemplateHashAnnotation] == hash, nil
	case !apierrors.IsNotFound(err):
		return false, err
	}
	if from, ok := obj.GetAnnotations()[policyv1alpha1.LazyActivationAnnotation]; ok {
		return from == hash, nil
	}
	if created := obj.GetCreationTimestamp(); !created.Before(&c.Created) {
		return false, nil
	}
	patch := mustJSON(map[string]any{"metadata": map[string]any{"annotations": map[string]string{policyv1alpha1.LazyActivationAnnotation: hash}}})
	if _, err := ri.Patch(ctx, obj.GetName(), types.MergePatchType, []byte(patch), metav1.PatchOptions{}); err != nil {
		return false, fmt.Errorf("marking %s for lazy activation: %w", obj.GetName(), err)
	}
	return true, nil
}
