package host

// The host cluster's tasks: its network, the images, what it runs in
// itself (cluster DNS, storage, RBAC), the wait for readiness, and the
// teardown.

import (
	"archive/tar"
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"time"

	"go.opentelemetry.io/otel/trace/noop"
	"golang.org/x/sys/unix"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	storagev1 "k8s.io/api/storage/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/clientcmd"
	internalapi "k8s.io/cri-api/pkg/apis"
	cri "k8s.io/cri-client/pkg"
	"k8s.io/klog/v2"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/karmada-go/karmada/internal/localup/process"
)

// hostState is written to <state>/host.json by host up.
type hostState struct {
	Version    int    `json:"version"`
	BinDir     string `json:"binDir"`
	Kubeconfig string `json:"kubeconfig"`
	NodeIP     string `json:"nodeIP"`
	ImageDir   string `json:"imageDir"`
}

// hostStateVersion is the version of host.json this build writes and reads.
const hostStateVersion = 1

func hostStatePath(dir string) string { return filepath.Join(dir, "host.json") }

func writeHostState(cfg Config) error {
	if err := os.MkdirAll(cfg.StateDir, 0o700); err != nil {
		return err
	}
	if old, err := readHostState(cfg.StateDir); err == nil && old.NodeIP != cfg.NodeIP {
		return fmt.Errorf("the host cluster in %s has node address %s: run `karmada-local host down --purge` before changing --node-ip", cfg.StateDir, old.NodeIP)
	}
	b, err := json.MarshalIndent(hostState{Version: hostStateVersion, BinDir: cfg.BinDir, Kubeconfig: cfg.Kubeconfig, NodeIP: cfg.NodeIP, ImageDir: cfg.ImageDir}, "", "  ")
	if err != nil {
		return err
	}
	return os.WriteFile(hostStatePath(cfg.StateDir), b, 0o600)
}

// readHostState returns the recorded configuration; a directory without
// one holds no host cluster.
func readHostState(dir string) (*Config, error) {
	b, err := os.ReadFile(hostStatePath(dir))
	if errors.Is(err, os.ErrNotExist) {
		return nil, fmt.Errorf("no host cluster in %s (no %s): run karmada-local host up", dir, filepath.Base(hostStatePath(dir)))
	}
	if err != nil {
		return nil, err
	}
	var s hostState
	if err := json.Unmarshal(b, &s); err != nil || s.Version != hostStateVersion {
		return nil, &process.StaleStateError{Dir: dir, Reason: fmt.Sprintf("%s is not a host cluster record of this version", hostStatePath(dir))}
	}
	return &Config{StateDir: dir, BinDir: s.BinDir, Kubeconfig: s.Kubeconfig, NodeIP: s.NodeIP, ImageDir: s.ImageDir}, nil
}

// imageRefOf reads the name `make images` gave the image of an OCI layout
// tarball.
func imageRefOf(file string) (string, error) {
	f, err := os.Open(file)
	if err != nil {
		return "", fmt.Errorf("%w (run make images)", err)
	}
	defer f.Close()
	tr := tar.NewReader(f)
	for {
		h, err := tr.Next()
		if errors.Is(err, io.EOF) {
			return "", fmt.Errorf("%s has no index.json: not an OCI layout tarball of make images", file)
		}
		if err != nil {
			return "", fmt.Errorf("reading %s: %w", file, err)
		}
		if h.Name != "index.json" {
			continue
		}
		var idx struct {
			Manifests []struct {
				Annotations map[string]string `json:"annotations"`
			} `json:"manifests"`
		}
		if err := json.NewDecoder(tr).Decode(&idx); err != nil {
			return "", fmt.Errorf("%s: index.json: %w", file, err)
		}
		if len(idx.Manifests) == 0 || idx.Manifests[0].Annotations["io.containerd.image.name"] == "" {
			return "", fmt.Errorf("%s: the index names no image (io.containerd.image.name)", file)
		}
		return idx.Manifests[0].Annotations["io.containerd.image.name"], nil
	}
}

