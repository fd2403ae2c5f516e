//go:build e2e

package e2e

import (
	"context"
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
	"github.com/karmada-go/karmada/internal/karmadactl/register"
)

// karmadactl register, with the line token create prints, trusts the
// control plane by the token and the CA's hash, has the agent's certificate
// approved and signed, and leaves the agent's kubeconfig in the member; it
// acts as system:karmada:agent:<name>. A registered name is refused.
func TestRegisterIssuesAgentCredentials(t *testing.T) {
	ctx := context.Background()
	line, err := karmadactl("token", "create", "--ttl", "10m", "--print-register-command")
	if err != nil {
		t.Fatalf("token create: %v\n%s", err, line)
	}
	f := strings.Fields(line)
	tokenID, _, _ := strings.Cut(f[4], ".")
	t.Cleanup(func() { _, _ = karmadactl("token", "delete", tokenID) })
	mc := kube(t, "member3")
	_, nsErr := mc.CoreV1().Namespaces().Get(ctx, register.AgentNamespace, metav1.GetOptions{})
	t.Cleanup(func() {
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
	registerAs := func(name string) (string, error) {
		args := append(f[1:], "--cluster-name", name, "--discovery-timeout", "60s")
		return runKarmadactl(append(args, "--kubeconfig", fleet.kubeconfig, "--context", "member3")...)
	}
	out, err := registerAs("e2e-pull")
	if err != nil {
		t.Fatalf("register: %v\n%s", err, out)
	}
	s, err := mc.CoreV1().Secrets(register.AgentNamespace).Get(ctx, register.AgentSecretName, metav1.GetOptions{})
	if err != nil {
		t.Fatalf("the agent's Secret in member3: %v", err)
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
	// member1 is registered (joined): a token holder may not take it over.
	if out, err := registerAs("member1"); err == nil || !strings.Contains(out, "ClusterExists") {
		t.Errorf("registering under a registered name: %v\n%s", err, out)
	}

	// unregister removes the Cluster, the agent's rights with it, and the
	// agent's kubeconfig in the member.
	if out, err := karmadactl("unregister", "e2e-pull", "--cluster-kubeconfig", fleet.kubeconfig, "--cluster-context", "member3"); err != nil || !strings.Contains(out, "cluster(e2e-pull) is unregistered") {
		t.Fatalf("unregister: %v\n%s", err, out)
	}
	if err := c.Get(ctx, client.ObjectKey{Name: "e2e-pull"}, &clusterv1alpha1.Cluster{}); !apierrors.IsNotFound(err) {
		t.Errorf("the Cluster after unregister: %v", err)
	}
	if _, err := mc.CoreV1().Secrets(register.AgentNamespace).Get(ctx, register.AgentSecretName, metav1.GetOptions{}); !apierrors.IsNotFound(err) {
		t.Errorf("the agent's Secret after unregister: %v", err)
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
	out, err := exec.Command(filepath.Join(filepath.Dir(fleet.bin), "karmadactl"), args...).CombinedOutput()
	return string(out), err
}
