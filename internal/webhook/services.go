package webhook

import (
	"fmt"
	"net"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/util/sets"
	"k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/apimachinery/pkg/util/validation/field"

	mcsv1alpha1 "github.com/karmada-go/karmada/api/multicluster/v1alpha1"
	networkingv1alpha1 "github.com/karmada-go/karmada/api/networking/v1alpha1"
	"github.com/karmada-go/karmada/internal/names"
)

var (
	mcsResource        = mcsv1alpha1.SchemeGroupVersion.WithResource
	networkingResource = networkingv1alpha1.SchemeGroupVersion.WithResource
	protocols          = []string{string(corev1.ProtocolTCP), string(corev1.ProtocolUDP), string(corev1.ProtocolSCTP)}
	importTypes        = []string{string(mcsv1alpha1.ClusterSetIP), string(mcsv1alpha1.Headless)}
	exposureTypes      = []string{string(networkingv1alpha1.ExposureTypeCrossCluster), string(networkingv1alpha1.ExposureTypeLoadBalancer)}
)

// serviceEndpoints admit the multi-cluster services' kinds.
func serviceEndpoints(k kindEnv) []Endpoint {
	dec := k.dec
	return []Endpoint{
		{Path: "/validate-serviceimport", GVR: mcsResource("serviceimports"), Kind: "ServiceImport", Namespaced: true,
			handler: &validating[*mcsv1alpha1.ServiceImport]{dec: dec, new: func() *mcsv1alpha1.ServiceImport { return &mcsv1alpha1.ServiceImport{} },
				validate: func(i, _ *mcsv1alpha1.ServiceImport) field.ErrorList { return validateServiceImport(i) }}},
		{Path: "/validate-multiclusterservice", GVR: networkingResource("multiclusterservices"), Kind: "MultiClusterService", Namespaced: true,
			handler: &validating[*networkingv1alpha1.MultiClusterService]{dec: dec, new: func() *networkingv1alpha1.MultiClusterService { return &networkingv1alpha1.MultiClusterService{} },
				validate: func(m, _ *networkingv1alpha1.MultiClusterService) field.ErrorList {
					return validateMultiClusterService(m)
				}}},
		{Path: "/validate-multiclusteringress", GVR: networkingResource("multiclusteringresses"), Kind: "MultiClusterIngress", Namespaced: true,
			handler: &validating[*networkingv1alpha1.MultiClusterIngress]{dec: dec, new: func() *networkingv1alpha1.MultiClusterIngress { return &networkingv1alpha1.MultiClusterIngress{} },
				validate: func(m, _ *networkingv1alpha1.MultiClusterIngress) field.ErrorList {
					return validateMultiClusterIngress(m)
				}}},
	}
}

// validateServiceImport checks an import: its derived Service's name must
// be a Service name, its ports those of a Service, its IP an IP.
func validateServiceImport(i *mcsv1alpha1.ServiceImport) field.ErrorList {
	var errs field.ErrorList
	if derived := mcsv1alpha1.DerivedServiceName(i.Name); len(validation.IsDNS1035Label(derived)) > 0 {
		errs = append(errs, field.Invalid(field.NewPath("metadata", "name"), i.Name,
			fmt.Sprintf("the derived Service %q must be a DNS-1035 label (lower-case letters, digits and '-', at most 63 characters): the name may have at most %d characters", derived, validation.DNS1035LabelMaxLength-len(mcsv1alpha1.DerivedServicePrefix))))
	}
	spec := field.NewPath("spec")
	switch i.Spec.Type {
	case mcsv1alpha1.ClusterSetIP, mcsv1alpha1.Headless:
	default:
		errs = append(errs, field.NotSupported(spec.Child("type"), i.Spec.Type, importTypes))
	}
	ports := spec.Child("ports")
	if len(i.Spec.Ports) == 0 && i.Spec.Type != mcsv1alpha1.Headless {
		errs = append(errs, field.Required(ports, "a ClusterSetIP import needs at least one port"))
	}
	seen := sets.New[string]()
	for n, p := range i.Spec.Ports {
		pp := ports.Index(n)
		if len(i.Spec.Ports) > 1 && p.Name == "" {
			errs = append(errs, field.Required(pp.Child("name"), "every port of an import with several ports is named"))
		}
		if p.Name != "" {
			for _, msg := range validation.IsDNS1123Label(p.Name) {
				errs = append(errs, field.Invalid(pp.Child("name"), p.Name, msg))
			}
			if seen.Has(p.Name) {
				errs = append(errs, field.Duplicate(pp.Child("name"), p.Name))
			}
			seen.Insert(p.Name)
		}
		for _, msg := range validation.IsValidPortNum(int(p.Port)) {
			errs = append(errs, field.Invalid(pp.Child("port"), p.Port, msg))
		}
		if p.Protocol != "" && !sets.New(protocols...).Has(string(p.Protocol)) {
			errs = append(errs, field.NotSupported(pp.Child("protocol"), p.Protocol, protocols))
		}
	}
	for n, ip := range i.Spec.IPs {
		if net.ParseIP(ip) == nil {
			errs = append(errs, field.Invalid(spec.Child("ips").Index(n), ip, "must be an IPv4 or IPv6 address"))
		}
	}
	if i.Spec.Type == mcsv1alpha1.Headless && len(i.Spec.IPs) > 0 {
		errs = append(errs, field.Forbidden(spec.Child("ips"), "a Headless import has no virtual IP"))
	}
	switch i.Spec.SessionAffinity {
	case "", corev1.ServiceAffinityNone, corev1.ServiceAffinityClientIP:
	default:
		errs = append(errs, field.NotSupported(spec.Child("sessionAffinity"), i.Spec.SessionAffinity, []string{string(corev1.ServiceAffinityNone), string(corev1.ServiceAffinityClientIP)}))
	}
	return errs
}

