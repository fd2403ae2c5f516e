//go:build hoste2e

// Package hoste2e is the host lane: a real single-node Kubernetes cluster
// on this machine (karmada-local host up: kubelet, containerd, runc, CNI,
// kube-proxy, CoreDNS), the Karmada control plane installed into it with
// the real helm CLI from charts/karmada and the images of make images, and
// a local fleet's members joined to it (member1 in push mode, member2 in
// pull mode). One host cluster, one install and one fleet serve every test;
// each test sets up what it needs and leaves the rest as it found it, except
// the uninstall test, which runs last (zz_uninstall_test.go).
package hoste2e

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/karmada-go/karmada/internal/scheme"
	"github.com/karmada-go/karmada/internal/testenv"
)

const (
	namespace = "karmada-system"
	release   = "karmada"
	nodeIP    = "172.30.255.1"
	nodePort  = "32443"
	// The fleet's ports, apart from a developer's (31000) and the e2e
	// lane's (24000).
	portBase = "25000"
)

// lane is the one host cluster, install and fleet of the run.
var lane struct {
	bin, root, hostDir, fleetDir string
	imageDir                     string
	// hostKubeconfig holds the context karmada-host; fleetKubeconfig the
	// members'; karmadaKubeconfig the control plane's administrator.
	hostKubeconfig, fleetKubeconfig, karmadaKubeconfig string
	valuesFile                                         string
	installTime                                        time.Duration
}

func TestMain(m *testing.M) { os.Exit(run(m)) }

func run(m *testing.M) int {
	lane.root = testenv.RepoRoot()
	lane.bin = os.Getenv("KARMADA_BIN_DIR")
	if lane.bin == "" {
		lane.bin = filepath.Join(lane.root, "bin")
	}
	lane.imageDir = os.Getenv("KARMADA_IMAGE_DIR")
	if lane.imageDir == "" {
		lane.imageDir = filepath.Join(lane.root, "_output", "images")
	}
	for _, b := range []string{"karmada-local", "karmadactl", "helm", "kubectl"} {
		if _, err := os.Stat(filepath.Join(lane.bin, b)); err != nil {
			fmt.Fprintf(os.Stderr, "the host lane needs %s: run `make test-host`\n", filepath.Join(lane.bin, b))
			return 1
		}
	}
	if os.Geteuid() != 0 {
		fmt.Fprintln(os.Stderr, "the host lane needs root (a kubelet, containerd and iptables)")
		return 1
	}
	base := os.Getenv("KARMADA_E2E_HOST_DIR")
	if base == "" {
		base = filepath.Join(lane.root, "_output", "e2e-host")
	}
	lane.hostDir = filepath.Join(base, "host")
	lane.fleetDir = filepath.Join(base, "fleet")
	lane.hostKubeconfig = filepath.Join(base, "host.kubeconfig")
	lane.fleetKubeconfig = filepath.Join(base, "fleet.kubeconfig")
	lane.karmadaKubeconfig = filepath.Join(base, "karmada.kubeconfig")
	lane.valuesFile = filepath.Join(base, "values.yaml")
	// A run interrupted before may have left its host cluster behind.
	_, _ = command("", lane.bin+"/karmada-local", "--state-dir", lane.fleetDir, "down", "--purge")
	_, _ = command("", lane.bin+"/karmada-local", "host", "--host-dir", lane.hostDir, "down", "--purge")
	if err := os.RemoveAll(base); err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	if err := os.MkdirAll(base, 0o700); err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	defer func() {
		if out, err := command("", lane.bin+"/karmada-local", "--state-dir", lane.fleetDir, "down", "--purge"); err != nil {
			fmt.Fprintf(os.Stderr, "fleet down: %v\n%s\n", err, out)
		}
		if out, err := command("", lane.bin+"/karmada-local", "host", "--host-dir", lane.hostDir, "down", "--purge"); err != nil {
			fmt.Fprintf(os.Stderr, "host down: %v\n%s\n", err, out)
			return
		}
		_ = os.RemoveAll(base)
	}()

	start := time.Now()
	out, err := command("", lane.bin+"/karmada-local", "host", "--host-dir", lane.hostDir, "up", "--kubeconfig", lane.hostKubeconfig, "--images", lane.imageDir, "--node-ip", nodeIP)
	fmt.Printf("karmada-local host up took %s:\n%s\n", time.Since(start).Round(100*time.Millisecond), out)
	if err != nil {
		fmt.Fprintf(os.Stderr, "host up failed: %v\n", err)
		return 1
	}
	if err := install(); err != nil {
		fmt.Fprintln(os.Stderr, err)
		dumpPods()
		return 1
	}
	start = time.Now()
	out, err = command("", lane.bin+"/karmada-local", "--state-dir", lane.fleetDir, "up", "--members", "2", "--nodes-per-member", "2",
		"--pull-members", "member2", "--port-base", portBase, "--advertise-address", nodeIP,
		"--kubeconfig", lane.fleetKubeconfig, "--karmada-kubeconfig", lane.karmadaKubeconfig)
	fmt.Printf("karmada-local up (members joined to the host's control plane) took %s:\n%s\n", time.Since(start).Round(100*time.Millisecond), out)
	if err != nil {
		fmt.Fprintf(os.Stderr, "fleet up failed: %v\n", err)
		dumpPods()
		return 1
	}
	return m.Run()
}

