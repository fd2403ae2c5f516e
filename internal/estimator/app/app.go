// Package app builds the karmada-scheduler-estimator command.
package app

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"net"
	"net/http"
	"strconv"

	"github.com/spf13/cobra"
	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/rest"
	toolscache "k8s.io/client-go/tools/cache"
	"k8s.io/klog/v2"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/healthz"
	"sigs.k8s.io/controller-runtime/pkg/manager"

	"github.com/karmada-go/karmada/internal/cli"
	"github.com/karmada-go/karmada/internal/estimator/server"
	"github.com/karmada-go/karmada/internal/estimator/service"
	"github.com/karmada-go/karmada/internal/features"
	"github.com/karmada-go/karmada/internal/metrics"
	"github.com/karmada-go/karmada/internal/names"
	"github.com/karmada-go/karmada/internal/version"
)

// Options are the flags, Karmada's names.
type Options struct {
	Kubeconfig, Master, ClusterName string
	BindAddress                     string
	ServerPort                      int
	CertFile, KeyFile, ClientCAFile string
	InsecureSkipClientVerify        bool
	HealthProbeBindAddress          string
	Metrics                         cli.MetricsFlags
	QPS                             float32
	Burst                           int
	// Plaintext serves gRPC without TLS (tests only; no flag).
	Plaintext bool
}

// Validate checks the flags, naming the bad one.
func (o *Options) Validate() error {
	switch {
	case o.ClusterName == "":
		return errors.New("--cluster-name is required: the member cluster this estimator answers for, as named in Karmada")
	case o.ServerPort < 0 || o.ServerPort > 65535:
		return fmt.Errorf("--server-port=%d: must be a port number", o.ServerPort)
	case !o.Plaintext && (o.CertFile == "" || o.KeyFile == ""):
		return errors.New("--grpc-auth-cert-file and --grpc-auth-key-file are required: the estimator serves gRPC over TLS only")
	case !o.Plaintext && o.ClientCAFile == "" && !o.InsecureSkipClientVerify:
		return errors.New("--grpc-client-ca-file is required to verify the scheduler's client certificate (or --insecure-skip-grpc-client-verify to answer anyone who connects)")
	case o.QPS <= 0 || o.Burst <= 0:
		return fmt.Errorf("--kube-api-qps=%v, --kube-api-burst=%d: must be positive", o.QPS, o.Burst)
	}
	if errs := names.ClusterNameErrors(o.ClusterName); len(errs) > 0 {
		return fmt.Errorf("--cluster-name %q is invalid: %s", o.ClusterName, errs[0])
	}
	return o.Metrics.Validate()
}

// NewCommand returns the karmada-scheduler-estimator command.
func NewCommand() *cobra.Command {
	o := &Options{}
	cmd := &cobra.Command{
		Version: version.Get().String(),
		Use:     "karmada-scheduler-estimator --cluster-name NAME --kubeconfig F",
		Short:   "Estimate, node by node, how many replicas a member cluster can still run",
		Long: `karmada-scheduler-estimator serves one member cluster. From shared informers
on the member's Nodes, Pods and ResourceQuotas it answers karmada-scheduler's
and karmada-descheduler's gRPC questions (Karmada's service
github.com.karmada_io.karmada.pkg.estimator.service.Estimator):

  MaxAvailableReplicas       replicas of a shape that fit: per node that the
                             replica's node selector, required affinity and
                             tolerations admit, and that is not cordoned,
                             (allocatable - requested by bound pods) / request,
                             within the node's pod slots, summed; no more than
                             the namespace's ResourceQuotas leave; workloads
                             just assigned but not yet visible (assumed) first
  MaxAvailableComponentSets  whole sets of a multi-component workload
  GetUnschedulableReplicas   pods of a workload waiting for a node longer than
                             a threshold

gRPC is served over TLS; clients must present a certificate the client CA
signed. The member is read with --kubeconfig's identity: get, list and watch
of nodes, pods and resourcequotas, and get of the workloads asked about.`,
		SilenceUsage:  true,
		SilenceErrors: true,
		Args:          cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if err := features.Check(); err != nil {
				return err
			}
			if err := o.Validate(); err != nil {
				return err
			}
			return Run(cmd.Context(), o)
		},
	}
	f := cmd.Flags()
	f.StringVar(&o.Kubeconfig, "kubeconfig", "", "kubeconfig of the member cluster (default: in-cluster, then $KUBECONFIG)")
	f.StringVar(&o.Master, "master", "", "address of the member's API server, overriding --kubeconfig's")
	f.StringVar(&o.ClusterName, "cluster-name", "", "name of the member cluster in Karmada (required): requests naming another cluster are refused")
	f.StringVar(&o.BindAddress, "bind-address", "0.0.0.0", "address gRPC listens on")
	f.IntVar(&o.ServerPort, "server-port", 10352, "port of gRPC")
	f.StringVar(&o.CertFile, "grpc-auth-cert-file", "", "serving certificate of gRPC (reloaded on change)")
	f.StringVar(&o.KeyFile, "grpc-auth-key-file", "", "key of --grpc-auth-cert-file")
	f.StringVar(&o.ClientCAFile, "grpc-client-ca-file", "", "CA that signs the certificates clients must present")
	f.BoolVar(&o.InsecureSkipClientVerify, "insecure-skip-grpc-client-verify", false, "answer clients without a verified certificate (insecure: anyone who can connect learns the member's capacity)")
	f.StringVar(&o.HealthProbeBindAddress, "health-probe-bind-address", "127.0.0.1:10351", "address of plain-HTTP /healthz and /readyz ('0' disables)")
	f.Float32Var(&o.QPS, "kube-api-qps", 20, "QPS to the member's API server")
	f.IntVar(&o.Burst, "kube-api-burst", 30, "burst to the member's API server")
	o.Metrics.AddFlags(f)
	features.Gate.AddFlag(f)
	gofs := flag.NewFlagSet("klog", flag.ContinueOnError)
	klog.InitFlags(gofs)
	f.AddGoFlagSet(gofs)
	return cmd
}

