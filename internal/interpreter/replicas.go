package interpreter

import (
	"fmt"
	"strings"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"

	workv1alpha2 "github.com/karmada-go/karmada/api/work/v1alpha2"
)

// podReplicas is InterpretReplica for kinds whose replica count is at
// spec.replicas (default 1) and whose pods are made from podSpecPath.
func podReplicas(podSpecPath ...string) func(*unstructured.Unstructured) (int32, *workv1alpha2.ReplicaRequirements, error) {
	return func(obj *unstructured.Unstructured) (int32, *workv1alpha2.ReplicaRequirements, error) {
		var replicas int64 = 1
		if len(podSpecPath) > 1 {
			if r, found, err := nestedInt(obj.Object, "spec", "replicas"); err != nil {
				return 0, nil, fmt.Errorf("spec.replicas: %w", err)
			} else if found {
				replicas = r
			}
		}
		return withRequirements(obj, replicas, podSpecPath)
	}
}

// jobReplicas is InterpretReplica for Jobs, as Karmada's: its parallelism
// (default 1), the pods it runs at once.
func jobReplicas(obj *unstructured.Unstructured) (int32, *workv1alpha2.ReplicaRequirements, error) {
	var replicas int64 = 1
	if p, found, err := nestedInt(obj.Object, "spec", "parallelism"); err != nil {
		return 0, nil, fmt.Errorf("spec.parallelism: %w", err)
	} else if found {
		replicas = p
	}
	return withRequirements(obj, replicas, []string{"spec", "template", "spec"})
}

// withRequirements adds to a replica count what one pod of the spec at
// podSpecPath needs.
func withRequirements(obj *unstructured.Unstructured, replicas int64, podSpecPath []string) (int32, *workv1alpha2.ReplicaRequirements, error) {
	spec, found, err := unstructured.NestedMap(obj.Object, podSpecPath...)
	if err != nil {
		return 0, nil, fmt.Errorf("pod spec: %w", err)
	}
	if !found {
		return int32(replicas), nil, nil
	}
	pod := &corev1.Pod{}
	if err := runtime.DefaultUnstructuredConverter.FromUnstructured(map[string]any{"spec": spec}, pod); err != nil {
		return 0, nil, fmt.Errorf("pod spec: %w", err)
	}
	return int32(replicas), RequirementsOf(&pod.Spec, obj.GetNamespace()), nil
}

// RequirementsOf is what one pod of spec needs from a cluster.
func RequirementsOf(spec *corev1.PodSpec, namespace string) *workv1alpha2.ReplicaRequirements {
	req := &workv1alpha2.ReplicaRequirements{Namespace: namespace, PriorityClassName: spec.PriorityClassName}
	if requests := KarmadaForm(PodRequests(spec)); len(requests) > 0 {
		req.ResourceRequest = requests
	}
	claim := &workv1alpha2.NodeClaim{NodeSelector: spec.NodeSelector, Tolerations: spec.Tolerations}
	if a := spec.Affinity; a != nil && a.NodeAffinity != nil {
		claim.HardNodeAffinity = a.NodeAffinity.RequiredDuringSchedulingIgnoredDuringExecution
	}
	if len(claim.NodeSelector) > 0 || len(claim.Tolerations) > 0 || claim.HardNodeAffinity != nil {
		req.NodeClaim = claim
	}
	return req
}

// PodRequests is what a pod asks of a node: its containers and sidecars
// together, at least its largest init container (beside earlier sidecars),
// plus overhead.
func PodRequests(spec *corev1.PodSpec) corev1.ResourceList {
	out := corev1.ResourceList{}
	for _, c := range spec.Containers {
		AddResources(out, c.Resources.Requests)
	}
	sidecars := corev1.ResourceList{}
	for _, c := range spec.InitContainers {
		if c.RestartPolicy != nil && *c.RestartPolicy == corev1.ContainerRestartPolicyAlways {
			AddResources(sidecars, c.Resources.Requests)
			AddResources(out, c.Resources.Requests)
			continue
		}
		for name, q := range c.Resources.Requests {
			need := q.DeepCopy()
			if s, ok := sidecars[name]; ok {
				need.Add(s)
			}
			if cur, ok := out[name]; !ok || need.Cmp(cur) > 0 {
				out[name] = need
			}
		}
	}
	AddResources(out, spec.Overhead)
	return out
}

// KarmadaForm is rl as Karmada writes a pod's requests into a binding's
// replica requirements: cpu in millicores (decimal), memory and ephemeral
// storage in whole bytes (binary: "1Gi", or plain bytes), pods in whole
// numbers, other countable resources (extended, hugepages, attachable
// volumes) in whole units, rounded up; zero and resources a node does not
// count are left out.
func KarmadaForm(rl corev1.ResourceList) corev1.ResourceList {
	out := corev1.ResourceList{}
	for name, q := range rl {
		n := string(name)
		var v int64
		var format resource.Format
		switch {
		case name == corev1.ResourceCPU:
			if v = q.MilliValue(); v > 0 {
				out[name] = *resource.NewMilliQuantity(v, resource.DecimalSI)
			}
			continue
		case name == corev1.ResourceMemory, name == corev1.ResourceEphemeralStorage, strings.HasPrefix(n, corev1.ResourceHugePagesPrefix):
			format = resource.BinarySI
		case name == corev1.ResourcePods, strings.HasPrefix(n, "attachable-volumes-"),
			strings.Contains(n, "/") && !strings.HasPrefix(n, corev1.DefaultResourceRequestsPrefix):
			format = resource.DecimalSI
		default:
			continue
		}
		if v = q.Value(); v > 0 {
			out[name] = *resource.NewQuantity(v, format)
		}
	}
	return out
}

// AddResources adds every quantity of add into into.
func AddResources(into, add corev1.ResourceList) {
	for name, q := range add {
		cur := into[name]
		cur.Add(q)
		into[name] = cur
	}
}

// reviseSpecReplicas is ReviseReplica for kinds whose replica count is at
// spec.replicas.
func reviseSpecReplicas(obj *unstructured.Unstructured, replicas int32) (*unstructured.Unstructured, error) {
	out := obj.DeepCopy()
	if err := unstructured.SetNestedField(out.Object, int64(replicas), "spec", "replicas"); err != nil {
		return nil, err
	}
	return out, nil
}

// reviseJob is ReviseReplica for Jobs, as Karmada's: parallelism. (A
// divided Job's completions are divided too, by the binding controller.)
func reviseJob(obj *unstructured.Unstructured, replicas int32) (*unstructured.Unstructured, error) {
	out := obj.DeepCopy()
	if err := unstructured.SetNestedField(out.Object, int64(replicas), "spec", "parallelism"); err != nil {
		return nil, err
	}
	return out, nil
}

// nestedInt reads an integer field whether it was decoded as int64 (the API
// machinery) or float64 (encoding/json).
func nestedInt(obj map[string]any, path ...string) (int64, bool, error) {
	v, found, err := unstructured.NestedFieldNoCopy(obj, path...)
	if err != nil || !found {
		return 0, found, err
	}
	switch n := v.(type) {
	case int64:
		return n, true, nil
	case float64:
		return int64(n), true, nil
	case int:
		return int64(n), true, nil
	}
	return 0, true, fmt.Errorf("%v is a %T, not an integer", v, v)
}
