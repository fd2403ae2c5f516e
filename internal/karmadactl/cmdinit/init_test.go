package cmdinit

import (
	"context"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"sigs.k8s.io/yaml"

	"github.com/karmada-go/karmada/internal/helmchart"
	"github.com/karmada-go/karmada/internal/karmadactl/options"
	"github.com/karmada-go/karmada/internal/testenv"
)

func defaults() Options {
	return Options{Namespace: "karmada-system", Port: 32443, EtcdStorageMode: "PVC", EtcdReplicas: 1, EtcdPVCSize: "5Gi",
		CertValidity: 8760 * time.Hour, APIServerReplicas: 1, ControllerManagerReplicas: 1, SchedulerReplicas: 1, WebhookReplicas: 1,
		KubeControllerManagerReplicas: 1, AggregatedAPIServerReplicas: 1, Timeout: time.Minute, Images: map[string]string{}, HostClusterDomain: "cluster.local"}
}

// Each flag lands on the chart value Karmada's init flag means, and the
// chart renders with it.
func TestFlagsToValues(t *testing.T) {
	caPEM, keyPEM := testenv.CA(t)
	dir := t.TempDir()
	ca, key := filepath.Join(dir, "ca.crt"), filepath.Join(dir, "ca.key")
	if err := os.WriteFile(ca, caPEM, 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(key, keyPEM, 0o600); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name string
		set  func(*Options)
		want string // YAML of the values that must be there
	}{
		{"defaults", func(*Options) {}, `
apiServer: {serviceType: NodePort, nodePort: 32443, replicaCount: 1}
certs: {auto: {expiry: 8760h}}
etcd: {internal: {replicaCount: 1, storageType: pvc, pvc: {size: 5Gi}}}`},
		{"advertise address", func(o *Options) { o.AdvertiseAddress = "172.30.255.1" }, `
apiServer: {serviceType: NodePort, nodePort: 32443, externalURL: "https://172.30.255.1:32443"}
certs: {auto: {hosts: [172.30.255.1]}}`},
		{"etcd", func(o *Options) {
			o.EtcdReplicas, o.EtcdStorageMode, o.StorageClassName, o.EtcdPVCSize = 3, "emptyDir", "fast", "1Gi"
		}, `etcd: {internal: {replicaCount: 3, storageType: emptyDir, pvc: {storageClass: fast, size: 1Gi}}}`},
		{"external etcd", func(o *Options) {
			o.ExternalEtcd, o.ExternalEtcdCA, o.ExternalEtcdCert, o.ExternalEtcdKey, o.ExternalEtcdPrefix = "https://e:2379", ca, ca, key, "/k"
		}, `etcd: {mode: external, external: {servers: "https://e:2379", registryPrefix: /k}}`},
		{"certificates", func(o *Options) {
			o.CertValidity, o.CertExternalIPs, o.CertExternalDNS, o.CACertFile, o.CAKeyFile = 48*time.Hour, []string{"10.0.0.1"}, []string{"k.example.com"}, ca, key
		}, `certs: {mode: custom, auto: {expiry: 48h, hosts: [10.0.0.1, k.example.com]}}`},
		{"replicas", func(o *Options) {
			o.APIServerReplicas, o.SchedulerReplicas, o.WebhookReplicas, o.AggregatedAPIServerReplicas = 2, 3, 2, 2
		},
			`{apiServer: {replicaCount: 2}, scheduler: {replicaCount: 3}, webhook: {replicaCount: 2}, aggregatedApiServer: {replicaCount: 2}}`},
		{"images", func(o *Options) {
			o.ImageRegistry, o.ImageTag, o.ImagePullPolicy = "registry.example.com", "v9", "Never"
			o.Images["karmada-scheduler-image"] = "other.example.com:5000/team/sched:v2"
		}, `
global: {imageRegistry: registry.example.com}
scheduler: {image: {registry: "other.example.com:5000", repository: team/sched, tag: v2, pullPolicy: Never}}
webhook: {image: {tag: v9, pullPolicy: Never}}`},
		{"Karmada's later flags", func(o *Options) {
			o.PullSecrets, o.KubeImageRegistry, o.KubeImageTag = []string{"regcred", "other"}, "mirror.example.com", "v1.33.1"
			o.EtcdNodeSelector, o.HostClusterDomain = "karmada.io/etcd=true,kubernetes.io/os=linux", "host.karmada"
			o.PriorityClasses = map[string]string{"etcd-priority-class": "system-node-critical", "karmada-webhook-priority-class": "high", "karmada-scheduler-priority-class": ""}
		}, `
global: {imagePullSecrets: [{name: regcred}, {name: other}]}
clusterDomain: host.karmada
apiServer: {image: {registry: mirror.example.com, tag: v1.33.1}}
kubeControllerManager: {image: {registry: mirror.example.com, tag: v1.33.1}}
etcd: {internal: {image: {registry: mirror.example.com, tag: v1.33.1}, nodeSelector: {karmada.io/etcd: "true", kubernetes.io/os: linux}, priorityClassName: system-node-critical}}
webhook: {priorityClassName: high}
scheduler: {replicaCount: 1}`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			o := defaults()
			tc.set(&o)
			if err := o.Validate(); err != nil {
				t.Fatal(err)
			}
			got, err := o.Values()
			if err != nil {
				t.Fatal(err)
			}
			want := map[string]any{}
			if err := yaml.Unmarshal([]byte(tc.want), &want); err != nil {
				t.Fatal(err)
			}
			gotJSON, _ := yaml.Marshal(got)
			var gotNorm map[string]any
			if err := yaml.Unmarshal(gotJSON, &gotNorm); err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(want, subset(want, gotNorm)); diff != "" {
				t.Errorf("values (-want,+got):\n%s\nall values:\n%s", diff, gotJSON)
			}
			ch, err := helmchart.Load()
			if err != nil {
				t.Fatal(err)
			}
			if _, err := helmchart.Render(context.Background(), ch, got, helmchart.DefaultRelease, o.Namespace); err != nil {
				t.Errorf("the chart refuses init's values: %v", err)
			}
		})
	}
}

