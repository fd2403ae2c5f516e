// Package client is the scheduler's (and the descheduler's) side of
// karmada-scheduler-estimator: one gRPC connection per member's estimator,
// over mutual TLS, asked in parallel with a deadline.
package client

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"os"
	"strings"
	"sync"
	"time"

	"github.com/spf13/pflag"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/credentials"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/grpc/status"

	"github.com/karmada-go/karmada/internal/estimator/pb"
	"github.com/karmada-go/karmada/internal/estimator/service"
)

// Options are the flags that reach the estimators, Karmada's names.
type Options struct {
	Enabled           bool
	DisableInPullMode bool
	Timeout           time.Duration
	Port              int
	ServicePrefix     string
	ServiceNamespace  string
	// Addresses are host:port per cluster, for estimators not reached by
	// their Service's name (a fleet without cluster DNS); the TLS name
	// verified stays the Service's.
	Addresses                 map[string]string
	CAFile, CertFile, KeyFile string
	InsecureSkipVerify        bool
	// Plaintext talks to estimators without TLS (tests only; no flag).
	Plaintext bool
}

// AddFlags adds the scheduler's flags.
func (o *Options) AddFlags(fs *pflag.FlagSet) {
	fs.BoolVar(&o.Enabled, "enable-scheduler-estimator", false, "ask each member's karmada-scheduler-estimator how many replicas its nodes can run (node-level fit), besides the general estimator")
	fs.BoolVar(&o.DisableInPullMode, "disable-scheduler-estimator-in-pull-mode", false, "do not ask the estimators of Pull-mode clusters")
	o.AddConnectionFlags(fs)
}

// AddConnectionFlags adds the flags that reach the estimators (the
// descheduler's: it always asks them).
func (o *Options) AddConnectionFlags(fs *pflag.FlagSet) {
	fs.DurationVar(&o.Timeout, "scheduler-estimator-timeout", 3*time.Second, "how long to wait for an estimator's answer before estimating from the cluster's resource summary alone")
	fs.IntVar(&o.Port, "scheduler-estimator-port", 10352, "port of the estimators' Services")
	fs.StringVar(&o.ServicePrefix, "scheduler-estimator-service-prefix", "karmada-scheduler-estimator", "the estimator of cluster C is the Service <prefix>-C")
	fs.StringVar(&o.ServiceNamespace, "scheduler-estimator-service-namespace", "karmada-system", "namespace of the estimators' Services")
	fs.StringToStringVar(&o.Addresses, "scheduler-estimator-addresses", nil, "host:port of a cluster's estimator where its Service's name does not resolve, e.g. member1=127.0.0.1:10352 (the certificate is still verified for the Service's name)")
	fs.StringVar(&o.CAFile, "scheduler-estimator-ca-file", "", "CA bundle that verifies the estimators' serving certificates")
	fs.StringVar(&o.CertFile, "scheduler-estimator-cert-file", "", "client certificate presented to the estimators")
	fs.StringVar(&o.KeyFile, "scheduler-estimator-key-file", "", "key of --scheduler-estimator-cert-file")
	fs.BoolVar(&o.InsecureSkipVerify, "insecure-skip-estimator-verify", false, "do not verify the estimators' serving certificates (insecure)")
}

// Validate rejects the scheduler's flags that cannot work, naming them.
func (o *Options) Validate() error {
	if !o.Enabled {
		return nil
	}
	return o.ValidateConnection("--enable-scheduler-estimator")
}

// ValidateConnection rejects connection flags that cannot work; who is what
// needs them, named in the error.
func (o *Options) ValidateConnection(who string) error {
	switch {
	case o.Timeout <= 0:
		return fmt.Errorf("--scheduler-estimator-timeout=%s: must be positive", o.Timeout)
	case o.Port <= 0 || o.Port > 65535:
		return fmt.Errorf("--scheduler-estimator-port=%d: must be a port number", o.Port)
	case (o.CertFile == "") != (o.KeyFile == ""):
		return fmt.Errorf("--scheduler-estimator-cert-file and --scheduler-estimator-key-file go together")
	case o.CAFile == "" && !o.InsecureSkipVerify && !o.Plaintext:
		return fmt.Errorf("%s needs --scheduler-estimator-ca-file (or --insecure-skip-estimator-verify)", who)
	}
	for c, a := range o.Addresses {
		if !strings.Contains(a, ":") {
			return fmt.Errorf("--scheduler-estimator-addresses: %s=%q: want host:port", c, a)
		}
	}
	return nil
}

