package app

import (
	"math"
	"runtime/debug"
	"strings"
	"testing"
	"time"

	"github.com/spf13/cobra"

	"github.com/karmada-go/karmada/internal/cli"
)

func TestEnabledControllers(t *testing.T) {
	cases := []struct {
		spec    []string
		want    string
		wantErr string
	}{
		{spec: []string{"*"}, want: "agentcsrapproving,applicationFailover,binding,bindingStatus,cluster,clusterStatus,clusterTaintPolicy,cronFederatedHorizontalPodAutoscaler,dependenciesDistributor,detector,endpointSlice,endpointsliceCollect,endpointsliceDispatch,execution,federatedHorizontalPodAutoscaler,federatedResourceQuotaEnforcement,federatedResourceQuotaStatus,federatedResourceQuotaSync,gracefulEviction,multiclusteringress,multiclusterservice,namespace,orphanSweep,remedy,serviceExport,serviceImport,tokenRenewal,unifiedAuth,workStatus,workloadRebalancer"},
		{spec: []string{"*", "-namespace"}, want: "agentcsrapproving,applicationFailover,binding,bindingStatus,cluster,clusterStatus,clusterTaintPolicy,cronFederatedHorizontalPodAutoscaler,dependenciesDistributor,detector,endpointSlice,endpointsliceCollect,endpointsliceDispatch,execution,federatedHorizontalPodAutoscaler,federatedResourceQuotaEnforcement,federatedResourceQuotaStatus,federatedResourceQuotaSync,gracefulEviction,multiclusteringress,multiclusterservice,orphanSweep,remedy,serviceExport,serviceImport,tokenRenewal,unifiedAuth,workStatus,workloadRebalancer"},
		{spec: []string{"-namespace", "*"}, want: "agentcsrapproving,applicationFailover,binding,bindingStatus,cluster,clusterStatus,clusterTaintPolicy,cronFederatedHorizontalPodAutoscaler,dependenciesDistributor,detector,endpointSlice,endpointsliceCollect,endpointsliceDispatch,execution,federatedHorizontalPodAutoscaler,federatedResourceQuotaEnforcement,federatedResourceQuotaStatus,federatedResourceQuotaSync,gracefulEviction,multiclusteringress,multiclusterservice,orphanSweep,remedy,serviceExport,serviceImport,tokenRenewal,unifiedAuth,workStatus,workloadRebalancer"},
		{spec: []string{"cluster", "clusterStatus"}, want: "cluster,clusterStatus"},
		// Off unless named, as Karmada's.
		{spec: []string{"*", "hpaScaleTargetMarker", "deploymentReplicasSyncer"}, want: "agentcsrapproving,applicationFailover,binding,bindingStatus,cluster,clusterStatus,clusterTaintPolicy,cronFederatedHorizontalPodAutoscaler,dependenciesDistributor,deploymentReplicasSyncer,detector,endpointSlice,endpointsliceCollect,endpointsliceDispatch,execution,federatedHorizontalPodAutoscaler,federatedResourceQuotaEnforcement,federatedResourceQuotaStatus,federatedResourceQuotaSync,gracefulEviction,hpaScaleTargetMarker,multiclusteringress,multiclusterservice,namespace,orphanSweep,remedy,serviceExport,serviceImport,tokenRenewal,unifiedAuth,workStatus,workloadRebalancer"},
		{spec: []string{"cluster", "-cluster"}, want: ""},
		{spec: []string{"*", "bogus"}, wantErr: `unknown controller "bogus"`},
		{spec: []string{"-bogus"}, wantErr: `unknown controller "bogus"`},
	}
	for _, c := range cases {
		got, err := enabledControllers(c.spec)
		if c.wantErr != "" {
			if err == nil || !strings.Contains(err.Error(), c.wantErr) || !strings.Contains(err.Error(), "--controllers") {
				t.Errorf("%v: error %v, want one naming --controllers and %q", c.spec, err, c.wantErr)
			}
			continue
		}
		if err != nil || strings.Join(got, ",") != c.want {
			t.Errorf("%v: got %v (%v), want %s", c.spec, got, err, c.want)
		}
	}
}

func TestGCPercent(t *testing.T) {
	defer debug.SetGCPercent(debug.SetGCPercent(100))
	current := func() int { p := debug.SetGCPercent(100); debug.SetGCPercent(p); return p }

	t.Setenv("GOGC", "")
	(&Options{GCPercent: 50}).applyGCPercent()
	if got := current(); got != 50 {
		t.Fatalf("no GOGC, default flag: collector at %d%%, want 50", got)
	}
	// GOGC in the environment wins over the default...
	t.Setenv("GOGC", "80")
	debug.SetGCPercent(80)
	(&Options{GCPercent: 50}).applyGCPercent()
	if got := current(); got != 80 {
		t.Fatalf("GOGC=80, flag not given: collector at %d%%, want 80", got)
	}
	// ...but not over the flag given on the command line.
	(&Options{GCPercent: 30, gcPercentChanged: true}).applyGCPercent()
	if got := current(); got != 30 {
		t.Fatalf("GOGC=80, --gc-percent=30: collector at %d%%, want 30", got)
	}

	o := &Options{Controllers: []string{"*"}, GCPercent: 0, ClusterStatusUpdateFrequency: time.Second,
		ClusterMonitorPeriod: time.Second, ClusterMonitorGracePeriod: time.Second, ClusterStartupGracePeriod: time.Second, ManagerOptions: cli.ManagerOptions{KubeAPIQPS: 1, KubeAPIBurst: 1}, ClusterAPIQPS: 1, ClusterAPIBurst: 1, AgentCertificateMaxLifetime: time.Hour}
	if err := o.Validate(); err == nil || !strings.Contains(err.Error(), "--gc-percent") {
		t.Fatalf("--gc-percent=0: %v, want an error naming the flag", err)
	}
}

