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

// Prune returns a copy of a template stripped of what belongs to the control
// plane: identity and bookkeeping metadata, status, claims, and fields the
// control plane's API server assigned (a Service's cluster IPs, a Job's
// generated selector, a ServiceAccount's token secrets).
func Prune(obj *unstructured.Unstructured) *unstructured.Unstructured {
	out := obj.DeepCopy()
	for _, f := range []string{"uid", "resourceVersion", "generation", "creationTimestamp", "deletionTimestamp",
		"deletionGracePeriodSeconds", "selfLink", "managedFields", "ownerReferences", "finalizers", "generateName"} {
		unstructured.RemoveNestedField(out.Object, "metadata", f)
	}
	unstructured.RemoveNestedField(out.Object, "status")
	out.SetLabels(withoutClaims(out.GetLabels()))
	out.SetAnnotations(withoutClaims(out.GetAnnotations()))

	switch groupKind(out) {
	case serviceKind:
		// A headless Service ("None") keeps its clusterIP: it is part of
		// the spec, not an assigned address.
		if ip, _, _ := unstructured.NestedString(out.Object, "spec", "clusterIP"); ip != "None" {
			unstructured.RemoveNestedField(out.Object, "spec", "clusterIP")
			unstructured.RemoveNestedField(out.Object, "spec", "clusterIPs")
		}
		unstructured.RemoveNestedField(out.Object, "spec", "healthCheckNodePort")
	case jobKind:
		if manual, _, _ := unstructured.NestedBool(out.Object, "spec", "manualSelector"); !manual {
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
	case saKind:
		unstructured.RemoveNestedField(out.Object, "secrets")
	}
	return out
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

// Retain returns desired (what Karmada applies) completed with what the
// member owns in observed (the copy in the member), so that an update does
// not undo the member's own changes: labels and annotations the member
// added, a Service's assigned IPs and node ports, a ServiceAccount's secrets,
// a PVC's bound volume, a Job's generated selector and labels, a Pod's node.
func Retain(desired, observed *unstructured.Unstructured) *unstructured.Unstructured {
	out := desired.DeepCopy()
	out.SetLabels(mergeMissing(out.GetLabels(), observed.GetLabels()))
	out.SetAnnotations(mergeMissing(out.GetAnnotations(), observed.GetAnnotations()))
	keep := func(path ...string) {
		if _, found, _ := unstructured.NestedFieldNoCopy(out.Object, path...); found {
			return
		}
		if v, found, _ := unstructured.NestedFieldCopy(observed.Object, path...); found {
			_ = unstructured.SetNestedField(out.Object, v, path...)
		}
	}
	switch groupKind(out) {
	case serviceKind:
		keep("spec", "clusterIP")
		keep("spec", "clusterIPs")
		keep("spec", "healthCheckNodePort")
		retainNodePorts(out, observed)
	case saKind:
		keep("secrets")
	case pvcKind:
		keep("spec", "volumeName")
	case jobKind:
		if manual, _, _ := unstructured.NestedBool(out.Object, "spec", "manualSelector"); !manual {
			keep("spec", "selector")
			obsLabels, _, _ := unstructured.NestedStringMap(observed.Object, "spec", "template", "metadata", "labels")
			desLabels, _, _ := unstructured.NestedStringMap(out.Object, "spec", "template", "metadata", "labels")
			if merged := mergeMissing(desLabels, obsLabels); len(merged) > 0 {
				_ = unstructured.SetNestedStringMap(out.Object, merged, "spec", "template", "metadata", "labels")
			}
		}
	case podKind:
		keep("spec", "nodeName")
	}
	return out
}

// retainNodePorts keeps the node port the member assigned to each port the
// template leaves without one, matching ports by name, then by port number.
func retainNodePorts(out, observed *unstructured.Unstructured) {
	desired, found, _ := unstructured.NestedSlice(out.Object, "spec", "ports")
	if !found {
		return
	}
	obs, _, _ := unstructured.NestedSlice(observed.Object, "spec", "ports")
	for i, d := range desired {
		dm, ok := d.(map[string]any)
		if !ok {
			continue
		}
		if _, has := dm["nodePort"]; has {
			continue
		}
		for _, o := range obs {
			om, ok := o.(map[string]any)
			if !ok || om["nodePort"] == nil {
				continue
			}
			if (dm["name"] != nil && dm["name"] == om["name"]) || (dm["name"] == nil && dm["port"] == om["port"]) {
				dm["nodePort"] = om["nodePort"]
				break
			}
		}
		desired[i] = dm
	}
	_ = unstructured.SetNestedSlice(out.Object, desired, "spec", "ports")
}

// mergeMissing returns desired plus the keys of observed that desired lacks.
func mergeMissing(desired, observed map[string]string) map[string]string {
	if len(observed) == 0 {
		return desired
	}
	out := make(map[string]string, len(desired)+len(observed))
	for k, v := range observed {
		out[k] = v
	}
	for k, v := range desired {
		out[k] = v
	}
	return out
}
