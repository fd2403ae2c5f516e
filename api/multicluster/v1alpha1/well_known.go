package v1alpha1

// Labels and names of the multi-cluster services path, as Karmada uses them.
const (
	// ServiceNamespaceLabel, on a Work holding an EndpointSlice collected
	// from a member, is the namespace of the exported Service.
	ServiceNamespaceLabel = "endpointslice.karmada.io/namespace"
	// ServiceNameLabel, on such a Work, is the exported Service's name.
	ServiceNameLabel = "endpointslice.karmada.io/name"
	// EndpointSliceWorkManagedByLabel says which controllers collected
	// the Work's EndpointSlice ("ServiceExport", "MultiClusterService",
	// joined with '.').
	EndpointSliceWorkManagedByLabel = "endpointslice.karmada.io/managed-by"
	// EndpointSliceControllerFinalizer holds a collected Work until the
	// EndpointSlices derived from it in the control plane are removed.
	EndpointSliceControllerFinalizer = "karmada.io/endpointslice-controller"
	// ManagedByServiceExport is the EndpointSliceWorkManagedByLabel value
	// of the service export controller.
	ManagedByServiceExport = "ServiceExport"

	// ExportNamespaceLabel and ExportNameLabel, ours (Karmada has no such
	// Work), name the exported Service of an export record: the Work, in a
	// cluster's execution namespace and never dispatched, holding that
	// cluster's ServiceExport and Service as the control plane judges
	// conflicts between exporters with them.
	ExportNamespaceLabel = "serviceexport.karmada.io/namespace"
	ExportNameLabel      = "serviceexport.karmada.io/name"

	// DerivedServicePrefix starts the name of the Service an import makes.
	DerivedServicePrefix = "derived-"
	// ImportedEndpointSlicePrefix starts the name of an EndpointSlice
	// imported from an exporting cluster: imported-<cluster>-<slice>.
	ImportedEndpointSlicePrefix = "imported-"
)

// DerivedServiceName is the name of the Service an import of name makes.
func DerivedServiceName(name string) string { return DerivedServicePrefix + name }

// ImportedEndpointSliceName is the name, in the control plane and the
// importing clusters, of the EndpointSlice slice collected from cluster.
func ImportedEndpointSliceName(cluster, slice string) string {
	return ImportedEndpointSlicePrefix + cluster + "-" + slice
}