// validateMultiClusterService checks a MultiClusterService: known
// exposure types, each once; cluster names that can be clusters' names;
// ports in range.
func validateMultiClusterService(m *networkingv1alpha1.MultiClusterService) field.ErrorList {
	spec := field.NewPath("spec")
	var errs field.ErrorList
	types := spec.Child("types")
	if len(m.Spec.Types) == 0 {
		errs = append(errs, field.Required(types, "at least one of CrossCluster and LoadBalancer"))
	}
	seen := sets.New[networkingv1alpha1.ExposureType]()
	for n, t := range m.Spec.Types {
		switch t {
		case networkingv1alpha1.ExposureTypeCrossCluster, networkingv1alpha1.ExposureTypeLoadBalancer:
		default:
			errs = append(errs, field.NotSupported(types.Index(n), t, exposureTypes))
		}
		if seen.Has(t) {
			errs = append(errs, field.Duplicate(types.Index(n), t))
		}
		seen.Insert(t)
	}
	for n, p := range m.Spec.Ports {
		for _, msg := range validation.IsValidPortNum(int(p.Port)) {
			errs = append(errs, field.Invalid(spec.Child("ports").Index(n).Child("port"), p.Port, msg))
		}
	}
	clusterNames := func(path *field.Path, list []string) {
		for n, c := range list {
			for _, msg := range names.ClusterNameErrors(c) {
				errs = append(errs, field.Invalid(path.Index(n), c, msg))
			}
		}
	}
	selectors := func(path *field.Path, list []networkingv1alpha1.ClusterSelector) {
		for n, c := range list {
			for _, msg := range names.ClusterNameErrors(c.Name) {
				errs = append(errs, field.Invalid(path.Index(n).Child("name"), c.Name, msg))
			}
		}
	}
	clusterNames(spec.Child("range", "clusterNames"), m.Spec.Range.ClusterNames)
	clusterNames(spec.Child("serviceProvisionClusters"), m.Spec.ServiceProvisionClusters)
	clusterNames(spec.Child("serviceConsumptionClusters"), m.Spec.ServiceConsumptionClusters)
	selectors(spec.Child("providerClusters"), m.Spec.ProviderClusters)
	selectors(spec.Child("consumerClusters"), m.Spec.ConsumerClusters)
	return errs
}

// validateMultiClusterIngress checks the backends of a MultiClusterIngress
// name Services by a Service's name and a port in range.
func validateMultiClusterIngress(m *networkingv1alpha1.MultiClusterIngress) field.ErrorList {
	var errs field.ErrorList
	check := func(path *field.Path, svc string, port int32) {
		for _, msg := range validation.IsDNS1035Label(svc) {
			errs = append(errs, field.Invalid(path.Child("service", "name"), svc, msg))
		}
		if port != 0 {
			for _, msg := range validation.IsValidPortNum(int(port)) {
				errs = append(errs, field.Invalid(path.Child("service", "port", "number"), port, msg))
			}
		}
	}
	spec := field.NewPath("spec")
	if b := m.Spec.DefaultBackend; b != nil && b.Service != nil {
		check(spec.Child("defaultBackend"), b.Service.Name, b.Service.Port.Number)
	}
	for r, rule := range m.Spec.Rules {
		if rule.HTTP == nil {
			continue
		}
		for p, path := range rule.HTTP.Paths {
			if path.Backend.Service != nil {
				check(spec.Child("rules").Index(r).Child("http", "paths").Index(p).Child("backend"), path.Backend.Service.Name, path.Backend.Service.Port.Number)
			}
		}
	}
	return errs
}