// Main runs the command and returns the exit code.
func Main() int { return cli.Run(NewCommand()) }

// stripPod keeps what the estimator reads of a pod: its identity and
// labels, what it requests, where it is bound and whether it waits.
func stripPod(obj any) (any, error) {
	p, ok := obj.(*corev1.Pod)
	if !ok {
		return obj, nil
	}
	out := &corev1.Pod{}
	out.Name, out.Namespace, out.UID, out.Labels = p.Name, p.Namespace, p.UID, p.Labels
	out.ResourceVersion, out.DeletionTimestamp = p.ResourceVersion, p.DeletionTimestamp
	out.Spec.NodeName, out.Spec.Overhead, out.Spec.Resources = p.Spec.NodeName, p.Spec.Overhead, p.Spec.Resources
	out.Spec.Containers = stripContainers(p.Spec.Containers)
	out.Spec.InitContainers = stripContainers(p.Spec.InitContainers)
	out.Status.Phase = p.Status.Phase
	for _, c := range p.Status.Conditions {
		if c.Type == corev1.PodScheduled {
			out.Status.Conditions = []corev1.PodCondition{{Type: c.Type, Status: c.Status, Reason: c.Reason, LastTransitionTime: c.LastTransitionTime}}
		}
	}
	return out, nil
}

func stripContainers(cs []corev1.Container) []corev1.Container {
	if len(cs) == 0 {
		return nil
	}
	out := make([]corev1.Container, len(cs))
	for i, c := range cs {
		out[i] = corev1.Container{Name: c.Name, Resources: corev1.ResourceRequirements{Requests: c.Resources.Requests}, RestartPolicy: c.RestartPolicy}
	}
	return out
}

func stripMeta(obj any) (any, error) {
	if o, ok := obj.(client.Object); ok {
		o.SetManagedFields(nil)
		o.SetAnnotations(nil)
	}
	return obj, nil
}

// Run serves until ctx ends.
func Run(ctx context.Context, o *Options) error {
	ctrl.SetLogger(klog.NewKlogr())
	metrics.RegisterEstimator()
	cfg, err := memberConfig(o)
	if err != nil {
		return err
	}
	cfg.QPS, cfg.Burst = o.QPS, o.Burst
	cfg.UserAgent = "karmada-scheduler-estimator/" + o.ClusterName
	mgr, err := ctrl.NewManager(cfg, manager.Options{
		Metrics:                o.Metrics.ServerOptions(),
		HealthProbeBindAddress: o.HealthProbeBindAddress,
		Cache: cache.Options{ByObject: map[client.Object]cache.ByObject{
			&corev1.Pod{}:           {Transform: stripPod},
			&corev1.Node{}:          {Transform: stripMeta},
			&corev1.ResourceQuota{}: {Transform: stripMeta},
		}},
	})
	if err != nil {
		return err
	}
	c := server.NewCache()
	if err := feed(ctx, mgr.GetCache(), c); err != nil {
		return err
	}
	dyn, err := dynamic.NewForConfig(cfg)
	if err != nil {
		return err
	}
	svc := estimatorService(ctx, o, mgr, c, dyn)
	if err := serveGRPC(o, mgr, c, svc); err != nil {
		return err
	}
	if err := mgr.AddHealthzCheck("ping", healthz.Ping); err != nil {
		return err
	}
	if err := mgr.AddReadyzCheck("informers-synced", func(r *http.Request) error {
		if !mgr.GetCache().WaitForCacheSync(r.Context()) {
			return errors.New("informers not synced")
		}
		return nil
	}); err != nil {
		return err
	}
	klog.FromContext(ctx).Info("Starting karmada-scheduler-estimator", "cluster", o.ClusterName)
	return mgr.Start(ctx)
}

// memberConfig reaches the member: --kubeconfig (and --master), else
// in-cluster or $KUBECONFIG.
func memberConfig(o *Options) (*rest.Config, error) {
	var cfg *rest.Config
	var err error
	if o.Kubeconfig != "" || o.Master != "" {
		cfg, err = cli.LoadConfig(o.Kubeconfig, "")
		if err == nil && o.Master != "" {
			cfg.Host = o.Master
		}
	} else {
		cfg, err = ctrl.GetConfig()
	}
	if err != nil {
		return nil, fmt.Errorf("reaching member cluster %s (--kubeconfig, in-cluster or $KUBECONFIG): %w", o.ClusterName, err)
	}
	return cfg, nil
}

