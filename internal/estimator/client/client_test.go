package client

import (
	"context"
	"errors"
	"net"
	"path/filepath"
	"testing"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/encoding/protowire"
	"google.golang.org/protobuf/proto"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	workv1alpha2 "github.com/karmada-go/karmada/api/work/v1alpha2"
	"github.com/karmada-go/karmada/internal/estimator/pb"
	"github.com/karmada-go/karmada/internal/estimator/server"
	"github.com/karmada-go/karmada/internal/estimator/service"
	"github.com/karmada-go/karmada/internal/localup/pki"
)

type testPKI struct {
	ca, serverCert, serverKey, clientCert, clientKey string
	otherCert, otherKey                              string
}

// newPKI makes an estimator CA with a serving certificate for member1's
// Service name and a client certificate, and a client certificate of
// another CA (an identity the estimator must refuse).
func newPKI(t *testing.T, serverName string) testPKI {
	t.Helper()
	dir := t.TempDir()
	ca, err := pki.LoadOrCreateCA(filepath.Join(dir, "estimator"), "estimator-ca")
	if err != nil {
		t.Fatal(err)
	}
	var p testPKI
	p.ca = filepath.Join(ca.Dir, "ca.crt")
	if p.serverCert, p.serverKey, err = ca.Ensure(pki.CertSpec{Name: "server", CommonName: "estimator", Server: true, DNS: []string{serverName}, IPs: []net.IP{net.ParseIP("127.0.0.1")}}); err != nil {
		t.Fatal(err)
	}
	if p.clientCert, p.clientKey, err = ca.Ensure(pki.CertSpec{Name: "client", CommonName: "system:karmada:karmada-scheduler", Client: true}); err != nil {
		t.Fatal(err)
	}
	other, err := pki.LoadOrCreateCA(filepath.Join(dir, "other"), "other-ca")
	if err != nil {
		t.Fatal(err)
	}
	if p.otherCert, p.otherKey, err = other.Ensure(pki.CertSpec{Name: "client", CommonName: "system:karmada:karmada-scheduler", Client: true}); err != nil {
		t.Fatal(err)
	}
	return p
}

// serve runs an estimator for member1 whose cache holds three 8-cpu
// nodes, with the production TLS credentials.
func serve(t *testing.T, p testPKI, impl service.EstimatorServer) string {
	t.Helper()
	creds, err := server.Credentials(p.serverCert, p.serverKey, p.ca)
	if err != nil {
		t.Fatal(err)
	}
	lis, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	gs := grpc.NewServer(grpc.Creds(creds))
	service.RegisterEstimatorServer(gs, impl)
	go func() { _ = gs.Serve(lis) }()
	t.Cleanup(gs.Stop)
	return lis.Addr().String()
}

func member1Estimator() *server.Service {
	c := server.NewCache()
	for _, name := range []string{"n1", "n2", "n3"} {
		c.SetNode(&corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: name, Labels: map[string]string{"disk": map[string]string{"n1": "ssd"}[name]}},
			Status: corev1.NodeStatus{Allocatable: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("8"), corev1.ResourcePods: resource.MustParse("110")}}})
	}
	return &server.Service{Cluster: "member1", Estimator: &server.Estimator{Cache: c}}
}

func options(addr string, p testPKI) Options {
	return Options{Enabled: true, Timeout: 5 * time.Second, Port: 10352, ServicePrefix: "karmada-scheduler-estimator", ServiceNamespace: "karmada-system",
		Addresses: map[string]string{"member1": addr}, CAFile: p.ca, CertFile: p.clientCert, KeyFile: p.clientKey}
}

func cpu(q string) corev1.ResourceList {
	return corev1.ResourceList{corev1.ResourceCPU: resource.MustParse(q)}
}

