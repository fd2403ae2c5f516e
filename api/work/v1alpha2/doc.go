// Package v1alpha2 holds the stored version of work.karmada.io bindings:
// ResourceBinding and ClusterResourceBinding tie one resource template to the
// clusters it is scheduled to and aggregate its state there.
//
// +kubebuilder:object:generate=true
// +groupName=work.karmada.io
package v1alpha2
