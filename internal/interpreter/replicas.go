// Package interpreter holds the built-in knowledge of Kubernetes kinds that
// propagation needs: how many replicas a template has and what each needs,
// how to change its replica count for one cluster, what must not travel to a
// member, what a member owns and must be kept on update, how to reflect and
// aggregate status, and how to judge health. Every function works on
// unstructured objects and is a plain function of its inputs.
package interpreter

import (
	"fmt"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"

	workv1alpha2 "github.com/karmada-go/karmada/api/work/v1alpha2"
)

// Kinds with built-in replica knowledge.
var (
	deploymentKind  = schema.GroupKind{Group: "apps", Kind: "Deployment"}
	statefulSetKind = schema.GroupKind{Group: "apps", Kind: "StatefulSet"}
	replicaSetKind  = schema.GroupKind{Group: "apps", Kind: "ReplicaSet"}
	daemonSetKind   = schema.GroupKind{Group: "apps", Kind: "DaemonSet"}
	jobKind         = schema.GroupKind{Group: "batch", Kind: "Job"}
	podKind         = schema.GroupKind{Kind: "Pod"}
	serviceKind     = schema.GroupKind{Kind: "Service"}
	pvcKind         = schema.GroupKind{Kind: "PersistentVolumeClaim"}
	saKind          = schema.GroupKind{Kind: "ServiceAccount"}
)

func groupKind(obj *unstructured.Unstructured) schema.GroupKind {
	return obj.GroupVersionKind().GroupKind()
}

// HasReplicas reports whether the kind's replicas can be divided between
// clusters.
func HasReplicas(gk schema.GroupKind) bool {
	switch gk {
	case deploymentKind, statefulSetKind, replicaSetKind, jobKind, podKind:
		return true
	}
	return false
}

// Replicas returns the replica count of a workload and what one replica
// needs. Kinds without replicas return (0, nil, nil).
func Replicas(obj *unstructured.Unstructured) (int32, *workv1alpha2.ReplicaRequirements, error) {
	gk := groupKind(obj)
	if !HasReplicas(gk) {
		return 0, nil, nil
	}
	var replicas int64 = 1
	podSpecPath := []string{"spec", "template", "spec"}
	switch gk {
	case podKind:
		podSpecPath = []string{"spec"}
	case jobKind:
		// A Job runs up to parallelism pods at once (default 1), and no more
		// than it needs to complete.
		replicas = 1
		if p, found, err := nestedInt(obj.Object, "spec", "parallelism"); err != nil {
			return 0, nil, fmt.Errorf("spec.parallelism: %w", err)
		} else if found {
			replicas = p
		}
		if c, found, err := nestedInt(obj.Object, "spec", "completions"); err != nil {
			return 0, nil, fmt.Errorf("spec.completions: %w", err)
		} else if found && c < replicas {
			replicas = c
		}
	default:
		if r, found, err := nestedInt(obj.Object, "spec", "replicas"); err != nil {
			return 0, nil, fmt.Errorf("spec.replicas: %w", err)
		} else if found {
			replicas = r
		}
	}
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
	return int32(replicas), requirementsOf(&pod.Spec, obj.GetNamespace()), nil
}

// requirementsOf is what one pod of spec needs from a cluster.
func requirementsOf(spec *corev1.PodSpec, namespace string) *workv1alpha2.ReplicaRequirements {
	req := &workv1alpha2.ReplicaRequirements{Namespace: namespace, PriorityClassName: spec.PriorityClassName}
	requests := PodRequests(spec)
	if len(requests) > 0 {
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

// AddResources adds every quantity of add into into.
func AddResources(into, add corev1.ResourceList) {
	for name, q := range add {
		cur := into[name]
		cur.Add(q)
		into[name] = cur
	}
}

// ReviseReplicas returns a copy of obj with its replica count set for one
// cluster. Kinds without replicas are returned unchanged.
func ReviseReplicas(obj *unstructured.Unstructured, replicas int32) (*unstructured.Unstructured, error) {
	out := obj.DeepCopy()
	switch groupKind(obj) {
	case deploymentKind, statefulSetKind, replicaSetKind:
		if err := unstructured.SetNestedField(out.Object, int64(replicas), "spec", "replicas"); err != nil {
			return nil, err
		}
	case jobKind:
		if err := unstructured.SetNestedField(out.Object, int64(replicas), "spec", "parallelism"); err != nil {
			return nil, err
		}
		// Completions follow parallelism: a cluster running part of the pods
		// completes its share.
		if _, found, _ := nestedInt(out.Object, "spec", "completions"); found {
			if err := unstructured.SetNestedField(out.Object, int64(replicas), "spec", "completions"); err != nil {
				return nil, err
			}
		}
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
