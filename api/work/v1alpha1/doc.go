// Package v1alpha1 holds the work.karmada.io/v1alpha1 API: Work, the manifests
// to apply to one member cluster, and the older served (not stored) version of
// ResourceBinding and ClusterResourceBinding.
//
// +kubebuilder:object:generate=true
// +groupName=work.karmada.io
package v1alpha1
