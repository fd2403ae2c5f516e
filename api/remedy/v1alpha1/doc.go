// Package v1alpha1 holds the remedy.karmada.io/v1alpha1 API: the Remedy,
// actions the control plane takes on the clusters whose conditions match
// (recorded in Cluster.status.remedyActions).
//
// +kubebuilder:object:generate=true
// +groupName=remedy.karmada.io
package v1alpha1
