package v1alpha1

import (
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// ServiceExport, in a member cluster, exports the Service of the same
// namespace and name to the fleet: the control plane collects the
// Service's EndpointSlices from that cluster.
//
// +genclient
// +kubebuilder:object:root=true
// +kubebuilder:subresource:status
// +kubebuilder:resource:shortName=svcex
// +kubebuilder:printcolumn:name="Age",type=date,JSONPath=`.metadata.creationTimestamp`
type ServiceExport struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	// Status is the state of the export.
	// +optional
	Status ServiceExportStatus `json:"status,omitempty"`
}

// ServiceExportStatus is the state of an export.
type ServiceExportStatus struct {
	// Conditions: Valid (the Service exists and can be exported) and
	// Conflict (the exporters of the name disagree on its type, ports or
	// session affinity; the oldest export wins).
	// +optional
	// +listType=map
	// +listMapKey=type
	Conditions []metav1.Condition `json:"conditions,omitempty"`
}

// Condition types and reasons of a ServiceExport.
const (
	// ServiceExportValid is True when the exported Service exists and is
	// not of type ExternalName.
	ServiceExportValid = "Valid"
	// ServiceExportConflict is True when the clusters exporting the name
	// disagree on its type, ports or session affinity (the oldest export
	// wins).
	ServiceExportConflict = "Conflict"
)

// ServiceExportList is a list of ServiceExports.
//
// +kubebuilder:object:root=true
type ServiceExportList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	Items           []ServiceExport `json:"items"`
}

// ServiceImport, in the control plane, describes a Service exported by
// the fleet's clusters; propagated to a cluster, it makes there a Service
// derived-<name> whose EndpointSlices carry the exporters' endpoints.
//
// +genclient
// +kubebuilder:object:root=true
// +kubebuilder:subresource:status
// +kubebuilder:resource:shortName=svcim
// +kubebuilder:printcolumn:name="Type",type=string,JSONPath=`.spec.type`,description="The type of this ServiceImport"
// +kubebuilder:printcolumn:name="IP",type=string,JSONPath=`.spec.ips`,description="The VIP for this ServiceImport"
// +kubebuilder:printcolumn:name="Age",type=date,JSONPath=`.metadata.creationTimestamp`
type ServiceImport struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	// Spec is the imported service.
	// +optional
	Spec ServiceImportSpec `json:"spec,omitempty"`

	// Status lists the clusters that export the service.
	// +optional
	Status ServiceImportStatus `json:"status,omitempty"`
}

// ServiceImportType is how an imported service is reached.
// +kubebuilder:validation:Enum=ClusterSetIP;Headless
type ServiceImportType string

const (
	// ClusterSetIP: through one virtual IP.
	ClusterSetIP ServiceImportType = "ClusterSetIP"
	// Headless: through the endpoints' own addresses.
	Headless ServiceImportType = "Headless"
)

// ServiceImportSpec describes an imported service.
type ServiceImportSpec struct {
	// Ports of the service.
	// +listType=atomic
	Ports []ServicePort `json:"ports"`

	// IPs is the virtual IP of a ClusterSetIP import (at most one).
	// +kubebuilder:validation:MaxItems=1
	// +optional
	IPs []string `json:"ips,omitempty"`

	// Type is ClusterSetIP or Headless.
	Type ServiceImportType `json:"type"`

	// SessionAffinity is None or ClientIP, as a Service's.
	// +optional
	SessionAffinity corev1.ServiceAffinity `json:"sessionAffinity,omitempty"`

	// SessionAffinityConfig holds the ClientIP affinity's settings.
	// +optional
	SessionAffinityConfig *corev1.SessionAffinityConfig `json:"sessionAffinityConfig,omitempty"`
}

// ServicePort is one port of an imported service.
type ServicePort struct {
	// Name of the port; required when there are several.
	// +optional
	Name string `json:"name,omitempty"`

	// Protocol: TCP (default), UDP or SCTP.
	// +optional
	Protocol corev1.Protocol `json:"protocol,omitempty"`

	// AppProtocol is the application protocol of the port.
	// +optional
	AppProtocol *string `json:"appProtocol,omitempty"`

	// Port is the port number.
	Port int32 `json:"port"`
}

// ServiceImportStatus lists the clusters that export the service.
type ServiceImportStatus struct {
	// Clusters export the service, sorted by name.
	// +optional
	// +listType=map
	// +listMapKey=cluster
	Clusters []ClusterStatus `json:"clusters,omitempty"`
}

// ClusterStatus names one exporting cluster.
type ClusterStatus struct {
	// Cluster is the cluster's name.
	Cluster string `json:"cluster"`
}

// ServiceImportList is a list of ServiceImports.
//
// +kubebuilder:object:root=true
type ServiceImportList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	Items           []ServiceImport `json:"items"`
}
