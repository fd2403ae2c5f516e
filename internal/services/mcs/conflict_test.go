package mcs

import (
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/utils/ptr"

	"github.com/karmada-go/karmada/internal/names"
)

func svc(mut func(*corev1.Service), ports ...corev1.ServicePort) *corev1.Service {
	s := &corev1.Service{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "web"}, Spec: corev1.ServiceSpec{Ports: ports}}
	if mut != nil {
		mut(s)
	}
	return s
}

func TestConflicts(t *testing.T) {
	t0 := time.Date(2026, 11, 29, 0, 0, 0, 0, time.UTC)
	at := func(min int) metav1.Time { return metav1.NewTime(t0.Add(time.Duration(min) * time.Minute)) }
	http80 := corev1.ServicePort{Name: "http", Port: 80, Protocol: corev1.ProtocolTCP}
	http8080 := corev1.ServicePort{Name: "http", Port: 8080, Protocol: corev1.ProtocolTCP}
	grpc := corev1.ServicePort{Name: "grpc", Port: 9090, AppProtocol: ptr.To("grpc")}
	headless := func(s *corev1.Service) { s.Spec.ClusterIP = corev1.ClusterIPNone }
	sticky := func(s *corev1.Service) { s.Spec.SessionAffinity = corev1.ServiceAffinityClientIP }

	for _, tc := range []struct {
		name        string
		exports     []Export
		wantStatus  metav1.ConditionStatus
		wantReason  string
		wantMessage string
	}{{
		name:        "alone",
		exports:     []Export{{Cluster: "m1", Exported: at(0), Service: svc(nil, http80)}},
		wantStatus:  metav1.ConditionFalse,
		wantReason:  ReasonNoConflicts,
		wantMessage: "The Service is exported by this cluster alone",
	}, {
		name: "agree (protocol defaulted on one side, extra port on the other)",
		exports: []Export{{Cluster: "m1", Exported: at(0), Service: svc(nil, http80)},
			{Cluster: "m2", Exported: at(1), Service: svc(nil, corev1.ServicePort{Name: "http", Port: 80}, grpc)}},
		wantStatus:  metav1.ConditionFalse,
		wantReason:  ReasonNoConflicts,
		wantMessage: "The 2 exports of the Service agree",
	}, {
		name: "port: the oldest wins, whatever the cluster name",
		exports: []Export{{Cluster: "m1", Exported: at(5), Service: svc(nil, http8080)},
			{Cluster: "m2", Exported: at(1), Service: svc(nil, http80)},
			{Cluster: "m3", Exported: at(2), Service: svc(nil, http80)}},
		wantStatus:  metav1.ConditionTrue,
		wantReason:  ReasonPortConflict,
		wantMessage: `Conflicting port "http". Using 80/TCP from the oldest ServiceExport, in cluster "m2". 1/3 clusters disagree.`,
	}, {
		name: "same creation time: the cluster name decides",
		exports: []Export{{Cluster: "m2", Exported: at(0), Service: svc(nil, http80)},
			{Cluster: "m1", Exported: at(0), Service: svc(nil, http8080)}},
		wantStatus:  metav1.ConditionTrue,
		wantReason:  ReasonPortConflict,
		wantMessage: `Conflicting port "http". Using 8080/TCP from the oldest ServiceExport, in cluster "m1". 1/2 clusters disagree.`,
	}, {
		name: "a port the oldest lacks is judged among those that have it",
		exports: []Export{{Cluster: "m1", Exported: at(0), Service: svc(nil, grpc)},
			{Cluster: "m2", Exported: at(1), Service: svc(nil, http80)},
			{Cluster: "m3", Exported: at(2), Service: svc(nil, http8080)}},
		wantStatus:  metav1.ConditionTrue,
		wantReason:  ReasonPortConflict,
		wantMessage: `Conflicting port "http". Using 80/TCP from the oldest ServiceExport, in cluster "m2". 1/3 clusters disagree.`,
	}, {
		name: "application protocol differs",
		exports: []Export{{Cluster: "m1", Exported: at(0), Service: svc(nil, grpc)},
			{Cluster: "m2", Exported: at(1), Service: svc(nil, corev1.ServicePort{Name: "grpc", Port: 9090})}},
		wantStatus:  metav1.ConditionTrue,
		wantReason:  ReasonPortConflict,
		wantMessage: `Conflicting port "grpc". Using 9090/TCP (grpc) from the oldest ServiceExport, in cluster "m1". 1/2 clusters disagree.`,
	}, {
		name: "type and affinity: reasons joined with commas, in order",
		exports: []Export{{Cluster: "m1", Exported: at(0), Service: svc(headless, http80)},
			{Cluster: "m2", Exported: at(1), Service: svc(sticky, http80)}},
		wantStatus: metav1.ConditionTrue,
		wantReason: ReasonTypeConflict + "," + ReasonSessionAffinityConflict,
		wantMessage: `Conflicting type. Using "Headless" from the oldest ServiceExport, in cluster "m1". 1/2 clusters disagree. ` +
			`Conflicting sessionAffinity. Using "None" from the oldest ServiceExport, in cluster "m1". 1/2 clusters disagree.`,
	}} {
		t.Run(tc.name, func(t *testing.T) {
			got := Conflicts(tc.exports)
			if len(got) != len(tc.exports) {
				t.Fatalf("%d conditions for %d exports", len(got), len(tc.exports))
			}
			for _, e := range tc.exports {
				c := got[e.Cluster]
				if c.Type != "Conflict" || c.Status != tc.wantStatus || c.Reason != tc.wantReason || c.Message != tc.wantMessage {
					t.Errorf("%s: %s %s %q\n  want %s %q", e.Cluster, c.Status, c.Reason, c.Message, tc.wantStatus, tc.wantReason+" "+tc.wantMessage)
				}
			}
		})
	}
}

