//go:build e2e

package e2e

import (
	"bytes"
	"context"
	"crypto/x509"
	"encoding/json"
	"encoding/pem"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	coordinationv1 "k8s.io/api/coordination/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/clientcmd"
	"sigs.k8s.io/controller-runtime/pkg/client"

	clusterv1alpha1 "github.com/karmada-go/karmada/api/cluster/v1alpha1"
	policyv1alpha1 "github.com/karmada-go/karmada/api/policy/v1alpha1"
	workv1alpha1 "github.com/karmada-go/karmada/api/work/v1alpha1"
	workv1alpha2 "github.com/karmada-go/karmada/api/work/v1alpha2"
	"github.com/karmada-go/karmada/internal/names"
	"github.com/karmada-go/karmada/internal/registration/agentcert"
	"github.com/karmada-go/karmada/internal/testenv"
)

// member3 is the fleet's pull-mode member: registered with karmadactl
// register's code and served by its karmada-agent.
const pullMember = "member3"

// seedsExampleOnPullMember creates a policy placing the seeds' nginx Deployment on
// member3 only, and removes both when the test ends.
func seedsExampleOnPullMember(t *testing.T, c client.Client) {
	t.Helper()
	t.Cleanup(func() {
		began := time.Now()
		deleteAll(t, c, &appsv1.Deployment{ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: "nginx"}},
			&policyv1alpha1.PropagationPolicy{ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: "nginx-propagation"}})
		waitMemberDeployment(context.Background(), t, pullMember, "nginx", -1)
		t.Logf("clean-up: nginx gone from %s %s after its template was deleted", pullMember, time.Since(began).Round(100*time.Millisecond))
	})
	pp := &policyv1alpha1.PropagationPolicy{
		ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: "nginx-propagation"},
		Spec: policyv1alpha1.PropagationSpec{
			ResourceSelectors: []policyv1alpha1.ResourceSelector{{APIVersion: "apps/v1", Kind: "Deployment", Name: "nginx"}},
			Placement:         policyv1alpha1.Placement{ClusterAffinity: &policyv1alpha1.ClusterAffinity{ClusterNames: []string{pullMember}}},
		},
	}
	if err := c.Create(context.Background(), pp); err != nil {
		t.Fatal(err)
	}
	kubectlApply(t, "apply", "-f", filepath.Join(testenv.RepoRoot(), "examples", "nginx-deployment.yaml"))
}

// templateAvailable waits until the template's aggregated status says want
// replicas are available.
func templateAvailable(ctx context.Context, t *testing.T, c client.Client, name string, want int32, timeout time.Duration) {
	t.Helper()
	d := &appsv1.Deployment{}
	err := wait.PollUntilContextTimeout(ctx, 100*time.Millisecond, timeout, true, func(ctx context.Context) (bool, error) {
		if err := c.Get(ctx, client.ObjectKey{Namespace: "default", Name: name}, d); err != nil {
			return false, nil
		}
		return d.Status.AvailableReplicas == want && d.Status.ReadyReplicas == want && d.Status.ObservedGeneration == d.Generation, nil
	})
	if err != nil {
		// What the agent did (the fleet's state is removed after the run).
		status, _ := karmadaLocal("status")
		agentLog, _ := os.ReadFile(filepath.Join(fleet.StateDir, "logs", pullMember, "karmada-agent.log"))
		t.Logf("karmada-local status:\n%s\n%s's agent log (last lines):\n%s", status, pullMember, tail(string(agentLog), 40))
		t.Fatalf("template %s never showed %d available replicas aggregated from %s: %+v", name, want, pullMember, d.Status)
	}
}

