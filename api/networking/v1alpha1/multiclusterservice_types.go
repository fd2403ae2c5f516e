package v1alpha1

import (
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// MultiClusterService exposes the Service of the same namespace and name
// across clusters.
//
// +genclient
// +kubebuilder:object:root=true
// +kubebuilder:subresource:status
// +kubebuilder:resource:shortName=mcs,categories=karmada-io
type MultiClusterService struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	// Spec is how the service is exposed.
	// +required
	Spec MultiClusterServiceSpec `json:"spec"`

	// Status is the service's state.
	// +optional
	Status corev1.ServiceStatus `json:"status,omitempty"`
}

// MultiClusterServiceSpec is how a service is exposed.
type MultiClusterServiceSpec struct {
	// Types of exposure: CrossCluster (the providers' endpoints reach the
	// consumers) or LoadBalancer.
	// +required
	Types []ExposureType `json:"types"`

	// Ports are the exposed ports (LoadBalancer).
	// +optional
	Ports []ExposurePort `json:"ports,omitempty"`

	// Range selects the clusters of a LoadBalancer exposure (empty: all);
	// kept for Karmada's older clients, which Karmada has deprecated.
	// +optional
	Range ExposureRange `json:"range,omitempty"`

	// ServiceProvisionClusters are the clusters that provide the service
	// (empty: all); read when ProviderClusters is empty (Karmada has
	// deprecated it for ProviderClusters).
	// +optional
	ServiceProvisionClusters []string `json:"serviceProvisionClusters,omitempty"`

	// ServiceConsumptionClusters are the clusters that consume the
	// service (empty: all); read when ConsumerClusters is empty (Karmada
	// has deprecated it for ConsumerClusters).
	// +optional
	ServiceConsumptionClusters []string `json:"serviceConsumptionClusters,omitempty"`

	// ProviderClusters run the service's workload; their endpoints are
	// exposed (empty: every cluster).
	// +optional
	ProviderClusters []ClusterSelector `json:"providerClusters,omitempty"`

	// ConsumerClusters reach the service under its own name (empty:
	// every cluster).
	// +optional
	ConsumerClusters []ClusterSelector `json:"consumerClusters,omitempty"`
}

// ExposureType is one way of exposing a service.
// +kubebuilder:validation:Enum=CrossCluster;LoadBalancer
type ExposureType string

const (
	// ExposureTypeCrossCluster copies the providers' endpoints to the
	// consumers.
	ExposureTypeCrossCluster ExposureType = "CrossCluster"
	// ExposureTypeLoadBalancer exposes the service through a load
	// balancer outside the clusters.
	ExposureTypeLoadBalancer ExposureType = "LoadBalancer"
)

// ExposurePort is one exposed port.
type ExposurePort struct {
	// Name of the port.
	// +optional
	Name string `json:"name,omitempty"`

	// Port is the exposed port number.
	// +required
	Port int32 `json:"port"`
}

// ExposureRange selects clusters.
type ExposureRange struct {
	// ClusterNames lists the clusters.
	// +optional
	ClusterNames []string `json:"clusterNames,omitempty"`
}

// ClusterSelector selects one cluster.
type ClusterSelector struct {
	// Name of the cluster.
	// +required
	Name string `json:"name"`
}

// MultiClusterServiceList is a list of MultiClusterServices.
//
// +kubebuilder:object:root=true
type MultiClusterServiceList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	Items           []MultiClusterService `json:"items"`
}

// Condition types, reasons, labels and annotations of a MultiClusterService.
const (
	// EndpointSliceDispatched is True when the providers' endpoints have
	// been dispatched to every consumer.
	EndpointSliceDispatched = "EndpointSliceDispatched"
	// MCSServiceAppliedConditionType is True when the Service has been
	// propagated to the providers and consumers.
	MCSServiceAppliedConditionType = "ServiceApplied"

	// MultiClusterServicePermanentIDLabel identifies a
	// MultiClusterService across re-creations under the same name.
	MultiClusterServicePermanentIDLabel = "multiclusterservice.karmada.io/permanent-id"
	// MultiClusterServiceNameAnnotation and
	// MultiClusterServiceNamespaceAnnotation name, on a claimed Service,
	// the MultiClusterService that claims it.
	MultiClusterServiceNameAnnotation      = "multiclusterservice.karmada.io/name"
	MultiClusterServiceNamespaceAnnotation = "multiclusterservice.karmada.io/namespace"
	// MultiClusterServiceNamespaceLabel and MultiClusterServiceNameLabel,
	// on a Work, name the MultiClusterService it holds EndpointSlices of.
	MultiClusterServiceNamespaceLabel = "multiclusterservice.karmada.io/namespace"
	MultiClusterServiceNameLabel      = "multiclusterservice.karmada.io/name"
	// EndpointSliceProvisionClusterAnnotation, on a Work dispatching a
	// provider's EndpointSlice to a consumer, names the provider.
	EndpointSliceProvisionClusterAnnotation = "endpointslice.karmada.io/provision-cluster"
	// MCSControllerFinalizer holds a MultiClusterService until what it
	// made is removed.
	MCSControllerFinalizer = "karmada.io/multiclusterservice-controller"
	// ManagedByMultiClusterService is the
	// endpointslice.karmada.io/managed-by value of the provider collection.
	ManagedByMultiClusterService = "MultiClusterService"
	// EndpointSliceDispatchManagedBy is the
	// endpointslice.kubernetes.io/managed-by value of the EndpointSlices
	// dispatched to consumers.
	EndpointSliceDispatchManagedBy = "endpointslice-dispatch-controller.karmada.io"
)
