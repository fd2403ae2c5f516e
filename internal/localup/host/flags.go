package host

// The host cluster's processes: their flags and configuration files, one
// function per binary.

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"sigs.k8s.io/yaml"

	"github.com/karmada-go/karmada/internal/localup/process"
)

func (h *hostCluster) etcdArgs() []string {
	ca := filepath.Join(h.etcdCA.Dir, "ca.crt")
	client := fmt.Sprintf("https://127.0.0.1:%d", hostEtcdClientPort)
	peer := fmt.Sprintf("https://127.0.0.1:%d", hostEtcdPeerPort)
	return process.NewArgs().
		Set("name", "karmada-host").
		Set("data-dir", h.path("etcd", "data")).
		Set("listen-client-urls", client).Set("advertise-client-urls", client).
		Set("listen-peer-urls", peer).Set("initial-advertise-peer-urls", peer).
		Set("initial-cluster", "karmada-host="+peer).
		Set("cert-file", h.etcdServer).Set("key-file", h.etcdServerKey).
		Set("trusted-ca-file", ca).On("client-cert-auth").
		Set("peer-cert-file", h.etcdServer).Set("peer-key-file", h.etcdServerKey).
		Set("peer-trusted-ca-file", ca).On("peer-client-cert-auth").
		Set("auto-compaction-mode", "periodic").Set("auto-compaction-retention", "5m").
		Set("log-level", "warn").
		Strings()
}

func (h *hostCluster) apiserverArgs() []string {
	ca := filepath.Join(h.ca.Dir, "ca.crt")
	return process.NewArgs().
		Set("bind-address", h.cfg.NodeIP).
		Set("advertise-address", h.cfg.NodeIP).
		Set("secure-port", hostAPIServerPort).
		Set("etcd-servers", fmt.Sprintf("https://127.0.0.1:%d", hostEtcdClientPort)).
		Set("etcd-cafile", filepath.Join(h.etcdCA.Dir, "ca.crt")).
		Set("etcd-certfile", h.etcdClient).Set("etcd-keyfile", h.etcdClientKey).
		Set("client-ca-file", ca).
		Set("tls-cert-file", h.serving).Set("tls-private-key-file", h.servingKey).
		Set("kubelet-certificate-authority", ca).
		Set("kubelet-client-certificate", h.kubeletClient).Set("kubelet-client-key", h.kubeletClientKey).
		Set("kubelet-preferred-address-types", "InternalIP").
		Set("service-account-key-file", h.saPub).
		Set("service-account-signing-key-file", h.saKey).
		Set("service-account-issuer", "https://kubernetes.default.svc."+hostClusterDomain).
		Set("service-cluster-ip-range", hostServiceCIDR).
		Set("service-node-port-range", NodePortRange).
		Set("authorization-mode", "Node,RBAC").
		Set("enable-admission-plugins", "NodeRestriction").
		Set("allow-privileged", true).
		Set("profiling", false).
		Set("v", 1).
		Strings()
}

func (h *hostCluster) controllerManagerArgs() []string {
	return process.KubeComponent(h.kcmConfig, hostKCMPort, h.ca.Dir, "controller-manager").
		Set("service-account-private-key-file", h.saKey).
		Set("root-ca-file", filepath.Join(h.ca.Dir, "ca.crt")).
		Set("use-service-account-credentials", true).
		Set("cluster-name", "karmada-host").
		Set("leader-elect", false).
		Set("flex-volume-plugin-dir", h.path("volume-plugins")).
		// One node: no cloud, no node IPAM (the CNI configuration names
		// the pod range).
		Set("controllers", "*,-cloud-node-lifecycle-controller,-node-ipam-controller,-service-lb-controller,-node-route-controller").
		Set("v", 1).
		Strings()
}

func (h *hostCluster) schedulerArgs() []string {
	return process.KubeComponent(h.schedConfig, hostSchedulerPort, h.ca.Dir, "scheduler").
		Set("leader-elect", false).
		Set("v", 1).
		Strings()
}

func (h *hostCluster) kubeletArgs() []string {
	return process.NewArgs().
		Set("config", h.path("kubelet", "config.yaml")).
		Set("kubeconfig", h.kubeletConfig).
		Set("root-dir", h.path("kubelet", "root")).
		Set("cert-dir", h.path("kubelet", "pki")).
		Set("hostname-override", NodeName).
		Set("node-ip", h.cfg.NodeIP).
		Set("v", 1).
		Strings()
}

// pauseImage is the sandbox image's name as `make images` wrote it.
func (h *hostCluster) imageRef(name string) (string, error) {
	return imageRefOf(filepath.Join(h.cfg.ImageDir, name+".tar"))
}

// writeConfigs writes the configuration files of containerd, the CNI
// network, the kubelet and kube-proxy.
func (h *hostCluster) writeConfigs() error {
	pause, err := h.imageRef("pause")
	if err != nil {
		return err
	}
	cni, err := json.MarshalIndent(h.cniConfig(), "", "  ")
	if err != nil {
		return err
	}
	kubelet, err := yaml.Marshal(h.kubeletConfiguration())
	if err != nil {
		return err
	}
	proxy, err := yaml.Marshal(h.kubeProxyConfiguration())
	if err != nil {
		return err
	}
	files := map[string]string{
		h.path("containerd", "config.toml"):                h.containerdConfig(pause),
		h.path("cni", "net.d", "10-karmada-host.conflist"): string(cni),
		h.path("kubelet", "config.yaml"):                   string(kubelet),
		h.path("kube-proxy", "config.yaml"):                string(proxy),
	}
	for path, content := range files {
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			return err
		}
		if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
			return fmt.Errorf("writing %s: %w", path, err)
		}
	}
	for _, d := range []string{"volumes", "kubelet/root", "kubelet/pod-logs", "volume-plugins"} {
		if err := os.MkdirAll(h.path(strings.Split(d, "/")...), 0o755); err != nil {
			return err
		}
	}
	return nil
}