// The seeds' example placed on the pull-mode member3 reaches available
// there, and its status comes back through the agent to the binding and
// the template.
func TestPullMemberRunsTheSeedsExample(t *testing.T) {
	ctx := context.Background()
	c := karmadaClient(t)
	start := time.Now()
	seedsExampleOnPullMember(t, c)
	waitMemberDeployment(ctx, t, pullMember, "nginx", 1)
	templateAvailable(ctx, t, c, "nginx", 1, 60*time.Second)
	t.Logf("the seeds' example on pull-mode %s: applied to available on the template in %s", pullMember, time.Since(start).Round(time.Millisecond))
	rb := &workv1alpha2.ResourceBinding{}
	if err := c.Get(ctx, client.ObjectKey{Namespace: "default", Name: "nginx-deployment"}, rb); err != nil {
		t.Fatal(err)
	}
	if len(rb.Status.AggregatedStatus) != 1 || rb.Status.AggregatedStatus[0].ClusterName != pullMember || !rb.Status.AggregatedStatus[0].Applied {
		t.Errorf("binding's aggregated status %+v, want member3 applied", rb.Status.AggregatedStatus)
	}
	for _, m := range []string{"member1", "member2"} {
		if _, err := kube(t, m).AppsV1().Deployments("default").Get(ctx, "nginx", metav1.GetOptions{}); !apierrors.IsNotFound(err) {
			t.Errorf("nginx reached %s, which the policy does not name (err %v)", m, err)
		}
	}
	status, err := karmadaLocal("status")
	if err != nil || !lineHas(status, "member3/karmada-agent", "healthy") {
		t.Errorf("status does not show member3's agent healthy (%v):\n%s", err, status)
	}
}

// agent stop: the member keeps running its workload; after the grace
// period the control plane marks member3 Ready=Unknown with the
// unreachable taint. A template changed meanwhile converges once the agent
// is started again, and the cluster is Ready without the taint.
func TestAgentStopLeavesWorkloadAndMarksClusterUnknown(t *testing.T) {
	ctx := context.Background()
	c := karmadaClient(t)
	seedsExampleOnPullMember(t, c)
	templateAvailable(ctx, t, c, "nginx", 1, 60*time.Second)
	stopAgentUntilCleanup(t, c)
	stopped := time.Now()
	status, _ := karmadaLocal("status")
	if !lineHas(status, "member3/karmada-agent", "stopped") || !lineHas(status, "member3/kube-apiserver", "healthy") {
		t.Errorf("status should show member3's agent stopped and its API server healthy:\n%s", status)
	}
	// The lease (40s) lapses; the monitor looks every 5s.
	cl := waitClusterReady(ctx, t, c, pullMember, metav1.ConditionUnknown, 90*time.Second)
	t.Logf("member3 Ready=Unknown %s after its agent stopped", time.Since(stopped).Round(time.Second))
	if cond := meta.FindStatusCondition(cl.Status.Conditions, clusterv1alpha1.ClusterConditionReady); cond.Reason != "ClusterStatusUnknown" {
		t.Errorf("Ready=Unknown with reason %q, want ClusterStatusUnknown", cond.Reason)
	}
	err := wait.PollUntilContextTimeout(ctx, 200*time.Millisecond, 20*time.Second, true, func(ctx context.Context) (bool, error) {
		return strings.Contains(strings.Join(taintKeys(getCluster(ctx, t, c, pullMember)), ","), "cluster.karmada.io/unreachable:NoSchedule"), nil
	})
	if err != nil {
		t.Errorf("member3 Unknown without the unreachable taint: %v", taintKeys(getCluster(ctx, t, c, pullMember)))
	}
	// The member keeps its workload.
	d, err := kube(t, pullMember).AppsV1().Deployments("default").Get(ctx, "nginx", metav1.GetOptions{})
	if err != nil || d.Status.AvailableReplicas != 1 {
		t.Fatalf("nginx in member3 while its agent is stopped: %v (%+v)", err, d.Status)
	}
	// A change made now waits for the agent.
	tmpl := &appsv1.Deployment{}
	if err := c.Get(ctx, client.ObjectKey{Namespace: "default", Name: "nginx"}, tmpl); err != nil {
		t.Fatal(err)
	}
	tmpl.Spec.Replicas = ptrInt32(3)
	if err := c.Update(ctx, tmpl); err != nil {
		t.Fatal(err)
	}
	if out, err := karmadaLocal("agent", "start", pullMember); err != nil {
		t.Fatalf("agent start: %v\n%s", err, out)
	}
	restarted := time.Now()
	waitMemberDeployment(ctx, t, pullMember, "nginx", 3)
	t.Logf("the change made while the agent was down reached member3 %s after agent start", time.Since(restarted).Round(100*time.Millisecond))
	templateAvailable(ctx, t, c, "nginx", 3, 60*time.Second)
	waitClusterReady(ctx, t, c, pullMember, metav1.ConditionTrue, 30*time.Second)
	err = wait.PollUntilContextTimeout(ctx, 200*time.Millisecond, 20*time.Second, true, func(ctx context.Context) (bool, error) {
		return len(taintKeys(getCluster(ctx, t, c, pullMember))) == 0, nil
	})
	if err != nil {
		t.Errorf("member3 Ready again but keeps taints %v", taintKeys(getCluster(ctx, t, c, pullMember)))
	}
}

