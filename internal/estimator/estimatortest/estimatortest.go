// Package estimatortest serves an estimator over loopback gRPC for tests:
// the scheduler's, the descheduler's and karmadactl's clients talk to it
// as to a member's karmada-scheduler-estimator (plaintext: pair it with a
// client pool of Options.Plaintext).
package estimatortest

import (
	"net"
	"testing"

	"google.golang.org/grpc"

	"github.com/karmada-go/karmada/internal/estimator/service"
)

// Serve serves srv on a free loopback port until the test ends and returns
// its address.
func Serve(tb testing.TB, srv service.EstimatorServer) string {
	tb.Helper()
	lis, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		tb.Fatal(err)
	}
	gs := grpc.NewServer()
	service.RegisterEstimatorServer(gs, srv)
	go func() { _ = gs.Serve(lis) }()
	tb.Cleanup(gs.Stop)
	return lis.Addr().String()
}