func TestRoundTripOverMutualTLS(t *testing.T) {
	p := newPKI(t, "karmada-scheduler-estimator-member1.karmada-system.svc")
	addr := serve(t, p, member1Estimator())
	pool, err := NewPool(options(addr, p))
	if err != nil {
		t.Fatal(err)
	}
	defer pool.Close()
	req, err := pb.NewReplicaRequirements(&workv1alpha2.ReplicaRequirements{ResourceRequest: cpu("3"),
		NodeClaim: &workv1alpha2.NodeClaim{NodeSelector: map[string]string{"disk": "ssd"}}})
	if err != nil {
		t.Fatal(err)
	}
	got := pool.MaxAvailableReplicas(context.Background(), []string{"member1"}, req, nil)
	if a := got["member1"]; a.Err != nil || a.Value != 2 {
		t.Fatalf("member1: %+v, want 2 (one ssd node of 8 cpu, 3 per replica)", a)
	}
	// Assumed workloads are deducted.
	assumed, _ := pb.NewComponents([]workv1alpha2.Component{{Name: "w", Replicas: 1, ReplicaRequirements: &workv1alpha2.ComponentReplicaRequirements{ResourceRequest: cpu("4")}}})
	req2, _ := pb.NewReplicaRequirements(&workv1alpha2.ReplicaRequirements{ResourceRequest: cpu("4")})
	got = pool.MaxAvailableReplicas(context.Background(), []string{"member1"}, req2, map[string][]*pb.AssumedWorkload{"member1": {{Namespace: "default", Components: assumed}}})
	if a := got["member1"]; a.Err != nil || a.Value != 5 {
		t.Fatalf("with one assumed 4-cpu replica: %+v, want 5", a)
	}
	sets, _ := pb.NewComponents([]workv1alpha2.Component{{Name: "jm", Replicas: 1, ReplicaRequirements: &workv1alpha2.ComponentReplicaRequirements{ResourceRequest: cpu("5")}},
		{Name: "tm", Replicas: 2, ReplicaRequirements: &workv1alpha2.ComponentReplicaRequirements{ResourceRequest: cpu("2")}}})
	got = pool.MaxAvailableComponentSets(context.Background(), []string{"member1"}, "default", sets, nil)
	if a := got["member1"]; a.Err != nil || a.Value != 2 {
		t.Fatalf("component sets: %+v, want 2", a)
	}

	// A request naming another cluster is refused.
	c, _ := pool.Client("member1")
	_, err = c.MaxAvailableReplicas(context.Background(), &pb.MaxAvailableReplicasRequest{Cluster: "member2", ReplicaRequirements: req})
	if status.Code(err) != codes.InvalidArgument {
		t.Fatalf("asking member1's estimator about member2: %v, want InvalidArgument", err)
	}
}

func TestRefusedWithoutTheRightCertificates(t *testing.T) {
	p := newPKI(t, "karmada-scheduler-estimator-member1.karmada-system.svc")
	addr := serve(t, p, member1Estimator())
	req, _ := pb.NewReplicaRequirements(&workv1alpha2.ReplicaRequirements{ResourceRequest: cpu("1")})
	ask := func(o Options, cluster string) Answer {
		t.Helper()
		pool, err := NewPool(o)
		if err != nil {
			t.Fatal(err)
		}
		defer pool.Close()
		return pool.MaxAvailableReplicas(context.Background(), []string{cluster}, req, nil)[cluster]
	}
	noCert := options(addr, p)
	noCert.CertFile, noCert.KeyFile = "", ""
	if a := ask(noCert, "member1"); a.Err == nil {
		t.Errorf("a client without a certificate was answered: %+v", a)
	}
	otherCA := options(addr, p)
	otherCA.CertFile, otherCA.KeyFile = p.otherCert, p.otherKey
	if a := ask(otherCA, "member1"); a.Err == nil {
		t.Errorf("a client certificate of another CA was answered: %+v", a)
	}
	// The estimator at member2's address must hold member2's name: one
	// member's estimator (here member1's) cannot answer for another.
	wrongName := options(addr, p)
	wrongName.Addresses = map[string]string{"member2": addr}
	if a := ask(wrongName, "member2"); a.Err == nil || a.Reason != ReasonUnavailable {
		t.Errorf("member1's estimator was trusted as member2's: %+v", a)
	}
	// Another estimator's serving certificate, of the same CA and (as Helm
	// makes them) usable by clients too, is not the scheduler's.
	ca, err := pki.LoadOrCreateCA(filepath.Join(filepath.Dir(p.ca)), "estimator-ca")
	if err != nil {
		t.Fatal(err)
	}
	peerCert, peerKey, err := ca.Ensure(pki.CertSpec{Name: "member2-server", CommonName: "estimator", Server: true, Client: true,
		DNS: []string{"karmada-scheduler-estimator-member2.karmada-system.svc"}})
	if err != nil {
		t.Fatal(err)
	}
	peer := options(addr, p)
	peer.CertFile, peer.KeyFile = peerCert, peerKey
	if a := ask(peer, "member1"); a.Err == nil {
		t.Errorf("member2's estimator's serving certificate was answered as a client's: %+v", a)
	}
	if a := ask(options(addr, p), "member1"); a.Err != nil || a.Value != 24 {
		t.Errorf("the scheduler's own certificate: %+v, want 24", a)
	}
}

