package mcs

import (
	"encoding/json"
	"fmt"
	"sort"
	"strings"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	mcsv1alpha1 "github.com/karmada-go/karmada/api/multicluster/v1alpha1"
	"github.com/karmada-go/karmada/internal/names"
)

// The export record: for each valid ServiceExport of a member, the service
// export controller keeps one Work in the member's execution namespace
// (never dispatched) holding the export and the Service as the fleet needs
// them to judge conflicts: the export's creation time (the oldest export
// wins) and the Service's type, ports and session affinity. It is labelled
// with mcsv1alpha1.ExportNamespaceLabel and ExportNameLabel (ours: Karmada
// has no such Work), not with the EndpointSlice Works' labels, so nothing
// that reads collected slices reads it.
const (
	ExportNamespaceLabel = mcsv1alpha1.ExportNamespaceLabel
	ExportNameLabel      = mcsv1alpha1.ExportNameLabel
)

// Reasons of the ServiceExport conditions, as the multi-cluster services
// API (sigs.k8s.io/mcs-api) names them.
const (
	ReasonValid              = "Valid"
	ReasonNoService          = "NoService"
	ReasonInvalidServiceType = "InvalidServiceType"

	ReasonNoConflicts                   = "NoConflicts"
	ReasonPortConflict                  = "PortConflict"
	ReasonTypeConflict                  = "TypeConflict"
	ReasonSessionAffinityConflict       = "SessionAffinityConflict"
	ReasonSessionAffinityConfigConflict = "SessionAffinityConfigConflict"
)

// ExportWorkName is the name of the export record of namespace/name: not
// the name of the Work that propagates a ServiceExport of that name to the
// cluster (the record's kind in the hash is its own).
func ExportWorkName(namespace, name string) string {
	return names.WorkName("ServiceExportRecord", name, namespace)
}

// IsExportRecord reports whether a Work's labels mark it as an export
// record.
func IsExportRecord(l map[string]string) bool {
	return l[ExportNamespaceLabel] != "" && l[ExportNameLabel] != ""
}

// Export is what the fleet knows of one cluster's export of a Service.
type Export struct {
	Cluster string
	// Exported is when the member's ServiceExport was created.
	Exported metav1.Time
	Service  *corev1.Service
}

// RecordManifests are the two manifests of an export record: the
// ServiceExport (name and creation time) and the Service (type, ports,
// session affinity), with what the member alone cares about left out.
func RecordManifests(export metav1.ObjectMeta, svc *corev1.Service) ([][]byte, error) {
	ex, err := json.Marshal(&mcsv1alpha1.ServiceExport{
		TypeMeta:   metav1.TypeMeta{APIVersion: mcsv1alpha1.SchemeGroupVersion.String(), Kind: "ServiceExport"},
		ObjectMeta: metav1.ObjectMeta{Namespace: export.Namespace, Name: export.Name, CreationTimestamp: export.CreationTimestamp},
	})
	if err != nil {
		return nil, err
	}
	trimmed := &corev1.Service{
		TypeMeta:   metav1.TypeMeta{APIVersion: "v1", Kind: "Service"},
		ObjectMeta: metav1.ObjectMeta{Namespace: svc.Namespace, Name: svc.Name},
		Spec: corev1.ServiceSpec{Type: svc.Spec.Type, SessionAffinity: svc.Spec.SessionAffinity,
			SessionAffinityConfig: svc.Spec.SessionAffinityConfig},
	}
	if svc.Spec.ClusterIP == corev1.ClusterIPNone {
		trimmed.Spec.ClusterIP = corev1.ClusterIPNone
	}
	for _, p := range svc.Spec.Ports {
		trimmed.Spec.Ports = append(trimmed.Spec.Ports, corev1.ServicePort{Name: p.Name, Protocol: p.Protocol, Port: p.Port, AppProtocol: p.AppProtocol})
	}
	sv, err := json.Marshal(trimmed)
	if err != nil {
		return nil, err
	}
	return [][]byte{ex, sv}, nil
}