func ptrInt32(v int32) *int32 { return &v }

// The agent killed and restarted ten times while 50 Deployments propagate
// to member3 deletes nothing there: a watch on member3's Deployments sees
// no deletion, and every Deployment ends up applied once and available.
func TestAgentRestartsDeleteNothing(t *testing.T) {
	ctx := context.Background()
	c := karmadaClient(t)
	const n = 50
	kc := kube(t, pullMember)
	deletions := countDeletions(ctx, t, kc, metav1.ListOptions{LabelSelector: "pullbulk=yes"})
	t.Cleanup(func() {
		deleteAll(t, c, &policyv1alpha1.PropagationPolicy{ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: "pullbulk"}})
		if err := deleteTemplates(c, "pullbulk"); err != nil {
			t.Errorf("deleting the templates: %v", err)
		}
		_ = wait.PollUntilContextTimeout(context.Background(), 500*time.Millisecond, 90*time.Second, true, func(ctx context.Context) (bool, error) {
			list, err := kc.AppsV1().Deployments("default").List(ctx, metav1.ListOptions{LabelSelector: "pullbulk=yes"})
			return err == nil && len(list.Items) == 0, nil
		})
		if out, err := karmadaLocal("agent", "start", pullMember); err != nil {
			t.Errorf("agent start in clean-up: %v\n%s", err, out)
		}
	})
	pp := &policyv1alpha1.PropagationPolicy{
		ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: "pullbulk"},
		Spec: policyv1alpha1.PropagationSpec{
			ResourceSelectors: []policyv1alpha1.ResourceSelector{{APIVersion: "apps/v1", Kind: "Deployment", LabelSelector: &metav1.LabelSelector{MatchLabels: map[string]string{"pullbulk": "yes"}}}},
			Placement:         policyv1alpha1.Placement{ClusterAffinity: &policyv1alpha1.ClusterAffinity{ClusterNames: []string{pullMember}}},
		},
	}
	if err := c.Create(ctx, pp); err != nil {
		t.Fatal(err)
	}
	restarts := 0
	for i := 0; i < n; i++ {
		d := deploymentNamed(fmt.Sprintf("pullbulk-%02d", i), 1)
		d.Labels = map[string]string{"pullbulk": "yes"}
		if err := c.Create(ctx, d); err != nil {
			t.Fatal(err)
		}
		if i%5 == 4 {
			// As a crash: SIGKILL, then started again at once.
			if out, err := karmadaLocal("agent", "stop", pullMember, "--kill"); err != nil {
				t.Fatalf("agent stop --kill: %v\n%s", err, out)
			}
			if out, err := karmadaLocal("agent", "start", pullMember); err != nil {
				t.Fatalf("agent start: %v\n%s", err, out)
			}
			restarts++
		}
	}
	if have := waitAvailableCount(ctx, kc, "pullbulk=yes", n); have != n {
		t.Fatalf("member3 has %d of %d Deployments available after %d agent restarts", have, n, restarts)
	}
	if got := deletions(); got != 0 {
		t.Errorf("member3 saw %d Deployment deletions during %d agent restarts, want 0", got, restarts)
	}
	if restarts != 10 {
		t.Errorf("restarted the agent %d times, want 10", restarts)
	}
}

