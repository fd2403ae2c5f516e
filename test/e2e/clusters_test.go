//go:build e2e

package e2e

import (
	"context"
	"fmt"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/tools/clientcmd"
	"sigs.k8s.io/controller-runtime/pkg/client"

	clusterv1alpha1 "github.com/karmada-go/karmada/api/cluster/v1alpha1"
	policyv1alpha1 "github.com/karmada-go/karmada/api/policy/v1alpha1"
	workv1alpha2 "github.com/karmada-go/karmada/api/work/v1alpha2"
	"github.com/karmada-go/karmada/internal/scheme"
	"github.com/karmada-go/karmada/internal/testenv"
)

func karmadaClient(t *testing.T) client.Client {
	t.Helper()
	c, err := client.New(restConfig(t, "karmada-apiserver"), client.Options{Scheme: scheme.Scheme})
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// karmadactl runs the real binary against the fleet's control plane.
func karmadactl(args ...string) (string, error) {
	cmd := exec.Command(filepath.Join(filepath.Dir(fleet.Bin), "karmadactl"),
		append(args, "--kubeconfig", fleet.Kubeconfig, "--karmada-context", "karmada-apiserver")...)
	out, err := cmd.CombinedOutput()
	return string(out), err
}

func getCluster(ctx context.Context, t *testing.T, c client.Client, name string) *clusterv1alpha1.Cluster {
	t.Helper()
	cl := &clusterv1alpha1.Cluster{}
	if err := c.Get(ctx, client.ObjectKey{Name: name}, cl); err != nil {
		t.Fatalf("cluster %s: %v", name, err)
	}
	return cl
}

func readyStatus(cl *clusterv1alpha1.Cluster) metav1.ConditionStatus {
	if c := meta.FindStatusCondition(cl.Status.Conditions, clusterv1alpha1.ClusterConditionReady); c != nil {
		return c.Status
	}
	return ""
}

// waitClusterReady polls until the cluster's Ready condition is want.
func waitClusterReady(ctx context.Context, t *testing.T, c client.Client, name string, want metav1.ConditionStatus, timeout time.Duration) *clusterv1alpha1.Cluster {
	t.Helper()
	var cl *clusterv1alpha1.Cluster
	err := wait.PollUntilContextTimeout(ctx, 500*time.Millisecond, timeout, true, func(ctx context.Context) (bool, error) {
		cl = &clusterv1alpha1.Cluster{}
		if err := c.Get(ctx, client.ObjectKey{Name: name}, cl); err != nil {
			return false, nil
		}
		return readyStatus(cl) == want, nil
	})
	if err != nil {
		t.Fatalf("cluster %s Ready is %q, want %q after %s", name, readyStatus(cl), want, timeout)
	}
	return cl
}

func taintKeys(cl *clusterv1alpha1.Cluster) []string {
	var out []string
	for _, t := range cl.Spec.Taints {
		s := t.Key
		if t.Value != "" {
			s += "=" + t.Value
		}
		out = append(out, s+":"+string(t.Effect))
	}
	return out
}

func testJoinedClusters(ctx context.Context, t *testing.T) {
	c := karmadaClient(t)
	for _, name := range []string{"member1", "member2", "member3"} {
		cl := waitClusterReady(ctx, t, c, name, metav1.ConditionTrue, 30*time.Second)
		// Ready is written first; the summaries follow once the member's
		// node and pod informers have synced (and a member restarted by an
		// earlier test may count a node NotReady for a moment).
		_ = wait.PollUntilContextTimeout(ctx, 250*time.Millisecond, 30*time.Second, true, func(ctx context.Context) (bool, error) {
			if err := c.Get(ctx, client.ObjectKey{Name: name}, cl); err != nil {
				return false, nil
			}
			ns := cl.Status.NodeSummary
			return ns != nil && ns.ReadyNum == ns.TotalNum && cl.Status.ResourceSummary != nil, nil
		})
		ks, err := kube(t, name).CoreV1().Namespaces().Get(ctx, "kube-system", metav1.GetOptions{})
		if err != nil {
			t.Fatal(err)
		}
		if cl.Spec.ID != string(ks.UID) {
			t.Errorf("%s: spec.id %q, want the member's kube-system UID %q", name, cl.Spec.ID, ks.UID)
		}
		// member3 is the fleet's pull-mode member: its agent reports,
		// and the control plane holds no credentials of it.
		if name == "member3" {
			if cl.Spec.SyncMode != clusterv1alpha1.Pull || cl.Spec.SecretRef != nil {
				t.Errorf("%s: syncMode %q secretRef %v, want Pull without credentials", name, cl.Spec.SyncMode, cl.Spec.SecretRef)
			}
		} else if cl.Spec.SyncMode != clusterv1alpha1.Push || cl.Spec.SecretRef == nil {
			t.Errorf("%s: syncMode %q secretRef %v, want Push with credentials", name, cl.Spec.SyncMode, cl.Spec.SecretRef)
		}
		if !strings.HasPrefix(cl.Status.KubernetesVersion, "v1.33.") {
			t.Errorf("%s: kubernetesVersion %q", name, cl.Status.KubernetesVersion)
		}
		if ns := cl.Status.NodeSummary; ns == nil || ns.TotalNum != 3 || ns.ReadyNum != 3 {
			t.Errorf("%s: nodeSummary %+v, want 3 total, 3 ready", name, ns)
		}
		rs := cl.Status.ResourceSummary
		if rs == nil {
			t.Fatalf("%s: no resourceSummary", name)
		}
		want := map[corev1.ResourceName]string{corev1.ResourceCPU: "24", corev1.ResourceMemory: "96Gi", corev1.ResourcePods: "330"}
		if name == "member2" {
			// The fleet gives member2 nodes of 16 cpu and 64Gi
			// (--node-capacity).
			want[corev1.ResourceCPU], want[corev1.ResourceMemory] = "48", "192Gi"
		}
		for res, want := range want {
			if got := rs.Allocatable[res]; got.Cmp(resource.MustParse(want)) != 0 {
				t.Errorf("%s: allocatable %s = %s, want %s (3 nodes)", name, res, got.String(), want)
			}
		}
		found := false
		for _, e := range cl.Status.APIEnablements {
			for _, r := range e.Resources {
				if e.GroupVersion == "apps/v1" && r.Name == "deployments" && r.Kind == "Deployment" {
					found = true
				}
			}
		}
		if !found {
			t.Errorf("%s: apiEnablements lack apps/v1 deployments", name)
		}
	}
	// member2 runs the 4-replica Deployment the test created: its pods are allocated.
	err := wait.PollUntilContextTimeout(ctx, 500*time.Millisecond, 30*time.Second, true, func(ctx context.Context) (bool, error) {
		cl := &clusterv1alpha1.Cluster{}
		if err := c.Get(ctx, client.ObjectKey{Name: "member2"}, cl); err != nil || cl.Status.ResourceSummary == nil {
			return false, nil
		}
		pods := cl.Status.ResourceSummary.Allocated[corev1.ResourcePods]
		return pods.Value() >= 4, nil
	})
	if err != nil {
		t.Errorf("member2's resourceSummary.allocated never counted its nginx pods: %v", err)
	}
}

func testJoinRules(t *testing.T) {
	out, err := karmadactl("join", "member1-again", "--cluster-kubeconfig", fleet.Kubeconfig, "--cluster-context", "member1")
	if err == nil {
		t.Fatalf("joining member1 a second time under another name was accepted:\n%s", out)
	}
	if !strings.Contains(out, `already joined as "member1"`) {
		t.Errorf("refusal does not name the existing Cluster:\n%s", out)
	}
	// --dry-run checks the same and writes nothing: refused under another
	// name, accepted under its own with member1's Cluster untouched.
	out, err = karmadactl("join", "member1-again", "--cluster-kubeconfig", fleet.Kubeconfig, "--cluster-context", "member1", "--dry-run")
	if err == nil || !strings.Contains(out, `already joined as "member1"`) {
		t.Errorf("join --dry-run under another name: %v\n%s", err, out)
	}
	before := &clusterv1alpha1.Cluster{}
	if err := karmadaClient(t).Get(context.Background(), client.ObjectKey{Name: "member1"}, before); err != nil {
		t.Fatal(err)
	}
	out, err = karmadactl("join", "member1", "--cluster-kubeconfig", fleet.Kubeconfig, "--cluster-context", "member1", "--dry-run")
	if err != nil || !strings.Contains(out, "[dry-run] cluster(member1) can be joined") || !strings.Contains(out, "nothing was written") {
		t.Errorf("join --dry-run: %v\n%s", err, out)
	}
	after := &clusterv1alpha1.Cluster{}
	if err := karmadaClient(t).Get(context.Background(), client.ObjectKey{Name: "member1"}, after); err != nil || after.Generation != before.Generation ||
		after.Spec.SecretRef == nil || before.Spec.SecretRef == nil || *after.Spec.SecretRef != *before.Spec.SecretRef {
		t.Errorf("member1's Cluster changed by join --dry-run: generation %d → %d (err %v)", before.Generation, after.Generation, err)
	}
	out, err = karmadactl("join", "member1", "--cluster-kubeconfig", fleet.Kubeconfig, "--cluster-context", "member1")
	if err != nil {
		t.Fatalf("joining member1 again under its own name failed:\n%s", out)
	}
	out, err = karmadactl("join", "member1", "--cluster-context", "member1")
	if err == nil || !strings.Contains(out, "--cluster-kubeconfig") {
		t.Errorf("join without --cluster-kubeconfig should name the flag:\n%s", out)
	}
	// Credentials go to karmada-cluster only.
	out, err = karmadactl("join", "member1", "--cluster-kubeconfig", fleet.Kubeconfig, "--cluster-context", "member1", "--cluster-namespace", "default")
	if err == nil || !strings.Contains(out, `--cluster-namespace="default"`) {
		t.Errorf("join with credentials in default was not refused naming the flag:\n%s", out)
	}
	// A member kubeconfig that skips TLS verification is refused unless
	// the user says so, and nothing changes.
	cfg, err := clientcmd.LoadFromFile(fleet.Kubeconfig)
	if err != nil {
		t.Fatal(err)
	}
	member := cfg.Clusters[cfg.Contexts["member1"].Cluster]
	member.InsecureSkipTLSVerify, member.CertificateAuthorityData, member.CertificateAuthority = true, nil, ""
	insecure := filepath.Join(t.TempDir(), "insecure.kubeconfig")
	if err := clientcmd.WriteToFile(*cfg, insecure); err != nil {
		t.Fatal(err)
	}
	out, err = karmadactl("join", "member1", "--cluster-kubeconfig", insecure, "--cluster-context", "member1")
	if err == nil || !strings.Contains(out, "--cluster-insecure-skip-tls-verify") {
		t.Errorf("an insecure member kubeconfig was not refused naming --cluster-insecure-skip-tls-verify:\n%s", out)
	}
	cl := &clusterv1alpha1.Cluster{}
	if err := karmadaClient(t).Get(context.Background(), client.ObjectKey{Name: "member1"}, cl); err != nil || cl.Spec.InsecureSkipTLSVerification {
		t.Errorf("member1 after the refused join: insecure %v (err %v), want false", cl.Spec.InsecureSkipTLSVerification, err)
	}
}

func testNamespacePropagation(ctx context.Context, t *testing.T) {
	c := karmadaClient(t)
	for _, ns := range []*corev1.Namespace{
		{ObjectMeta: metav1.ObjectMeta{Name: "e2e-propagated"}},
		{ObjectMeta: metav1.ObjectMeta{Name: "e2e-doomed"}},
		// Karmada reserves only its own karmada- namespaces.
		{ObjectMeta: metav1.ObjectMeta{Name: "karmada-e2e-demo"}},
		{ObjectMeta: metav1.ObjectMeta{Name: "e2e-private", Labels: map[string]string{"namespace.karmada.io/skip-auto-propagation": "true"}}},
	} {
		createNamespaceUntilCleanup(ctx, t, c, ns)
	}
	members := []string{"member1", "member2", "member3"}
	for _, m := range members {
		for _, name := range []string{"e2e-propagated", "e2e-doomed", "karmada-e2e-demo"} {
			waitNamespace(ctx, t, m, name, true)
		}
	}
	// By now the opted-out namespace would have been propagated too.
	for _, m := range members {
		if _, err := kube(t, m).CoreV1().Namespaces().Get(ctx, "e2e-private", metav1.GetOptions{}); !apierrors.IsNotFound(err) {
			t.Errorf("namespace labelled skip-auto-propagation reached %s (err %v)", m, err)
		}
	}
	if err := c.Delete(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "e2e-propagated"}}); err != nil {
		t.Fatal(err)
	}
	for _, m := range members {
		waitNamespace(ctx, t, m, "e2e-propagated", false)
	}
}

