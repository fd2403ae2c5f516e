// Package interpreter holds what propagation must know of each kind: how
// many replicas a template has and what each needs, how to change its
// replica count for one cluster, what must not travel to a member, how to
// reflect and aggregate status, how to judge health, and what else a
// workload needs in the member. The knowledge is a registry of one Kind per
// GroupKind with one function per operation (Karmada's operation names); a
// kind without an entry, or an entry without an operation, gets the
// default. Layers put in front of the built-in registry (Lua
// customizations, interpreter webhooks) take precedence operation by
// operation.
package interpreter

import (
	"fmt"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"

	workv1alpha1 "github.com/karmada-go/karmada/api/work/v1alpha1"
	workv1alpha2 "github.com/karmada-go/karmada/api/work/v1alpha2"
)

// Operation names one thing the interpreter knows of a kind, as Karmada's
// ResourceInterpreterCustomization names it (Prune is ours: the kind's part
// of stripping a template of the control plane's fields).
type Operation string

// The operations.
const (
	OpInterpretReplica    Operation = "InterpretReplica"
	OpReviseReplica       Operation = "ReviseReplica"
	OpRetain              Operation = "Retain"
	OpAggregateStatus     Operation = "AggregateStatus"
	OpInterpretStatus     Operation = "InterpretStatus"
	OpInterpretHealth     Operation = "InterpretHealth"
	OpInterpretDependency Operation = "InterpretDependency"
	OpInterpretComponent  Operation = "InterpretComponent"
	OpPrune               Operation = "Prune"
)

// Operations lists every operation.
var Operations = []Operation{OpInterpretReplica, OpReviseReplica, OpRetain, OpAggregateStatus, OpInterpretStatus, OpInterpretHealth, OpInterpretDependency, OpInterpretComponent, OpPrune}

// Error is the failure of an operation answered by a customization or a
// webhook: which one, which operation, and why. Callers keep what they had
// (the last good status, replicas or copy) and say so on the binding.
type Error struct {
	// Source names what answered: "ResourceInterpreterCustomization/<name>"
	// or "ResourceInterpreterWebhookConfiguration/<name>/<webhook>".
	Source    string
	Operation Operation
	Err       error
}

func (e *Error) Error() string {
	return fmt.Sprintf("%s, operation %s: %v", e.Source, e.Operation, e.Err)
}

func (e *Error) Unwrap() error { return e.Err }

// DependentObject is an object a workload needs in the member where it runs
// (a ConfigMap its pods mount, say).
type DependentObject struct {
	APIVersion string
	Kind       string
	Namespace  string
	Name       string
	// LabelSelector selects the objects when Name is empty (from a
	// customization or webhook; the built-in kinds name theirs).
	LabelSelector *metav1.LabelSelector
}

// Kind is what is known of one GroupKind, one function per operation. A nil
// function is the operation's default. Every function is a plain function
// of its inputs and must not modify them.
type Kind struct {
	// GetReplicas (InterpretReplica) returns the replica count of a
	// workload and what one replica needs. Nil: the kind has no replicas to
	// divide.
	GetReplicas func(obj *unstructured.Unstructured) (int32, *workv1alpha2.ReplicaRequirements, error)
	// ReviseReplica returns a copy of obj with its replica count set for
	// one cluster. Default: the copy unchanged.
	ReviseReplica func(obj *unstructured.Unstructured, replicas int32) (*unstructured.Unstructured, error)
	// Retain returns desired (what is applied) completed with what the
	// member owns in observed (its copy). Default: desired unchanged; the
	// execution controller applies with server-side apply, which keeps every
	// field that another manager (the member's own controllers) set and the
	// manifest leaves out, so no built-in kind needs one.
	Retain func(desired, observed *unstructured.Unstructured) (*unstructured.Unstructured, error)
	// AggregateStatus returns the template with its status set from every
	// cluster's reflected status. Default: the template unchanged.
	AggregateStatus func(template *unstructured.Unstructured, items []workv1alpha2.AggregatedStatusItem) (*unstructured.Unstructured, error)
	// ReflectStatus (InterpretStatus) returns what of a member copy's
	// status is recorded in its Work. Default: the whole status (nil when
	// there is none).
	ReflectStatus func(obj *unstructured.Unstructured) (*runtime.RawExtension, error)
	// Health (InterpretHealth) judges a member copy. Default: Unknown.
	Health func(obj *unstructured.Unstructured) (workv1alpha1.ResourceHealth, error)
	// Dependencies (InterpretDependency) lists the objects a workload needs
	// in its member. Default: none.
	Dependencies func(obj *unstructured.Unstructured) ([]DependentObject, error)
	// GetComponents (InterpretComponent) lists the components of a workload
	// made of several pod templates, each with its replicas and what one
	// needs. When defined, the binding carries components instead of
	// replicas. Default: none.
	GetComponents func(obj *unstructured.Unstructured) ([]workv1alpha2.Component, error)
	// Prune removes the kind's control-plane fields from a copy of a
	// template, after the metadata and status every kind loses. Default:
	// nothing more.
	Prune func(obj *unstructured.Unstructured)
	// ObservesGeneration says the kind's controller reports, in
	// status.observedGeneration, which generation its status describes.
	ObservesGeneration bool
}