// The agent renews its certificate of the control plane (here at every
// check: threshold 1), uses the new one at once, and keeps it in the
// member's Secret and in its kubeconfig file; the fleet's agent started
// from that file afterwards works.
func TestAgentRotatesItsCertificate(t *testing.T) {
	ctx := context.Background()
	c := karmadaClient(t)
	mc := kube(t, pullMember)
	stopAgentUntilCleanup(t, c)
	agentDir := filepath.Join(fleet.StateDir, pullMember, "karmada-agent")
	kubeconfigFile := filepath.Join(agentDir, "karmada.kubeconfig")
	before := secretCert(ctx, t, mc)
	actx, cancel := context.WithCancel(ctx)
	var out bytes.Buffer
	cmd := exec.CommandContext(actx, filepath.Join(filepath.Dir(fleet.Bin), "karmada-agent"),
		"--karmada-kubeconfig", kubeconfigFile, "--kubeconfig", filepath.Join(agentDir, "member.kubeconfig"), "--cluster-name", pullMember,
		"--cert-rotation-checking-interval", "2s", "--cert-rotation-remaining-time-threshold", "1",
		"--metrics-bind-address", "0", "--health-probe-bind-address", "0")
	cmd.Stdout, cmd.Stderr = &out, &out
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() {
		cancel()
		_ = cmd.Wait()
		if t.Failed() {
			t.Logf("the agent's output:\n%s", tail(out.String(), 30))
		}
	}()
	var after *x509.Certificate
	err := wait.PollUntilContextTimeout(ctx, 500*time.Millisecond, 60*time.Second, true, func(ctx context.Context) (bool, error) {
		after = secretCert(ctx, t, mc)
		return after.SerialNumber.Cmp(before.SerialNumber) != 0, nil
	})
	if err != nil {
		t.Fatalf("the member's Secret still holds certificate %s after a minute of rotation due at every check", before.SerialNumber)
	}
	if after.Subject.CommonName != "system:karmada:agent:"+pullMember || !contains(after.Subject.Organization, "system:karmada:agents") {
		t.Errorf("renewed certificate for %s %v", after.Subject.CommonName, after.Subject.Organization)
	}
	// As long as the one it replaced: register's 7 days, the control
	// plane's longest (issue 39; Karmada's is a year).
	if d, was := after.NotAfter.Sub(after.NotBefore), before.NotAfter.Sub(before.NotBefore); d < was-time.Minute || d > 7*24*time.Hour+10*time.Minute {
		t.Errorf("renewed certificate lives %s, want as long as the one it replaced (%s), at most 7 days", d, was)
	}
	if reg := registrationGroups(before.Subject.Organization); len(reg) != 1 || !contains(after.Subject.Organization, reg[0]) {
		t.Errorf("renewed certificate's groups %v, want the registration group of the one it replaced (%v)", after.Subject.Organization, before.Subject.Organization)
	}
	// The lease is renewed with the new certificate: the old connections
	// were closed, and new ones present the renewed certificate.
	renewedAt := time.Now()
	err = wait.PollUntilContextTimeout(ctx, 500*time.Millisecond, 30*time.Second, true, func(ctx context.Context) (bool, error) {
		l := leaseRenewTime(ctx, t, c)
		return l.After(renewedAt), nil
	})
	if err != nil {
		t.Errorf("the lease was not renewed after the certificate was")
	}
	cancel()
	_ = cmd.Wait()
	data, err := os.ReadFile(kubeconfigFile)
	if err != nil {
		t.Fatal(err)
	}
	cfg, err := clientcmd.RESTConfigFromKubeConfig(data)
	if err != nil {
		t.Fatal(err)
	}
	block, _ := pem.Decode(cfg.CertData)
	fileCert, err := x509.ParseCertificate(block.Bytes)
	if err != nil {
		t.Fatal(err)
	}
	if fileCert.SerialNumber.Cmp(before.SerialNumber) == 0 {
		t.Errorf("the agent's kubeconfig file still holds the first certificate")
	}
	if st, err := os.Stat(kubeconfigFile); err != nil || st.Mode().Perm() != 0o600 {
		t.Errorf("kubeconfig file mode %v (%v), want 0600", st.Mode().Perm(), err)
	}
	// The fleet's agent, started from the renewed file, claims and reports.
	if out, err := karmadaLocal("agent", "start", pullMember); err != nil {
		t.Fatalf("agent start with the renewed certificate: %v\n%s", err, out)
	}
	started := time.Now()
	err = wait.PollUntilContextTimeout(ctx, 500*time.Millisecond, 30*time.Second, true, func(ctx context.Context) (bool, error) {
		return leaseRenewTime(ctx, t, c).After(started), nil
	})
	if err != nil {
		t.Errorf("the fleet's agent does not renew its lease with the renewed certificate")
	}
}