// waitNamespace waits until a member has the namespace (present) or has it
// gone or terminating (!present).
func waitNamespace(ctx context.Context, t *testing.T, member, name string, present bool) {
	t.Helper()
	kc := kube(t, member)
	err := wait.PollUntilContextTimeout(ctx, 200*time.Millisecond, 60*time.Second, true, func(ctx context.Context) (bool, error) {
		ns, err := kc.CoreV1().Namespaces().Get(ctx, name, metav1.GetOptions{})
		if present {
			return err == nil && ns.DeletionTimestamp.IsZero(), nil
		}
		return apierrors.IsNotFound(err) || (err == nil && !ns.DeletionTimestamp.IsZero()), nil
	})
	if err != nil {
		t.Errorf("namespace %s present=%v never held in %s: %v", name, present, member, err)
	}
}

// createNamespaceUntilCleanup creates a namespace in the control plane and
// deletes it (if still there) when the test ends.
func createNamespaceUntilCleanup(ctx context.Context, t *testing.T, c client.Client, ns *corev1.Namespace) {
	t.Helper()
	if err := c.Create(ctx, ns); err != nil {
		t.Fatal(err)
	}
	name := ns.Name
	t.Cleanup(func() {
		if err := c.Delete(context.Background(), &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: name}}); client.IgnoreNotFound(err) != nil {
			t.Errorf("deleting namespace %s: %v", name, err)
		}
	})
}

