//go:build e2e

package e2e

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	authenticationv1 "k8s.io/api/authentication/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/clientcmd"
	"sigs.k8s.io/controller-runtime/pkg/client"

	clusterv1alpha1 "github.com/karmada-go/karmada/api/cluster/v1alpha1"
	"github.com/karmada-go/karmada/internal/registration/register"
)

// karmadactl register, with the line token create prints, trusts the
// control plane by the token and the CA's hash, has the agent's certificate
// approved and signed, and leaves the agent's kubeconfig and member
// identity in the member; it acts as system:karmada:agent:<name>. A
// registered name is refused, and so is an agent claiming a member already
// registered under another name (member2, joined, registered again as
// e2e-pull).
func TestRegisterIssuesAgentCredentials(t *testing.T) {
	ctx := context.Background()
	line, err := karmadactl("token", "create", "--ttl", "10m", "--print-register-command")
	if err != nil {
		t.Fatalf("token create: %v\n%s", err, line)
	}
	f := strings.Fields(line)
	tokenID, _, _ := strings.Cut(f[4], ".")
	t.Cleanup(func() { _, _ = karmadactl("token", "delete", tokenID) })
	mc := kube(t, "member2")
	_, nsErr := mc.CoreV1().Namespaces().Get(ctx, register.AgentNamespace, metav1.GetOptions{})
	t.Cleanup(func() {
		_, _ = register.RemoveAgent(context.Background(), mc, "e2e-pull")
		_ = mc.CoreV1().Secrets(register.AgentNamespace).Delete(context.Background(), register.AgentSecretName, metav1.DeleteOptions{})
		if nsErr != nil {
			_ = mc.CoreV1().Namespaces().Delete(context.Background(), register.AgentNamespace, metav1.DeleteOptions{})
		}
	})

	c := karmadaClient(t)
	t.Cleanup(func() {
		ctx := context.Background()
		cl := &clusterv1alpha1.Cluster{ObjectMeta: metav1.ObjectMeta{Name: "e2e-pull"}}
		_ = c.Delete(ctx, cl)
		_ = wait.PollUntilContextTimeout(ctx, 200*time.Millisecond, 60*time.Second, true, func(ctx context.Context) (bool, error) {
			return apierrors.IsNotFound(c.Get(ctx, client.ObjectKeyFromObject(cl), cl)), nil
		})
	})
	// karmadactl's --kubeconfig is the member's for register.
	// A narrow grant, so that what the agent may not do stays checkable
	// (the default kinds include Secrets).
	registerAs := func(name string, extra ...string) (string, error) {
		args := append(append([]string{}, f[1:]...), "--cluster-name", name, "--discovery-timeout", "60s", "--propagate-kinds", "deployments.apps,configmaps")
		return runKarmadactl(append(append(args, "--kubeconfig", fleet.Kubeconfig, "--context", "member2"), extra...)...)
	}
	// member1 is registered (joined): a token holder may not take it over.
	if out, err := registerAs("member1"); err == nil || !strings.Contains(out, "ClusterExists") {
		t.Errorf("registering under a registered name: %v\n%s", err, out)
	}
	// --dry-run checks the member and the control plane and writes
	// nothing.
	if out, err := registerAs("e2e-pull", "--dry-run"); err != nil || !strings.Contains(out, "[dry-run]") || !strings.Contains(out, "nothing was written") {
		t.Errorf("register --dry-run: %v\n%s", err, out)
	}
	if _, err := mc.CoreV1().Secrets(register.AgentNamespace).Get(ctx, register.AgentSecretName, metav1.GetOptions{}); !apierrors.IsNotFound(err) {
		t.Errorf("after --dry-run, the agent's Secret in member2: %v, want none", err)
	}
	if err := c.Get(ctx, client.ObjectKey{Name: "e2e-pull"}, &clusterv1alpha1.Cluster{}); !apierrors.IsNotFound(err) {
		t.Errorf("after --dry-run, Cluster e2e-pull: %v, want none", err)
	}
	out, err := registerAs("e2e-pull")
	if err != nil {
		t.Fatalf("register: %v\n%s", err, out)
	}
	s, err := mc.CoreV1().Secrets(register.AgentNamespace).Get(ctx, register.AgentSecretName, metav1.GetOptions{})
	if err != nil {
		t.Fatalf("the agent's Secret in member2: %v", err)
	}
	cfg, err := clientcmd.RESTConfigFromKubeConfig(s.Data[register.AgentSecretKey])
	if err != nil {
		t.Fatal(err)
	}
	cfg.Timeout = 5 * time.Second
	if cfg.Insecure || len(cfg.CAData) == 0 {
		t.Error("the agent's kubeconfig does not verify the control plane")
	}
	review, err := kubernetes.NewForConfigOrDie(cfg).AuthenticationV1().SelfSubjectReviews().Create(ctx, &authenticationv1.SelfSubjectReview{}, metav1.CreateOptions{})
	if err != nil {
		t.Fatalf("the agent's credentials do not authenticate: %v", err)
	}
	if u := review.Status.UserInfo; u.Username != "system:karmada:agent:e2e-pull" || !contains(u.Groups, "system:karmada:agents") {
		t.Errorf("the agent acts as %s %v, want system:karmada:agent:e2e-pull in system:karmada:agents", u.Username, u.Groups)
	}
	// The control plane made the cluster's Cluster (pull mode); the agent
	// may read it, and not another.
	ac, err := client.New(cfg, client.Options{Scheme: c.Scheme()})
	if err != nil {
		t.Fatal(err)
	}
	pull := &clusterv1alpha1.Cluster{}
	if err := ac.Get(ctx, client.ObjectKey{Name: "e2e-pull"}, pull); err != nil || pull.Spec.SyncMode != clusterv1alpha1.Pull {
		t.Errorf("the agent reading its Cluster: %v (syncMode %q)", err, pull.Spec.SyncMode)
	}
	if err := ac.Get(ctx, client.ObjectKey{Name: "member1"}, &clusterv1alpha1.Cluster{}); !apierrors.IsForbidden(err) {
		t.Errorf("the agent reading member1's Cluster: want Forbidden, got %v", err)
	}
	// The agent's identity in the member: no right on Secrets but its own
	// kubeconfig's.
	role, err := mc.RbacV1().ClusterRoles().Get(ctx, register.AgentName, metav1.GetOptions{})
	if err != nil {
		t.Fatalf("the agent's ClusterRole in member2: %v", err)
	}
	for _, r := range role.Rules {
		if contains(r.Resources, "secrets") || contains(r.Resources, "*") && contains(r.APIGroups, "") {
			t.Errorf("the agent's ClusterRole reaches Secrets: %+v", r)
		}
	}
	if _, err := mc.CoreV1().ServiceAccounts(register.AgentNamespace).Get(ctx, register.AgentName, metav1.GetOptions{}); err != nil {
		t.Errorf("the agent's ServiceAccount in member2: %v", err)
	}
	// register run again from the member, without a token, keeps the
	// registration and updates only the agent's rights there.
	registration := getCluster(ctx, t, c, "e2e-pull").Annotations[clusterv1alpha1.RegistrationAnnotation]
	again, err := runKarmadactl("register", f[2], "--cluster-name", "e2e-pull", "--propagate-kinds", "deployments.apps,configmaps,secrets",
		"--kubeconfig", fleet.Kubeconfig, "--context", "member2")
	if err != nil || !strings.Contains(again, "cluster(e2e-pull) is registered already; its registration is kept") {
		t.Errorf("register again: %v\n%s", err, again)
	}
	if role, err := mc.RbacV1().ClusterRoles().Get(ctx, register.AgentName, metav1.GetOptions{}); err != nil || role.Annotations[clusterv1alpha1.PropagateKindsAnnotation] != "deployments.apps,configmaps,secrets" {
		t.Errorf("the agent's ClusterRole after register again: %v %v", err, role.Annotations)
	}
	if got := getCluster(ctx, t, c, "e2e-pull").Annotations[clusterv1alpha1.RegistrationAnnotation]; registration == "" || got != registration {
		t.Errorf("register again changed the Cluster's registration: %q, was %q", got, registration)
	}
	// member2 is cluster member2 already: its agent may not claim it as
	// e2e-pull.
	kcFile := filepath.Join(t.TempDir(), "karmada.kubeconfig")
	if err := os.WriteFile(kcFile, s.Data[register.AgentSecretKey], 0o600); err != nil {
		t.Fatal(err)
	}
	actx, cancel := context.WithTimeout(ctx, 60*time.Second)
	defer cancel()
	agentOut, err := exec.CommandContext(actx, filepath.Join(filepath.Dir(fleet.Bin), "karmada-agent"), "--karmada-kubeconfig", kcFile,
		"--kubeconfig", filepath.Join(fleet.StateDir, "member2", "admin.kubeconfig"), "--cluster-name", "e2e-pull",
		"--metrics-bind-address", "0", "--health-probe-bind-address", "0").CombinedOutput()
	if err == nil || actx.Err() != nil || !strings.Contains(string(agentOut), `the member is already cluster "member2"`) {
		t.Errorf("an agent claiming member2 as e2e-pull: want it refused, naming member2 (err %v)\n%s", err, tail(string(agentOut), 15))
	}
	if got := getCluster(ctx, t, c, "e2e-pull"); got.Spec.ID != "" {
		t.Errorf("e2e-pull took the id %q", got.Spec.ID)
	}

	// unregister removes the Cluster, the agent's rights with it, and the
	// agent's kubeconfig in the member.
	if out, err := karmadactl("unregister", "e2e-pull", "--cluster-kubeconfig", fleet.Kubeconfig, "--cluster-context", "member2"); err != nil || !strings.Contains(out, "cluster(e2e-pull) is unregistered") {
		t.Fatalf("unregister: %v\n%s", err, out)
	}
	if err := c.Get(ctx, client.ObjectKey{Name: "e2e-pull"}, &clusterv1alpha1.Cluster{}); !apierrors.IsNotFound(err) {
		t.Errorf("the Cluster after unregister: %v", err)
	}
	if _, err := mc.CoreV1().Secrets(register.AgentNamespace).Get(ctx, register.AgentSecretName, metav1.GetOptions{}); !apierrors.IsNotFound(err) {
		t.Errorf("the agent's Secret after unregister: %v", err)
	}
	if _, err := mc.RbacV1().ClusterRoles().Get(ctx, register.AgentName, metav1.GetOptions{}); !apierrors.IsNotFound(err) {
		t.Errorf("the agent's ClusterRole after unregister: %v", err)
	}
	if _, err := mc.CoreV1().ServiceAccounts(register.AgentNamespace).Get(ctx, register.AgentName, metav1.GetOptions{}); !apierrors.IsNotFound(err) {
		t.Errorf("the agent's ServiceAccount after unregister: %v", err)
	}
	err = wait.PollUntilContextTimeout(ctx, 200*time.Millisecond, 30*time.Second, true, func(ctx context.Context) (bool, error) {
		return apierrors.IsForbidden(ac.Get(ctx, client.ObjectKey{Name: "e2e-pull"}, &clusterv1alpha1.Cluster{})), nil
	})
	if err != nil {
		t.Error("the agent's rights outlived its Cluster")
	}
	// A push-mode cluster is not unregistered.
	if out, err := karmadactl("unregister", "member1"); err == nil || !strings.Contains(out, "use karmadactl unjoin") {
		t.Errorf("unregistering a joined cluster: %v\n%s", err, out)
	}
}

// runKarmadactl runs karmadactl with exactly these arguments.
func runKarmadactl(args ...string) (string, error) {
	out, err := exec.Command(filepath.Join(filepath.Dir(fleet.Bin), "karmadactl"), args...).CombinedOutput()
	return string(out), err
}

// tail is the last n lines of s.
func tail(s string, n int) string {
	lines := strings.Split(strings.TrimRight(s, "\n"), "\n")
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return strings.Join(lines, "\n")
}