func TestValidExport(t *testing.T) {
	for _, tc := range []struct {
		svc    *corev1.Service
		status metav1.ConditionStatus
		reason string
	}{
		{nil, metav1.ConditionFalse, ReasonNoService},
		{svc(func(s *corev1.Service) { s.Spec.Type = corev1.ServiceTypeExternalName }), metav1.ConditionFalse, ReasonInvalidServiceType},
		{svc(nil), metav1.ConditionTrue, ReasonValid},
		{svc(func(s *corev1.Service) { s.Spec.ClusterIP = corev1.ClusterIPNone }), metav1.ConditionTrue, ReasonValid},
	} {
		c := ValidExport("ns", "web", tc.svc)
		if c.Type != "Valid" || c.Status != tc.status || c.Reason != tc.reason {
			t.Errorf("%+v: got %s %s (%s)", tc.svc, c.Status, c.Reason, c.Message)
		}
	}
}

func TestRecordRoundTrip(t *testing.T) {
	created := metav1.NewTime(time.Date(2026, 11, 29, 1, 2, 3, 0, time.UTC))
	s := svc(func(s *corev1.Service) {
		s.Spec.ClusterIP = corev1.ClusterIPNone
		s.ResourceVersion, s.UID = "42", "u"
	}, corev1.ServicePort{Name: "http", Port: 80, TargetPort: intstr.FromInt32(8080)})
	raw, err := RecordManifests(metav1.ObjectMeta{Namespace: "ns", Name: "web", CreationTimestamp: created, UID: "x"}, s)
	if err != nil {
		t.Fatal(err)
	}
	e, err := ParseRecord("m1", raw)
	if err != nil {
		t.Fatal(err)
	}
	if !e.Exported.Equal(&created) || e.Cluster != "m1" || importType(e.Service) != "Headless" || portString(e.Service, "http") != "80/TCP" {
		t.Errorf("round trip: %+v %+v", e, e.Service.Spec)
	}
	if e.Service.ResourceVersion != "" || e.Service.Spec.Ports[0].TargetPort.IntValue() != 0 {
		t.Errorf("what the member alone cares about was kept: %+v", e.Service)
	}
	if _, err := ParseRecord("m1", raw[:1]); err == nil {
		t.Error("a record of one manifest was read")
	}
}

// The record of an export is not the Work that propagates a ServiceExport
// of the same name to the cluster.
func TestExportWorkNameIsItsOwn(t *testing.T) {
	if a, b := ExportWorkName("cf", "web"), names.WorkName("ServiceExport", "web", "cf"); a == b {
		t.Errorf("the export record and the propagated ServiceExport's Work are both %s", a)
	}
}
