//go:build e2e

package e2e

import (
	"context"
	"encoding/json"
	"fmt"
	"os/exec"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	utilrand "k8s.io/apimachinery/pkg/util/rand"
	metricsv1beta1 "k8s.io/metrics/pkg/apis/metrics/v1beta1"

	autoscalingv1alpha1 "github.com/karmada-go/karmada/api/autoscaling/v1alpha1"
	"github.com/karmada-go/karmada/internal/testenv"
)

// memberPods names the pods of namespace ns in each member, "name@member".
func memberPods(ctx context.Context, t *testing.T, ns string, members ...string) ([]string, error) {
	var out []string
	for _, m := range members {
		list, err := kube(t, m).CoreV1().Pods(ns).List(ctx, metav1.ListOptions{})
		if err != nil {
			return nil, err
		}
		for _, p := range list.Items {
			out = append(out, p.Name+"@"+m)
		}
	}
	sort.Strings(out)
	return out, nil
}

// `kubectl top pods` against the karmada-apiserver shows the pods of every
// member (karmada-metrics-adapter asks each member's metrics-server), each
// item of metrics.k8s.io naming its member; nodes likewise; a get of one
// pod answers that member's.
func TestKubectlTopPodsAgainstTheControlPlane(t *testing.T) {
	quiet(t)
	ctx := context.Background()
	c := karmadaClient(t)
	ns := "e2e-top-" + utilrand.String(5)
	createNamespaceUntilCleanup(ctx, t, c, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}})
	d, pp := webDividedOverTwo(ns)
	createUntilCleanup(ctx, t, c, d, pp)
	admin := kube(t, "karmada-apiserver").Discovery().RESTClient()
	var want []string
	testenv.Eventually(t, 120*time.Second, "every member pod's metrics in the control plane's metrics.k8s.io", func(ctx context.Context) error {
		pods, err := memberPods(ctx, t, ns, "member1", "member2")
		if err != nil {
			return err
		}
		if len(pods) != 2 {
			return fmt.Errorf("member pods %v, want one in each member", pods)
		}
		raw, err := admin.Get().AbsPath("/apis/metrics.k8s.io/v1beta1/namespaces/" + ns + "/pods").DoRaw(ctx)
		if err != nil {
			return err
		}
		list := &metricsv1beta1.PodMetricsList{}
		if err := json.Unmarshal(raw, list); err != nil {
			return err
		}
		var got []string
		for _, m := range list.Items {
			got = append(got, m.Name+"@"+m.Annotations[autoscalingv1alpha1.QueryFromClusterAnnotation])
		}
		if !slices.Equal(got, pods) {
			return fmt.Errorf("metrics of %v, want %v (name@member)", got, pods)
		}
		want = pods
		return nil
	})
	kubectl := filepath.Join(filepath.Dir(fleet.Bin), "kubectl")
	out, err := exec.Command(kubectl, "--kubeconfig", fleet.Kubeconfig, "--context", "karmada-apiserver", "top", "pods", "-n", ns).CombinedOutput()
	if err != nil {
		t.Fatalf("kubectl top pods against the control plane: %v\n%s", err, out)
	}
	for _, p := range want {
		if name, _, _ := strings.Cut(p, "@"); !strings.Contains(string(out), name) {
			t.Errorf("kubectl top pods does not show %s:\n%s", p, out)
		}
	}
	// One pod, by name: its member's.
	name, member, _ := strings.Cut(want[0], "@")
	raw, err := admin.Get().AbsPath("/apis/metrics.k8s.io/v1beta1/namespaces/" + ns + "/pods/" + name).DoRaw(ctx)
	one := &metricsv1beta1.PodMetrics{}
	if err != nil || json.Unmarshal(raw, one) != nil || one.Annotations[autoscalingv1alpha1.QueryFromClusterAnnotation] != member {
		t.Errorf("get %s: %v %.300s; want member %s's", name, err, raw, member)
	}
	// Nodes: every node metrics-server has metrics of in member1 and
	// member2 (kwok gives a node without pods none), each naming its member.
	raw, err = admin.Get().AbsPath("/apis/metrics.k8s.io/v1beta1/nodes").DoRaw(ctx)
	nodes := &metricsv1beta1.NodeMetricsList{}
	if err != nil || json.Unmarshal(raw, nodes) != nil {
		t.Fatalf("node metrics: %v %.300s", err, raw)
	}
	for _, m := range []string{"member1", "member2"} {
		own, err := kube(t, m).Discovery().RESTClient().Get().AbsPath("/apis/metrics.k8s.io/v1beta1/nodes").DoRaw(ctx)
		list := &metricsv1beta1.NodeMetricsList{}
		if err != nil || json.Unmarshal(own, list) != nil {
			t.Fatalf("%s's own node metrics: %v %.300s", m, err, own)
		}
		if len(list.Items) == 0 {
			t.Errorf("%s has no node metrics (its nodes run the test's pods)", m)
		}
		for _, n := range list.Items {
			if !slices.ContainsFunc(nodes.Items, func(nm metricsv1beta1.NodeMetrics) bool {
				return nm.Name == n.Name && nm.Annotations[autoscalingv1alpha1.QueryFromClusterAnnotation] == m
			}) {
				t.Errorf("node %s of %s has metrics there but none in the control plane", n.Name, m)
			}
		}
	}
}
