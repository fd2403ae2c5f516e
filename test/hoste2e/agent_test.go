//go:build hoste2e

package hoste2e

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/tools/clientcmd"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"
	"sigs.k8s.io/controller-runtime/pkg/client"

	clusterv1alpha1 "github.com/karmada-go/karmada/api/cluster/v1alpha1"
	policyv1alpha1 "github.com/karmada-go/karmada/api/policy/v1alpha1"
	"github.com/karmada-go/karmada/internal/testenv"
)

// The chart's agent mode runs for real: member2's agent process is stopped
// and the chart runs the agent as a pod of the host cluster next to its
// member, with the identities register made (in the control plane and in
// the member); the pod applies what the control plane places on member2.
func TestAgentChartRunsNextToItsMember(t *testing.T) {
	ctx := t.Context()
	const member, agentNS = "member2", "karmada-agent-member2"
	if out, err := command("", filepath.Join(lane.bin, "karmada-local"), "--state-dir", lane.fleetDir, "agent", "stop", member); err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	t.Cleanup(func() {
		_, _ = helm("uninstall", "karmada-agent", "--namespace", agentNS, "--wait")
		_ = hostKube(t).CoreV1().Namespaces().Delete(context.Background(), agentNS, metav1.DeleteOptions{})
		if out, err := command("", filepath.Join(lane.bin, "karmada-local"), "--state-dir", lane.fleetDir, "agent", "start", member); err != nil {
			t.Errorf("starting member2's agent again: %v\n%s", err, out)
		}
	})
	hk := hostKube(t)
	ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: agentNS, Labels: map[string]string{"pod-security.kubernetes.io/enforce": "restricted"}}}
	if _, err := hk.CoreV1().Namespaces().Create(ctx, ns, metav1.CreateOptions{}); err != nil && !apierrors.IsAlreadyExists(err) {
		t.Fatal(err)
	}
	// The agent's identity in its member, as register made it, with the
	// certificate embedded for a Secret.
	memberCfg := flatten(t, filepath.Join(lane.fleetDir, member, "karmada-agent", "member.kubeconfig"))
	memberKubeconfig, err := clientcmd.Write(*memberCfg)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := hk.CoreV1().Secrets(agentNS).Create(ctx, &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: member + "-kubeconfig"},
		Data: map[string][]byte{"kubeconfig": memberKubeconfig}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	// Its control plane certificate, from register.
	karmadaCfg := flatten(t, filepath.Join(lane.fleetDir, member, "karmada-agent", "karmada.kubeconfig"))
	ctxName := karmadaCfg.CurrentContext
	auth := karmadaCfg.AuthInfos[karmadaCfg.Contexts[ctxName].AuthInfo]
	cluster := karmadaCfg.Clusters[karmadaCfg.Contexts[ctxName].Cluster]
	dir := t.TempDir()
	files := map[string][]byte{"ca.crt": cluster.CertificateAuthorityData, "tls.crt": auth.ClientCertificateData, "tls.key": auth.ClientKeyData}
	for name, data := range files {
		if len(data) == 0 {
			t.Fatalf("the agent's karmada kubeconfig has no %s", name)
		}
		if err := os.WriteFile(filepath.Join(dir, name), data, 0o600); err != nil {
			t.Fatal(err)
		}
	}
	out, err := command("", filepath.Join(lane.bin, "helm"), "install", "karmada-agent", filepath.Join(lane.root, "charts", "karmada"),
		"--kubeconfig", lane.hostKubeconfig, "--kube-context", "karmada-host", "--namespace", agentNS,
		"--set", "installMode=agent,agent.clusterName="+member+",agent.memberKubeconfigSecret="+member+"-kubeconfig,agent.kubeconfig.server="+cluster.Server,
		"--set-file", "agent.kubeconfig.caCrt="+filepath.Join(dir, "ca.crt")+",agent.kubeconfig.crt="+filepath.Join(dir, "tls.crt")+",agent.kubeconfig.key="+filepath.Join(dir, "tls.key"),
		"--wait", "--timeout", "3m")
	if err != nil {
		dumpPods()
		t.Fatalf("helm install of the agent: %v\n%s", err, out)
	}
	pods, err := hk.CoreV1().Pods(agentNS).List(ctx, metav1.ListOptions{LabelSelector: "app=karmada-agent"})
	if err != nil || len(pods.Items) != 1 || !podReady(pods.Items[0]) {
		t.Fatalf("the agent pod is not Ready: %v %+v", err, pods)
	}
	c := karmadaClient(t)
	testenv.Eventually(t, time.Minute, "member2 Ready with the agent pod", func(ctx context.Context) error {
		cl := &clusterv1alpha1.Cluster{}
		if err := c.Get(ctx, types.NamespacedName{Name: member}, cl); err != nil {
			return err
		}
		if !meta.IsStatusConditionTrue(cl.Status.Conditions, clusterv1alpha1.ClusterConditionReady) {
			return fmt.Errorf("not Ready: %v", cl.Status.Conditions)
		}
		return nil
	})
	cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: "through-the-agent-pod"}, Data: map[string]string{"k": "v"}}
	pp := &policyv1alpha1.PropagationPolicy{
		ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: "through-the-agent-pod"},
		Spec: policyv1alpha1.PropagationSpec{
			ResourceSelectors: []policyv1alpha1.ResourceSelector{{APIVersion: "v1", Kind: "ConfigMap", Name: cm.Name}},
			Placement:         policyv1alpha1.Placement{ClusterAffinity: &policyv1alpha1.ClusterAffinity{ClusterNames: []string{member}}},
		},
	}
	for _, o := range []client.Object{cm, pp} {
		if err := c.Create(ctx, o); err != nil {
			t.Fatal(err)
		}
	}
	t.Cleanup(func() {
		_ = c.Delete(context.Background(), pp)
		_ = c.Delete(context.Background(), cm)
	})
	mk := memberKube(t, member)
	testenv.Eventually(t, time.Minute, "the ConfigMap applied in member2 by the agent pod", func(ctx context.Context) error {
		_, err := mk.CoreV1().ConfigMaps("default").Get(ctx, cm.Name, metav1.GetOptions{})
		return err
	})
}

// flatten loads a kubeconfig with its files read into it.
func flatten(t *testing.T, path string) *clientcmdapi.Config {
	t.Helper()
	cfg, err := clientcmd.LoadFromFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if err := clientcmdapi.FlattenConfig(cfg); err != nil {
		t.Fatal(err)
	}
	return cfg
}
