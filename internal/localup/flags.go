package localup

// The flags each upstream binary of the fleet runs with, one function per
// binary: what a reader changing how etcd, a kube-apiserver, a
// kube-controller-manager, a kube-scheduler or kwok is run looks at. The
// steps that start them (plan.go) add names, order, ports and probes.

import (
	"fmt"
	"path/filepath"
	"strings"
)

// etcdArgs: a member of the etcd every API server of the fleet shares, each
// under its own key prefix: the only one, or one of three with --ha.
func (f *fleet) etcdArgs(m etcdMember) []string {
	var initial []string
	for _, o := range f.etcd.members {
		initial = append(initial, o.name+"="+o.peerURL())
	}
	return []string{
		"--name=" + m.name,
		"--data-dir=" + m.dataDir,
		"--listen-client-urls=" + m.clientURL(),
		"--advertise-client-urls=" + m.clientURL(),
		"--listen-peer-urls=" + m.peerURL(),
		"--initial-advertise-peer-urls=" + m.peerURL(),
		// Read only when the data directory is empty (a new cluster,
		// etcd's default state): a member that restarts rejoins with what
		// it stored.
		"--initial-cluster=" + strings.Join(initial, ","),
		"--cert-file=" + f.etcd.server, "--key-file=" + f.etcd.serverKey,
		"--trusted-ca-file=" + filepath.Join(f.etcd.ca.Dir, "ca.crt"), "--client-cert-auth",
		"--peer-cert-file=" + f.etcd.server, "--peer-key-file=" + f.etcd.serverKey,
		"--peer-trusted-ca-file=" + filepath.Join(f.etcd.ca.Dir, "ca.crt"), "--peer-client-cert-auth",
		// Keep the database small on a long-lived dev fleet.
		"--auto-compaction-mode=periodic", "--auto-compaction-retention=5m",
		"--quota-backend-bytes=4294967296",
		"--log-level=warn",
		fmt.Sprintf("--enable-pprof=%t", f.cfg.Profiling),
	}
}

// apiserverArgs: a cluster's kube-apiserver, the control plane's or a
// member's.
func (f *fleet) apiserverArgs(c *cluster, port int) []string {
	pki := filepath.Join(c.dir, "pki")
	caFile := filepath.Join(pki, "ca.crt")
	args := []string{
		"--bind-address=" + c.host,
		"--advertise-address=" + c.host,
		fmt.Sprintf("--secure-port=%d", port),
		"--etcd-servers=" + strings.Join(f.etcdEndpoints(), ","),
		"--etcd-prefix=" + EtcdPrefix(c.name),
		"--etcd-cafile=" + filepath.Join(f.etcd.ca.Dir, "ca.crt"),
		"--etcd-certfile=" + c.etcdCert,
		"--etcd-keyfile=" + c.etcdKey,
		"--client-ca-file=" + caFile,
		"--tls-cert-file=" + c.serving,
		"--tls-private-key-file=" + c.servingKey,
		"--service-account-key-file=" + c.saPub,
		"--service-account-signing-key-file=" + c.saKey,
		"--service-account-issuer=https://kubernetes.default.svc.cluster.local",
		// Secrets (member credentials, service account tokens) are
		// encrypted in etcd.
		"--encryption-provider-config=" + c.encryption,
		"--service-cluster-ip-range=10.96.0.0/16",
		"--endpoint-reconciler-type=none",
		"--requestheader-client-ca-file=" + c.frontProxyCA,
		"--requestheader-allowed-names=front-proxy-client",
		"--requestheader-username-headers=X-Remote-User",
		"--requestheader-group-headers=X-Remote-Group",
		"--requestheader-extra-headers-prefix=X-Remote-Extra-",
		"--proxy-client-cert-file=" + c.proxyClient,
		"--proxy-client-key-file=" + c.proxyKey,
		"--allow-privileged=true",
		fmt.Sprintf("--profiling=%t", f.cfg.Profiling),
		"--v=1",
	}
	if c.index == 0 {
		// The Karmada control plane runs no kubelets. Pull-mode members
		// register with bootstrap tokens (karmadactl token create). API
		// Priority and Fairness is on, with a priority level of its own for
		// Karmada's components (deploy/flowcontrol).
		// Authorization: the controller manager's confinement, then RBAC.
		args = append(args, "--authorization-config="+c.authorization, "--enable-bootstrap-token-auth=true")
	} else {
		// The members' API servers serve only their own components, kwok
		// and Karmada: plain max-in-flight limits.
		args = append(args, "--authorization-mode=Node,RBAC", "--enable-priority-and-fairness=false")
	}
	return args
}

