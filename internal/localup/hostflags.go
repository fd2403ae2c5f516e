package localup

// The host cluster's processes: their flags and configuration files, one
// function per binary.

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"sigs.k8s.io/yaml"
)

func (h *hostCluster) etcdArgs() []string {
	ca := filepath.Join(h.etcdCA.Dir, "ca.crt")
	client := fmt.Sprintf("https://127.0.0.1:%d", hostEtcdClientPort)
	peer := fmt.Sprintf("https://127.0.0.1:%d", hostEtcdPeerPort)
	return []string{
		"--name=karmada-host",
		"--data-dir=" + h.path("etcd", "data"),
		"--listen-client-urls=" + client, "--advertise-client-urls=" + client,
		"--listen-peer-urls=" + peer, "--initial-advertise-peer-urls=" + peer,
		"--initial-cluster=karmada-host=" + peer,
		"--cert-file=" + h.etcdServer, "--key-file=" + h.etcdServerKey,
		"--trusted-ca-file=" + ca, "--client-cert-auth",
		"--peer-cert-file=" + h.etcdServer, "--peer-key-file=" + h.etcdServerKey,
		"--peer-trusted-ca-file=" + ca, "--peer-client-cert-auth",
		"--auto-compaction-mode=periodic", "--auto-compaction-retention=5m",
		"--log-level=warn",
	}
}

func (h *hostCluster) apiserverArgs() []string {
	ca := filepath.Join(h.ca.Dir, "ca.crt")
	return []string{
		"--bind-address=" + h.cfg.NodeIP,
		"--advertise-address=" + h.cfg.NodeIP,
		fmt.Sprintf("--secure-port=%d", hostAPIServerPort),
		fmt.Sprintf("--etcd-servers=https://127.0.0.1:%d", hostEtcdClientPort),
		"--etcd-cafile=" + filepath.Join(h.etcdCA.Dir, "ca.crt"),
		"--etcd-certfile=" + h.etcdClient, "--etcd-keyfile=" + h.etcdClientKey,
		"--client-ca-file=" + ca,
		"--tls-cert-file=" + h.serving, "--tls-private-key-file=" + h.servingKey,
		"--kubelet-certificate-authority=" + ca,
		"--kubelet-client-certificate=" + h.kubeletClient, "--kubelet-client-key=" + h.kubeletClientKey,
		"--kubelet-preferred-address-types=InternalIP",
		"--service-account-key-file=" + h.saPub,
		"--service-account-signing-key-file=" + h.saKey,
		"--service-account-issuer=https://kubernetes.default.svc." + hostClusterDomain,
		"--service-cluster-ip-range=" + hostServiceCIDR,
		"--service-node-port-range=" + HostNodePortRange,
		"--authorization-mode=Node,RBAC",
		"--enable-admission-plugins=NodeRestriction",
		"--allow-privileged=true",
		"--profiling=false",
		"--v=1",
	}
}

func (h *hostCluster) controllerManagerArgs() []string {
	return []string{
		"--kubeconfig=" + h.kcmConfig,
		"--authentication-kubeconfig=" + h.kcmConfig,
		"--authorization-kubeconfig=" + h.kcmConfig,
		"--bind-address=127.0.0.1",
		fmt.Sprintf("--secure-port=%d", hostKCMPort),
		"--tls-cert-file=" + filepath.Join(h.ca.Dir, "controller-manager-serving.crt"),
		"--tls-private-key-file=" + filepath.Join(h.ca.Dir, "controller-manager-serving.key"),
		"--service-account-private-key-file=" + h.saKey,
		"--root-ca-file=" + filepath.Join(h.ca.Dir, "ca.crt"),
		"--use-service-account-credentials=true",
		"--cluster-name=karmada-host",
		"--leader-elect=false",
		"--flex-volume-plugin-dir=" + h.path("volume-plugins"),
		// One node: no cloud, no node IPAM (the CNI configuration names
		// the pod range).
		"--controllers=*,-cloud-node-lifecycle-controller,-node-ipam-controller,-service-lb-controller,-node-route-controller",
		"--v=1",
	}
}

func (h *hostCluster) schedulerArgs() []string {
	return []string{
		"--kubeconfig=" + h.schedConfig,
		"--authentication-kubeconfig=" + h.schedConfig,
		"--authorization-kubeconfig=" + h.schedConfig,
		"--bind-address=127.0.0.1",
		fmt.Sprintf("--secure-port=%d", hostSchedulerPort),
		"--tls-cert-file=" + filepath.Join(h.ca.Dir, "scheduler-serving.crt"),
		"--tls-private-key-file=" + filepath.Join(h.ca.Dir, "scheduler-serving.key"),
		"--leader-elect=false",
		"--v=1",
	}
}

func (h *hostCluster) kubeletArgs() []string {
	return []string{
		"--config=" + h.path("kubelet", "config.yaml"),
		"--kubeconfig=" + h.kubeletConfig,
		"--root-dir=" + h.path("kubelet", "root"),
		"--cert-dir=" + h.path("kubelet", "pki"),
		"--hostname-override=" + HostNodeName,
		"--node-ip=" + h.cfg.NodeIP,
		"--v=1",
	}
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
	files := map[string]string{}
	// containerd: its own root, state and socket under the state
	// directory; runc (crun fails here: "cgroups in hybrid mode not
	// supported"); restrict_oom_score_adj, since this machine forbids
	// lowering a process's OOM score; the sandbox image we built.
	files[h.path("containerd", "config.toml")] = fmt.Sprintf(`version = 2
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

	cni := map[string]any{
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
	b, err := json.MarshalIndent(cni, "", "  ")
	if err != nil {
		return err
	}
	files[h.path("cni", "net.d", "10-karmada-host.conflist")] = string(b)

	kubelet := map[string]any{
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
	b, err = yaml.Marshal(kubelet)
	if err != nil {
		return err
	}
	files[h.path("kubelet", "config.yaml")] = string(b)

	proxy := map[string]any{
		"apiVersion":         "kubeproxy.config.k8s.io/v1alpha1",
		"kind":               "KubeProxyConfiguration",
		"mode":               "iptables",
		"hostnameOverride":   HostNodeName,
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
	b, err = yaml.Marshal(proxy)
	if err != nil {
		return err
	}
	files[h.path("kube-proxy", "config.yaml")] = string(b)

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
