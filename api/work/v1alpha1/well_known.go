package v1alpha1

import (
	"strconv"
	"strings"
)

// ExecutionNamespacePrefix starts the name of the namespace, in the control
// plane, that holds the Works of one member cluster: karmada-es-<cluster>.
const ExecutionNamespacePrefix = "karmada-es-"

// Labels and annotations that link objects to Works.
const (
	// WorkNamespaceAnnotation and WorkNameAnnotation, on an object applied to a
	// member, name the Work it came from.
	WorkNamespaceAnnotation = "work.karmada.io/namespace"
	WorkNameAnnotation      = "work.karmada.io/name"
	// WorkGenerationAnnotation, on an object applied to a member, is the
	// generation of the Work it was applied from: the member's copy itself
	// tells that the Work's current generation was applied.
	WorkGenerationAnnotation = "work.karmada.io/generation"
	// ManagedLabel marks member objects that Karmada manages.
	ManagedLabel = "karmada.io/managed"
	// ConflictResolutionAnnotation, on a manifest, says whether an object
	// already in the member that Karmada did not create may be taken over
	// ("overwrite") or must be left alone ("abort", the default).
	ConflictResolutionAnnotation = "work.karmada.io/conflict-resolution"
	ConflictOverwrite            = "overwrite"
	ConflictAbort                = "abort"
	// AdoptedAnnotation, on a member object that was there before Karmada
	// (taken over with conflictResolution Overwrite), names the Work that
	// adopted it, <namespace>/<name>: deleting the Work releases the object
	// (removes Karmada's marks) instead of deleting it.
	AdoptedAnnotation = "work.karmada.io/adopted-by"
	// PreAdoptionAnnotation, on an adopted member object, records what it
	// was before Karmada took it over: its apiVersion, kind, name,
	// namespace, labels, annotations and every field but metadata and
	// status, as JSON, gzip-compressed and base64-encoded (past 64 KiB
	// encoded, only "omitted: <bytes> bytes, sha256 <hash>"). It stays when
	// the object is released, so that the member can restore it.
	PreAdoptionAnnotation = "work.karmada.io/pre-adoption"
	// ExecutionFinalizer holds a Work until the execution controller has
	// removed its manifests from the member. Works are created with it, so
	// that adding it costs no second write.
	ExecutionFinalizer = "karmada.io/execution-controller"
)

// NamespaceWorkLabel, on a Work that propagates a namespace, names the
// namespace.
const NamespaceWorkLabel = "namespace.karmada.io/name"

// The Applied condition of a Work: its reasons and the message of success.
const (
	ReasonAppliedSuccessful = "AppliedSuccessful"
	ReasonAppliedFailed     = "AppliedFailed"
	MessageApplied          = "manifests applied"
)

// The ResourceInterpreted condition of a Work (ours; Karmada has none): False
// while a customization or interpreter webhook fails to interpret the status
// or health of one of the Work's copies (the copy's last reflected status is
// kept meanwhile), naming the copy, the customization or webhook and the
// operation. Removed once every copy is interpreted again. The binding
// status controller carries it to the binding's condition of the same name.
const (
	WorkResourceInterpreted = "ResourceInterpreted"
	ReasonInterpretFailed   = "InterpretFailed"
)

// ExecutionFieldManager is the server-side apply field manager that owns the
// fields Karmada applies in members.
const ExecutionFieldManager = "karmada-execution-controller"

// AppliedFromGeneration reports whether a member object's annotations say
// it was applied from the given generation of its Work.
func AppliedFromGeneration(annotations map[string]string, generation int64) bool {
	return annotations[WorkGenerationAnnotation] == strconv.FormatInt(generation, 10)
}

// ExecutionNamespace is the execution namespace of a member cluster.
func ExecutionNamespace(cluster string) string { return ExecutionNamespacePrefix + cluster }

// ClusterOfExecutionNamespace returns the cluster an execution namespace
// belongs to, and false for any other namespace.
func ClusterOfExecutionNamespace(namespace string) (string, bool) {
	if !strings.HasPrefix(namespace, ExecutionNamespacePrefix) || len(namespace) == len(ExecutionNamespacePrefix) {
		return "", false
	}
	return strings.TrimPrefix(namespace, ExecutionNamespacePrefix), true
}

// retainReplicasLabel is policyv1alpha1.RetainReplicasLabel (this package
// imports no other API group).
const retainReplicasLabel = "resourcetemplate.karmada.io/retain-replicas"

// controllerMarkPrefixes are the label and annotation keys (by prefix) that
// Karmada's controllers write on Works and member copies and then trust:
// which Work a copy comes from, whether it was adopted and what it was
// before, which binding and template generation made it.
var controllerMarkPrefixes = []string{"work.karmada.io/", "resourcebinding.karmada.io/", "clusterresourcebinding.karmada.io/",
	"resourcetemplate.karmada.io/", "resourcebinding.karmada-go.io/"}

// IsControllerMark reports whether a label or annotation key is one the
// controllers write and trust (the prefixes above, and ManagedLabel). A
// template's own labels and annotations of these keys never reach a member:
// a tenant could otherwise plant, say, a pre-adoption record an
// administrator would restore. resourcetemplate.karmada.io/retain-replicas
// is no mark but the template's own setting (put there by its author or by
// hpaScaleTargetMarker): as in Karmada, it travels with the manifest, whose
// label the execution controller reads to keep a member's replicas.
func IsControllerMark(key string) bool {
	if key == ManagedLabel {
		return true
	}
	if key == retainReplicasLabel {
		return false
	}
	for _, p := range controllerMarkPrefixes {
		if strings.HasPrefix(key, p) {
			return true
		}
	}
	return false
}

// EvictedAnnotation, set to "true" on a Work by the gracefulEviction
// controller before it ends a graceful eviction task of the Work's cluster,
// says the Work's copy is an evicted one: it is deleted only if, at the
// moment of deletion, the binding's placement runs the workload healthy
// (internal/failover/evictedcopy); otherwise it is held. (Beyond Karmada.)
const EvictedAnnotation = "work.karmada-go.io/evicted"

// EvictedCopyVerdictAnnotation carries, on a deleted evicted Work of a
// pull-mode cluster, the control plane's verdict on its copy: the agent may
// not read bindings, so the control plane's execution controller judges
// (internal/failover/evictedcopy) and the agent acts on what it finds here.
// Its value is Delete, Keep, or Hold followed by ": " and why; an
// agent that finds none holds the copy until there is one. (Beyond Karmada.)
const EvictedCopyVerdictAnnotation = "work.karmada-go.io/evicted-copy"
