package v1alpha1

import (
	autoscalingv2 "k8s.io/api/autoscaling/v2"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// FederatedHPA scales a resource template (anything with a scale
// subresource) from the metrics of its pods in every member cluster, with
// the Kubernetes HPA algorithm; the replicas it sets are divided over the
// clusters as the template's policy says.
//
// +genclient
// +kubebuilder:object:root=true
// +kubebuilder:subresource:status
// +kubebuilder:resource:shortName=fhpa,categories={karmada-io}
// +kubebuilder:printcolumn:name="REFERENCE-KIND",type=string,JSONPath=`.spec.scaleTargetRef.kind`
// +kubebuilder:printcolumn:name="REFERENCE-NAME",type=string,JSONPath=`.spec.scaleTargetRef.name`
// +kubebuilder:printcolumn:name="MINPODS",type=integer,JSONPath=`.spec.minReplicas`
// +kubebuilder:printcolumn:name="MAXPODS",type=integer,JSONPath=`.spec.maxReplicas`
// +kubebuilder:printcolumn:name="REPLICAS",type=integer,JSONPath=`.status.currentReplicas`
// +kubebuilder:printcolumn:name="AGE",type=date,JSONPath=`.metadata.creationTimestamp`
type FederatedHPA struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	// Spec is what the FederatedHPA scales, between which bounds, on which
	// metrics.
	Spec FederatedHPASpec `json:"spec"`

	// Status is the FederatedHPA's last observation.
	// +optional
	Status autoscalingv2.HorizontalPodAutoscalerStatus `json:"status,omitempty"`
}

// FederatedHPASpec is a FederatedHPA's desired behaviour.
type FederatedHPASpec struct {
	// ScaleTargetRef is the template to scale; its pods in the members
	// are the ones whose metrics count.
	ScaleTargetRef autoscalingv2.CrossVersionObjectReference `json:"scaleTargetRef"`

	// MinReplicas is the fewest replicas it scales down to (1 when
	// unset).
	// +optional
	MinReplicas *int32 `json:"minReplicas,omitempty"`

	// MaxReplicas is the most replicas it scales up to; at least
	// MinReplicas.
	MaxReplicas int32 `json:"maxReplicas"`

	// Metrics to scale on: the desired replicas are the largest any of
	// them asks for. Unset: 80% average CPU utilization.
	// +listType=atomic
	// +optional
	Metrics []autoscalingv2.MetricSpec `json:"metrics,omitempty"`

	// Behavior is how fast it scales up and down (the default rules of the
	// Kubernetes HPA when unset).
	// +optional
	Behavior *autoscalingv2.HorizontalPodAutoscalerBehavior `json:"behavior,omitempty"`
}

// FederatedHPAList is a list of FederatedHPAs.
//
// +kubebuilder:object:root=true
type FederatedHPAList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	Items           []FederatedHPA `json:"items"`
}
