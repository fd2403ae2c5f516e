package server

import (
	"context"
	"time"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
	"k8s.io/klog/v2"

	"github.com/karmada-go/karmada/internal/estimator/pb"
	"github.com/karmada-go/karmada/internal/estimator/service"
	"github.com/karmada-go/karmada/internal/metrics"
)

// Service is the gRPC service of one member's estimator.
type Service struct {
	service.UnimplementedEstimatorServer
	// Cluster is the member it serves: a request naming another is refused.
	Cluster   string
	Estimator *Estimator
	Pods      PodLister
	Workloads *Workloads
	// Now is the clock (time.Now when nil).
	Now func() time.Time
}

var _ service.EstimatorServer = &Service{}

func (s *Service) checkCluster(name string) error {
	if name != s.Cluster {
		return status.Errorf(codes.InvalidArgument, "cluster %q: this estimator serves cluster %q", name, s.Cluster)
	}
	return nil
}

func observe(typ string, start time.Time, err error) {
	r := metrics.ResultOf(err)
	metrics.EstimatingRequests.WithLabelValues(r, typ).Inc()
	metrics.EstimatingAlgorithmDuration.WithLabelValues(r, typ, "Total").Observe(metrics.Since(start))
}

func decodeAssumed(ws []*pb.AssumedWorkload) ([]Assumed, error) {
	out := make([]Assumed, 0, len(ws))
	for i, w := range ws {
		cs, err := pb.DecodeComponents(w.GetComponents())
		if err != nil {
			return nil, status.Errorf(codes.InvalidArgument, "assumedWorkloads[%d]: %v", i, err)
		}
		out = append(out, Assumed{Namespace: w.GetNamespace(), Components: cs})
	}
	return out, nil
}

// MaxAvailableReplicas answers how many more replicas of a shape fit.
func (s *Service) MaxAvailableReplicas(_ context.Context, req *pb.MaxAvailableReplicasRequest) (resp *pb.MaxAvailableReplicasResponse, err error) {
	start := time.Now()
	defer func() { observe("MaxAvailableReplicas", start, err) }()
	if err := s.checkCluster(req.GetCluster()); err != nil {
		return nil, err
	}
	rr, err := req.GetReplicaRequirements().Decode()
	if err != nil {
		return nil, status.Errorf(codes.InvalidArgument, "replicaRequirements: %v", err)
	}
	assumed, err := decodeAssumed(req.GetAssumedWorkloads())
	if err != nil {
		return nil, err
	}
	n, err := s.Estimator.MaxReplicas(rr, assumed)
	if err != nil {
		return nil, status.Error(codes.InvalidArgument, err.Error())
	}
	klog.V(4).InfoS("Estimated replicas", "cluster", s.Cluster, "namespace", rr.Namespace, "request", rr.ResourceRequest, "assumed", len(assumed), "maxReplicas", n, "took", time.Since(start))
	return &pb.MaxAvailableReplicasResponse{MaxReplicas: n}, nil
}

// MaxAvailableComponentSets answers how many whole sets of a
// multi-component workload fit.
func (s *Service) MaxAvailableComponentSets(_ context.Context, req *pb.MaxAvailableComponentSetsRequest) (resp *pb.MaxAvailableComponentSetsResponse, err error) {
	start := time.Now()
	defer func() { observe("MaxAvailableComponentSets", start, err) }()
	if err := s.checkCluster(req.GetCluster()); err != nil {
		return nil, err
	}
	cs, err := pb.DecodeComponents(req.GetComponents())
	if err != nil {
		return nil, status.Errorf(codes.InvalidArgument, "%v", err)
	}
	assumed, err := decodeAssumed(req.GetAssumedWorkloads())
	if err != nil {
		return nil, err
	}
	n, err := s.Estimator.MaxComponentSets(req.GetNamespace(), cs, assumed)
	if err != nil {
		return nil, status.Error(codes.InvalidArgument, err.Error())
	}
	return &pb.MaxAvailableComponentSetsResponse{MaxSets: n}, nil
}

// GetUnschedulableReplicas answers how many of a workload's pods have
// waited longer than the threshold for a node.
func (s *Service) GetUnschedulableReplicas(ctx context.Context, req *pb.UnschedulableReplicasRequest) (resp *pb.UnschedulableReplicasResponse, err error) {
	start := time.Now()
	defer func() { observe("GetUnschedulableReplicas", start, err) }()
	if err := s.checkCluster(req.GetCluster()); err != nil {
		return nil, err
	}
	ref := req.GetResource()
	if ref.GetKind() == "" || ref.GetName() == "" || ref.GetApiVersion() == "" {
		return nil, status.Errorf(codes.InvalidArgument, "resource: apiVersion, kind and name are required, got %q %q %q", ref.GetApiVersion(), ref.GetKind(), ref.GetName())
	}
	threshold := time.Duration(req.GetUnschedulableThreshold())
	if threshold < 0 {
		return nil, status.Errorf(codes.InvalidArgument, "unschedulableThreshold=%s: must not be negative", threshold)
	}
	if s.Workloads == nil || s.Pods == nil {
		return nil, status.Error(codes.Unimplemented, "this estimator does not read workloads")
	}
	sel, err := s.Workloads.Selector(ctx, ref.GetApiVersion(), ref.GetKind(), ref.GetNamespace(), ref.GetName())
	if err != nil {
		return nil, status.Error(codes.NotFound, err.Error())
	}
	pods, err := s.Pods(ref.GetNamespace(), sel)
	if err != nil {
		return nil, status.Error(codes.Internal, err.Error())
	}
	now := time.Now
	if s.Now != nil {
		now = s.Now
	}
	return &pb.UnschedulableReplicasResponse{UnschedulableReplicas: CountUnschedulable(pods, threshold, now())}, nil
}
