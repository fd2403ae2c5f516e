package plan

import (
	"crypto/tls"
	"crypto/x509"
	"fmt"
	"net"
	"path/filepath"
	"time"

	"github.com/karmada-go/karmada/internal/localup/process"
)

// Steps builds the plan. Each process or task of the fleet is one entry here.
func (f *Fleet) Steps() ([]*process.Step, error) {
	etcdTLS := &tls.Config{MinVersion: tls.VersionTLS12}
	{
		pair, err := tls.LoadX509KeyPair(f.Etcd.Root, f.Etcd.RootKey)
		if err != nil {
			return nil, fmt.Errorf("loading etcd client certificate: %w", err)
		}
		pool := x509.NewCertPool()
		pool.AddCert(f.Etcd.CA.Cert)
		etcdTLS.RootCAs, etcdTLS.Certificates = pool, []tls.Certificate{pair}
	}
	var steps []*process.Step
	for _, m := range f.Etcd.Members {
		steps = append(steps, &process.Step{
			Name:    m.Step,
			Cluster: ControlPlane,
			Binary:  f.bin("etcd"),
			Args:    f.etcdArgs(m),
			Ports:   []int{m.clientPort, m.peerPort},
			// /health answers 200 once the cluster has a leader: the
			// members of a new cluster start together.
			Probe:        &process.Probe{URL: m.clientURL() + "/health", TLS: etcdTLS},
			ReadyTimeout: 30 * time.Second,
		})
	}
	steps = append(steps, &process.Step{
		Name:    etcdAuthStep,
		Cluster: ControlPlane,
		After:   f.etcdSteps(),
		Run:     f.isolateAPIServers(etcdTLS),
	})
	if f.Cfg.HA {
		if err := f.writeHAProxyConfig(f.Clusters[0]); err != nil {
			return nil, err
		}
	}
	for _, c := range f.Clusters {
		if c.Index == 0 && f.Cfg.External() {
			continue
		}
		cs, err := f.clusterSteps(c)
		if err != nil {
			return nil, err
		}
		steps = append(steps, cs...)
	}
	if f.Cfg.External() {
		steps = append(steps, f.clustersReadyStep())
	}
	return steps, nil
}

func (f *Fleet) clusterSteps(c *Cluster) ([]*process.Step, error) {
	clientTLS, err := c.clientTLS()
	if err != nil {
		return nil, err
	}
	servingTLS := &tls.Config{RootCAs: c.pool(), MinVersion: tls.VersionTLS12}
	steps, api, err := f.apiserverSteps(c, clientTLS)
	if err != nil {
		return nil, err
	}
	kcms := f.kubeControllerManagerSteps(c, api, servingTLS)
	steps = append(steps, kcms...)
	if c.Index == 0 {
		return append(steps, f.karmadaSteps(c, api)...), nil
	}
	return append(steps, f.memberSteps(c, api, kcms[0].Name, servingTLS)...), nil
}

// apiserverSteps run the cluster's kube-apiservers (two of the control
// plane's behind haproxy with --ha); api is the step after which the
// cluster's API URL answers.
func (f *Fleet) apiserverSteps(c *Cluster, clientTLS *tls.Config) (steps []*process.Step, api string, err error) {
	var apiservers []*process.Step
	for _, r := range f.apiserverReplicas(c) {
		apiservers = append(apiservers, &process.Step{
			Name:         c.Name + "/kube-apiserver" + r.suffix,
			Cluster:      c.Name,
			After:        append(f.etcdSteps(), etcdAuthStep),
			Binary:       f.bin("kube-apiserver"),
			Args:         f.apiserverArgs(c, r.port),
			Ports:        []int{r.port},
			Probe:        &process.Probe{URL: fmt.Sprintf("https://%s/readyz", net.JoinHostPort(c.host, fmt.Sprint(r.port))), TLS: clientTLS},
			ReadyTimeout: 60 * time.Second,
		})
	}
	// The second karmada-apiserver starts once the first serves: two
	// starting together on a new etcd race to initialise the Service IP
	// allocator, and the loser exits ("another caller has already
	// initialized the resource").
	for i := 1; i < len(apiservers); i++ {
		apiservers[i].After = append(apiservers[i].After, apiservers[0].Name)
	}
	steps = append(steps, apiservers...)
	api = apiservers[0].Name
	if c.Index == 0 && f.Cfg.HA {
		var names []string
		for _, s := range apiservers {
			names = append(names, s.Name)
		}
		lb, err := f.haproxyStep(c, names)
		if err != nil {
			return nil, "", err
		}
		steps = append(steps, lb)
		api = lb.Name
	}
	return steps, api, nil
}