func secretCert(ctx context.Context, t *testing.T, mc kubernetes.Interface) *x509.Certificate {
	t.Helper()
	s, err := mc.CoreV1().Secrets(agentcert.Namespace).Get(ctx, agentcert.SecretName, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	cfg, err := clientcmd.RESTConfigFromKubeConfig(s.Data[agentcert.SecretKey])
	if err != nil {
		t.Fatal(err)
	}
	block, _ := pem.Decode(cfg.CertData)
	if block == nil {
		t.Fatal("no certificate in the agent's kubeconfig Secret")
	}
	cert, err := x509.ParseCertificate(block.Bytes)
	if err != nil {
		t.Fatal(err)
	}
	return cert
}

func leaseRenewTime(ctx context.Context, t *testing.T, c client.Client) time.Time {
	t.Helper()
	l := &coordinationv1.Lease{}
	if err := c.Get(ctx, client.ObjectKey{Namespace: "karmada-cluster", Name: pullMember}, l); err != nil || l.Spec.RenewTime == nil {
		return time.Time{}
	}
	return l.Spec.RenewTime.Time
}

// The control plane out of reach (its API server stopped) for longer than
// the agent's watches and requests can bear deletes nothing in member3; the
// agent carries on when it is back, with the same copy.
func TestControlPlaneOutageDeletesNothingInPullMember(t *testing.T) {
	ctx := context.Background()
	c := karmadaClient(t)
	seedsExampleOnPullMember(t, c)
	templateAvailable(ctx, t, c, "nginx", 1, 60*time.Second)
	kc := kube(t, pullMember)
	before, err := kc.AppsV1().Deployments("default").Get(ctx, "nginx", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	deletions := countDeletions(ctx, t, kc, metav1.ListOptions{FieldSelector: "metadata.name=nginx", ResourceVersion: before.ResourceVersion})
	t.Cleanup(func() {
		if out, err := karmadaLocal("component", "start", "karmada/kube-apiserver"); err != nil {
			t.Errorf("component start in clean-up: %v\n%s", err, out)
		}
	})
	stopping := time.Now()
	if out, err := karmadaLocal("component", "stop", "karmada/kube-apiserver"); err != nil {
		t.Fatalf("component stop: %v\n%s", err, out)
	}
	// The outage lasts the API server's shutdown and 5s more (longer than
	// the agent's lease renewal period); the member is watched throughout.
	outage := time.Now()
	if err := c.Get(ctx, client.ObjectKey{Namespace: "default", Name: "nginx"}, &appsv1.Deployment{}); err == nil {
		t.Fatal("the karmada-apiserver still answers after component stop")
	}
	// Meanwhile member3's copy stays, checked every second.
	_ = wait.PollUntilContextTimeout(ctx, time.Second, 5*time.Second, false, func(context.Context) (bool, error) {
		if _, err := kc.AppsV1().Deployments("default").Get(ctx, "nginx", metav1.GetOptions{}); err != nil {
			t.Errorf("member3's nginx during the outage: %v", err)
			return true, nil
		}
		return false, nil
	})
	if out, err := karmadaLocal("component", "start", "karmada/kube-apiserver"); err != nil {
		t.Fatalf("component start: %v\n%s", err, out)
	}
	t.Logf("the karmada-apiserver was down %s after its shutdown (which took %s)", time.Since(outage).Round(time.Second), outage.Sub(stopping).Round(time.Second))
	// The control plane's kube-controller-manager is restarted too, once
	// the API server serves the bindings' API again: its garbage collector
	// (which deletes a deleted template's binding) watches what discovery
	// showed it, and rediscovers only every 30s; after the outage it took
	// one to two minutes to delete bindings again, and the tests after
	// this one rely on it.
	dc := kube(t, "karmada-apiserver").Discovery()
	if err := wait.PollUntilContextTimeout(ctx, 200*time.Millisecond, 60*time.Second, true, func(ctx context.Context) (bool, error) {
		_, err := dc.ServerResourcesForGroupVersion(workv1alpha2.SchemeGroupVersion.String())
		return err == nil, nil
	}); err != nil {
		t.Fatalf("the karmada-apiserver does not serve %s again", workv1alpha2.SchemeGroupVersion)
	}
	if out, err := karmadaLocal("component", "restart", "karmada/kube-controller-manager"); err != nil {
		t.Fatalf("component restart: %v\n%s", err, out)
	}
	// Our controller manager and scheduler also retry their failed
	// watches after client-go's backoff, up to a minute for some types
	// after such an outage (a test that followed this one found member1's
	// Deployments unsynced for a minute); when this test ends they are
	// restarted, so that the tests after it find the fleet as it was.
	t.Cleanup(func() {
		for _, component := range []string{"karmada/karmada-controller-manager", "karmada/karmada-scheduler"} {
			if out, err := karmadaLocal("component", "restart", component); err != nil {
				t.Errorf("component restart %s in clean-up: %v\n%s", component, err, out)
			}
		}
	})
	// Back: the agent reports again, and the copy is the same object.
	back := time.Now()
	templateAvailable(ctx, t, c, "nginx", 1, 60*time.Second)
	t.Logf("template status readable %s after the restart", time.Since(back).Round(100*time.Millisecond))
	after, err := kc.AppsV1().Deployments("default").Get(ctx, "nginx", metav1.GetOptions{})
	if err != nil {
		t.Fatalf("nginx in member3 after the outage: %v", err)
	}
	if after.UID != before.UID {
		t.Errorf("nginx in member3 was recreated during the outage (uid %s, before %s)", after.UID, before.UID)
	}
	waitClusterReady(ctx, t, c, pullMember, metav1.ConditionTrue, 60*time.Second)
	t.Logf("member3 Ready %s after the restart", time.Since(back).Round(100*time.Millisecond))
	// Changes flow again once the watches are back (client-go retries a
	// watch that failed for a while after up to a minute).
	tmpl := &appsv1.Deployment{}
	if err := c.Get(ctx, client.ObjectKey{Namespace: "default", Name: "nginx"}, tmpl); err != nil {
		t.Fatal(err)
	}
	tmpl.Spec.Replicas = ptrInt32(2)
	if err := c.Update(ctx, tmpl); err != nil {
		t.Fatal(err)
	}
	err = wait.PollUntilContextTimeout(ctx, 200*time.Millisecond, 2*time.Minute, true, func(ctx context.Context) (bool, error) {
		d, err := kc.AppsV1().Deployments("default").Get(ctx, "nginx", metav1.GetOptions{})
		return err == nil && *d.Spec.Replicas == 2, nil
	})
	if err != nil {
		reportChain(ctx, t, c, kc, "nginx", pullMember)
		t.Fatalf("a change made after the outage never reached member3")
	}
	t.Logf("a change made after the outage reached member3 %s after the API server was back", time.Since(back).Round(100*time.Millisecond))
	if got := deletions(); got != 0 {
		t.Errorf("member3's nginx was deleted %d times while the control plane was out of reach", got)
	}
}

// countDeletions watches a member's Deployments (opts) from now on; the
// function it returns stops watching and says how many were deleted.
func countDeletions(ctx context.Context, t *testing.T, kc kubernetes.Interface, opts metav1.ListOptions) func() int32 {
	t.Helper()
	w, err := kc.AppsV1().Deployments("default").Watch(ctx, opts)
	if err != nil {
		t.Fatal(err)
	}
	var deletes atomic.Int32
	watching := make(chan struct{})
	go func() {
		defer close(watching)
		for ev := range w.ResultChan() {
			if ev.Type == watch.Deleted {
				deletes.Add(1)
			}
		}
	}()
	t.Cleanup(w.Stop)
	return func() int32 {
		w.Stop()
		<-watching
		return deletes.Load()
	}
}

// stopAgentUntilCleanup stops member3's agent; it is started again, and
// member3 Ready, when the test ends.
func stopAgentUntilCleanup(t *testing.T, c client.Client) {
	t.Helper()
	t.Cleanup(func() {
		if out, err := karmadaLocal("agent", "start", pullMember); err != nil {
			t.Errorf("agent start in clean-up: %v\n%s", err, out)
		}
		waitClusterReady(context.Background(), t, c, pullMember, metav1.ConditionTrue, 60*time.Second)
	})
	if out, err := karmadaLocal("agent", "stop", pullMember); err != nil {
		t.Fatalf("agent stop: %v\n%s", err, out)
	}
}

// registrationGroups are the system:karmada:agent-registration:<id> groups
// among a certificate's organizations.
func registrationGroups(orgs []string) []string {
	var out []string
	for _, o := range orgs {
		if strings.HasPrefix(o, "system:karmada:agent-registration:") {
			out = append(out, o)
		}
	}
	return out
}

// reportChain logs where a template's change stopped on its way to a
// member: the template, its binding, the member's Work and copy, and the
// last lines of the components that carry it, for a failure in CI.
func reportChain(ctx context.Context, t *testing.T, c client.Client, kc kubernetes.Interface, name, cluster string) {
	t.Helper()
	tmpl := &appsv1.Deployment{}
	if err := c.Get(ctx, client.ObjectKey{Namespace: "default", Name: name}, tmpl); err == nil {
		t.Logf("template: generation %d, replicas %d", tmpl.Generation, *tmpl.Spec.Replicas)
	} else {
		t.Logf("template: %v", err)
	}
	rb := &workv1alpha2.ResourceBinding{}
	if err := c.Get(ctx, client.ObjectKey{Namespace: "default", Name: names.BindingName("Deployment", name)}, rb); err == nil {
		t.Logf("binding: generation %d, schedulerObservedGeneration %d, replicas %d, clusters %v, resource version %s",
			rb.Generation, rb.Status.SchedulerObservedGeneration, rb.Spec.Replicas, rb.Spec.Clusters, rb.Spec.Resource.ResourceVersion)
	} else {
		t.Logf("binding: %v", err)
	}
	w := &workv1alpha1.Work{}
	if err := c.Get(ctx, client.ObjectKey{Namespace: workv1alpha1.ExecutionNamespace(cluster), Name: names.WorkName("Deployment", name, "default")}, w); err == nil {
		replicas := "?"
		if len(w.Spec.Workload.Manifests) > 0 {
			d := &appsv1.Deployment{}
			if err := json.Unmarshal(w.Spec.Workload.Manifests[0].Raw, d); err == nil && d.Spec.Replicas != nil {
				replicas = fmt.Sprint(*d.Spec.Replicas)
			}
		}
		t.Logf("work: generation %d, manifest replicas %s, conditions %+v", w.Generation, replicas, w.Status.Conditions)
	} else {
		t.Logf("work: %v", err)
	}
	if d, err := kc.AppsV1().Deployments("default").Get(ctx, name, metav1.GetOptions{}); err == nil {
		t.Logf("%s's copy: replicas %d", cluster, *d.Spec.Replicas)
	}
	for _, component := range []string{"karmada/karmada-controller-manager", "karmada/karmada-scheduler", cluster + "/karmada-agent"} {
		data, err := os.ReadFile(filepath.Join(fleet.StateDir, "logs", component+".log"))
		if err != nil {
			t.Logf("%s: %v", component, err)
			continue
		}
		t.Logf("%s's last lines:\n%s", component, tail(string(data), 40))
	}
}