// prepareNamespacesForOutage creates a namespace to delete while member2 is
// down, and waits until every member has it.
func prepareNamespacesForOutage(ctx context.Context, t *testing.T) {
	createNamespaceUntilCleanup(ctx, t, karmadaClient(t), &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "e2e-outage-doomed"}})
	for _, m := range []string{"member1", "member2", "member3"} {
		waitNamespace(ctx, t, m, "e2e-outage-doomed", true)
	}
}

// changeNamespacesWhileDown deletes one propagated namespace and creates
// another while member2 is stopped.
func changeNamespacesWhileDown(ctx context.Context, t *testing.T) {
	c := karmadaClient(t)
	if err := c.Delete(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "e2e-outage-doomed"}}); err != nil {
		t.Fatal(err)
	}
	createNamespaceUntilCleanup(ctx, t, c, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "e2e-outage-born"}})
	// The members that are up follow at once.
	waitNamespace(ctx, t, "member1", "e2e-outage-doomed", false)
	waitNamespace(ctx, t, "member1", "e2e-outage-born", true)
}

// namespacesConvergedAfterOutage checks member2 caught up once Ready.
func namespacesConvergedAfterOutage(ctx context.Context, t *testing.T) {
	waitNamespace(ctx, t, "member2", "e2e-outage-doomed", false)
	waitNamespace(ctx, t, "member2", "e2e-outage-born", true)
}