// kubeControllerManagerSteps run the cluster's kube-controller-managers
// (two of the control plane's, leader-elected, with --ha).
func (f *Fleet) kubeControllerManagerSteps(c *Cluster, api string, servingTLS *tls.Config) []*process.Step {
	var kcms []*process.Step
	for _, r := range f.kubeControllerManagerReplicas(c) {
		kcm := &process.Step{
			Name:         c.Name + "/kube-controller-manager" + r.suffix,
			Cluster:      c.Name,
			After:        []string{api},
			Binary:       f.bin("kube-controller-manager"),
			Args:         f.controllerManagerArgs(c, r.port),
			Ports:        []int{r.port},
			Probe:        &process.Probe{URL: fmt.Sprintf("https://127.0.0.1:%d/healthz", r.port), TLS: servingTLS},
			Leader:       f.leaderProbe(c, fmt.Sprintf("https://127.0.0.1:%d/metrics", r.port), "", `workqueue_adds_total{name="namespace"}`),
			ReadyTimeout: 60 * time.Second,
		}
		if c.Index == 0 {
			// The control plane's starts after the CRDs are installed, so
			// that its garbage collector watches bindings from the start
			// instead of after its next discovery resync.
			kcm.After = []string{"karmada/setup"}
		}
		kcms = append(kcms, kcm)
	}
	return kcms
}

// memberSteps are a member's own after its API server and controller
// manager: kube-scheduler, kwok, its nodes, its estimator, and its join
// (push) or registration and agent (pull).
func (f *Fleet) memberSteps(c *Cluster, api, kcm string, servingTLS *tls.Config) []*process.Step {
	prefix := func(s string) string { return c.Name + "/" + s }
	scheduler := &process.Step{
		Name:         prefix("kube-scheduler"),
		Cluster:      c.Name,
		After:        []string{api},
		Binary:       f.bin("kube-scheduler"),
		Args:         schedulerArgs(c),
		Ports:        []int{c.ports[slotScheduler]},
		Probe:        &process.Probe{URL: fmt.Sprintf("https://127.0.0.1:%d/healthz", c.ports[slotScheduler]), TLS: servingTLS},
		ReadyTimeout: 60 * time.Second,
	}
	kwok := &process.Step{
		Name:    prefix("kwok"),
		Cluster: c.Name,
		After:   []string{api},
		Binary:  f.bin("kwok"),
		Args:    kwokArgs(c),
		// kwok loads <workdir>/kwok.yaml when present; keep a user's
		// ~/.kwok out of the fleet.
		Env: []string{"KWOK_WORKDIR=" + filepath.Join(c.dir, "kwok")},
		// Its kubelet API's certificate is read once.
		RestartToRenew: true,
		Ports:          []int{c.ports[slotKwok]},
		Probe:          &process.Probe{URL: fmt.Sprintf("https://127.0.0.1:%d/healthz", c.ports[slotKwok]), TLS: servingTLS},
		ReadyTimeout:   60 * time.Second,
	}
	nodes := &process.Step{
		Name:    prefix("nodes"),
		Cluster: c.Name,
		After:   []string{api, kcm, scheduler.Name, kwok.Name},
		Run:     f.setupMember(c),
	}
	steps := []*process.Step{scheduler, kwok, nodes}
	if !f.Cfg.External() {
		steps = append(steps, f.estimatorSteps(c, nodes.Name)...)
	}
	// metrics-server is the member's own, with a control plane of the
	// fleet's or an external one (the chart's karmada-metrics-adapter
	// reads it).
	steps = append(steps, f.metricsServerSteps(c, nodes.Name, servingTLS)...)
	if c.Pull {
		return append(steps, f.PullSteps(c, nodes.Name)...)
	}
	// The member identity join makes may read every group the member
	// serves then: metrics.k8s.io included (FederatedHPA and
	// karmada-metrics-adapter read it), and custom.metrics.k8s.io where
	// the fleet runs it.
	joinAfter := []string{nodes.Name, "karmada/setup", clusterAPIStep, metricsAPIServiceStep(c.Name)}
	if !f.Cfg.External() {
		custom := f.customMetricsSteps(c, nodes.Name, servingTLS)
		steps = append(steps, custom...)
		joinAfter = append(joinAfter, custom[len(custom)-1].Name)
	}
	join := &process.Step{
		Name:    prefix("join"),
		Cluster: c.Name,
		After:   joinAfter,
		Run:     f.joinMember(c),
	}
	return append(steps, join)
}

