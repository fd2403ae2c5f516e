//go:build e2e

// Package e2e runs end-to-end tests against one local fleet that is started
// by the real karmada-local binary for the whole run and stopped at its end.
package e2e

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/prometheus/procfs"

	"github.com/karmada-go/karmada/internal/scheme"
	"github.com/karmada-go/karmada/internal/testenv"
)

// fleet is the one fleet of the run.
// fleet is the lane's fleet (testenv.StartLaneFleet).
var fleet *testenv.LaneFleet

func TestMain(m *testing.M) {
	os.Exit(run(m))
}

func run(m *testing.M) int {
	// Ports apart from a developer's default fleet (31000), and below the
	// kernel's ephemeral range.
	portBase := 24000
	if v := os.Getenv("E2E_PORT_BASE"); v != "" {
		var err error
		if portBase, err = strconv.Atoi(v); err != nil {
			fmt.Fprintf(os.Stderr, "E2E_PORT_BASE=%q: %v\n", v, err)
			return 1
		}
	}
	// Members stopped and started by the tests are taken for down and up
	// again after 10 s of failing or passing probes rather than 30 s: the
	// outage tests wait a third as long, for the same sequence.
	// member2's nodes are twice the default size: the estimator tests
	// place replicas that only its nodes fit. The descheduler looks every
	// 3 s for replicas unschedulable for 6 s (2 m and 5 m by default).
	f, err := testenv.StartLaneFleet("e2e", portBase, "--members", "3", "--nodes-per-member", "3",
		"--cluster-failure-threshold", "10s", "--cluster-success-threshold", "10s", "--node-capacity", "member2:cpu=16,memory=64Gi",
		"--descheduling-interval", "3s", "--unschedulable-threshold", "6s")
	if f != nil {
		// Whatever happens, leave no process behind.
		defer f.Stop()
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	fleet = f
	return m.Run()
}

// karmadaLocal runs the real binary against the run's state directory.
func karmadaLocal(args ...string) (string, error) { return fleet.Run(args...) }

func restConfig(t testing.TB, context string) *rest.Config {
	t.Helper()
	cfg, err := clientcmd.NewNonInteractiveDeferredLoadingClientConfig(
		&clientcmd.ClientConfigLoadingRules{ExplicitPath: fleet.Kubeconfig},
		&clientcmd.ConfigOverrides{CurrentContext: context}).ClientConfig()
	if err != nil {
		t.Fatalf("loading context %s: %v", context, err)
	}
	if cfg.Insecure || len(cfg.CAData) == 0 {
		t.Fatalf("context %s does not verify the server with real CA data", context)
	}
	cfg.Timeout = 5 * time.Second
	return cfg
}

func kube(t testing.TB, context string) kubernetes.Interface {
	t.Helper()
	kc, err := kubernetes.NewForConfig(restConfig(t, context))
	if err != nil {
		t.Fatal(err)
	}
	return kc
}

// quiet marks a test that disturbs nothing beyond its own objects (no
// member stopped, cordoned or tainted, no component restarted, no
// cluster-wide customization, or a fleet of its own) and mostly waits
// (on metrics-server's scrapes, a cron minute, a second fleet's start,
// the route walk's thousands of reviews, a CRD of its own):
// it runs in parallel with the other quiet tests, after every other test
// of the lane (go test runs a package's parallel tests once its
// sequential ones are done; make test-e2e runs four at a time). It still
// runs alone with -run.
func quiet(t *testing.T) {
	t.Helper()
	t.Parallel()
}

// Each test below is independent: it sets up what it needs on the shared
// fleet, leaves the fleet as it found it, and runs alone with -run.

func TestUpPrintsProgress(t *testing.T) {
	for _, want := range []string{"karmada/kube-apiserver", "member3/nodes", "kubectl --context member1"} {
		if !strings.Contains(fleet.UpOutput, want) {
			t.Errorf("up output lacks %q", want)
		}
	}
}

func TestControlPlaneServesKarmadaAPI(t *testing.T) {
	ctx := context.Background()
	c, err := client.New(restConfig(t, "karmada-apiserver"), client.Options{Scheme: scheme.Scheme})
	if err != nil {
		t.Fatal(err)
	}
	for _, ns := range []string{"karmada-system", "karmada-cluster"} {
		if err := c.Get(ctx, client.ObjectKey{Name: ns}, &corev1.Namespace{}); err != nil {
			t.Errorf("namespace %s: %v", ns, err)
		}
	}
	testenv.RoundTrip(ctx, t, c, testenv.CoreObjects("default", "-e2e"))
}

func TestMembersHaveReadyKwokNodes(t *testing.T) {
	ctx := context.Background()
	regions := map[string]string{}
	for i := 1; i <= 3; i++ {
		name := fmt.Sprintf("member%d", i)
		nodes, err := kube(t, name).CoreV1().Nodes().List(ctx, metav1.ListOptions{})
		if err != nil {
			t.Fatal(err)
		}
		if len(nodes.Items) != 3 {
			t.Fatalf("%s has %d nodes, want 3", name, len(nodes.Items))
		}
		for _, n := range nodes.Items {
			if n.Status.Allocatable.Cpu().IsZero() || n.Status.Allocatable.Memory().IsZero() || n.Status.Allocatable.Pods().IsZero() {
				t.Errorf("node %s has no allocatable cpu/memory/pods: %v", n.Name, n.Status.Allocatable)
			}
			region := n.Labels["topology.kubernetes.io/region"]
			if region == "" || n.Labels["topology.kubernetes.io/zone"] == "" {
				t.Errorf("node %s lacks topology labels", n.Name)
			}
			if other, seen := regions[region]; seen && other != name {
				t.Errorf("%s and %s share region %s", other, name, region)
			}
			regions[region] = name
		}
		v, err := kube(t, name).Discovery().ServerVersion()
		if err != nil {
			t.Fatal(err)
		}
		if !strings.HasPrefix(v.GitVersion, "v1.33.") {
			t.Errorf("%s reports version %s, want the pinned v1.33.x", name, v.GitVersion)
		}
	}
}

// directDeployment creates, in a member, a Deployment that Karmada does not
// manage, waits until all its replicas are available, and deletes it when
// the test ends.
func directDeployment(ctx context.Context, t *testing.T, member, name string, replicas int32) {
	t.Helper()
	deploy := &appsv1.Deployment{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "default"},
		Spec: appsv1.DeploymentSpec{
			Replicas: ptr.To(replicas),
			Selector: &metav1.LabelSelector{MatchLabels: map[string]string{"app": name}},
			Template: corev1.PodTemplateSpec{
				ObjectMeta: metav1.ObjectMeta{Labels: map[string]string{"app": name}},
				Spec:       corev1.PodSpec{Containers: []corev1.Container{{Name: "nginx", Image: "nginx:1.27"}}},
			},
		},
	}
	kc := kube(t, member)
	if _, err := kc.AppsV1().Deployments("default").Create(ctx, deploy, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := kube(t, member).AppsV1().Deployments("default").Delete(context.Background(), name, metav1.DeleteOptions{}); err != nil && !apierrors.IsNotFound(err) {
			t.Errorf("deleting Deployment %s in %s: %v", name, member, err)
		}
	})
	waitAvailable(ctx, t, kc, name, replicas)
}