func testTaintCommands(ctx context.Context, t *testing.T) {
	c := karmadaClient(t)
	run := func(args ...string) {
		t.Helper()
		if out, err := karmadactl(args...); err != nil {
			t.Fatalf("karmadactl %v: %v\n%s", args, err, out)
		}
	}
	expect := func(want ...string) {
		t.Helper()
		got := strings.Join(taintKeys(getCluster(ctx, t, c, "member1")), ",")
		if got != strings.Join(want, ",") {
			t.Errorf("member1 taints = [%s], want [%s]", got, strings.Join(want, ","))
		}
	}
	run("cordon", "member1")
	expect("cluster.karmada.io/unschedulable:NoSchedule")
	run("cordon", "member1")
	expect("cluster.karmada.io/unschedulable:NoSchedule")
	run("taint", "clusters", "member1", "dedicated=gpu:NoSchedule", "maint:NoExecute")
	expect("cluster.karmada.io/unschedulable:NoSchedule", "dedicated=gpu:NoSchedule", "maint:NoExecute")
	if out, err := karmadactl("taint", "clusters", "member1", "dedicated=cpu:NoSchedule"); err == nil || !strings.Contains(out, "--overwrite") {
		t.Errorf("changing a taint's value without --overwrite should fail naming the flag:\n%s", out)
	}
	run("taint", "clusters", "member1", "dedicated=cpu:NoSchedule", "--overwrite")
	run("uncordon", "member1")
	expect("dedicated=cpu:NoSchedule", "maint:NoExecute")
	run("taint", "clusters", "member1", "dedicated-", "maint:NoExecute-")
	expect()
	for _, other := range []string{"member2", "member3"} {
		if ts := taintKeys(getCluster(ctx, t, c, other)); len(ts) != 0 {
			t.Errorf("%s got taints %v from commands on member1", other, ts)
		}
	}
}