// values are what the lane installs the chart with: what karmadactl init
// --karmada-apiserver-advertise-address <node> --port 32443 gives it, so
// that init on the same cluster changes nothing.
const values = `apiServer:
  serviceType: NodePort
  nodePort: 32443
  externalURL: https://` + nodeIP + `:` + nodePort + `
certs:
  auto:
    expiry: 8760h
    hosts: [` + nodeIP + `]
etcd:
  internal:
    replicaCount: 1
    storageType: pvc
    pvc: {size: 5Gi}
`

// install creates the namespace (restricted Pod Security enforced) and
// installs the chart with helm, waiting for every pod and the setup Job.
func install() error {
	if err := os.WriteFile(lane.valuesFile, []byte(values), 0o600); err != nil {
		return err
	}
	kc, err := kubernetes.NewForConfig(hostConfig())
	if err != nil {
		return err
	}
	ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: namespace, Labels: map[string]string{"pod-security.kubernetes.io/enforce": "restricted"}}}
	if _, err := kc.CoreV1().Namespaces().Create(context.Background(), ns, metav1.CreateOptions{}); err != nil {
		return fmt.Errorf("creating namespace %s: %w", namespace, err)
	}
	start := time.Now()
	out, err := helm("install", release, filepath.Join(lane.root, "charts", "karmada"), "-f", lane.valuesFile, "--wait", "--wait-for-jobs", "--timeout", "10m")
	lane.installTime = time.Since(start)
	fmt.Printf("helm install took %s (every pod Ready, the setup Job complete):\n%s\n", lane.installTime.Round(100*time.Millisecond), out)
	if err != nil {
		return fmt.Errorf("helm install: %w", err)
	}
	s, err := kc.CoreV1().Secrets(namespace).Get(context.Background(), "karmada-kubeconfig", metav1.GetOptions{})
	if err != nil {
		return err
	}
	return os.WriteFile(lane.karmadaKubeconfig, s.Data["kubeconfig"], 0o600)
}

func dumpPods() {
	out, _ := kubectlHost("get", "pods", "-A", "-o", "wide")
	fmt.Fprintln(os.Stderr, out)
	out, _ = kubectlHost("get", "events", "-n", namespace, "--sort-by=.lastTimestamp")
	fmt.Fprintln(os.Stderr, lastLines(out, 30))
	// The last lines of every pod of the release that is not Running and
	// Ready (a failed setup Job's pod says why it failed).
	out, _ = kubectlHost("get", "pods", "-n", namespace, "-o",
		`jsonpath={range .items[*]}{.metadata.name} {.status.phase} {.status.containerStatuses[0].ready}{"\n"}{end}`)
	for _, line := range strings.Split(strings.TrimSpace(out), "\n") {
		f := strings.Fields(line)
		if len(f) < 2 || (f[1] == "Running" && len(f) == 3 && f[2] == "true") || f[1] == "Succeeded" {
			continue
		}
		logs, _ := kubectlHost("logs", "-n", namespace, f[0], "--all-containers", "--tail=40")
		fmt.Fprintf(os.Stderr, "--- logs of %s (%s):\n%s\n", f[0], f[1], logs)
	}
}

func lastLines(s string, n int) string {
	l := strings.Split(strings.TrimRight(s, "\n"), "\n")
	if len(l) > n {
		l = l[len(l)-n:]
	}
	return strings.Join(l, "\n")
}

// command runs a program with the lane's kubeconfig-free environment.
func command(stdin string, name string, args ...string) (string, error) {
	cmd := exec.Command(name, args...)
	var buf bytes.Buffer
	cmd.Stdout, cmd.Stderr = &buf, &buf
	if stdin != "" {
		cmd.Stdin = strings.NewReader(stdin)
	}
	cmd.Dir = lane.root
	err := cmd.Run()
	if err != nil {
		err = fmt.Errorf("%s %s: %w\n%s", filepath.Base(name), strings.Join(args, " "), err, lastLines(buf.String(), 20))
	}
	return buf.String(), err
}

func helm(args ...string) (string, error) {
	return command("", filepath.Join(lane.bin, "helm"), append(args, "--kubeconfig", lane.hostKubeconfig, "--kube-context", "karmada-host", "--namespace", namespace)...)
}

func kubectlHost(args ...string) (string, error) {
	return command("", filepath.Join(lane.bin, "kubectl"), append([]string{"--kubeconfig", lane.hostKubeconfig, "--context", "karmada-host"}, args...)...)
}

func configOf(path, context string) *rest.Config {
	cfg, err := clientcmd.NewNonInteractiveDeferredLoadingClientConfig(
		&clientcmd.ClientConfigLoadingRules{ExplicitPath: path}, &clientcmd.ConfigOverrides{CurrentContext: context}).ClientConfig()
	if err != nil {
		panic(fmt.Sprintf("loading %s: %v", path, err))
	}
	cfg.Timeout = 10 * time.Second
	return cfg
}

func hostConfig() *rest.Config    { return configOf(lane.hostKubeconfig, "karmada-host") }
func karmadaConfig() *rest.Config { return configOf(lane.karmadaKubeconfig, "") }

func hostKube(t *testing.T) kubernetes.Interface {
	t.Helper()
	kc, err := kubernetes.NewForConfig(hostConfig())
	if err != nil {
		t.Fatal(err)
	}
	return kc
}

func memberKube(t *testing.T, member string) kubernetes.Interface {
	t.Helper()
	kc, err := kubernetes.NewForConfig(configOf(lane.fleetKubeconfig, member))
	if err != nil {
		t.Fatal(err)
	}
	return kc
}

func karmadaClient(t *testing.T) client.Client {
	t.Helper()
	c, err := client.New(karmadaConfig(), client.Options{Scheme: scheme.Scheme})
	if err != nil {
		t.Fatal(err)
	}
	return c
}