// ServiceName is the estimator Service of a cluster, the name its
// certificate must hold.
func (o *Options) ServiceName(cluster string) string {
	return fmt.Sprintf("%s-%s.%s.svc", o.ServicePrefix, cluster, o.ServiceNamespace)
}

// Pool holds one connection per cluster's estimator.
type Pool struct {
	opts  Options
	roots *x509.CertPool
	mu    sync.Mutex
	conns map[string]*grpc.ClientConn
	// quiet holds, per cluster whose estimator just failed to answer in
	// time or at all, until when it is not asked (the general estimate
	// stands meanwhile): a hung estimator must not cost every cycle the
	// whole timeout. The pause doubles from 5 s to a minute while it keeps
	// failing.
	quiet map[string]pause
	now   func() time.Time
}

type pause struct {
	until time.Time
	next  time.Duration
}

// Pauses after an estimator fails.
const (
	firstPause = 5 * time.Second
	maxPause   = time.Minute
)

// errPaused is the answer of an estimator not asked for now.
var errPaused = errors.New("not asked: it failed to answer moments ago")

// NewPool checks the TLS files and connects lazily.
func NewPool(o Options) (*Pool, error) {
	p := &Pool{opts: o, conns: map[string]*grpc.ClientConn{}, quiet: map[string]pause{}, now: time.Now}
	if o.CAFile != "" {
		pem, err := os.ReadFile(o.CAFile)
		if err != nil {
			return nil, fmt.Errorf("--scheduler-estimator-ca-file: %w", err)
		}
		p.roots = x509.NewCertPool()
		if !p.roots.AppendCertsFromPEM(pem) {
			return nil, fmt.Errorf("--scheduler-estimator-ca-file=%s: no PEM certificate in it", o.CAFile)
		}
	}
	if o.CertFile != "" {
		if _, err := tls.LoadX509KeyPair(o.CertFile, o.KeyFile); err != nil {
			return nil, fmt.Errorf("--scheduler-estimator-cert-file/--scheduler-estimator-key-file: %w", err)
		}
	}
	return p, nil
}

func (p *Pool) credentials(cluster string) credentials.TransportCredentials {
	if p.opts.Plaintext {
		return insecure.NewCredentials()
	}
	cfg := &tls.Config{
		MinVersion:         tls.VersionTLS12,
		RootCAs:            p.roots,
		ServerName:         p.opts.ServiceName(cluster),
		InsecureSkipVerify: p.opts.InsecureSkipVerify, //nolint:gosec // the flag says so
	}
	if p.opts.CertFile != "" {
		// Read at each handshake: a renewed certificate is used without a
		// restart.
		cfg.GetClientCertificate = func(*tls.CertificateRequestInfo) (*tls.Certificate, error) {
			pair, err := tls.LoadX509KeyPair(p.opts.CertFile, p.opts.KeyFile)
			if err != nil {
				return nil, err
			}
			return &pair, nil
		}
	}
	return credentials.NewTLS(cfg)
}

// address is where cluster's estimator listens.
func (p *Pool) address(cluster string) string {
	if a, ok := p.opts.Addresses[cluster]; ok {
		return a
	}
	return fmt.Sprintf("%s:%d", p.opts.ServiceName(cluster), p.opts.Port)
}

// Client is the estimator client of a cluster (connecting on first use).
func (p *Pool) Client(cluster string) (service.EstimatorClient, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if cc, ok := p.conns[cluster]; ok {
		return service.NewEstimatorClient(cc), nil
	}
	cc, err := grpc.NewClient(p.address(cluster), grpc.WithTransportCredentials(p.credentials(cluster)))
	if err != nil {
		return nil, err
	}
	p.conns[cluster] = cc
	return service.NewEstimatorClient(cc), nil
}

// Forget closes a removed cluster's connection.
func (p *Pool) Forget(cluster string) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if cc, ok := p.conns[cluster]; ok {
		_ = cc.Close()
		delete(p.conns, cluster)
	}
}

// Close closes every connection.
func (p *Pool) Close() {
	p.mu.Lock()
	defer p.mu.Unlock()
	for c, cc := range p.conns {
		_ = cc.Close()
		delete(p.conns, c)
	}
}

// Timeout is the deadline of one round of questions.
func (p *Pool) Timeout() time.Duration { return p.opts.Timeout }

