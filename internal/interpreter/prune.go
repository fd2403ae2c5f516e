package interpreter

import (
	"strings"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

// ClaimPrefixes start the labels and annotations with which policies claim
// templates in the control plane; they describe the control plane and do not
// travel to members.
var ClaimPrefixes = []string{
	"propagationpolicy.karmada.io/",
	"clusterpropagationpolicy.karmada.io/",
	"resourcebinding.karmada.io/",
	"clusterresourcebinding.karmada.io/",
}

// jobGeneratedLabels are put on a Job's pod template by the control plane's
// Job machinery (when it has one) and would not match in a member.
var jobGeneratedLabels = []string{"controller-uid", "batch.kubernetes.io/controller-uid", "job-name", "batch.kubernetes.io/job-name"}

// pruneCommon returns a copy of a template stripped of what every kind
// leaves behind in the control plane: identity and bookkeeping metadata,
// status, and claims.
func pruneCommon(obj *unstructured.Unstructured) *unstructured.Unstructured {
	out := obj.DeepCopy()
	for _, f := range []string{"uid", "resourceVersion", "generation", "creationTimestamp", "deletionTimestamp",
		"deletionGracePeriodSeconds", "selfLink", "managedFields", "ownerReferences", "finalizers", "generateName"} {
		unstructured.RemoveNestedField(out.Object, "metadata", f)
	}
	unstructured.RemoveNestedField(out.Object, "status")
	out.SetLabels(withoutClaims(out.GetLabels()))
	out.SetAnnotations(withoutClaims(out.GetAnnotations()))

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

func withoutClaims(m map[string]string) map[string]string {
	if len(m) == 0 {
		return nil
	}
	out := make(map[string]string, len(m))
	for k, v := range m {
		claim := false
		for _, p := range ClaimPrefixes {
			if strings.HasPrefix(k, p) {
				claim = true
				break
			}
		}
		if !claim {
			out[k] = v
		}
	}
	if len(out) == 0 {
		return nil
	}
	return out
}