// setupNetwork gives the node its address, on a bridge of its own that no
// other interface joins, and lets the kernel forward the pods' traffic.
func (h *hostCluster) setupNetwork(ctx context.Context) error {
	if _, err := net.InterfaceByName(hostLink); err != nil {
		if out, err := exec.CommandContext(ctx, "ip", "link", "add", hostLink, "type", "bridge").CombinedOutput(); err != nil {
			return fmt.Errorf("creating link %s: %v: %s", hostLink, err, out)
		}
	}
	ifc, err := net.InterfaceByName(hostLink)
	if err != nil {
		return err
	}
	addrs, err := ifc.Addrs()
	if err != nil {
		return err
	}
	has := false
	for _, a := range addrs {
		if ipn, ok := a.(*net.IPNet); ok && ipn.IP.Equal(net.ParseIP(h.cfg.NodeIP)) {
			has = true
		}
	}
	if !has {
		if out, err := exec.CommandContext(ctx, "ip", "addr", "add", h.cfg.NodeIP+"/32", "dev", hostLink).CombinedOutput(); err != nil {
			return fmt.Errorf("giving %s the address %s: %v: %s", hostLink, h.cfg.NodeIP, err, out)
		}
	}
	if out, err := exec.CommandContext(ctx, "ip", "link", "set", hostLink, "up").CombinedOutput(); err != nil {
		return fmt.Errorf("bringing %s up: %v: %s", hostLink, err, out)
	}
	for path, want := range map[string]string{
		"/proc/sys/net/ipv4/ip_forward":                "1",
		"/proc/sys/net/bridge/bridge-nf-call-iptables": "1",
	} {
		if err := os.WriteFile(path, []byte(want), 0o644); err != nil {
			return fmt.Errorf("setting %s to %s (pods' traffic through Services needs it): %w", path, want, err)
		}
	}
	return nil
}

// teardownNetwork removes the iptables rules of the node (kube-proxy's and
// the kubelet's: chains named KUBE-*) and the links up made.
func (h *hostCluster) teardownNetwork(out io.Writer) error {
	var errs []error
	if err := removeKubeRules(); err != nil {
		errs = append(errs, err)
	}
	for _, link := range []string{hostCNIBridge, hostLink} {
		if _, err := net.InterfaceByName(link); err != nil {
			continue
		}
		if b, err := exec.Command("ip", "link", "del", link).CombinedOutput(); err != nil {
			errs = append(errs, fmt.Errorf("removing link %s: %v: %s", link, err, b))
			continue
		}
		fmt.Fprintf(out, "  removed link %s\n", link)
	}
	return errors.Join(errs...)
}

// removeKubeRules drops every KUBE-* chain, and every rule that jumps to
// one, from each iptables backend present (nft and legacy, IPv4 and IPv6):
// what the node's kube-proxy and kubelet wrote. kube-proxy --cleanup would
// also try IPVS and nftables, whose tools this machine lacks.
func removeKubeRules() error {
	var errs []error
	for _, bin := range []string{"iptables", "iptables-legacy", "ip6tables", "ip6tables-legacy"} {
		if _, err := exec.LookPath(bin + "-save"); err != nil {
			continue
		}
		dump, err := exec.Command(bin + "-save").Output()
		if err != nil || !bytes.Contains(dump, []byte("KUBE-")) {
			continue
		}
		var kept bytes.Buffer
		for _, l := range strings.SplitAfter(string(dump), "\n") {
			if !strings.Contains(l, "KUBE-") {
				kept.WriteString(l)
			}
		}
		cmd := exec.Command(bin + "-restore")
		cmd.Stdin = &kept
		if b, err := cmd.CombinedOutput(); err != nil {
			errs = append(errs, fmt.Errorf("%s-restore without the KUBE- chains: %v: %s", bin, err, lastLines(string(b), 5)))
		}
	}
	return errors.Join(errs...)
}

func lastLines(s string, n int) string {
	lines := strings.Split(strings.TrimRight(s, "\n"), "\n")
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return strings.Join(lines, "\n")
}

