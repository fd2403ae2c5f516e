// Package v1alpha1 holds the policy.karmada.io/v1alpha1 API: propagation
// policies, which say where resource templates go, and override policies,
// which say how each member's copy differs.
//
// +kubebuilder:object:generate=true
// +groupName=policy.karmada.io
package v1alpha1
