// Package v1alpha1 holds the apps.karmada.io/v1alpha1 API: the
// WorkloadRebalancer, a one-off request to schedule listed workloads
// afresh.
//
// +kubebuilder:object:generate=true
// +groupName=apps.karmada.io
package v1alpha1