func TestMemoryLimit(t *testing.T) {
	defer debug.SetMemoryLimit(debug.SetMemoryLimit(math.MaxInt64))
	current := func() int64 { return debug.SetMemoryLimit(-1) }

	t.Setenv("GOMEMLIMIT", "")
	if err := (&Options{MemoryLimit: "512Mi"}).applyMemoryLimit(); err != nil {
		t.Fatal(err)
	}
	if got := current(); got != 512<<20 {
		t.Fatalf("--memory-limit=512Mi: limit %d, want %d", got, 512<<20)
	}
	if err := (&Options{MemoryLimit: "0"}).applyMemoryLimit(); err != nil {
		t.Fatal(err)
	}
	if got := current(); got != math.MaxInt64 {
		t.Fatalf("--memory-limit=0: limit %d, want none", got)
	}
	// GOMEMLIMIT in the environment wins over the default...
	t.Setenv("GOMEMLIMIT", "300MiB")
	debug.SetMemoryLimit(300 << 20)
	if err := (&Options{MemoryLimit: "0"}).applyMemoryLimit(); err != nil {
		t.Fatal(err)
	}
	if got := current(); got != 300<<20 {
		t.Fatalf("GOMEMLIMIT=300MiB, flag not given: limit %d, want %d", got, 300<<20)
	}
	// ...but not over the flag given on the command line.
	if err := (&Options{MemoryLimit: "1G", memoryLimitChanged: true}).applyMemoryLimit(); err != nil {
		t.Fatal(err)
	}
	if got := current(); got != 1e9 {
		t.Fatalf("GOMEMLIMIT=300MiB, --memory-limit=1G: limit %d, want 1e9", got)
	}

	for _, bad := range []string{"lots", "-1Gi", "1.5"} {
		o := &Options{Controllers: []string{"*"}, GCPercent: 50, MemoryLimit: bad, ClusterStatusUpdateFrequency: time.Second,
			ClusterMonitorPeriod: time.Second, ClusterMonitorGracePeriod: time.Second, ClusterStartupGracePeriod: time.Second, ManagerOptions: cli.ManagerOptions{KubeAPIQPS: 1, KubeAPIBurst: 1}, ClusterAPIQPS: 1, ClusterAPIBurst: 1,
			NoExecuteTaintEvictionPurgeMode: "Gracefully", ResourceEvictionRate: 1, GracefulEvictionTimeout: time.Second, FederatedResourceQuotaSyncPeriod: time.Minute, AgentCertificateMaxLifetime: time.Hour}
		err := o.Validate()
		if err == nil || !strings.Contains(err.Error(), "--memory-limit") || !strings.Contains(err.Error(), bad) {
			t.Errorf("--memory-limit=%s: %v, want an error naming the flag and the value", bad, err)
		}
	}
}

// The worker flags default to the measured values and still take others.
func TestWorkerFlagDefaults(t *testing.T) {
	o := &Options{}
	cmd := &cobra.Command{Use: "t"}
	o.addFlags(cmd)
	if err := cmd.Flags().Parse(nil); err != nil {
		t.Fatal(err)
	}
	if o.ConcurrentResourceTemplateSyncs != 10 || o.ConcurrentBindingSyncs != 10 || o.ConcurrentWorkSyncs != 20 {
		t.Fatalf("defaults: templates %d, bindings %d, works %d; want 10, 10, 20",
			o.ConcurrentResourceTemplateSyncs, o.ConcurrentBindingSyncs, o.ConcurrentWorkSyncs)
	}
	if err := cmd.Flags().Parse([]string{"--concurrent-work-syncs=3", "--concurrent-resourcebinding-syncs=4"}); err != nil {
		t.Fatal(err)
	}
	if o.ConcurrentWorkSyncs != 3 || o.ConcurrentBindingSyncs != 4 {
		t.Fatalf("given 3 and 4: works %d, bindings %d", o.ConcurrentWorkSyncs, o.ConcurrentBindingSyncs)
	}
}

// serviceExport and endpointsliceCollect are one controller with two
// halves: each name turns its half on, and it is set up once.
func TestCollectionHalves(t *testing.T) {
	for _, tc := range []struct {
		enabled               []string
		want                  bool
		noExports, noProvided bool
		setUpBy               string
	}{
		{[]string{"serviceExport", "endpointsliceCollect"}, true, false, false, "serviceExport"},
		{[]string{"serviceExport"}, true, false, true, "serviceExport"},
		{[]string{"endpointsliceCollect"}, true, true, false, "endpointsliceCollect"},
		{[]string{"binding"}, false, false, false, ""},
	} {
		r, by := collection(tc.enabled)
		if (r != nil) != tc.want || by != tc.setUpBy || r != nil && (r.NoExports != tc.noExports || r.NoProvided != tc.noProvided) {
			t.Errorf("%v: %+v set up by %q, want exports off %t, provided off %t, by %q", tc.enabled, r, by, tc.noExports, tc.noProvided, tc.setUpBy)
		}
	}
}
