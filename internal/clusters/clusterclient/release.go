package clusterclient

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

// KarmadaKey reports whether a label or annotation key is Karmada's: a key
// of a karmada.io domain.
func KarmadaKey(key string) bool {
	domain, _, ok := strings.Cut(key, "/")
	return ok && (domain == "karmada.io" || strings.HasSuffix(domain, ".karmada.io"))
}

// Release gives a member object back to the member: Karmada's labels and
// annotations are removed and the object stays as it is now (what it looked
// like before Karmada took it over is not restored, but its record, the
// work.karmada.io/pre-adoption annotation, is kept for the member to
// restore it). The object's UID is a precondition; one already gone is
// released.
func Release(ctx context.Context, ri dynamic.ResourceInterface, cur *unstructured.Unstructured) error {
	labels, annotations := map[string]any{}, map[string]any{}
	for k := range cur.GetLabels() {
		if KarmadaKey(k) {
			labels[k] = nil
		}
	}
	for k := range cur.GetAnnotations() {
		if KarmadaKey(k) && k != workv1alpha1.PreAdoptionAnnotation {
			annotations[k] = nil
		}
	}
	patch, err := json.Marshal(map[string]any{"metadata": map[string]any{"labels": labels, "annotations": annotations, "uid": cur.GetUID()}})
	if err != nil {
		return err
	}
	if _, err := ri.Patch(ctx, cur.GetName(), types.MergePatchType, patch, metav1.PatchOptions{}); err != nil && !apierrors.IsNotFound(err) {
		return fmt.Errorf("releasing %s %s/%s: %w", cur.GetKind(), cur.GetNamespace(), cur.GetName(), err)
	}
	return nil
}