// leaderProbe asks a leader-elected process of the cluster, with the
// cluster's administrator certificate, whether it leads; nil without --ha,
// where each runs alone without an election.
func (f *Fleet) leaderProbe(c *Cluster, metricsURL, lease, marker string) *process.LeaderProbe {
	if !f.Cfg.HA || c.Index != 0 {
		return nil
	}
	tlsCfg, err := c.clientTLS()
	if err != nil {
		return nil
	}
	return &process.LeaderProbe{URL: metricsURL, TLS: tlsCfg, Lease: lease, Marker: marker}
}

// karmadaComponent is one replica of our control plane controllers, acting
// as itself, with its (authenticated) metrics and health endpoints; leader-
// elected with --ha, alone without; flags are the component's own, after
// those every component has.
func (f *Fleet) karmadaComponent(c *Cluster, name string, r replica, flags *process.Args, after ...string) *process.Step {
	return &process.Step{
		Name:    "karmada/" + name + r.suffix,
		Cluster: c.Name,
		After:   after,
		Binary:  f.bin(name),
		Args: process.NewArgs().
			Set("kubeconfig", c.karmadaConfigs[name]).
			Set("leader-elect", f.Cfg.HA).
			Set("health-probe-bind-address", fmt.Sprintf("127.0.0.1:%d", r.health)).
			// Behind the metrics authentication.
			On("enable-pprof").
			Set("v", 2).
			Merge(c.metricsArgs(r.metrics)).
			Merge(flags).
			Strings(),
		Ports:        []int{r.metrics, r.health},
		Probe:        &process.Probe{URL: fmt.Sprintf("http://127.0.0.1:%d/healthz", r.health)},
		Leader:       f.leaderProbe(c, fmt.Sprintf("https://127.0.0.1:%d/metrics", r.metrics), name, ""),
		ReadyTimeout: 30 * time.Second,
	}
}

// controllerManagerMemoryLimit is the fleet's karmada-controller-manager
// --memory-limit.
const controllerManagerMemoryLimit = "512Mi"