// slow never answers before its caller's deadline.
type slow struct {
	service.UnimplementedEstimatorServer
}

func (slow) MaxAvailableReplicas(ctx context.Context, _ *pb.MaxAvailableReplicasRequest) (*pb.MaxAvailableReplicasResponse, error) {
	<-ctx.Done()
	return nil, ctx.Err()
}

func TestSlowAndDownEstimatorsTimeOut(t *testing.T) {
	p := newPKI(t, "karmada-scheduler-estimator-member1.karmada-system.svc")
	addr := serve(t, p, slow{})
	o := options(addr, p)
	o.Timeout = 300 * time.Millisecond
	// member2's estimator is not running at all.
	dead, _ := net.Listen("tcp", "127.0.0.1:0")
	deadAddr := dead.Addr().String()
	_ = dead.Close()
	o.Addresses["member2"] = deadAddr
	pool, err := NewPool(o)
	if err != nil {
		t.Fatal(err)
	}
	defer pool.Close()
	req, _ := pb.NewReplicaRequirements(nil)
	start := time.Now()
	got := pool.MaxAvailableReplicas(context.Background(), []string{"member1", "member2"}, req, nil)
	if took := time.Since(start); took > 3*time.Second {
		t.Errorf("asking took %s with a 300ms timeout", took)
	}
	if a := got["member1"]; a.Err == nil || a.Reason != ReasonTimeout {
		t.Errorf("slow estimator: %+v, want a timeout", a)
	}
	if a := got["member2"]; a.Err == nil || (a.Reason != ReasonUnavailable && a.Reason != ReasonTimeout) {
		t.Errorf("estimator down: %+v, want unavailable", a)
	}
	// Asked again at once: neither is asked (no wait for the timeout), and
	// once the pause is over the slow one is asked again.
	start = time.Now()
	got = pool.MaxAvailableReplicas(context.Background(), []string{"member1", "member2"}, req, nil)
	if took := time.Since(start); took > 100*time.Millisecond {
		t.Errorf("paused estimators were asked: %s", took)
	}
	if a := got["member1"]; !errors.Is(a.Err, errPaused) {
		t.Errorf("slow estimator right after a timeout: %+v, want paused", a)
	}
	pool.now = func() time.Time { return time.Now().Add(firstPause) }
	got = pool.MaxAvailableReplicas(context.Background(), []string{"member1"}, req, nil)
	if a := got["member1"]; a.Reason != ReasonTimeout {
		t.Errorf("after the pause: %+v, want asked again (and timing out)", a)
	}
}