// estimatorService answers the scheduler's questions from the informers: nodes and
// pods (the cache c), quotas and workloads.
func estimatorService(ctx context.Context, o *Options, mgr ctrl.Manager, c *server.Cache, dyn dynamic.Interface) *server.Service {
	reader := mgr.GetCache()
	var quotas server.QuotaLister = func(ns string) ([]*corev1.ResourceQuota, error) {
		var l corev1.ResourceQuotaList
		if err := reader.List(ctx, &l, client.InNamespace(ns)); err != nil {
			return nil, err
		}
		out := make([]*corev1.ResourceQuota, len(l.Items))
		for i := range l.Items {
			out[i] = &l.Items[i]
		}
		return out, nil
	}
	// The namespace's ResourceQuotas count with
	// --feature-gates=ResourceQuotaEstimate=true, as Karmada's.
	if !features.Gate.Enabled(features.ResourceQuotaEstimate) {
		quotas = nil
	}
	return &server.Service{
		Cluster:   o.ClusterName,
		Estimator: &server.Estimator{Cache: c, Quotas: quotas},
		Pods: func(ns string, sel labels.Selector) ([]*corev1.Pod, error) {
			var l corev1.PodList
			if err := reader.List(ctx, &l, client.InNamespace(ns), client.MatchingLabelsSelector{Selector: sel}); err != nil {
				return nil, err
			}
			out := make([]*corev1.Pod, len(l.Items))
			for i := range l.Items {
				out[i] = &l.Items[i]
			}
			return out, nil
		},
		Workloads: &server.Workloads{Client: dyn, Mapper: mgr.GetRESTMapper()},
	}
}

// serveGRPC serves the estimator's gRPC API on --bind-address:--server-port
// (mutual TLS unless plaintext), once the informers hold the member.
func serveGRPC(o *Options, mgr ctrl.Manager, c *server.Cache, svc *server.Service) error {
	var creds credentials.TransportCredentials
	var err error
	if !o.Plaintext {
		if creds, err = server.Credentials(o.CertFile, o.KeyFile, o.ClientCAFile); err != nil {
			return err
		}
	}
	lis, err := net.Listen("tcp", net.JoinHostPort(o.BindAddress, strconv.Itoa(o.ServerPort)))
	if err != nil {
		return fmt.Errorf("--bind-address/--server-port: %w", err)
	}
	var opts []grpc.ServerOption
	if creds != nil {
		opts = append(opts, grpc.Creds(creds))
	}
	gs := grpc.NewServer(opts...)
	service.RegisterEstimatorServer(gs, svc)
	return mgr.Add(manager.RunnableFunc(func(ctx context.Context) error {
		// Answer only once the informers hold the member: before, every
		// node would look empty.
		if !mgr.GetCache().WaitForCacheSync(ctx) {
			return ctx.Err()
		}
		klog.FromContext(ctx).Info("Serving gRPC", "cluster", o.ClusterName, "address", lis.Addr().String(), "nodes", c.Nodes())
		go func() {
			<-ctx.Done()
			gs.GracefulStop()
		}()
		return gs.Serve(lis)
	}))
}

// feed keeps the estimator's cache in step with the Node and Pod informers.
func feed(ctx context.Context, informers cache.Cache, c *server.Cache) error {
	nodes, err := informers.GetInformer(ctx, &corev1.Node{})
	if err != nil {
		return err
	}
	if _, err := nodes.AddEventHandler(toolscache.ResourceEventHandlerFuncs{
		AddFunc:    func(obj any) { c.SetNode(obj.(*corev1.Node)) },
		UpdateFunc: func(_, obj any) { c.SetNode(obj.(*corev1.Node)) },
		DeleteFunc: func(obj any) {
			if n, ok := unwrap(obj).(*corev1.Node); ok {
				c.DeleteNode(n.Name)
			}
		},
	}); err != nil {
		return err
	}
	pods, err := informers.GetInformer(ctx, &corev1.Pod{})
	if err != nil {
		return err
	}
	_, err = pods.AddEventHandler(toolscache.ResourceEventHandlerFuncs{
		AddFunc:    func(obj any) { c.SetPod(obj.(*corev1.Pod)) },
		UpdateFunc: func(_, obj any) { c.SetPod(obj.(*corev1.Pod)) },
		DeleteFunc: func(obj any) {
			if p, ok := unwrap(obj).(*corev1.Pod); ok {
				c.DeletePod(p.UID)
			}
		},
	})
	if err != nil {
		return err
	}
	// Quotas are listed per request from the informer's cache.
	_, err = informers.GetInformer(ctx, &corev1.ResourceQuota{})
	return err
}

func unwrap(obj any) any {
	if d, ok := obj.(toolscache.DeletedFinalStateUnknown); ok {
		return d.Obj
	}
	return obj
}