// A Deployment created directly in member2 reaches all replicas available,
// and its pods count in member2's resource summary.
func TestClustersJoinedWithStatus(t *testing.T) {
	ctx := context.Background()
	directDeployment(ctx, t, "member2", "direct", 4)
	testJoinedClusters(ctx, t)
}

func TestJoinRules(t *testing.T) { testJoinRules(t) }

func TestSchedulerPlacesBindingByStaticWeight(t *testing.T) {
	testSchedulerPlacesBinding(context.Background(), t)
}

func TestNamespacePropagation(t *testing.T) { testNamespacePropagation(context.Background(), t) }

func TestSeedsExample(t *testing.T) { testSeedsExample(context.Background(), t) }

func TestConflictAbortLeavesMemberObjectsAlone(t *testing.T) {
	testConflictAbort(context.Background(), t)
}

func TestCRDAndInstancePropagate(t *testing.T) { testCRDAndInstance(context.Background(), t) }

func TestPolicyDeletionReleasesClaim(t *testing.T) {
	testPolicyDeletionReleasesClaim(context.Background(), t)
}

// A template dropped from its policy's resourceSelectors is released, and
// so is its binding.
func TestPolicyUnselectReleasesClaim(t *testing.T) {
	testPolicyUnselectReleasesClaim(context.Background(), t)
}