// unmountUnder unmounts whatever is mounted below dir (the kubelet's
// volumes, containerd's snapshots), deepest first.
func unmountUnder(dir string) error {
	abs, err := filepath.Abs(dir)
	if err != nil {
		return err
	}
	f, err := os.Open("/proc/self/mountinfo")
	if err != nil {
		return err
	}
	defer f.Close()
	var points []string
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		fields := strings.Fields(sc.Text())
		if len(fields) > 4 && (fields[4] == abs || strings.HasPrefix(fields[4], abs+"/")) {
			points = append(points, fields[4])
		}
	}
	sort.Slice(points, func(i, j int) bool { return len(points[i]) > len(points[j]) })
	var errs []error
	for _, p := range points {
		if err := unix.Unmount(p, unix.MNT_DETACH); err != nil && !errors.Is(err, unix.EINVAL) && !errors.Is(err, unix.ENOENT) {
			errs = append(errs, fmt.Errorf("unmounting %s: %w", p, err))
		}
	}
	return errors.Join(errs...)
}

// criRuntime connects to containerd's CRI.
func (h *hostCluster) criRuntime() (internalapi.RuntimeService, error) {
	logger := klog.Background()
	return cri.NewRemoteRuntimeService("unix://"+h.containerdSocket(), 10*time.Second, noop.NewTracerProvider(), &logger)
}

// containerdReady checks that containerd's CRI plugin loaded and reports
// its runtime ready.
func (h *hostCluster) containerdReady(ctx context.Context) error {
	if _, err := os.Stat(h.containerdSocket()); err != nil {
		return err
	}
	rt, err := h.criRuntime()
	if err != nil {
		return err
	}
	st, err := rt.Status(ctx, false)
	if err != nil {
		return fmt.Errorf("containerd's CRI: %w", err)
	}
	for _, c := range st.GetStatus().GetConditions() {
		if c.Type == "RuntimeReady" && !c.Status {
			return fmt.Errorf("containerd's runtime is not ready: %s %s", c.Reason, c.Message)
		}
	}
	return nil
}

// importImages imports every tarball of the image directory into
// containerd's k8s.io namespace (the CRI's), skipping those already there.
func (h *hostCluster) importImages(ctx context.Context) error {
	tars, err := filepath.Glob(filepath.Join(h.cfg.ImageDir, "*.tar"))
	if err != nil {
		return err
	}
	if len(tars) == 0 {
		return fmt.Errorf("no image tarball in %s: run make images", h.cfg.ImageDir)
	}
	have, err := exec.CommandContext(ctx, "ctr", "--address", h.containerdSocket(), "--namespace", "k8s.io", "images", "ls", "--quiet").Output()
	if err != nil {
		return fmt.Errorf("listing containerd's images: %w", err)
	}
	present := map[string]bool{}
	for _, l := range strings.Split(string(have), "\n") {
		present[strings.TrimSpace(l)] = true
	}
	for _, t := range tars {
		ref, err := imageRefOf(t)
		if err != nil {
			return err
		}
		digest, err := imageDigestOf(t)
		if err != nil {
			return err
		}
		if present[ref] && h.imageDigest(ctx, ref) == digest {
			continue
		}
		if out, err := exec.CommandContext(ctx, "ctr", "--address", h.containerdSocket(), "--namespace", "k8s.io", "images", "import", t).CombinedOutput(); err != nil {
			return fmt.Errorf("importing %s into containerd: %v: %s", t, err, lastLines(string(out), 5))
		}
	}
	return nil
}

// imageDigest is the manifest digest containerd holds for ref, or "".
func (h *hostCluster) imageDigest(ctx context.Context, ref string) string {
	out, err := exec.CommandContext(ctx, "ctr", "--address", h.containerdSocket(), "--namespace", "k8s.io", "images", "ls", "name=="+ref).Output()
	if err != nil {
		return ""
	}
	for _, l := range strings.Split(string(out), "\n") {
		f := strings.Fields(l)
		if len(f) >= 3 && f[0] == ref {
			return f[2]
		}
	}
	return ""
}

// imageDigestOf is the manifest digest of an OCI layout tarball.
func imageDigestOf(file string) (string, error) {
	f, err := os.Open(file)
	if err != nil {
		return "", err
	}
	defer f.Close()
	tr := tar.NewReader(f)
	for {
		h, err := tr.Next()
		if err != nil {
			return "", fmt.Errorf("%s: no index.json", file)
		}
		if h.Name == "index.json" {
			var idx struct {
				Manifests []struct {
					Digest string `json:"digest"`
				} `json:"manifests"`
			}
			if err := json.NewDecoder(tr).Decode(&idx); err != nil || len(idx.Manifests) == 0 {
				return "", fmt.Errorf("%s: bad index.json", file)
			}
			return idx.Manifests[0].Digest, nil
		}
	}
}

