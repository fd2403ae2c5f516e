package interpreter

import (
	"maps"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	workv1alpha1 "github.com/karmada-go/karmada/api/work/v1alpha1"
)

// jobGeneratedLabels are put on a Job's pod template by the control plane's
// Job machinery (when it has one) and would not match in a member.
var jobGeneratedLabels = []string{"controller-uid", "batch.kubernetes.io/controller-uid", "job-name", "batch.kubernetes.io/job-name"}

// pruneCommon returns a copy of a template stripped of what every kind
// leaves behind in the control plane: identity and bookkeeping metadata,
// and status; and of the labels and annotations the controllers write and
// trust on Works and member copies (workv1alpha1.IsControllerMark), which
// a template's author does not get to set. The policy's claim (labels and
// annotations) stays: a member's copy tells, as in Karmada, which policy
// put it there.
func pruneCommon(obj *unstructured.Unstructured) *unstructured.Unstructured {
	out := obj.DeepCopy()
	for _, f := range []string{"uid", "resourceVersion", "generation", "creationTimestamp", "deletionTimestamp",
		"deletionGracePeriodSeconds", "selfLink", "managedFields", "ownerReferences", "finalizers", "generateName"} {
		unstructured.RemoveNestedField(out.Object, "metadata", f)
	}
	unstructured.RemoveNestedField(out.Object, "status")
	if l := out.GetLabels(); l != nil {
		maps.DeleteFunc(l, func(k, _ string) bool { return workv1alpha1.IsControllerMark(k) })
		out.SetLabels(l)
	}
	if a := out.GetAnnotations(); a != nil {
		maps.DeleteFunc(a, func(k, _ string) bool { return workv1alpha1.IsControllerMark(k) })
		out.SetAnnotations(a)
	}
	return out
}

// pruneService drops the addresses the control plane assigned. A headless
// Service ("None") keeps its clusterIP: it is part of the spec, not an
// assigned address.
func pruneService(out *unstructured.Unstructured) {
	if ip, _, _ := unstructured.NestedString(out.Object, "spec", "clusterIP"); ip != "None" {
		unstructured.RemoveNestedField(out.Object, "spec", "clusterIP")
		unstructured.RemoveNestedField(out.Object, "spec", "clusterIPs")
	}
	unstructured.RemoveNestedField(out.Object, "spec", "healthCheckNodePort")
}

// pruneJob drops the selector and pod labels the control plane generated,
// unless the Job chose its selector.
func pruneJob(out *unstructured.Unstructured) {
	if manual, _, _ := unstructured.NestedBool(out.Object, "spec", "manualSelector"); manual {
		return
	}
	unstructured.RemoveNestedField(out.Object, "spec", "selector")
	labels, _, _ := unstructured.NestedStringMap(out.Object, "spec", "template", "metadata", "labels")
	for _, l := range jobGeneratedLabels {
		delete(labels, l)
	}
	if len(labels) == 0 {
		unstructured.RemoveNestedField(out.Object, "spec", "template", "metadata", "labels")
	} else {
		_ = unstructured.SetNestedStringMap(out.Object, labels, "spec", "template", "metadata", "labels")
	}
}

// pruneServiceAccount drops the token secrets the control plane listed.
func pruneServiceAccount(out *unstructured.Unstructured) {
	unstructured.RemoveNestedField(out.Object, "secrets")
}
