// Package v1alpha1 holds the networking.karmada.io/v1alpha1 API:
// MultiClusterService, which exposes a Service across clusters
// (CrossCluster: the provider clusters' endpoints reach the consumer
// clusters), and MultiClusterIngress, an Ingress for the fleet.
//
// +kubebuilder:object:generate=true
// +groupName=networking.karmada.io
package v1alpha1