// removePods stops and removes every pod sandbox through the CRI, so that
// the CNI releases their addresses and rules, and their mounts go.
func (h *hostCluster) removePods(ctx context.Context, out io.Writer) error {
	rt, err := h.criRuntime()
	if err != nil {
		return err
	}
	ctx, cancel := context.WithTimeout(ctx, 2*time.Minute)
	defer cancel()
	pods, err := rt.ListPodSandbox(ctx, nil)
	if err != nil {
		return err
	}
	var errs []error
	for _, p := range pods {
		if err := rt.StopPodSandbox(ctx, p.Id); err != nil {
			errs = append(errs, fmt.Errorf("stopping pod %s/%s: %w", p.GetMetadata().GetNamespace(), p.GetMetadata().GetName(), err))
			continue
		}
		if err := rt.RemovePodSandbox(ctx, p.Id); err != nil {
			errs = append(errs, fmt.Errorf("removing pod %s/%s: %w", p.GetMetadata().GetNamespace(), p.GetMetadata().GetName(), err))
		}
	}
	fmt.Fprintf(out, "  removed %d pod(s)\n", len(pods)-len(errs))
	return errors.Join(errs...)
}

func (h *hostCluster) adminClients() (kubernetes.Interface, client.Client, error) {
	cfg, err := clientcmd.BuildConfigFromFlags("", h.adminConfig)
	if err != nil {
		return nil, nil, err
	}
	kc, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		return nil, nil, err
	}
	s := runtime.NewScheme()
	for _, add := range []func(*runtime.Scheme) error{corev1.AddToScheme, appsv1.AddToScheme, rbacv1.AddToScheme, storagev1.AddToScheme} {
		if err := add(s); err != nil {
			return nil, nil, err
		}
	}
	c, err := client.New(cfg, client.Options{Scheme: s})
	return kc, c, err
}

// setupCluster applies what the host cluster runs in itself: the API
// server's rights on the kubelet, the volume provisioner's rights and its
// StorageClass, and cluster DNS.
func (h *hostCluster) setupCluster(ctx context.Context) error {
	_, c, err := h.adminClients()
	if err != nil {
		return err
	}
	coredns, err := h.imageRef("coredns")
	if err != nil {
		return err
	}
	objs := append(hostRBAC(), hostStorageClass())
	objs = append(objs, corednsObjects(coredns)...)
	for _, o := range objs {
		if err := c.Patch(ctx, o, client.Apply, client.FieldOwner("karmada-local"), client.ForceOwnership); err != nil {
			return fmt.Errorf("applying %T %s: %w", o, o.GetName(), err)
		}
	}
	return nil
}

// waitReady waits until the node is Ready and cluster DNS answers.
func (h *hostCluster) waitReady(ctx context.Context) error {
	kc, _, err := h.adminClients()
	if err != nil {
		return err
	}
	var why string
	err = wait.PollUntilContextTimeout(ctx, time.Second, 3*time.Minute, true, func(ctx context.Context) (bool, error) {
		n, err := kc.CoreV1().Nodes().Get(ctx, NodeName, metav1.GetOptions{})
		if err != nil {
			why = fmt.Sprintf("node %s: %v", NodeName, err)
			return false, nil
		}
		if i := slices.IndexFunc(n.Status.Conditions, func(c corev1.NodeCondition) bool { return c.Type == corev1.NodeReady }); i < 0 || n.Status.Conditions[i].Status != corev1.ConditionTrue {
			why = fmt.Sprintf("node %s is not Ready", NodeName)
			if i >= 0 {
				why += ": " + n.Status.Conditions[i].Message
			}
			return false, nil
		}
		d, err := kc.AppsV1().Deployments(metav1.NamespaceSystem).Get(ctx, "coredns", metav1.GetOptions{})
		if err != nil || d.Status.AvailableReplicas < 1 {
			why = "cluster DNS (kube-system/coredns) is not available"
			return false, nil
		}
		return true, nil
	})
	if err != nil {
		return fmt.Errorf("%s: %w; see %s and %s", why, err, h.logPath("host/kubelet"), h.logPath("host/containerd"))
	}
	return nil
}