// testFailureDetection runs while member2 is stopped, then after it is started.
func testMemberNotReady(ctx context.Context, t *testing.T) {
	c := karmadaClient(t)
	cl := waitClusterReady(ctx, t, c, "member2", metav1.ConditionFalse, 90*time.Second)
	err := wait.PollUntilContextTimeout(ctx, 200*time.Millisecond, 15*time.Second, true, func(ctx context.Context) (bool, error) {
		cl = getCluster(ctx, t, c, "member2")
		return strings.Contains(strings.Join(taintKeys(cl), ","), "cluster.karmada.io/not-ready:NoSchedule"), nil
	})
	if err != nil {
		t.Errorf("member2 NotReady without the not-ready taint: %v", taintKeys(cl))
	}
}

func testMemberReadyAgain(ctx context.Context, t *testing.T) {
	c := karmadaClient(t)
	cl := waitClusterReady(ctx, t, c, "member2", metav1.ConditionTrue, 90*time.Second)
	since := meta.FindStatusCondition(cl.Status.Conditions, clusterv1alpha1.ClusterConditionReady).LastTransitionTime
	// No flapping: it stays Ready through more than one probe period.
	testenv.Consistently(t, 15*time.Second, "member2 Ready without flapping after coming back", func(ctx context.Context) error {
		cl := &clusterv1alpha1.Cluster{}
		if err := c.Get(ctx, client.ObjectKey{Name: "member2"}, cl); err != nil {
			return err
		}
		cond := meta.FindStatusCondition(cl.Status.Conditions, clusterv1alpha1.ClusterConditionReady)
		if cond == nil || cond.Status != metav1.ConditionTrue || !cond.LastTransitionTime.Equal(&since) {
			return fmt.Errorf("condition %+v", cond)
		}
		return nil
	})
	err := wait.PollUntilContextTimeout(ctx, 200*time.Millisecond, 15*time.Second, true, func(ctx context.Context) (bool, error) {
		return len(taintKeys(getCluster(ctx, t, c, "member2"))) == 0, nil
	})
	if err != nil {
		t.Errorf("member2 is Ready but keeps taints %v", taintKeys(getCluster(ctx, t, c, "member2")))
	}
}

func testUnjoin(ctx context.Context, t *testing.T) {
	c := karmadaClient(t)
	// A namespace that exists before the unjoin must reach the re-joined
	// member.
	createNamespaceUntilCleanup(ctx, t, c, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "e2e-before-rejoin"}})
	waitNamespace(ctx, t, "member2", "e2e-before-rejoin", true)
	// Whatever fails below, the next test gets member2 back, joined.
	t.Cleanup(func() {
		if out, err := karmadaLocal("member", "start", "member2"); err != nil {
			t.Errorf("member start in clean-up: %v\n%s", err, out)
		}
		if err := c.Get(context.Background(), client.ObjectKey{Name: "member2"}, &clusterv1alpha1.Cluster{}); apierrors.IsNotFound(err) {
			if out, err := karmadactl("join", "member2", "--cluster-kubeconfig", fleet.Kubeconfig, "--cluster-context", "member2"); err != nil {
				t.Errorf("re-join in clean-up: %v\n%s", err, out)
			}
		}
		waitClusterReady(context.Background(), t, c, "member2", metav1.ConditionTrue, 60*time.Second)
	})
	out, err := karmadaLocal("member", "stop", "member2")
	if err != nil {
		t.Fatalf("member stop: %v\n%s", err, out)
	}
	out, err = karmadactl("unjoin", "member2", "--cluster-kubeconfig", fleet.Kubeconfig, "--cluster-context", "member2")
	if err == nil || !strings.Contains(out, "unreachable") || !strings.Contains(out, "--force") {
		t.Errorf("unjoin of an unreachable member should refuse and mention --force:\n%s", out)
	}
	getCluster(ctx, t, c, "member2") // still there
	if out, err := karmadaLocal("member", "start", "member2"); err != nil {
		t.Fatalf("member start: %v\n%s", err, out)
	}
	out, err = karmadactl("unjoin", "member2", "--cluster-kubeconfig", fleet.Kubeconfig, "--cluster-context", "member2")
	if err != nil {
		t.Fatalf("unjoin: %v\n%s", err, out)
	}
	if err := c.Get(ctx, client.ObjectKey{Name: "member2"}, &clusterv1alpha1.Cluster{}); !apierrors.IsNotFound(err) {
		t.Errorf("Cluster member2 still exists after unjoin (err %v)", err)
	}
	if err := c.Get(ctx, client.ObjectKey{Name: "karmada-es-member2"}, &corev1.Namespace{}); err == nil {
		t.Errorf("execution namespace karmada-es-member2 still exists after unjoin")
	}
	if err := c.Get(ctx, client.ObjectKey{Namespace: "karmada-cluster", Name: "member2"}, &corev1.Secret{}); !apierrors.IsNotFound(err) {
		t.Errorf("credentials karmada-cluster/member2 still exist after unjoin (err %v)", err)
	}
	kc := kube(t, "member2")
	if _, err := kc.CoreV1().ServiceAccounts("karmada-cluster").Get(ctx, "karmada-member2", metav1.GetOptions{}); !apierrors.IsNotFound(err) {
		t.Errorf("ServiceAccount karmada-member2 still in the member (err %v)", err)
	}
	if _, err := kc.CoreV1().Secrets("karmada-cluster").Get(ctx, "karmada-member2-token", metav1.GetOptions{}); !apierrors.IsNotFound(err) {
		t.Errorf("token Secret still in the member (err %v)", err)
	}
	if _, err := kc.RbacV1().ClusterRoles().Get(ctx, "karmada-controller-manager:karmada-member2", metav1.GetOptions{}); !apierrors.IsNotFound(err) {
		t.Errorf("ClusterRole still in the member (err %v)", err)
	}
	if _, err := kc.RbacV1().ClusterRoleBindings().Get(ctx, "karmada-controller-manager:karmada-member2", metav1.GetOptions{}); !apierrors.IsNotFound(err) {
		t.Errorf("ClusterRoleBinding still in the member (err %v)", err)
	}

	// Joining again works, and the member is Ready again.
	out, err = karmadactl("join", "member2", "--cluster-kubeconfig", fleet.Kubeconfig, "--cluster-context", "member2")
	if err != nil {
		t.Fatalf("re-join: %v\n%s", err, out)
	}
	waitClusterReady(ctx, t, c, "member2", metav1.ConditionTrue, 30*time.Second)
	// A cluster that joins gets the namespaces that already exist.
	waitNamespace(ctx, t, "member2", "e2e-before-rejoin", true)
}

