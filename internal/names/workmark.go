package names

import (
	"k8s.io/apimachinery/pkg/types"

	workv1alpha1 "github.com/karmada-go/karmada/api/work/v1alpha1"
)

// WorkOf is the Work that an object in a member says it was applied from:
// the one its WorkNamespaceAnnotation and WorkNameAnnotation name (false
// when they name none).
func WorkOf(annotations map[string]string) (types.NamespacedName, bool) {
	w := types.NamespacedName{Namespace: annotations[workv1alpha1.WorkNamespaceAnnotation], Name: annotations[workv1alpha1.WorkNameAnnotation]}
	return w, w.Namespace != "" && w.Name != ""
}

// FromWork reports whether an object's annotations name the Work work.
func FromWork(annotations map[string]string, work types.NamespacedName) bool {
	w, ok := WorkOf(annotations)
	return ok && w == work
}

// MarkWork sets on annotations (made when nil) the marks that name work,
// and returns them.
func MarkWork(annotations map[string]string, work types.NamespacedName) map[string]string {
	if annotations == nil {
		annotations = map[string]string{}
	}
	annotations[workv1alpha1.WorkNamespaceAnnotation] = work.Namespace
	annotations[workv1alpha1.WorkNameAnnotation] = work.Name
	return annotations
}