// subset keeps of got the keys want has, recursively.
func subset(want, got map[string]any) map[string]any {
	out := map[string]any{}
	for k, w := range want {
		g, ok := got[k]
		if !ok {
			continue
		}
		wm, wok := w.(map[string]any)
		gm, gok := g.(map[string]any)
		if wok && gok {
			out[k] = subset(wm, gm)
			continue
		}
		out[k] = g
	}
	return out
}

func TestBadFlags(t *testing.T) {
	for _, tc := range []struct {
		set  func(*Options)
		want string
	}{
		{func(o *Options) { o.EtcdStorageMode = "nfs" }, "--etcd-storage-mode"},
		{func(o *Options) { o.EtcdReplicas = 2 }, "--etcd-replicas"},
		{func(o *Options) { o.AdvertiseAddress = "node-1" }, "--karmada-apiserver-advertise-address"},
		{func(o *Options) { o.CertValidity = 90 * time.Minute }, "--cert-validity-period"},
		{func(o *Options) { o.CACertFile = "x" }, "--ca-cert-file and --ca-key-file"},
		{func(o *Options) { o.ExternalEtcd = "https://e:1" }, "--external-etcd-ca-cert-path"},
		{func(o *Options) { o.EtcdNodeSelector = "a=b=c" }, "--etcd-node-selector-labels"},
		{func(o *Options) { o.PriorityClasses = map[string]string{"etcd-priority-class": "Not_A_Name"} }, "--etcd-priority-class"},
		{func(o *Options) { o.HostClusterDomain = "Cluster_Local" }, "--host-cluster-domain"},
		{func(o *Options) { o.Timeout = -time.Second }, "--wait-component-ready-timeout"},
	} {
		o := defaults()
		tc.set(&o)
		if err := o.Validate(); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("Validate() = %v, want an error naming %s", err, tc.want)
		}
	}
}

// Karmada's --wait-component-ready-timeout is seconds; a duration works too.
// Karmada's flags for what init does otherwise are refused with the reason.
func TestKarmadaFlagSpellings(t *testing.T) {
	var w waitTimeout
	for in, want := range map[string]time.Duration{"120": 2 * time.Minute, "0": 0, "10m": 10 * time.Minute} {
		if err := w.Set(in); err != nil || time.Duration(w) != want {
			t.Errorf("--wait-component-ready-timeout %s: %v (err %v), want %v", in, time.Duration(w), err, want)
		}
	}
	for _, bad := range []string{"-1", "soon"} {
		if err := w.Set(bad); err == nil {
			t.Errorf("--wait-component-ready-timeout %s accepted", bad)
		}
	}
	for _, flag := range []string{"crds", "config", "karmada-pki", "etcd-init-image", "kube-image-mirror-country"} {
		cmd := NewInitCommand(&options.Global{})
		cmd.SetArgs([]string{"--" + flag, "x", "--dry-run"})
		cmd.SetOut(io.Discard)
		cmd.SetErr(io.Discard)
		if err := cmd.Execute(); err == nil || !strings.Contains(err.Error(), "--"+flag+": not supported: ") {
			t.Errorf("init --%s: %v, want refused with the reason", flag, err)
		}
	}
}