func testSchedulerPlacesBinding(ctx context.Context, t *testing.T) {
	c := karmadaClient(t)
	rb := &workv1alpha2.ResourceBinding{
		ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: "e2e-web-deployment"},
		Spec: workv1alpha2.ResourceBindingSpec{
			Resource: workv1alpha2.ObjectReference{APIVersion: "apps/v1", Kind: "Deployment", Namespace: "default", Name: "e2e-web"},
			Replicas: 5,
			Placement: &policyv1alpha1.Placement{
				ClusterAffinity: &policyv1alpha1.ClusterAffinity{ClusterNames: []string{"member1", "member2"}},
				ReplicaScheduling: &policyv1alpha1.ReplicaSchedulingStrategy{
					ReplicaSchedulingType: policyv1alpha1.ReplicaSchedulingTypeDivided, ReplicaDivisionPreference: policyv1alpha1.ReplicaDivisionPreferenceWeighted,
					WeightPreference: &policyv1alpha1.ClusterPreferences{StaticWeightList: []policyv1alpha1.StaticClusterWeight{
						{TargetCluster: policyv1alpha1.ClusterAffinity{ClusterNames: []string{"member1"}}, Weight: 2},
						{TargetCluster: policyv1alpha1.ClusterAffinity{ClusterNames: []string{"member2"}}, Weight: 3},
					}},
				},
			},
		},
	}
	if err := c.Create(ctx, rb); err != nil {
		t.Fatal(err)
	}
	err := wait.PollUntilContextTimeout(ctx, 200*time.Millisecond, 30*time.Second, true, func(ctx context.Context) (bool, error) {
		if err := c.Get(ctx, client.ObjectKeyFromObject(rb), rb); err != nil {
			return false, nil
		}
		return meta.IsStatusConditionTrue(rb.Status.Conditions, workv1alpha2.Scheduled), nil
	})
	if err != nil {
		t.Fatalf("karmada-scheduler did not schedule the binding: %+v", rb.Status)
	}
	got := map[string]int32{}
	for _, tc := range rb.Spec.Clusters {
		got[tc.Name] = tc.Replicas
	}
	if len(got) != 2 || got["member1"] != 2 || got["member2"] != 3 {
		t.Errorf("placement %v, want member1=2 member2=3", got)
	}
	if err := c.Delete(ctx, rb); err != nil {
		t.Fatal(err)
	}
}
