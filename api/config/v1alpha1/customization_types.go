package v1alpha1

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// +genclient
// +genclient:nonNamespaced
// +kubebuilder:object:root=true
// +kubebuilder:resource:scope=Cluster,shortName=ric,categories={karmada-io}
// +kubebuilder:storageversion
// +kubebuilder:printcolumn:name="TARGET-API-VERSION",type=string,JSONPath=`.spec.target.apiVersion`
// +kubebuilder:printcolumn:name="TARGET-KIND",type=string,JSONPath=`.spec.target.kind`
// +kubebuilder:printcolumn:name="AGE",type=date,JSONPath=`.metadata.creationTimestamp`

// ResourceInterpreterCustomization teaches Karmada one kind with Lua scripts,
// one per operation. It takes precedence over the interpreter webhooks and
// the built-in knowledge, operation by operation.
type ResourceInterpreterCustomization struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	// Spec is the kind and its scripts.
	// +required
	Spec ResourceInterpreterCustomizationSpec `json:"spec"`
}

// ResourceInterpreterCustomizationSpec is the kind and its scripts.
type ResourceInterpreterCustomizationSpec struct {
	// Target is the kind the scripts interpret.
	// +required
	Target CustomizationTarget `json:"target"`

	// Customizations are the scripts, one per operation.
	// +required
	Customizations CustomizationRules `json:"customizations"`
}

// CustomizationTarget names a kind.
type CustomizationTarget struct {
	// APIVersion of the kind.
	// +required
	APIVersion string `json:"apiVersion"`

	// Kind of the target.
	// +required
	Kind string `json:"kind"`
}

// CustomizationRules holds one script per operation; an operation without
// a script is answered by the next interpreter.
type CustomizationRules struct {
	// Retention keeps what the member's own controllers set: function
	// Retain(desiredObj, observedObj) returns the object to apply.
	// +optional
	Retention *LocalValueRetention `json:"retention,omitempty"`

	// ReplicaResource finds the replicas and what one needs: function
	// GetReplicas(desiredObj) returns replicas, requirement.
	// +optional
	ReplicaResource *ReplicaResourceRequirement `json:"replicaResource,omitempty"`

	// ComponentResource finds the components of a workload made of several
	// pod templates: function GetComponents(desiredObj) returns a list of
	// {name, replicas, replicaRequirements}. When set, ReplicaResource is not
	// used.
	// +optional
	ComponentResource *ComponentResourceRequirement `json:"componentResource,omitempty"`

	// ReplicaRevision sets the replicas for one cluster: function
	// ReviseReplica(desiredObj, desiredReplica) returns the object.
	// +optional
	ReplicaRevision *ReplicaRevision `json:"replicaRevision,omitempty"`

	// StatusReflection picks what of a member copy's status is collected:
	// function ReflectStatus(observedObj) returns the status.
	// +optional
	StatusReflection *StatusReflection `json:"statusReflection,omitempty"`

	// StatusAggregation sets the template's status from every cluster's:
	// function AggregateStatus(desiredObj, statusItems) returns the object.
	// +optional
	StatusAggregation *StatusAggregation `json:"statusAggregation,omitempty"`

	// HealthInterpretation judges a member copy: function
	// InterpretHealth(observedObj) returns a boolean.
	// +optional
	HealthInterpretation *HealthInterpretation `json:"healthInterpretation,omitempty"`

	// DependencyInterpretation lists what the workload needs in its
	// member: function GetDependencies(desiredObj) returns a list of
	// {apiVersion, kind, namespace, name}.
	// +optional
	DependencyInterpretation *DependencyInterpretation `json:"dependencyInterpretation,omitempty"`
}

// LocalValueRetention is the Retain script.
type LocalValueRetention struct {
	// LuaScript defines function Retain(desiredObj, observedObj).
	// +required
	LuaScript string `json:"luaScript"`
}

// ReplicaResourceRequirement is the GetReplicas script.
type ReplicaResourceRequirement struct {
	// LuaScript defines function GetReplicas(desiredObj).
	// +required
	LuaScript string `json:"luaScript"`
}

// ComponentResourceRequirement is the GetComponents script.
type ComponentResourceRequirement struct {
	// LuaScript defines function GetComponents(desiredObj).
	// +required
	LuaScript string `json:"luaScript"`
}

// ReplicaRevision is the ReviseReplica script.
type ReplicaRevision struct {
	// LuaScript defines function ReviseReplica(desiredObj, desiredReplica).
	// +required
	LuaScript string `json:"luaScript"`
}

// StatusReflection is the ReflectStatus script.
type StatusReflection struct {
	// LuaScript defines function ReflectStatus(observedObj).
	// +required
	LuaScript string `json:"luaScript"`
}

// StatusAggregation is the AggregateStatus script.
type StatusAggregation struct {
	// LuaScript defines function AggregateStatus(desiredObj, statusItems).
	// +required
	LuaScript string `json:"luaScript"`
}

// HealthInterpretation is the InterpretHealth script.
type HealthInterpretation struct {
	// LuaScript defines function InterpretHealth(observedObj).
	// +required
	LuaScript string `json:"luaScript"`
}

// DependencyInterpretation is the GetDependencies script.
type DependencyInterpretation struct {
	// LuaScript defines function GetDependencies(desiredObj).
	// +required
	LuaScript string `json:"luaScript"`
}

// +kubebuilder:object:root=true

// ResourceInterpreterCustomizationList is a list of customizations.
type ResourceInterpreterCustomizationList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	// Items are the customizations.
	Items []ResourceInterpreterCustomization `json:"items"`
}
