package v1alpha1

import (
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// OverridePolicy changes the copies of namespaced templates in its own
// namespace per member cluster.
//
// +genclient
// +kubebuilder:object:root=true
// +kubebuilder:resource:shortName=op,categories=karmada-io
type OverridePolicy struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	// Spec is the desired set of overrides.
	// +required
	Spec OverrideSpec `json:"spec"`
}

// ClusterOverridePolicy changes the copies of templates in any namespace, or
// cluster-scoped ones, per member cluster.
//
// +genclient
// +genclient:nonNamespaced
// +kubebuilder:object:root=true
// +kubebuilder:resource:scope=Cluster,shortName=cop,categories=karmada-io
type ClusterOverridePolicy struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	// Spec is the desired set of overrides.
	// +required
	Spec OverrideSpec `json:"spec"`
}

// OverrideSpec is the body of both override policy kinds.
type OverrideSpec struct {
	// ResourceSelectors pick the templates whose copies are overridden; empty
	// selects every template the policy can see.
	// +optional
	ResourceSelectors []ResourceSelector `json:"resourceSelectors,omitempty"`

	// OverrideRules apply overriders to the copies for the clusters each rule
	// targets, in order.
	// +optional
	OverrideRules []RuleWithCluster `json:"overrideRules,omitempty"`

	// TargetCluster is deprecated; use OverrideRules.
	// +optional
	TargetCluster *ClusterAffinity `json:"targetCluster,omitempty"`

	// Overriders is deprecated; use OverrideRules.
	// +optional
	Overriders Overriders `json:"overriders,omitempty"`
}

// RuleWithCluster applies overriders to the copies for some clusters.
type RuleWithCluster struct {
	// TargetCluster selects the clusters; empty means all.
	// +optional
	TargetCluster *ClusterAffinity `json:"targetCluster,omitempty"`
	// Overriders to apply.
	// +required
	Overriders Overriders `json:"overriders"`
}

// Overriders are the changes applied to a copy, in the order of the fields.
type Overriders struct {
	// Plaintext applies JSON patch operations.
	// +optional
	Plaintext []PlaintextOverrider `json:"plaintext,omitempty"`
	// ImageOverrider rewrites container images.
	// +optional
	ImageOverrider []ImageOverrider `json:"imageOverrider,omitempty"`
	// CommandOverrider changes container commands.
	// +optional
	CommandOverrider []CommandArgsOverrider `json:"commandOverrider,omitempty"`
	// ArgsOverrider changes container args.
	// +optional
	ArgsOverrider []CommandArgsOverrider `json:"argsOverrider,omitempty"`
	// LabelsOverrider changes labels.
	// +optional
	LabelsOverrider []LabelAnnotationOverrider `json:"labelsOverrider,omitempty"`
	// AnnotationsOverrider changes annotations.
	// +optional
	AnnotationsOverrider []LabelAnnotationOverrider `json:"annotationsOverrider,omitempty"`
	// FieldOverrider patches JSON or YAML held in a string field.
	// +optional
	FieldOverrider []FieldOverrider `json:"fieldOverrider,omitempty"`
}

// OverriderOperator is a patch operation.
type OverriderOperator string

// Overrider operators.
const (
	OverriderOpAdd     OverriderOperator = "add"
	OverriderOpRemove  OverriderOperator = "remove"
	OverriderOpReplace OverriderOperator = "replace"
)

// PlaintextOverrider is one JSON patch operation.
type PlaintextOverrider struct {
	// Path is the JSON pointer of the field.
	// +required
	Path string `json:"path"`
	// Operator is add, remove or replace.
	// +kubebuilder:validation:Enum=add;remove;replace
	// +required
	Operator OverriderOperator `json:"operator"`
	// Value for add and replace.
	// +optional
	Value apiextensionsv1.JSON `json:"value,omitempty"`
}

// ImageComponent is a part of an image reference.
// +kubebuilder:validation:Enum=Registry;Repository;Tag
type ImageComponent string

// Image components.
const (
	Registry   ImageComponent = "Registry"
	Repository ImageComponent = "Repository"
	Tag        ImageComponent = "Tag"
)

// ImageOverrider rewrites one part of container images.
type ImageOverrider struct {
	// Predicate selects one image by path; empty means every container image.
	// +optional
	Predicate *ImagePredicate `json:"predicate,omitempty"`
	// Component is the part of the image to change.
	// +required
	Component ImageComponent `json:"component"`
	// Operator is add, remove or replace.
	// +kubebuilder:validation:Enum=add;remove;replace
	// +required
	Operator OverriderOperator `json:"operator"`
	// Value for add and replace.
	// +optional
	Value string `json:"value,omitempty"`
}

// ImagePredicate selects an image field by path.
type ImagePredicate struct {
	// Path of the image field, such as /spec/template/spec/containers/0/image.
	// +required
	Path string `json:"path"`
}

// CommandArgsOverrider changes a container's command or args.
type CommandArgsOverrider struct {
	// ContainerName is the container to change.
	// +required
	ContainerName string `json:"containerName"`
	// Operator is add or remove.
	// +kubebuilder:validation:Enum=add;remove
	// +required
	Operator OverriderOperator `json:"operator"`
	// Value is the items to add or remove.
	// +optional
	Value []string `json:"value,omitempty"`
}

// LabelAnnotationOverrider changes labels or annotations.
type LabelAnnotationOverrider struct {
	// Operator is add, remove or replace.
	// +kubebuilder:validation:Enum=add;remove;replace
	// +required
	Operator OverriderOperator `json:"operator"`
	// Value is the keys and values to change.
	// +required
	Value map[string]string `json:"value"`
}

// FieldOverrider patches a document embedded in a string field.
type FieldOverrider struct {
	// FieldPath is the JSON pointer of the string field.
	// +required
	FieldPath string `json:"fieldPath"`
	// JSON operations, when the field holds JSON.
	// +optional
	JSON []PatchOperation `json:"json,omitempty"`
	// YAML operations, when the field holds YAML.
	// +optional
	YAML []PatchOperation `json:"yaml,omitempty"`
}

// PatchOperation is one operation on a document embedded in a string field.
type PatchOperation struct {
	// SubPath is the JSON pointer inside the document.
	// +required
	SubPath string `json:"subPath"`
	// Operator is add, remove or replace.
	// +kubebuilder:validation:Enum=add;remove;replace
	// +required
	Operator OverriderOperator `json:"operator"`
	// Value for add and replace.
	// +optional
	Value apiextensionsv1.JSON `json:"value,omitempty"`
}

// OverridePolicyList is a list of OverridePolicies.
// +kubebuilder:object:root=true
type OverridePolicyList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	Items           []OverridePolicy `json:"items"`
}

// ClusterOverridePolicyList is a list of ClusterOverridePolicies.
// +kubebuilder:object:root=true
type ClusterOverridePolicyList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	Items           []ClusterOverridePolicy `json:"items"`
}