// ParseRecord reads an export record's manifests back.
func ParseRecord(cluster string, manifests [][]byte) (Export, error) {
	if len(manifests) != 2 {
		return Export{}, fmt.Errorf("an export record holds 2 manifests, not %d", len(manifests))
	}
	ex := &mcsv1alpha1.ServiceExport{}
	if err := json.Unmarshal(manifests[0], ex); err != nil {
		return Export{}, fmt.Errorf("the record's ServiceExport: %w", err)
	}
	svc := &corev1.Service{}
	if err := json.Unmarshal(manifests[1], svc); err != nil {
		return Export{}, fmt.Errorf("the record's Service: %w", err)
	}
	return Export{Cluster: cluster, Exported: ex.CreationTimestamp, Service: svc}, nil
}

// ValidExport is the Valid condition of an export of svc (nil: the
// member has no such Service): a Service of type ExternalName cannot be
// exported (it has no endpoints to collect).
func ValidExport(namespace, name string, svc *corev1.Service) metav1.Condition {
	c := metav1.Condition{Type: mcsv1alpha1.ServiceExportValid, Status: metav1.ConditionTrue, Reason: ReasonValid,
		Message: fmt.Sprintf("Service %s/%s is exported", namespace, name)}
	switch {
	case svc == nil:
		c.Status, c.Reason, c.Message = metav1.ConditionFalse, ReasonNoService, fmt.Sprintf("Service %s/%s not found", namespace, name)
	case svc.Spec.Type == corev1.ServiceTypeExternalName:
		c.Status, c.Reason, c.Message = metav1.ConditionFalse, ReasonInvalidServiceType,
			fmt.Sprintf("Service %s/%s is of type ExternalName, which cannot be exported", namespace, name)
	}
	return c
}

// Conflicts judges the exports of one Service by every exporting cluster,
// as the multi-cluster services KEP says: where they disagree on the type
// (headless or not), a port (the same name with another number, protocol
// or application protocol), the session affinity or its config, the
// oldest export (by creation time, then cluster name) wins, and every
// export gets Conflict True with the field, the winner and how many
// clusters disagree; otherwise Conflict False (NoConflicts). The
// conditions are returned by cluster.
func Conflicts(exports []Export) map[string]metav1.Condition {
	sorted := append([]Export(nil), exports...)
	sort.SliceStable(sorted, func(i, j int) bool {
		if !sorted[i].Exported.Equal(&sorted[j].Exported) {
			return sorted[i].Exported.Before(&sorted[j].Exported)
		}
		return sorted[i].Cluster < sorted[j].Cluster
	})
	var reasons, messages []string
	total := len(sorted)
	// judge compares each export that has the field with the oldest that
	// has it (a port only some exports have is no conflict: the fleet's
	// Service has the union of the ports).
	judge := func(reason, field string, has func(*corev1.Service) bool, value func(*corev1.Service) string, same func(a, b *corev1.Service) bool) {
		var winner *Export
		disagree := 0
		for i := range sorted {
			e := &sorted[i]
			switch {
			case !has(e.Service):
			case winner == nil:
				winner = e
			case !same(winner.Service, e.Service):
				disagree++
			}
		}
		if disagree > 0 {
			reasons = append(reasons, reason)
			messages = append(messages, fmt.Sprintf("Conflicting %s. Using %s from the oldest ServiceExport, in cluster %q. %d/%d clusters disagree.",
				field, value(winner.Service), winner.Cluster, disagree, total))
		}
	}
	always := func(*corev1.Service) bool { return true }
	judge(ReasonTypeConflict, "type", always, func(s *corev1.Service) string { return fmt.Sprintf("%q", importType(s)) },
		func(a, b *corev1.Service) bool { return importType(a) == importType(b) })
	for _, p := range portNames(sorted) {
		judge(ReasonPortConflict, fmt.Sprintf("port %q", p), func(s *corev1.Service) bool { return port(s, p) != nil },
			func(s *corev1.Service) string { return portString(s, p) }, func(a, b *corev1.Service) bool { return samePort(a, b, p) })
	}
	judge(ReasonSessionAffinityConflict, "sessionAffinity", always, func(s *corev1.Service) string { return fmt.Sprintf("%q", affinity(s)) },
		func(a, b *corev1.Service) bool { return affinity(a) == affinity(b) })
	judge(ReasonSessionAffinityConfigConflict, "sessionAffinityConfig", always, affinityConfig,
		func(a, b *corev1.Service) bool {
			return equality.Semantic.DeepEqual(a.Spec.SessionAffinityConfig, b.Spec.SessionAffinityConfig)
		})
	c := metav1.Condition{Type: mcsv1alpha1.ServiceExportConflict, Status: metav1.ConditionFalse, Reason: ReasonNoConflicts,
		Message: fmt.Sprintf("The %d exports of the Service agree", total)}
	if total == 1 {
		c.Message = "The Service is exported by this cluster alone"
	}
	if len(reasons) > 0 {
		// One reason per field, joined with commas as the API allows.
		c.Status, c.Reason, c.Message = metav1.ConditionTrue, strings.Join(dedupe(reasons), ","), strings.Join(messages, " ")
	}
	out := make(map[string]metav1.Condition, total)
	for _, e := range sorted {
		out[e.Cluster] = c
	}
	return out
}

