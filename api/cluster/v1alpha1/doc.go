// Package v1alpha1 holds the cluster.karmada.io/v1alpha1 API: the Cluster kind,
// which describes one member cluster of the fleet and its observed state.
//
// +kubebuilder:object:generate=true
// +k8s:openapi-gen=true
// +groupName=cluster.karmada.io
package v1alpha1