func hostRBAC() []client.Object {
	rbacGV := rbacv1.SchemeGroupVersion.WithKind
	crb := func(name, role string, subject rbacv1.Subject) *rbacv1.ClusterRoleBinding {
		b := &rbacv1.ClusterRoleBinding{ObjectMeta: metav1.ObjectMeta{Name: name},
			RoleRef:  rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: role},
			Subjects: []rbacv1.Subject{subject}}
		b.SetGroupVersionKind(rbacGV("ClusterRoleBinding"))
		return b
	}
	prov := &rbacv1.ClusterRole{ObjectMeta: metav1.ObjectMeta{Name: "karmada:local-path-provisioner"}, Rules: []rbacv1.PolicyRule{
		{APIGroups: []string{""}, Resources: []string{"persistentvolumes"}, Verbs: []string{"get", "list", "watch", "create", "delete"}},
		{APIGroups: []string{""}, Resources: []string{"persistentvolumeclaims"}, Verbs: []string{"get", "list", "watch"}},
		{APIGroups: []string{"storage.k8s.io"}, Resources: []string{"storageclasses"}, Verbs: []string{"get", "list", "watch"}},
		{APIGroups: []string{""}, Resources: []string{"events"}, Verbs: []string{"create", "patch"}},
	}}
	prov.SetGroupVersionKind(rbacGV("ClusterRole"))
	dns := &rbacv1.ClusterRole{ObjectMeta: metav1.ObjectMeta{Name: "system:coredns"}, Rules: []rbacv1.PolicyRule{
		{APIGroups: []string{""}, Resources: []string{"endpoints", "services", "pods", "namespaces"}, Verbs: []string{"list", "watch"}},
		{APIGroups: []string{"discovery.k8s.io"}, Resources: []string{"endpointslices"}, Verbs: []string{"list", "watch"}},
	}}
	dns.SetGroupVersionKind(rbacGV("ClusterRole"))
	return []client.Object{
		crb("kube-apiserver-kubelet-client", "system:kubelet-api-admin", rbacv1.Subject{Kind: rbacv1.UserKind, APIGroup: rbacv1.GroupName, Name: "kube-apiserver-kubelet-client"}),
		prov,
		crb("karmada:local-path-provisioner", prov.Name, rbacv1.Subject{Kind: rbacv1.UserKind, APIGroup: rbacv1.GroupName, Name: "system:karmada:local-path-provisioner"}),
		dns,
		crb("system:coredns", dns.Name, rbacv1.Subject{Kind: rbacv1.ServiceAccountKind, Namespace: metav1.NamespaceSystem, Name: "coredns"}),
	}
}

// LocalPathProvisioner names the provisioner of StorageClass.
const LocalPathProvisioner = "karmada.io/local-path"

func hostStorageClass() client.Object {
	mode := storagev1.VolumeBindingWaitForFirstConsumer
	sc := &storagev1.StorageClass{
		ObjectMeta:  metav1.ObjectMeta{Name: StorageClass, Annotations: map[string]string{"storageclass.kubernetes.io/is-default-class": "true"}},
		Provisioner: LocalPathProvisioner, VolumeBindingMode: &mode,
		ReclaimPolicy: ptr.To(corev1.PersistentVolumeReclaimDelete),
	}
	sc.SetGroupVersionKind(storagev1.SchemeGroupVersion.WithKind("StorageClass"))
	return sc
}