// A ClusterRole named system:... propagates.
func TestColonNamedClusterRole(t *testing.T) { testColonNamedClusterRole(context.Background(), t) }

// A suspended Work says so in a WorkDispatching event.
func TestSuspendedWorkEvent(t *testing.T) { testSuspendedWorkEvent(context.Background(), t) }

// Killing karmada-controller-manager while 50 Deployments propagate loses and
// duplicates nothing.
func TestRestartMidPropagation(t *testing.T) { testRestartMidPropagation(context.Background(), t) }

// Divided static weights 1:2 put 3 and 6 of 9 replicas.
func TestStaticWeights(t *testing.T) { testStaticWeights(context.Background(), t) }

func TestDynamicWeightsFollowFreeCapacity(t *testing.T) { testDynamicWeights(context.Background(), t) }

// clusterAffinities fall through past a cordoned primary; explain-placement
// says why.
func TestAffinityGroups(t *testing.T) { testAffinityGroups(context.Background(), t) }

// An imageOverrider gives member2 another registry.
func TestImageOverride(t *testing.T) { testImageOverride(context.Background(), t) }

// A spread constraint of two regions uses two regions.
func TestSpreadRegions(t *testing.T) { testSpreadRegions(context.Background(), t) }

// karmadactl plan shows a policy's placement without applying it.
func TestPlan(t *testing.T) { testPlan(context.Background(), t) }

// karmada-bench propagate observes 20 templates fully propagated and cleans
// up.
func TestBenchPropagate(t *testing.T) { testBenchPropagate(context.Background(), t) }

// karmada-bench restart: changes made while the controller manager was down
// arrive with no needless writes.
func TestBenchRestart(t *testing.T) { testBenchRestart(context.Background(), t) }

// karmada-bench works: Works written for bindings there when the controller
// manager starts.
func TestBenchWorks(t *testing.T) { testBenchWorks(context.Background(), t) }

// karmada-bench floor: the same Deployments created directly in every member.
func TestBenchFloor(t *testing.T) { testBenchFloor(context.Background(), t) }

// karmada-bench propagate --floor: the floor first on the same fleet, and
// the propagation's wall time divided by the floor's.
func TestBenchPropagateAgainstFloor(t *testing.T) {
	testBenchPropagateAgainstFloor(context.Background(), t)
}

// cordon, uncordon and taint change exactly the right taints.
func TestTaintCommands(t *testing.T) { testTaintCommands(context.Background(), t) }

