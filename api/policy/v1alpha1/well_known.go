package v1alpha1

import (
	"fmt"
	"strconv"
	"strings"
)

// Labels and annotations with which a policy claims a resource template (and
// its binding), as Karmada writes them.
const (
	PropagationPolicyNamespaceAnnotation = "propagationpolicy.karmada.io/namespace"
	PropagationPolicyNameAnnotation      = "propagationpolicy.karmada.io/name"
	PropagationPolicyPermanentIDLabel    = "propagationpolicy.karmada.io/permanent-id"

	ClusterPropagationPolicyAnnotation       = "clusterpropagationpolicy.karmada.io/name"
	ClusterPropagationPolicyPermanentIDLabel = "clusterpropagationpolicy.karmada.io/permanent-id"
)

// ResourceTemplateClaimedByLabel, on a resource template, names the kind of
// object in charge of propagating it (MultiClusterService for a Service it
// exposes, ServiceImport for the Service it derives): no policy claims it.
const ResourceTemplateClaimedByLabel = "resourcetemplate.karmada.io/claimed-by"

// RetainReplicasLabel, "true" on a resource template (set by the
// hpaScaleTargetMarker controller on the target of a propagated
// HorizontalPodAutoscaler), has each member's copy keep the replicas the
// member has: an HPA there decides them.
const (
	RetainReplicasLabel = "resourcetemplate.karmada.io/retain-replicas"
	RetainReplicasValue = "true"
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

// MinAvailableAnnotation, on a PropagationPolicy or
// ClusterPropagationPolicy, is a fleet-wide availability budget (an addition
// of this project; Karmada has none and ignores it): evictions never take the
// replicas available across all clusters below it; they proceed as
// replacements become available. A number of replicas ("4") or a percentage
// of the workload's replicas ("60%", rounded up). It is copied onto the
// policy's bindings.
const MinAvailableAnnotation = "policy.karmada-go.io/min-available"

// ParseMinAvailable reads a MinAvailableAnnotation value for a workload of
// the given replicas.
func ParseMinAvailable(v string, replicas int32) (int32, error) {
	if p, ok := strings.CutSuffix(v, "%"); ok {
		n, err := strconv.Atoi(p)
		if err != nil || n < 0 || n > 100 {
			return 0, fmt.Errorf("%q: a percentage must be an integer from 0%% to 100%%", v)
		}
		return int32((int64(replicas)*int64(n) + 99) / 100), nil
	}
	n, err := strconv.ParseInt(v, 10, 32)
	if err != nil || n < 0 {
		return 0, fmt.Errorf("%q: must be a non-negative integer or a percentage such as \"50%%\"", v)
	}
	return int32(n), nil
}

// PlacementNarrowingAnnotation, on a PropagationPolicy or
// ClusterPropagationPolicy (an addition of this project, copied onto its
// bindings), says what becomes of the copy in a cluster the placement no
// longer selects: Gracefully (the default) keeps it until the workload is
// healthy where it is placed now (or the graceful eviction timeout is over),
// Directly removes it at once, as Karmada does.
const PlacementNarrowingAnnotation = "policy.karmada-go.io/placement-narrowing"

// CopiedAnnotations are the policy annotations copied onto its bindings.
var CopiedAnnotations = []string{MinAvailableAnnotation, PlacementNarrowingAnnotation}

// ExtensionAnnotations picks the CopiedAnnotations of a policy (nil when it
// has none).
func ExtensionAnnotations(a map[string]string) map[string]string {
	var out map[string]string
	for _, k := range CopiedAnnotations {
		if v, ok := a[k]; ok {
			if out == nil {
				out = map[string]string{}
			}
			out[k] = v
		}
	}
	return out
}

// ClusterTaintPolicyTaintsAnnotation, on a Cluster, lists the taints that
// ClusterTaintPolicies added to it and have not removed since, as
// comma-separated key:effect pairs (an addition of this project): a policy
// removes only those, so that a taint an administrator added by hand stays
// until it is removed by hand. A Cluster without it (made by an earlier
// version) is treated once as before, every taint a policy names being the
// policy's.
const ClusterTaintPolicyTaintsAnnotation = "policy.karmada-go.io/cluster-taint-policy-taints"

// FederatedResourceQuotaNamespaceLabel and FederatedResourceQuotaNameLabel
// mark the Works of a FederatedResourceQuota's static assignments.
const (
	FederatedResourceQuotaNamespaceLabel = "federatedresourcequota.karmada.io/namespace"
	FederatedResourceQuotaNameLabel      = "federatedresourcequota.karmada.io/name"
)

// LazyActivationAnnotation, on a template a Lazy policy
// (activationPreference: Lazy) claimed before it had a binding, holds the
// digest of the template at that moment: the binding is made only once the
// template differs from it (the template itself changed), as Karmada
// activates lazy policies. It is not part of the template's digest.
const LazyActivationAnnotation = "policy.karmada-go.io/lazy-activation-from"