// containerdConfig: containerd's own root, state and socket under the
// state directory; runc (crun fails here: "cgroups in hybrid mode not
// supported"); restrict_oom_score_adj, since this machine forbids lowering
// a process's OOM score; the sandbox image we built.
func (h *hostCluster) containerdConfig(pause string) string {
	return fmt.Sprintf(`version = 2
root = %q
state = %q
[grpc]
  address = %q
[plugins."io.containerd.grpc.v1.cri"]
  restrict_oom_score_adj = true
  sandbox_image = %q
  enable_unprivileged_ports = true
  [plugins."io.containerd.grpc.v1.cri".containerd]
    snapshotter = "overlayfs"
    default_runtime_name = "runc"
    [plugins."io.containerd.grpc.v1.cri".containerd.runtimes.runc]
      runtime_type = "io.containerd.runc.v2"
      [plugins."io.containerd.grpc.v1.cri".containerd.runtimes.runc.options]
        BinaryName = "runc"
        SystemdCgroup = false
  [plugins."io.containerd.grpc.v1.cri".cni]
    bin_dir = "/usr/lib/cni"
    conf_dir = %q
`, h.path("containerd", "root"), h.path("containerd", "state"), h.containerdSocket(), pause, h.path("cni", "net.d"))
}

// cniConfig: pods on a bridge of their own, with host-local addresses of
// the pod range and port mappings.
func (h *hostCluster) cniConfig() map[string]any {
	return map[string]any{
		"cniVersion": "1.0.0",
		"name":       "karmada-host",
		"plugins": []any{
			map[string]any{
				"type": "bridge", "bridge": hostCNIBridge, "isGateway": true, "ipMasq": true, "hairpinMode": true,
				"ipam": map[string]any{
					"type":    "host-local",
					"ranges":  []any{[]any{map[string]any{"subnet": hostPodCIDR}}},
					"routes":  []any{map[string]any{"dst": "0.0.0.0/0"}},
					"dataDir": h.path("cni", "ipam"),
				},
			},
			map[string]any{"type": "portmap", "capabilities": map[string]any{"portMappings": true}},
		},
	}
}

// kubeletConfiguration: the kubelet on the node address, authenticating
// and authorizing its API by the API server.
func (h *hostCluster) kubeletConfiguration() map[string]any {
	return map[string]any{
		"apiVersion":         "kubelet.config.k8s.io/v1beta1",
		"kind":               "KubeletConfiguration",
		"address":            h.cfg.NodeIP,
		"port":               hostKubeletPort,
		"readOnlyPort":       0,
		"healthzBindAddress": "127.0.0.1",
		"healthzPort":        hostKubeletHealth,
		"tlsCertFile":        h.kubeletServing,
		"tlsPrivateKeyFile":  h.kubeletKey,
		"authentication": map[string]any{
			"anonymous": map[string]any{"enabled": false},
			"webhook":   map[string]any{"enabled": true},
			"x509":      map[string]any{"clientCAFile": filepath.Join(h.ca.Dir, "ca.crt")},
		},
		"authorization":            map[string]any{"mode": "Webhook"},
		"containerRuntimeEndpoint": "unix://" + h.containerdSocket(),
		// No systemd here; cgroup v1 controllers with a v2 unified mount.
		"cgroupDriver":  "cgroupfs",
		"failCgroupV1":  false,
		"failSwapOn":    false,
		"clusterDNS":    []string{hostDNSService},
		"clusterDomain": hostClusterDomain,
		"podLogsDir":    h.path("kubelet", "pod-logs"),
		"maxPods":       110,
		// Images cannot be pulled again: never collect them. And a
		// machine with little free disk must not evict the control plane.
		"imageGCHighThresholdPercent": 100,
		"imageGCLowThresholdPercent":  99,
		"evictionHard": map[string]string{
			"memory.available": "100Mi", "nodefs.available": "1%", "nodefs.inodesFree": "1%", "imagefs.available": "1%",
		},
		"serializeImagePulls":   false,
		"rotateCertificates":    false,
		"protectKernelDefaults": false,
	}
}

// kubeProxyConfiguration: iptables mode, NodePorts on the node's address.
func (h *hostCluster) kubeProxyConfiguration() map[string]any {
	return map[string]any{
		"apiVersion":         "kubeproxy.config.k8s.io/v1alpha1",
		"kind":               "KubeProxyConfiguration",
		"mode":               "iptables",
		"hostnameOverride":   NodeName,
		"clusterCIDR":        hostPodCIDR,
		"bindAddress":        h.cfg.NodeIP,
		"healthzBindAddress": fmt.Sprintf("127.0.0.1:%d", hostProxyHealth),
		"metricsBindAddress": fmt.Sprintf("127.0.0.1:%d", hostProxyMetrics),
		// NodePorts on the node's own address only: the machine's
		// loopback (where the local fleet listens) is left alone.
		"nodePortAddresses": []string{h.cfg.NodeIP + "/32"},
		"clientConnection":  map[string]any{"kubeconfig": h.proxyConfig},
		// Leave the machine's conntrack settings as they are.
		"conntrack": map[string]any{"maxPerCore": 0, "min": 0, "tcpEstablishedTimeout": "0s", "tcpCloseWaitTimeout": "0s"},
	}
}