// Defines reports whether k defines op.
func (k *Kind) Defines(op Operation) bool {
	switch op {
	case OpInterpretReplica:
		return k.GetReplicas != nil
	case OpReviseReplica:
		return k.ReviseReplica != nil
	case OpRetain:
		return k.Retain != nil
	case OpAggregateStatus:
		return k.AggregateStatus != nil
	case OpInterpretStatus:
		return k.ReflectStatus != nil
	case OpInterpretHealth:
		return k.Health != nil
	case OpInterpretDependency:
		return k.Dependencies != nil
	case OpInterpretComponent:
		return k.GetComponents != nil
	case OpPrune:
		return k.Prune != nil
	}
	return false
}

// Layer is a source of kind knowledge: the built-in registry, or one put in
// front of it.
type Layer interface {
	// Lookup returns what the layer knows of a kind, or nil.
	Lookup(gk schema.GroupKind) *Kind
}

// Registry is a Layer held in a map.
type Registry map[schema.GroupKind]*Kind

// Lookup implements Layer.
func (r Registry) Lookup(gk schema.GroupKind) *Kind { return r[gk] }

// Interpreter answers every operation for every kind from its layers: the
// first layer whose entry for the kind defines the operation answers it;
// when none does, the default answers.
type Interpreter struct {
	layers []Layer
}

// New returns an interpreter that asks the layers in order, then the
// built-in registry.
func New(layers ...Layer) *Interpreter {
	return &Interpreter{layers: append(append([]Layer(nil), layers...), builtin)}
}

// Default is the interpreter of the built-in registry alone. A nil
// *Interpreter answers as Default does: a reconciler built without one (in
// a unit test, say) knows the built-in kinds.
var Default = New()

// layersOf returns the layers in asks, Default's for a nil in.
func (in *Interpreter) layersOf() []Layer {
	if in == nil {
		return Default.layers
	}
	return in.layers
}

// kind returns the entry that answers op for gk, or nil for the default.
func (in *Interpreter) kind(gk schema.GroupKind, op Operation) *Kind {
	for _, l := range in.layersOf() {
		if k := l.Lookup(gk); k != nil && k.Defines(op) {
			return k
		}
	}
	return nil
}

// Answers reports which layer answers op for gk: its index among the layers
// given to New, len(layers) for the built-in registry, -1 for the default.
func (in *Interpreter) Answers(gk schema.GroupKind, op Operation) int {
	for i, l := range in.layersOf() {
		if k := l.Lookup(gk); k != nil && k.Defines(op) {
			return i
		}
	}
	return -1
}

func groupKind(obj *unstructured.Unstructured) schema.GroupKind {
	return obj.GroupVersionKind().GroupKind()
}

// HasReplicas reports whether the kind's replicas can be divided between
// clusters.
func (in *Interpreter) HasReplicas(gk schema.GroupKind) bool {
	return in.kind(gk, OpInterpretReplica) != nil
}

// Replicas returns the replica count of a workload and what one replica
// needs. Kinds without replicas return (0, nil, nil).
func (in *Interpreter) Replicas(obj *unstructured.Unstructured) (int32, *workv1alpha2.ReplicaRequirements, error) {
	if k := in.kind(groupKind(obj), OpInterpretReplica); k != nil {
		return k.GetReplicas(obj)
	}
	return 0, nil, nil
}