// importType is what a Service becomes in a ServiceImport.
func importType(s *corev1.Service) mcsv1alpha1.ServiceImportType {
	if s.Spec.ClusterIP == corev1.ClusterIPNone {
		return mcsv1alpha1.Headless
	}
	return mcsv1alpha1.ClusterSetIP
}

func affinity(s *corev1.Service) corev1.ServiceAffinity {
	if s.Spec.SessionAffinity == "" {
		return corev1.ServiceAffinityNone
	}
	return s.Spec.SessionAffinity
}

func affinityConfig(s *corev1.Service) string {
	if s.Spec.SessionAffinityConfig == nil {
		return "none"
	}
	b, _ := json.Marshal(s.Spec.SessionAffinityConfig)
	return string(b)
}

// portNames are the port names of every export, sorted (the ports of the
// fleet's Service are their union).
func portNames(exports []Export) []string {
	seen := map[string]bool{}
	var out []string
	for _, e := range exports {
		for _, p := range e.Service.Spec.Ports {
			if !seen[p.Name] {
				seen[p.Name] = true
				out = append(out, p.Name)
			}
		}
	}
	sort.Strings(out)
	return out
}

func port(s *corev1.Service, name string) *corev1.ServicePort {
	for i := range s.Spec.Ports {
		if s.Spec.Ports[i].Name == name {
			return &s.Spec.Ports[i]
		}
	}
	return nil
}

// samePort: the same name must mean the same number, protocol and
// application protocol.
func samePort(a, b *corev1.Service, name string) bool {
	pa, pb := port(a, name), port(b, name)
	return pa.Port == pb.Port && protocol(pa) == protocol(pb) && equality.Semantic.DeepEqual(pa.AppProtocol, pb.AppProtocol)
}

func protocol(p *corev1.ServicePort) corev1.Protocol {
	if p.Protocol == "" {
		return corev1.ProtocolTCP
	}
	return p.Protocol
}

func portString(s *corev1.Service, name string) string {
	p := port(s, name)
	out := fmt.Sprintf("%d/%s", p.Port, protocol(p))
	if p.AppProtocol != nil {
		out += " (" + *p.AppProtocol + ")"
	}
	return out
}

func dedupe(in []string) []string {
	var out []string
	for _, s := range in {
		if len(out) == 0 || out[len(out)-1] != s {
			out = append(out, s)
		}
	}
	return out
}
