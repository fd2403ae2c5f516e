package execution

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/dynamic"

	workv1alpha1 "github.com/karmada-go/karmada/api/work/v1alpha1"
)

// adopt marks a manifest as taking over an object that was in the member
// before Karmada: the Work that adopted it.
func adopt(obj *unstructured.Unstructured, work *workv1alpha1.Work) {
	a := obj.GetAnnotations()
	if a == nil {
		a = map[string]string{}
	}
	a[workv1alpha1.AdoptedAnnotation] = work.Namespace + "/" + work.Name
	obj.SetAnnotations(a)
}

// keepAdoption carries the adoption mark of the member's copy into the
// manifest: applied without it, server-side apply would remove it.
func keepAdoption(obj, cur *unstructured.Unstructured) {
	if by := cur.GetAnnotations()[workv1alpha1.AdoptedAnnotation]; by != "" {
		a := obj.GetAnnotations()
		if a == nil {
			a = map[string]string{}
		}
		a[workv1alpha1.AdoptedAnnotation] = by
		obj.SetAnnotations(a)
	}
}

// karmadaKey reports whether a label or annotation key is Karmada's: a key
// of a karmada.io domain.
func karmadaKey(key string) bool {
	domain, _, ok := strings.Cut(key, "/")
	return ok && (domain == "karmada.io" || strings.HasSuffix(domain, ".karmada.io"))
}

// release gives an adopted object back to the member: Karmada's labels and
// annotations are removed and the object stays, as it is now. (What it
// looked like before adoption is not restored.)
func release(ctx context.Context, ri dynamic.ResourceInterface, cur *unstructured.Unstructured) error {
	remove := map[string]map[string]any{"labels": {}, "annotations": {}}
	for k := range cur.GetLabels() {
		if karmadaKey(k) {
			remove["labels"][k] = nil
		}
	}
	for k := range cur.GetAnnotations() {
		if karmadaKey(k) {
			remove["annotations"][k] = nil
		}
	}
	patch, err := json.Marshal(map[string]any{"metadata": map[string]any{
		"labels": remove["labels"], "annotations": remove["annotations"], "uid": cur.GetUID(),
	}})
	if err != nil {
		return err
	}
	if _, err := ri.Patch(ctx, cur.GetName(), types.MergePatchType, patch, metav1.PatchOptions{}); err != nil && !apierrors.IsNotFound(err) {
		return fmt.Errorf("releasing %s %s: %w", cur.GetKind(), objectName(cur), err)
	}
	return nil
}