// ReviseReplicas returns a copy of obj with its replica count set for one
// cluster. Kinds without replicas are returned unchanged.
func (in *Interpreter) ReviseReplicas(obj *unstructured.Unstructured, replicas int32) (*unstructured.Unstructured, error) {
	if k := in.kind(groupKind(obj), OpReviseReplica); k != nil {
		return k.ReviseReplica(obj, replicas)
	}
	return obj.DeepCopy(), nil
}

// Retain returns desired completed with what the member owns in observed.
func (in *Interpreter) Retain(desired, observed *unstructured.Unstructured) (*unstructured.Unstructured, error) {
	if k := in.kind(groupKind(desired), OpRetain); k != nil {
		return k.Retain(desired, observed)
	}
	return desired.DeepCopy(), nil
}

// AggregateStatus returns the template with its status set from the status
// reflected by every cluster. Kinds without aggregation return the template
// unchanged.
func (in *Interpreter) AggregateStatus(template *unstructured.Unstructured, items []workv1alpha2.AggregatedStatusItem) (*unstructured.Unstructured, error) {
	if k := in.kind(groupKind(template), OpAggregateStatus); k != nil {
		return k.AggregateStatus(template, items)
	}
	return template.DeepCopy(), nil
}

// ReflectStatus returns what of a member object's status is recorded in its
// Work. No status gives nil.
func (in *Interpreter) ReflectStatus(obj *unstructured.Unstructured) (*runtime.RawExtension, error) {
	if k := in.kind(groupKind(obj), OpInterpretStatus); k != nil {
		return k.ReflectStatus(obj)
	}
	return wholeStatus(obj)
}

// Health judges a member object's health from its status.
func (in *Interpreter) Health(obj *unstructured.Unstructured) (workv1alpha1.ResourceHealth, error) {
	if k := in.kind(groupKind(obj), OpInterpretHealth); k != nil {
		return k.Health(obj)
	}
	return workv1alpha1.ResourceUnknownHealth, nil
}

// HasComponents reports whether the kind's workloads are described by
// components (InterpretComponent).
func (in *Interpreter) HasComponents(gk schema.GroupKind) bool {
	return in.kind(gk, OpInterpretComponent) != nil
}

// Components lists a workload's components; nil for kinds without.
func (in *Interpreter) Components(obj *unstructured.Unstructured) ([]workv1alpha2.Component, error) {
	if k := in.kind(groupKind(obj), OpInterpretComponent); k != nil {
		return k.GetComponents(obj)
	}
	return nil, nil
}

// Dependencies lists the objects a workload needs in its member.
func (in *Interpreter) Dependencies(obj *unstructured.Unstructured) ([]DependentObject, error) {
	if k := in.kind(groupKind(obj), OpInterpretDependency); k != nil {
		return k.Dependencies(obj)
	}
	return nil, nil
}

// Prune returns a copy of a template stripped of what belongs to the control
// plane: identity and bookkeeping metadata, status, claims, and the kind's
// own assigned fields (a Service's cluster IPs, a Job's generated selector,
// a ServiceAccount's token secrets).
func (in *Interpreter) Prune(obj *unstructured.Unstructured) *unstructured.Unstructured {
	out := pruneCommon(obj)
	if k := in.kind(groupKind(out), OpPrune); k != nil {
		k.Prune(out)
	}
	return out
}

// Unobserved reports whether a member's copy carries no status of its
// current generation yet: a workload whose controller reports
// status.observedGeneration, and has not observed the object's generation
// (a copy just created or just changed). Such a status says nothing about
// the current spec; reflecting it would only add a write.
func (in *Interpreter) Unobserved(obj *unstructured.Unstructured) bool {
	observing := false
	gk := groupKind(obj)
	for _, l := range in.layersOf() {
		if k := l.Lookup(gk); k != nil && k.ObservesGeneration {
			observing = true
			break
		}
	}
	if !observing {
		return false
	}
	observed, _, _ := unstructured.NestedInt64(obj.Object, "status", "observedGeneration")
	return observed < obj.GetGeneration()
}

// HasRetain reports whether a layer in front of the built-in registry
// defines Retain for the kind (built-in kinds need none: see Kind.Retain).
func (in *Interpreter) HasRetain(gk schema.GroupKind) bool { return in.kind(gk, OpRetain) != nil }
