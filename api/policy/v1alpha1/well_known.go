package v1alpha1

// Labels and annotations with which a policy claims a resource template (and
// its binding), as Karmada writes them.
const (
	PropagationPolicyNamespaceAnnotation = "propagationpolicy.karmada.io/namespace"
	PropagationPolicyNameAnnotation      = "propagationpolicy.karmada.io/name"
	PropagationPolicyPermanentIDLabel    = "propagationpolicy.karmada.io/permanent-id"

	ClusterPropagationPolicyAnnotation       = "clusterpropagationpolicy.karmada.io/name"
	ClusterPropagationPolicyPermanentIDLabel = "clusterpropagationpolicy.karmada.io/permanent-id"
)

// IsClaimKey reports whether a label or annotation key is part of a policy's
// claim on a template.
func IsClaimKey(key string) bool {
	switch key {
	case PropagationPolicyNamespaceAnnotation, PropagationPolicyNameAnnotation, PropagationPolicyPermanentIDLabel,
		ClusterPropagationPolicyAnnotation, ClusterPropagationPolicyPermanentIDLabel:
		return true
	}
	return false
}

// Annotations on a Work listing the override policies applied to its
// manifest, as JSON.
const (
	AppliedOverridesAnnotation        = "policy.karmada.io/applied-overrides"
	AppliedClusterOverridesAnnotation = "policy.karmada.io/applied-cluster-overrides"
)

// NamespaceSkipAutoPropagationLabel set to "true" on a control-plane
// namespace keeps it out of the members.
const NamespaceSkipAutoPropagationLabel = "namespace.karmada.io/skip-auto-propagation"