// Answer is one cluster's answer, or why there is none.
type Answer struct {
	Value int32
	// Err is set when the estimator did not answer; Reason classifies it
	// (timeout, unavailable, error) for the fallback metric.
	Err    error
	Reason string
}

// Reasons an estimate fell back to the general estimator.
const (
	ReasonTimeout     = "timeout"
	ReasonUnavailable = "unavailable"
	ReasonError       = "error"
)

func failed(err error) Answer {
	a := Answer{Err: err, Reason: ReasonError}
	switch {
	case errors.Is(err, context.DeadlineExceeded) || status.Code(err) == codes.DeadlineExceeded:
		a.Reason = ReasonTimeout
	case status.Code(err) == codes.Unavailable:
		a.Reason = ReasonUnavailable
	}
	return a
}

// Ask calls fn for every cluster in parallel, each with the pool's
// deadline, and collects the answers.
func (p *Pool) Ask(ctx context.Context, clusters []string, fn func(ctx context.Context, c service.EstimatorClient, cluster string) (int32, error)) map[string]Answer {
	out := make(map[string]Answer, len(clusters))
	var mu sync.Mutex
	var wg sync.WaitGroup
	ctx, cancel := context.WithTimeout(ctx, p.opts.Timeout)
	defer cancel()
	for _, cluster := range clusters {
		p.mu.Lock()
		q, paused := p.quiet[cluster]
		paused = paused && p.now().Before(q.until)
		p.mu.Unlock()
		if paused {
			mu.Lock()
			out[cluster] = Answer{Err: errPaused, Reason: ReasonUnavailable}
			mu.Unlock()
			continue
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			var a Answer
			if c, err := p.Client(cluster); err != nil {
				a = failed(err)
			} else if v, err := fn(ctx, c, cluster); err != nil {
				a = failed(err)
			} else {
				a = Answer{Value: v}
			}
			p.note(cluster, a)
			mu.Lock()
			out[cluster] = a
			mu.Unlock()
		}()
	}
	wg.Wait()
	return out
}

// note pauses a cluster's estimator that timed out or could not be
// reached, longer each time, and forgets the pause once it answers (an
// answer that is an error, such as a refused request, is not a reason to
// stop asking).
func (p *Pool) note(cluster string, a Answer) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if a.Err == nil || a.Reason == ReasonError {
		delete(p.quiet, cluster)
		return
	}
	q := p.quiet[cluster]
	if q.next == 0 {
		q.next = firstPause
	}
	q.until = p.now().Add(q.next)
	q.next = min(2*q.next, maxPause)
	p.quiet[cluster] = q
}

// MaxAvailableReplicas asks every cluster's estimator.
func (p *Pool) MaxAvailableReplicas(ctx context.Context, clusters []string, req *pb.ReplicaRequirements, assumed map[string][]*pb.AssumedWorkload) map[string]Answer {
	return p.Ask(ctx, clusters, func(ctx context.Context, c service.EstimatorClient, cluster string) (int32, error) {
		resp, err := c.MaxAvailableReplicas(ctx, &pb.MaxAvailableReplicasRequest{Cluster: cluster, ReplicaRequirements: req, AssumedWorkloads: assumed[cluster]})
		return resp.GetMaxReplicas(), err
	})
}

// MaxAvailableComponentSets asks every cluster's estimator.
func (p *Pool) MaxAvailableComponentSets(ctx context.Context, clusters []string, namespace string, components []*pb.Component, assumed map[string][]*pb.AssumedWorkload) map[string]Answer {
	return p.Ask(ctx, clusters, func(ctx context.Context, c service.EstimatorClient, cluster string) (int32, error) {
		resp, err := c.MaxAvailableComponentSets(ctx, &pb.MaxAvailableComponentSetsRequest{Cluster: cluster, Components: components, Namespace: namespace, AssumedWorkloads: assumed[cluster]})
		return resp.GetMaxSets(), err
	})
}

// UnschedulableReplicas asks every cluster's estimator how many of the
// workload's replicas have waited longer than threshold for a node.
func (p *Pool) UnschedulableReplicas(ctx context.Context, clusters []string, ref *pb.ObjectReference, threshold time.Duration) map[string]Answer {
	return p.Ask(ctx, clusters, func(ctx context.Context, c service.EstimatorClient, cluster string) (int32, error) {
		resp, err := c.GetUnschedulableReplicas(ctx, &pb.UnschedulableReplicasRequest{Cluster: cluster, Resource: ref, UnschedulableThreshold: int64(threshold)})
		return resp.GetUnschedulableReplicas(), err
	})
}
