// Package v1alpha1 holds Karmada's autoscaling.karmada.io/v1alpha1 API:
// FederatedHPA scales a resource template from the metrics of its pods in
// every member cluster; CronFederatedHPA scales a template, or changes a
// FederatedHPA's bounds, on a schedule.
//
// +kubebuilder:object:generate=true
// +groupName=autoscaling.karmada.io
package v1alpha1
