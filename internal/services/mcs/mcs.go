// Package mcs is the vocabulary the multi-cluster services controllers
// (export, endpointslice, imports) share and none owns: which Works hold a
// collected EndpointSlice, the name of such a Work and what it holds, and
// the marks on the objects they write.
package mcs

import (
	"bytes"
	"encoding/json"
	"slices"
	"sort"
	"strings"

	discoveryv1 "k8s.io/api/discovery/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	mcsv1alpha1 "github.com/karmada-go/karmada/api/multicluster/v1alpha1"
	networkingv1alpha1 "github.com/karmada-go/karmada/api/networking/v1alpha1"
	"github.com/karmada-go/karmada/internal/jsonvalue"
	"github.com/karmada-go/karmada/internal/names"
)

// ManagedBy is the endpointslice.kubernetes.io/managed-by value of the
// EndpointSlices the multi-cluster services controllers write: Kubernetes'
// own EndpointSlice controllers leave them alone, and ours touch no other.
const ManagedBy = "endpointslice-controller.karmada.io"

// ManagedByServiceImport is the endpointslice.karmada.io/managed-by value
// of the Works the service import controller dispatches.
const ManagedByServiceImport = "ServiceImport"

// Ours reports whether an EndpointSlice was written by the multi-cluster
// services controllers.
func Ours(s *discoveryv1.EndpointSlice) bool {
	return s.Labels[discoveryv1.LabelManagedBy] == ManagedBy
}

// Collected reports whether a Work's labels mark it as holding an
// EndpointSlice the service export controller collected from its member.
func Collected(l map[string]string) bool {
	return l[mcsv1alpha1.ServiceNameLabel] != "" && l[mcsv1alpha1.ServiceNamespaceLabel] != "" &&
		managedBy(l[mcsv1alpha1.EndpointSliceWorkManagedByLabel], mcsv1alpha1.ManagedByServiceExport)
}

// CollectedFor reports whether a Work's labels mark it as holding an
// EndpointSlice collected for a CrossCluster MultiClusterService.
func CollectedFor(l map[string]string) bool {
	return l[networkingv1alpha1.MultiClusterServiceNameLabel] != "" && l[networkingv1alpha1.MultiClusterServiceNamespaceLabel] != "" &&
		managedBy(l[mcsv1alpha1.EndpointSliceWorkManagedByLabel], networkingv1alpha1.ManagedByMultiClusterService)
}

// CrossCluster reports whether the MultiClusterService exposes its
// Service across clusters.
func CrossCluster(m *networkingv1alpha1.MultiClusterService) bool {
	return slices.Contains(m.Spec.Types, networkingv1alpha1.ExposureTypeCrossCluster)
}

// Providers and Consumers are the clusters the MultiClusterService names
// (providerClusters, else the deprecated serviceProvisionClusters; and
// the same for consumers); none named means every cluster.
func Providers(m *networkingv1alpha1.MultiClusterService) []string {
	return clusterNames(m.Spec.ProviderClusters, m.Spec.ServiceProvisionClusters)
}

// Consumers: see Providers.
func Consumers(m *networkingv1alpha1.MultiClusterService) []string {
	return clusterNames(m.Spec.ConsumerClusters, m.Spec.ServiceConsumptionClusters)
}

func clusterNames(sel []networkingv1alpha1.ClusterSelector, deprecated []string) []string {
	if len(sel) == 0 {
		return deprecated
	}
	out := make([]string, 0, len(sel))
	for _, c := range sel {
		out = append(out, c.Name)
	}
	return out
}

// Provides reports whether cluster provides the MultiClusterService's
// Service.
func Provides(m *networkingv1alpha1.MultiClusterService, cluster string) bool {
	p := Providers(m)
	return len(p) == 0 || slices.Contains(p, cluster)
}

// Consumes reports whether cluster consumes it.
func Consumes(m *networkingv1alpha1.MultiClusterService, cluster string) bool {
	c := Consumers(m)
	return len(c) == 0 || slices.Contains(c, cluster)
}

// managedBy reports whether a managed-by value ("A.B") names controller.
func managedBy(value, controller string) bool {
	for _, v := range strings.Split(value, ".") {
		if v == controller {
			return true
		}
	}
	return false
}

// WorkName is the name of the Work holding the member's EndpointSlice
// namespace/slice.
func WorkName(namespace, slice string) string {
	return names.WorkName("EndpointSlice", slice, namespace)
}

// Manifest is the EndpointSlice a collected Work holds: the member's slice
// with what the member alone cares about (resourceVersion, uid, owners,
// managed fields, the member's annotations) left out, so that the Work
// changes only when the endpoints do.
func Manifest(s *discoveryv1.EndpointSlice) ([]byte, error) {
	out := discoveryv1.EndpointSlice{
		TypeMeta:    metav1.TypeMeta{APIVersion: discoveryv1.SchemeGroupVersion.String(), Kind: "EndpointSlice"},
		ObjectMeta:  metav1.ObjectMeta{Namespace: s.Namespace, Name: s.Name, Labels: s.Labels},
		AddressType: s.AddressType,
		Endpoints:   s.Endpoints,
		Ports:       s.Ports,
	}
	return json.Marshal(&out)
}

// ManagedByValue is the endpointslice.karmada.io/managed-by value of a
// collected Work: the collecting controllers, sorted, joined with '.'.
func ManagedByValue(exported, provided bool) string {
	var out []string
	if exported {
		out = append(out, mcsv1alpha1.ManagedByServiceExport)
	}
	if provided {
		out = append(out, networkingv1alpha1.ManagedByMultiClusterService)
	}
	sort.Strings(out)
	return strings.Join(out, ".")
}

// SameManifest reports whether a Work's stored manifest says what raw
// says: the API server stores a Work's manifests re-encoded (keys sorted),
// so the bytes written are rarely the bytes read back.
func SameManifest(stored, raw []byte) bool {
	if bytes.Equal(stored, raw) {
		return true
	}
	var a, b any
	if json.Unmarshal(stored, &a) != nil || json.Unmarshal(raw, &b) != nil {
		return false
	}
	return jsonvalue.Equal(a, b)
}