// corednsObjects are cluster DNS: CoreDNS with the kubernetes plugin,
// serving cluster.local at the Service kube-dns (hostDNSService), as
// kubeadm installs it, but non-root and listening on 1053.
func corednsObjects(image string) []client.Object {
	ns := metav1.NamespaceSystem
	labels := map[string]string{"k8s-app": "kube-dns"}
	sa := &corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "coredns"}}
	sa.SetGroupVersionKind(corev1.SchemeGroupVersion.WithKind("ServiceAccount"))
	cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "coredns"}, Data: map[string]string{"Corefile": `.:1053 {
    errors
    health :8080
    ready :8181
    kubernetes ` + hostClusterDomain + ` in-addr.arpa ip6.arpa {
        pods insecure
        fallthrough in-addr.arpa ip6.arpa
        ttl 30
    }
    prometheus :9153
    forward . /etc/resolv.conf
    cache 30
    loop
    reload
    loadbalance
}
`}}
	cm.SetGroupVersionKind(corev1.SchemeGroupVersion.WithKind("ConfigMap"))
	dep := &appsv1.Deployment{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "coredns", Labels: labels},
		Spec: appsv1.DeploymentSpec{
			Replicas: ptr.To[int32](1),
			Selector: &metav1.LabelSelector{MatchLabels: labels},
			Template: corev1.PodTemplateSpec{
				ObjectMeta: metav1.ObjectMeta{Labels: labels},
				Spec: corev1.PodSpec{
					ServiceAccountName: "coredns",
					PriorityClassName:  "system-cluster-critical",
					// CoreDNS asks the node's resolver for names outside
					// the cluster.
					DNSPolicy: corev1.DNSDefault,
					SecurityContext: &corev1.PodSecurityContext{RunAsNonRoot: ptr.To(true), RunAsUser: ptr.To[int64](65532),
						SeccompProfile: &corev1.SeccompProfile{Type: corev1.SeccompProfileTypeRuntimeDefault}},
					Containers: []corev1.Container{{
						Name: "coredns", Image: image, ImagePullPolicy: corev1.PullIfNotPresent,
						Args: []string{"-conf", "/etc/coredns/Corefile"},
						Ports: []corev1.ContainerPort{
							{Name: "dns", ContainerPort: 1053, Protocol: corev1.ProtocolUDP},
							{Name: "dns-tcp", ContainerPort: 1053, Protocol: corev1.ProtocolTCP},
							{Name: "metrics", ContainerPort: 9153, Protocol: corev1.ProtocolTCP},
						},
						LivenessProbe:  &corev1.Probe{ProbeHandler: corev1.ProbeHandler{HTTPGet: &corev1.HTTPGetAction{Path: "/health", Port: intstr.FromInt32(8080)}}, PeriodSeconds: 10, FailureThreshold: 5},
						ReadinessProbe: &corev1.Probe{ProbeHandler: corev1.ProbeHandler{HTTPGet: &corev1.HTTPGetAction{Path: "/ready", Port: intstr.FromInt32(8181)}}, PeriodSeconds: 2},
						Resources: corev1.ResourceRequirements{
							Requests: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("50m"), corev1.ResourceMemory: resource.MustParse("32Mi")},
							Limits:   corev1.ResourceList{corev1.ResourceMemory: resource.MustParse("170Mi")},
						},
						SecurityContext: &corev1.SecurityContext{AllowPrivilegeEscalation: ptr.To(false), ReadOnlyRootFilesystem: ptr.To(true),
							Capabilities: &corev1.Capabilities{Drop: []corev1.Capability{"ALL"}}},
						VolumeMounts: []corev1.VolumeMount{{Name: "config", MountPath: "/etc/coredns", ReadOnly: true}},
					}},
					Volumes: []corev1.Volume{{Name: "config", VolumeSource: corev1.VolumeSource{ConfigMap: &corev1.ConfigMapVolumeSource{LocalObjectReference: corev1.LocalObjectReference{Name: "coredns"}}}}},
				},
			},
		},
	}
	dep.SetGroupVersionKind(appsv1.SchemeGroupVersion.WithKind("Deployment"))
	svc := &corev1.Service{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "kube-dns", Labels: labels},
		Spec: corev1.ServiceSpec{
			ClusterIP: hostDNSService,
			Selector:  labels,
			Ports: []corev1.ServicePort{
				{Name: "dns", Port: 53, TargetPort: intstr.FromInt32(1053), Protocol: corev1.ProtocolUDP},
				{Name: "dns-tcp", Port: 53, TargetPort: intstr.FromInt32(1053), Protocol: corev1.ProtocolTCP},
			},
		},
	}
	svc.SetGroupVersionKind(corev1.SchemeGroupVersion.WithKind("Service"))
	return []client.Object{sa, cm, dep, svc}
}