// A request as Karmada before 1.18 encodes it (only the old fields: a
// map of Quantity messages, a NodeSelector message, Toleration messages),
// built field by field from the wire format rather than with our types.
func TestDecodesThePre118WireFormat(t *testing.T) {
	quantity := func(s string) []byte {
		return protowire.AppendString(protowire.AppendTag(nil, 1, protowire.BytesType), s)
	}
	entry := func(k string, v []byte) []byte {
		b := protowire.AppendString(protowire.AppendTag(nil, 1, protowire.BytesType), k)
		return protowire.AppendBytes(protowire.AppendTag(b, 2, protowire.BytesType), v)
	}
	aff := &corev1.NodeSelector{NodeSelectorTerms: []corev1.NodeSelectorTerm{{MatchExpressions: []corev1.NodeSelectorRequirement{{Key: "disk", Operator: corev1.NodeSelectorOpIn, Values: []string{"ssd"}}}}}}
	affBytes, _ := aff.Marshal()
	tol := corev1.Toleration{Key: "gpu", Operator: corev1.TolerationOpExists, Effect: corev1.TaintEffectNoSchedule}
	tolBytes, _ := tol.Marshal()
	var claim []byte
	claim = protowire.AppendBytes(protowire.AppendTag(claim, 1, protowire.BytesType), affBytes)
	claim = protowire.AppendBytes(protowire.AppendTag(claim, 2, protowire.BytesType), entry("zone", []byte("a")))
	claim = protowire.AppendBytes(protowire.AppendTag(claim, 3, protowire.BytesType), tolBytes)
	var rr []byte
	rr = protowire.AppendBytes(protowire.AppendTag(rr, 1, protowire.BytesType), claim)
	rr = protowire.AppendBytes(protowire.AppendTag(rr, 2, protowire.BytesType), entry("cpu", quantity("250m")))
	rr = protowire.AppendBytes(protowire.AppendTag(rr, 2, protowire.BytesType), entry("memory", quantity("1Gi")))
	rr = protowire.AppendString(protowire.AppendTag(rr, 3, protowire.BytesType), "shop")
	var req []byte
	req = protowire.AppendString(protowire.AppendTag(req, 1, protowire.BytesType), "member1")
	req = protowire.AppendBytes(protowire.AppendTag(req, 2, protowire.BytesType), rr)

	var m pb.MaxAvailableReplicasRequest
	if err := proto.Unmarshal(req, &m); err != nil {
		t.Fatal(err)
	}
	got, err := m.GetReplicaRequirements().Decode()
	if err != nil {
		t.Fatal(err)
	}
	if m.GetCluster() != "member1" || got.Namespace != "shop" {
		t.Fatalf("cluster %q namespace %q", m.GetCluster(), got.Namespace)
	}
	if c := got.ResourceRequest[corev1.ResourceCPU]; c.String() != "250m" {
		t.Errorf("cpu = %s, want 250m", c.String())
	}
	if m := got.ResourceRequest[corev1.ResourceMemory]; m.String() != "1Gi" {
		t.Errorf("memory = %s, want 1Gi", m.String())
	}
	nc := got.NodeClaim
	if nc == nil || nc.NodeSelector["zone"] != "a" || nc.HardNodeAffinity == nil ||
		nc.HardNodeAffinity.NodeSelectorTerms[0].MatchExpressions[0].Values[0] != "ssd" || len(nc.Tolerations) != 1 || nc.Tolerations[0].Key != "gpu" {
		t.Errorf("node claim = %+v", nc)
	}
	// And what we send carries both the old and the new fields, so that an
	// estimator of either generation reads it.
	out, _ := pb.NewReplicaRequirements(got)
	if len(out.ResourceRequestBytes) != 2 || len(out.ResourceRequestLegacy) != 2 || len(out.NodeClaim.NodeAffinityLegacy) == 0 ||
		len(out.NodeClaim.NodeAffinityBytes) == 0 || len(out.NodeClaim.TolerationsLegacy) != 1 || len(out.NodeClaim.TolerationsBytes) != 1 {
		t.Errorf("encoded requirements miss a generation's fields: %+v", out)
	}
}
