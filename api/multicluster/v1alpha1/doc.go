// Package v1alpha1 holds the multicluster.x-k8s.io/v1alpha1 API of the
// Kubernetes multi-cluster services API (KEP-1645), as Karmada serves it:
// ServiceExport marks a Service in a member cluster as exported to the
// fleet; ServiceImport, in the control plane, makes the exported endpoints
// reachable in the clusters it is propagated to.
//
// +kubebuilder:object:generate=true
// +groupName=multicluster.x-k8s.io
package v1alpha1