// member stop makes member2 unreachable and NotReady; start brings it back
// intact and Ready, with the namespace changes made meanwhile.
func TestMemberOutage(t *testing.T) {
	ctx := context.Background()
	directDeployment(ctx, t, "member2", "outage-direct", 4)
	prepareNamespacesForOutage(ctx, t)
	out, err := karmadaLocal("member", "stop", "member2")
	if err != nil {
		t.Fatalf("member stop: %v\n%s", err, out)
	}
	// Whatever fails below, the next test gets member2 back.
	t.Cleanup(func() {
		if out, err := karmadaLocal("member", "start", "member2"); err != nil {
			t.Errorf("member start in clean-up: %v\n%s", err, out)
		}
	})
	kc := kube(t, "member2")
	if _, err := kc.Discovery().ServerVersion(); err == nil {
		t.Fatal("member2's API still answers after member stop")
	}
	if _, err := kube(t, "member1").Discovery().ServerVersion(); err != nil {
		t.Fatalf("member1 stopped answering when member2 was stopped: %v", err)
	}
	status, err := karmadaLocal("status")
	if err != nil {
		t.Fatalf("status: %v\n%s", err, status)
	}
	if !lineHas(status, "member2/kube-apiserver", "stopped") {
		t.Errorf("status does not show member2's apiserver stopped:\n%s", status)
	}
	testMemberNotReady(ctx, t)
	changeNamespacesWhileDown(ctx, t)

	out, err = karmadaLocal("member", "start", "member2")
	if err != nil {
		t.Fatalf("member start: %v\n%s", err, out)
	}
	got, err := kc.AppsV1().Deployments("default").Get(ctx, "outage-direct", metav1.GetOptions{})
	if err != nil {
		t.Fatalf("the Deployment is gone after member start: %v", err)
	}
	if *got.Spec.Replicas != 4 {
		t.Errorf("replicas = %d after restart, want 4", *got.Spec.Replicas)
	}
	waitAvailable(ctx, t, kc, "outage-direct", 4)
	testMemberReadyAgain(ctx, t)
	namespacesConvergedAfterOutage(ctx, t)
}

// unjoin removes the cluster and its credentials, refusing while the member
// is unreachable; joining again restores it.
func TestUnjoin(t *testing.T) { testUnjoin(context.Background(), t) }

func lineHas(text, prefix, word string) bool {
	for _, l := range strings.Split(text, "\n") {
		if strings.HasPrefix(l, prefix) && strings.Contains(l, word) {
			return true
		}
	}
	return false
}

func waitAvailable(ctx context.Context, t *testing.T, kc kubernetes.Interface, name string, want int32) {
	t.Helper()
	var last int32
	err := wait.PollUntilContextTimeout(ctx, 200*time.Millisecond, 90*time.Second, true, func(ctx context.Context) (bool, error) {
		d, err := kc.AppsV1().Deployments("default").Get(ctx, name, metav1.GetOptions{})
		if err != nil {
			return false, nil
		}
		last = d.Status.AvailableReplicas
		return last == want, nil
	})
	if err != nil {
		t.Fatalf("deployment %s has %d available replicas, want %d: %v", name, last, want, err)
	}
}

// pids returns the processes whose command line mentions the run's state
// directory: every component of the fleet does, and nothing else.
func pids(t *testing.T) []int {
	t.Helper()
	entries, err := os.ReadDir("/proc")
	if err != nil {
		t.Fatal(err)
	}
	var out []int
	for _, e := range entries {
		pid, err := strconv.Atoi(e.Name())
		if err != nil || pid == os.Getpid() {
			continue
		}
		cmdline, err := os.ReadFile(filepath.Join("/proc", e.Name(), "cmdline"))
		if err != nil || !processAlive(pid) {
			continue
		}
		args := strings.Split(string(cmdline), "\x00")
		// karmada-local commands (a test's usage set) are not the fleet's;
		// its member-custom-metrics processes are.
		if len(args) > 0 && filepath.Base(args[0]) == "karmada-local" && (len(args) < 2 || args[1] != "member-custom-metrics") {
			continue
		}
		if bytes.Contains(cmdline, []byte(fleet.StateDir)) {
			out = append(out, pid)
		}
	}
	return out
}

func processAlive(pid int) bool {
	p, err := procfs.NewProc(pid)
	if err != nil {
		return false
	}
	st, err := p.Stat()
	return err == nil && st.State != "Z"
}
