package v1alpha2

// BindingControllerFinalizer holds a ResourceBinding or
// ClusterResourceBinding until the binding controller has deleted its Works.
// Bindings are created with it, so that adding it costs no second write.
const BindingControllerFinalizer = "karmada.io/binding-controller"

// Labels on a Work naming the binding it was made from.
const (
	ResourceBindingNamespaceLabel = "resourcebinding.karmada.io/namespace"
	ResourceBindingNameLabel      = "resourcebinding.karmada.io/name"
	ClusterResourceBindingLabel   = "clusterresourcebinding.karmada.io/name"
)

// The permanent ids of bindings: a label on the binding, given when it is
// created, repeated on its Works and on the member copies they carry, so
// that a copy can be traced back to its binding.
const (
	ResourceBindingPermanentIDLabel        = "resourcebinding.karmada.io/permanent-id"
	ClusterResourceBindingPermanentIDLabel = "clusterresourcebinding.karmada.io/permanent-id"
)

// Annotations on a Work's manifest (and so on the member's copy) naming the
// binding it was made from; the keys are those of the Work's labels.
const (
	ResourceBindingNamespaceAnnotation = ResourceBindingNamespaceLabel
	ResourceBindingNameAnnotation      = ResourceBindingNameLabel
	ClusterResourceBindingAnnotation   = ClusterResourceBindingLabel
)

// TemplateHashAnnotation, on a binding (an addition of this project;
// Karmada has none and ignores it), is a digest of the resource template the
// binding was last written from, without its status, resourceVersion,
// generation and managedFields. The template's resourceVersion, which the
// binding records in spec.resource, moves with every status write; while the
// digest is the same, the binding keeps the resourceVersion it has, so that
// going through every template (as after a restart) writes no binding whose
// template changed only in status.
const TemplateHashAnnotation = "resourcebinding.karmada-go.io/template-hash"

// ResourceTemplateGenerationAnnotation, on a Work's manifest, is the
// generation of the resource template the manifest was made from.
const ResourceTemplateGenerationAnnotation = "resourcetemplate.karmada.io/generation"

// The OverridesApplied condition of a binding (whether its override
// policies applied to every Work), and the reasons and messages of it and of
// FullyApplied.
const (
	OverridesApplied           = "OverridesApplied"
	ReasonOverridesApplied     = "Applied"
	ReasonOverrideFailed       = "OverrideFailed"
	MessageOverridesApplied    = "every override policy was applied"
	ReasonFullyAppliedSuccess  = "FullyAppliedSuccess"
	ReasonFullyAppliedFailed   = "FullyAppliedFailed"
	MessageFullyAppliedSuccess = "All works have been successfully applied"
	MessageFullyAppliedFailed  = "Failed to apply all works, see status.aggregatedStatus for details"
)

// The EvictionBlocked condition of a binding: True while a graceful eviction
// task is held because ending it would lose the workload (no cluster can take
// it, or its replacement is not healthy and the evicted copy is the last
// healthy one). Absent when no eviction is blocked.
const (
	EvictionBlocked            = "EvictionBlocked"
	ReasonNoReplacement        = "NoReplacement"
	ReasonReplacementUnhealthy = "ReplacementUnhealthy"
	ReasonBelowMinAvailable    = "BelowMinAvailable"
)

// The ResourceInterpreted condition of a binding (ours; Karmada has none):
// False while a customization or interpreter webhook fails on the binding's
// template or its copies, naming which and the operation; the last good
// result (status, replicas, copy) is kept meanwhile. Set True again once
// the operation succeeds; absent on bindings that never saw a failure.
const (
	ResourceInterpreted       = "ResourceInterpreted"
	ReasonInterpretFailed     = "InterpretFailed"
	ReasonInterpretSucceeded  = "InterpretSucceeded"
	MessageInterpretSucceeded = "every interpreter operation succeeded"
)

// AttachedBindingLabel marks a ResourceBinding made by the dependencies
// distributor for an object workloads with propagateDeps need (ours;
// spec.requiredBy is Karmada's record of who needs it).
const AttachedBindingLabel = "resourcebinding.karmada.io/attached"

// DeletionProtectionLabel on any object of the control plane, with the
// value DeletionProtectionAlways, makes karmada-webhook refuse its deletion
// until the label is removed (Karmada's resource deletion protection).
// Other values protect nothing.
const (
	DeletionProtectionLabel  = "resourcetemplate.karmada.io/deletion-protected"
	DeletionProtectionAlways = "Always"
)