// controllerManagerArgs: a cluster's kube-controller-manager; the control
// plane's runs only what Karmada relies on there.
func (f *fleet) controllerManagerArgs(c *cluster, port int) []string {
	pki := filepath.Join(c.dir, "pki")
	caFile := filepath.Join(pki, "ca.crt")
	args := []string{
		"--kubeconfig=" + c.kcmConfig,
		"--authentication-kubeconfig=" + c.kcmConfig,
		"--authorization-kubeconfig=" + c.kcmConfig,
		"--bind-address=127.0.0.1",
		fmt.Sprintf("--secure-port=%d", port),
		"--tls-cert-file=" + filepath.Join(pki, "controller-manager-serving.crt"),
		"--tls-private-key-file=" + filepath.Join(pki, "controller-manager-serving.key"),
		"--service-account-private-key-file=" + c.saKey,
		"--root-ca-file=" + caFile,
		"--use-service-account-credentials=true",
		// Two replicas of the control plane's elect a leader with --ha.
		fmt.Sprintf("--leader-elect=%t", c.index == 0 && f.cfg.HA),
		"--flex-volume-plugin-dir=" + filepath.Join(c.dir, "volume-plugins"),
		"--v=1",
	}
	if c.index > 0 {
		// A member runs workloads on kwok nodes: the controllers that need
		// kubelets, a cloud, a metrics API or dynamic resources only cost
		// memory and CPU.
		args = append(args, "--controllers=*,"+strings.Join([]string{
			"-horizontal-pod-autoscaler-controller",
			"-certificatesigningrequest-approving-controller",
			"-certificatesigningrequest-cleaner-controller",
			"-certificatesigningrequest-signing-controller",
			"-persistentvolume-attach-detach-controller",
			"-kube-apiserver-serving-clustertrustbundle-publisher-controller",
			"-device-taint-eviction-controller",
			"-resourceclaim-controller",
			"-storage-version-migrator-controller",
			"-validatingadmissionpolicy-status-controller",
		}, ","),
			// Each controller has its own client; at the default 20/s a
			// member's deployment controller needs over a minute for a
			// thousand Deployments (a ReplicaSet and status updates each),
			// which a fleet made for scale tests should not be held to.
			"--kube-api-qps=100", "--kube-api-burst=200",
			// kwok renews 100 nodes' leases from one process; when the
			// machine is saturated (K = 10,000 on 2 cores) a renewal can
			// come late, and a node taken for NotReady has its pods marked
			// not ready, which kwok, unlike a kubelet, never reports ready
			// again. The default 50 s is for real kubelets.
			"--node-monitor-grace-period=5m")
	}
	if c.index == 0 {
		// Only what Karmada relies on in its control plane (the token
		// cleaner deletes expired bootstrap tokens, the bootstrap signer
		// signs kube-public/cluster-info with them, for register; the CSR
		// cleaner removes agents' certificate requests an hour after
		// they were issued).
		args = append(args, "--controllers=namespace-controller,garbage-collector-controller,serviceaccount-token-controller,serviceaccount-controller,token-cleaner-controller,bootstrap-signer-controller,certificatesigningrequest-signing-controller,certificatesigningrequest-cleaner-controller",
			// Approved agent certificates (the agentcsrapproving controller
			// approves) are signed with the control plane's CA.
			"--cluster-signing-kube-apiserver-client-cert-file="+caFile,
			"--cluster-signing-kube-apiserver-client-key-file="+filepath.Join(pki, "ca.key"),
			// The garbage collector deletes a template's binding (two
			// requests each): at the default 20/s, deleting a thousand
			// templates waits on it for over a minute.
			"--kube-api-qps=100", "--kube-api-burst=200")
	}
	return args
}

// schedulerArgs: a member's kube-scheduler (the control plane runs none).
func schedulerArgs(c *cluster) []string {
	pki := filepath.Join(c.dir, "pki")
	return []string{
		"--kubeconfig=" + c.schedConfig,
		"--authentication-kubeconfig=" + c.schedConfig,
		"--authorization-kubeconfig=" + c.schedConfig,
		"--bind-address=127.0.0.1",
		fmt.Sprintf("--secure-port=%d", c.ports[slotScheduler]),
		"--tls-cert-file=" + filepath.Join(pki, "scheduler-serving.crt"),
		"--tls-private-key-file=" + filepath.Join(pki, "scheduler-serving.key"),
		"--leader-elect=false",
		"--v=1",
	}
}

// kwokArgs: a member's kwok, which runs the member's nodes and pods.
func kwokArgs(c *cluster) []string {
	return []string{
		"--kubeconfig=" + c.kwokConfig,
		"--manage-all-nodes=false",
		"--manage-nodes-with-annotation-selector=" + kwokNodeAnnotation + "=fake",
		// The kubelet API of every node (logs, exec: kwok.yaml), over TLS:
		// the member's API server dials the nodes' daemon endpoint.
		fmt.Sprintf("--server-address=127.0.0.1:%d", c.ports[slotKwok]),
		fmt.Sprintf("--node-port=%d", c.ports[slotKwok]),
		"--tls-cert-file=" + c.kwokCert,
		"--tls-private-key-file=" + c.kwokKey,
		// Pod IPs for every pod of the member, not only 254.
		fmt.Sprintf("--cidr=10.%d.0.1/16", 100+c.index%100),
		"--node-ip=127.0.0.1",
		"--node-lease-duration-seconds=40",
	}
}
