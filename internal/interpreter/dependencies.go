package interpreter

import (
	"fmt"
	"sort"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
)

// podDependencies is InterpretDependency for kinds whose pods are made from
// the spec at podSpecPath: the ConfigMaps, Secrets and PersistentVolumeClaims
// the pods mount or read, and their ServiceAccount (other than "default",
// which every namespace has), in the workload's namespace, sorted.
func podDependencies(podSpecPath ...string) func(*unstructured.Unstructured) ([]DependentObject, error) {
	return func(obj *unstructured.Unstructured) ([]DependentObject, error) {
		m, found, err := unstructured.NestedMap(obj.Object, podSpecPath...)
		if err != nil || !found {
			return nil, err
		}
		pod := &corev1.Pod{}
		if err := runtime.DefaultUnstructuredConverter.FromUnstructured(map[string]any{"spec": m}, pod); err != nil {
			return nil, fmt.Errorf("pod spec: %w", err)
		}
		return PodSpecDependencies(&pod.Spec, obj.GetNamespace()), nil
	}
}

// PodSpecDependencies lists what pods of spec need in their namespace: the
// ConfigMaps, Secrets and PersistentVolumeClaims they mount or read, and
// their ServiceAccount (other than "default", which every namespace has),
// sorted by kind and name.
func PodSpecDependencies(spec *corev1.PodSpec, namespace string) []DependentObject {
	set := map[DependentObject]bool{}
	add := func(kind, name string) {
		if name != "" {
			set[DependentObject{APIVersion: "v1", Kind: kind, Namespace: namespace, Name: name}] = true
		}
	}
	for _, v := range spec.Volumes {
		if v.ConfigMap != nil {
			add("ConfigMap", v.ConfigMap.Name)
		}
		if v.Secret != nil {
			add("Secret", v.Secret.SecretName)
		}
		if v.PersistentVolumeClaim != nil {
			add("PersistentVolumeClaim", v.PersistentVolumeClaim.ClaimName)
		}
		if v.Projected != nil {
			for _, s := range v.Projected.Sources {
				if s.ConfigMap != nil {
					add("ConfigMap", s.ConfigMap.Name)
				}
				if s.Secret != nil {
					add("Secret", s.Secret.Name)
				}
			}
		}
	}
	var containers []corev1.Container
	containers = append(containers, spec.InitContainers...)
	containers = append(containers, spec.Containers...)
	for _, c := range containers {
		for _, e := range c.EnvFrom {
			if e.ConfigMapRef != nil {
				add("ConfigMap", e.ConfigMapRef.Name)
			}
			if e.SecretRef != nil {
				add("Secret", e.SecretRef.Name)
			}
		}
		for _, e := range c.Env {
			if e.ValueFrom == nil {
				continue
			}
			if e.ValueFrom.ConfigMapKeyRef != nil {
				add("ConfigMap", e.ValueFrom.ConfigMapKeyRef.Name)
			}
			if e.ValueFrom.SecretKeyRef != nil {
				add("Secret", e.ValueFrom.SecretKeyRef.Name)
			}
		}
	}
	for _, s := range spec.ImagePullSecrets {
		add("Secret", s.Name)
	}
	if sa := spec.ServiceAccountName; sa != "default" {
		add("ServiceAccount", sa)
	}
	out := make([]DependentObject, 0, len(set))
	for d := range set {
		out = append(out, d)
	}
	// Karmada's order: ConfigMaps, Secrets, ServiceAccounts, then
	// PersistentVolumeClaims (each by name here: Karmada's order within a
	// kind is its sets' and varies).
	sort.Slice(out, func(i, j int) bool {
		if ri, rj := dependencyRank[out[i].Kind], dependencyRank[out[j].Kind]; ri != rj {
			return ri < rj
		}
		return out[i].Name < out[j].Name
	})
	return out
}

// dependencyRank orders a pod's dependencies by kind, as Karmada lists them.
var dependencyRank = map[string]int{"ConfigMap": 0, "Secret": 1, "ServiceAccount": 2, "PersistentVolumeClaim": 3}
