package plan

// The flags each upstream binary of the fleet runs with, one function per
// binary: what a reader changing how etcd, a kube-apiserver, a
// kube-controller-manager, a kube-scheduler or kwok is run looks at. The
// steps that start them (plan.go) add names, order, ports and probes.

import (
	"fmt"
	"path/filepath"
	"strings"

	"github.com/karmada-go/karmada/internal/localup/kwok"
	"github.com/karmada-go/karmada/internal/localup/process"
)

// etcdArgs: a member of the etcd every API server of the fleet shares, each
// under its own key prefix: the only one, or one of three with --ha.
func (f *Fleet) etcdArgs(m etcdMember) []string {
	var initial []string
	for _, o := range f.Etcd.Members {
		initial = append(initial, o.Name+"="+o.peerURL())
	}
	return process.NewArgs().
		Set("name", m.Name).
		Set("data-dir", m.dataDir).
		Set("listen-client-urls", m.clientURL()).
		Set("advertise-client-urls", m.clientURL()).
		Set("listen-peer-urls", m.peerURL()).
		Set("initial-advertise-peer-urls", m.peerURL()).
		// Read only when the data directory is empty (a new cluster,
		// etcd's default state): a member that restarts rejoins with what
		// it stored.
		Set("initial-cluster", strings.Join(initial, ",")).
		Set("cert-file", f.Etcd.server).Set("key-file", f.Etcd.serverKey).
		Set("trusted-ca-file", filepath.Join(f.Etcd.CA.Dir, "ca.crt")).On("client-cert-auth").
		Set("peer-cert-file", f.Etcd.server).Set("peer-key-file", f.Etcd.serverKey).
		Set("peer-trusted-ca-file", filepath.Join(f.Etcd.CA.Dir, "ca.crt")).On("peer-client-cert-auth").
		// Keep the database small on a long-lived dev fleet.
		Set("auto-compaction-mode", "periodic").Set("auto-compaction-retention", "5m").
		Set("quota-backend-bytes", 4294967296).
		Set("log-level", "warn").
		Set("enable-pprof", f.Cfg.Profiling).
		Strings()
}

// apiserverArgs: a cluster's kube-apiserver, the control plane's or a
// member's.
func (f *Fleet) apiserverArgs(c *Cluster, port int) []string {
	pki := filepath.Join(c.dir, "pki")
	caFile := filepath.Join(pki, "ca.crt")
	args := process.NewArgs().
		Set("bind-address", c.host).
		Set("advertise-address", c.host).
		Set("secure-port", port).
		Set("etcd-servers", strings.Join(f.etcdEndpoints(), ",")).
		Set("etcd-prefix", EtcdPrefix(c.Name)).
		Set("etcd-cafile", filepath.Join(f.Etcd.CA.Dir, "ca.crt")).
		Set("etcd-certfile", c.etcdCert).
		Set("etcd-keyfile", c.etcdKey).
		Set("client-ca-file", caFile).
		Set("tls-cert-file", c.serving).
		Set("tls-private-key-file", c.servingKey).
		Set("service-account-key-file", c.saPub).
		Set("service-account-signing-key-file", c.saKey).
		Set("service-account-issuer", "https://kubernetes.default.svc.cluster.local").
		// Secrets (member credentials, service account tokens) are
		// encrypted in etcd.
		Set("encryption-provider-config", c.encryption).
		Set("service-cluster-ip-range", "10.96.0.0/16").
		Set("endpoint-reconciler-type", "none").
		Set("requestheader-client-ca-file", c.frontProxyCA).
		Set("requestheader-allowed-names", "front-proxy-client").
		Set("requestheader-username-headers", "X-Remote-User").
		Set("requestheader-group-headers", "X-Remote-Group").
		Set("requestheader-extra-headers-prefix", "X-Remote-Extra-").
		Set("proxy-client-cert-file", c.proxyClient).
		Set("proxy-client-key-file", c.proxyKey).
		Set("allow-privileged", true).
		Set("profiling", f.Cfg.Profiling).
		Set("v", 1)
	if c.Index == 0 {
		// The Karmada control plane runs no kubelets. Pull-mode members
		// register with bootstrap tokens (karmadactl token create). API
		// Priority and Fairness is on, with a priority level of its own for
		// Karmada's components (deploy/flowcontrol).
		// Authorization: the controller manager's confinement, then RBAC.
		args.Set("authorization-config", c.authorization).Set("enable-bootstrap-token-auth", true)
	} else {
		// The members' API servers serve only their own components, kwok
		// and Karmada: plain max-in-flight limits.
		args.Set("authorization-mode", "Node,RBAC").Set("enable-priority-and-fairness", false)
	}
	return args.Strings()
}