// karmadaSteps are the control plane's own: setup, the Karmada components,
// and the wait for every member to be joined and Ready.
func (f *Fleet) karmadaSteps(c *Cluster, api string) []*process.Step {
	// The webhook needs no API server; the setup that registers it, and
	// so everything after, waits for it: with failurePolicy Fail, no
	// Karmada object is written unadmitted.
	var steps []*process.Step
	setup := &process.Step{
		Name:    "karmada/setup",
		Cluster: c.Name,
		After:   []string{api},
		Run:     f.setupControlPlane(c),
	}
	for _, r := range f.webhookReplicas(c) {
		webhook := &process.Step{
			Name:    "karmada/karmada-webhook" + r.suffix,
			Cluster: c.Name,
			Binary:  f.bin("karmada-webhook"),
			Args: process.NewArgs().
				Set("bind-address", "127.0.0.1").
				Set("secure-port", r.port).
				Set("cert-dir", filepath.Dir(c.webhookCert)).
				Set("tls-cert-file-name", filepath.Base(c.webhookCert)).
				Set("tls-private-key-file-name", filepath.Base(c.webhookKey)).
				// Only to review requests to its /metrics.
				Set("kubeconfig", c.karmadaConfigs["karmada-webhook"]).
				// /healthz and /readyz are on the webhook port, over TLS.
				Set("health-probe-bind-address", "0").
				// For the default ClusterTaintPolicy (NoExecute).
				On("allow-no-execute-taint-policy").
				// FederatedResourceQuotas' overall limits are enforced.
				Set("feature-gates", "FederatedQuotaEnforcement=true").
				On("enable-pprof").
				Set("v", 2).
				Merge(c.metricsArgs(r.metrics)).
				Strings(),
			Ports:        []int{r.port, r.metrics},
			Probe:        &process.Probe{URL: fmt.Sprintf("https://127.0.0.1:%d/readyz", r.port), TLS: &tls.Config{RootCAs: c.pool(), MinVersion: tls.VersionTLS12}},
			ReadyTimeout: 30 * time.Second,
		}
		steps = append(steps, webhook)
		setup.After = append(setup.After, webhook.Name)
	}
	steps = append(steps, setup)
	// The Cluster API, before anything that reads or writes Clusters.
	steps = append(steps, f.aggregatedSteps(c, setup.Name)...)
	// karmada-search reads Clusters.
	steps = append(steps, f.searchSteps(c, setup.Name, clusterAPIStep)...)
	// karmada-metrics-adapter reads Clusters too.
	steps = append(steps, f.metricsAdapterSteps(c, setup.Name, clusterAPIStep)...)
	var kcm []string
	for _, r := range f.controllerReplicas(c, "karmada-controller-manager") {
		flags := process.NewArgs().
			// Failover on: the default ClusterTaintPolicy taints a failed
			// cluster NoExecute, and the taint manager evicts what does
			// not tolerate it (policies tolerate it 300 s by default).
			// FederatedResourceQuotas' overall usage counted from the
			// bindings, as karmada-webhook enforces it. MultiClusterService
			// exposure across clusters (alpha in Karmada) on, for the tour;
			// and the alpha gates of what the tour shows: policy preemption,
			// state preserved on failover, multi-component scheduling,
			// workload affinity groups.
			Set("feature-gates", LocalControllerManagerGates).On("enable-no-execute-taint-eviction").
			// The native-HPA path (off by default in Karmada), for the
			// autoscaling tour.
			Set("controllers", "*,hpaScaleTargetMarker,deploymentReplicasSyncer").
			// Room for K = 10,000 templates over 3 members (a live heap of
			// about 300 MB) on a machine the members share
			// (docs/performance.md).
			Set("memory-limit", controllerManagerMemoryLimit).
			Merge(f.Cfg.thresholdArgs())
		s := f.karmadaComponent(c, "karmada-controller-manager", r, flags, setup.Name, clusterAPIStep)
		steps = append(steps, s)
		kcm = append(kcm, s.Name)
	}
	for _, r := range f.controllerReplicas(c, "karmada-scheduler") {
		// Node-level fit from every member's estimator; it starts after
		// them so that its first placements have their answers.
		// Workload affinity groups (alpha in Karmada) on, for the tour.
		s := f.karmadaComponent(c, "karmada-scheduler", r, f.schedulerEstimatorArgs().Set("feature-gates", "WorkloadAffinity=true"), setup.Name, clusterAPIStep)
		for _, m := range f.Clusters[1:] {
			s.After = append(s.After, estimatorStep(m.Name))
		}
		steps = append(steps, s)
	}
	steps = append(steps, f.deschedulerStep(c, setup.Name, clusterAPIStep))
	ready := f.clustersReadyStep()
	ready.After = append(ready.After, kcm...)
	return append(steps, ready)
}

// clustersReadyStep waits, after every join and agent, until every member's
// Cluster is Ready.
func (f *Fleet) clustersReadyStep() *process.Step {
	ready := &process.Step{
		Name:    "karmada/clusters-ready",
		Cluster: ControlPlane,
		Run:     f.waitClustersReady(f.Clusters[0]),
	}
	for _, m := range f.Clusters[1:] {
		if m.Pull {
			ready.After = append(ready.After, AgentStep(m.Name))
		} else {
			ready.After = append(ready.After, m.Name+"/join")
		}
	}
	return ready
}

// LocalControllerManagerGates are the feature gates the local fleet's
// controller managers run with beyond Karmada's defaults (docs/feature-gates.md).
const LocalControllerManagerGates = "Failover=true,FederatedQuotaEnforcement=true,MultiClusterService=true,PropagationPolicyPreemption=true,StatefulFailoverInjection=true,MultiplePodTemplatesScheduling=true,WorkloadAffinity=true"
