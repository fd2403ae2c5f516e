package v1alpha1

import (
	networkingv1 "k8s.io/api/networking/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// MultiClusterIngress is an Ingress for the fleet: its rules route to
// Services wherever they run. It is served and validated; routing needs
// an ingress provider outside the clusters, which this machine lacks
// (see docs/multi-cluster-services.md).
//
// +genclient
// +kubebuilder:object:root=true
// +kubebuilder:subresource:status
// +kubebuilder:resource:shortName=mci,categories=karmada-io
type MultiClusterIngress struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	// Spec is the Ingress's.
	// +optional
	Spec networkingv1.IngressSpec `json:"spec,omitempty"`

	// Status is the ingress's state.
	// +optional
	Status MultiClusterIngressStatus `json:"status,omitempty"`
}

// MultiClusterIngressStatus is the state of a MultiClusterIngress.
type MultiClusterIngressStatus struct {
	networkingv1.IngressStatus `json:",inline"`

	// TrafficBlockClusters are the clusters traffic is kept from.
	// +optional
	TrafficBlockClusters []string `json:"trafficBlockClusters,omitempty"`

	// ServiceLocations are the clusters each backend Service runs in.
	// +optional
	ServiceLocations []ServiceLocation `json:"serviceLocations,omitempty"`
}

// ServiceLocation is where one backend Service runs.
type ServiceLocation struct {
	// Name of the Service.
	// +required
	Name string `json:"name"`

	// Clusters run the Service.
	// +optional
	Clusters []string `json:"clusters,omitempty"`
}

// MultiClusterIngressList is a list of MultiClusterIngresses.
//
// +kubebuilder:object:root=true
type MultiClusterIngressList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	Items           []MultiClusterIngress `json:"items"`
}