// controllerManagerArgs: a cluster's kube-controller-manager; the control
// plane's runs only what Karmada relies on there.
func (f *Fleet) controllerManagerArgs(c *Cluster, port int) []string {
	pki := filepath.Join(c.dir, "pki")
	caFile := filepath.Join(pki, "ca.crt")
	args := process.KubeComponent(c.kcmConfig, port, pki, "controller-manager").
		Set("service-account-private-key-file", c.saKey).
		Set("root-ca-file", caFile).
		Set("use-service-account-credentials", true).
		// Two replicas of the control plane's elect a leader with --ha.
		Set("leader-elect", c.Index == 0 && f.Cfg.HA).
		Set("flex-volume-plugin-dir", filepath.Join(c.dir, "volume-plugins")).
		Set("v", 1)
	if c.Index > 0 {
		// A member runs workloads on kwok nodes: the controllers that need
		// kubelets, a cloud or dynamic resources only cost memory and CPU.
		// The HPA controller runs: HPAs propagated to members scale there
		// (docs/autoscaling.md).
		args.Set("controllers", []string{"*",
			"-certificatesigningrequest-approving-controller",
			"-certificatesigningrequest-cleaner-controller",
			"-certificatesigningrequest-signing-controller",
			"-persistentvolume-attach-detach-controller",
			"-kube-apiserver-serving-clustertrustbundle-publisher-controller",
			"-device-taint-eviction-controller",
			"-resourceclaim-controller",
			"-storage-version-migrator-controller",
			"-validatingadmissionpolicy-status-controller",
		}).
			// Each controller has its own client; at the default 20/s a
			// member's deployment controller needs over a minute for a
			// thousand Deployments (a ReplicaSet and status updates each),
			// which a fleet made for scale tests should not be held to.
			Set("kube-api-qps", 100).Set("kube-api-burst", 200).
			// kwok renews 100 nodes' leases from one process; when the
			// machine is saturated (K = 10,000 on 2 cores) a renewal can
			// come late, and a node taken for NotReady has its pods marked
			// not ready, which kwok, unlike a kubelet, never reports ready
			// again. The default 50 s is for real kubelets.
			Set("node-monitor-grace-period", "5m")
	}
	if c.Index == 0 {
		// Only what Karmada relies on in its control plane (the token
		// cleaner deletes expired bootstrap tokens, the bootstrap signer
		// signs kube-public/cluster-info with them, for register; the CSR
		// cleaner removes agents' certificate requests an hour after
		// they were issued; the ClusterRole aggregation fills view, edit
		// and admin with the roles labelled for them, such as
		// karmada-metrics-adapter's reader).
		args.Set("controllers", "namespace-controller,garbage-collector-controller,serviceaccount-token-controller,serviceaccount-controller,token-cleaner-controller,bootstrap-signer-controller,certificatesigningrequest-signing-controller,certificatesigningrequest-cleaner-controller,clusterrole-aggregation-controller").
			// Approved agent certificates (the agentcsrapproving controller
			// approves) are signed with the control plane's CA.
			Set("cluster-signing-kube-apiserver-client-cert-file", caFile).
			Set("cluster-signing-kube-apiserver-client-key-file", filepath.Join(pki, "ca.key")).
			// The garbage collector deletes a template's binding (two
			// requests each): at the default 20/s, deleting a thousand
			// templates waits on it for over a minute.
			Set("kube-api-qps", 100).Set("kube-api-burst", 200)
	}
	return args.Strings()
}

// schedulerArgs: a member's kube-scheduler (the control plane runs none).
func schedulerArgs(c *Cluster) []string {
	pki := filepath.Join(c.dir, "pki")
	return process.KubeComponent(c.schedConfig, c.ports[slotScheduler], pki, "scheduler").
		Set("leader-elect", false).
		Set("v", 1).
		Strings()
}

// kwokArgs: a member's kwok, which runs the member's nodes and pods.
func kwokArgs(c *Cluster) []string {
	return process.NewArgs().
		Set("kubeconfig", c.kwokConfig).
		Set("manage-all-nodes", false).
		Set("manage-nodes-with-annotation-selector", kwok.NodeAnnotation+"=fake").
		// The kubelet API of every node (logs, exec: kwok.yaml), over TLS:
		// the member's API server dials the nodes' daemon endpoint.
		Set("server-address", fmt.Sprintf("127.0.0.1:%d", c.ports[slotKwok])).
		Set("node-port", c.ports[slotKwok]).
		Set("tls-cert-file", c.kwokCert).
		Set("tls-private-key-file", c.kwokKey).
		// Pod IPs for every pod of the member, not only 254.
		Set("cidr", fmt.Sprintf("10.%d.0.1/16", 100+c.Index%100)).
		Set("node-ip", "127.0.0.1").
		Set("node-lease-duration-seconds", 40).
		Strings()
}
