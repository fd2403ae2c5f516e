//go:build hoste2e

package hoste2e

// This file sorts last, and Go runs a package's test files in the order of
// their names: the uninstall takes the control plane away from every test.

import (
	"context"
	"fmt"
	"path/filepath"
	"strings"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	policyv1alpha1 "github.com/karmada-go/karmada/api/policy/v1alpha1"
	"github.com/karmada-go/karmada/internal/testenv"
)

// helm uninstall removes every object of the control plane from the host
// cluster, etcd's claim and volume included, and deletes nothing in the
// members: the workloads Karmada propagated keep running there.
func TestHelmUninstallLeavesNothingBehind(t *testing.T) {
	ctx := t.Context()
	c := karmadaClient(t)
	dep := &appsv1.Deployment{
		ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: "outlives-karmada", Labels: map[string]string{"app": "outlives"}},
		Spec: appsv1.DeploymentSpec{
			Replicas: ptr.To[int32](1),
			Selector: &metav1.LabelSelector{MatchLabels: map[string]string{"app": "outlives"}},
			Template: corev1.PodTemplateSpec{ObjectMeta: metav1.ObjectMeta{Labels: map[string]string{"app": "outlives"}},
				Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "c", Image: "nginx"}}}},
		},
	}
	pp := &policyv1alpha1.PropagationPolicy{
		ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: "outlives-karmada"},
		Spec: policyv1alpha1.PropagationSpec{
			ResourceSelectors: []policyv1alpha1.ResourceSelector{{APIVersion: "apps/v1", Kind: "Deployment", Name: dep.Name}},
			Placement:         policyv1alpha1.Placement{ClusterAffinity: &policyv1alpha1.ClusterAffinity{ClusterNames: []string{"member1"}}},
		},
	}
	if err := c.Create(ctx, dep); err != nil {
		t.Fatal(err)
	}
	if err := c.Create(ctx, pp); err != nil {
		t.Fatal(err)
	}
	m1 := memberKube(t, "member1")
	var uid string
	testenv.Eventually(t, 2*time.Minute, "the workload in member1", func(ctx context.Context) error {
		d, err := m1.AppsV1().Deployments("default").Get(ctx, dep.Name, metav1.GetOptions{})
		if err != nil {
			return err
		}
		uid = string(d.UID)
		return nil
	})
	t.Cleanup(func() {
		_ = m1.AppsV1().Deployments("default").Delete(context.Background(), dep.Name, metav1.DeleteOptions{})
	})

	hk := hostKube(t)
	var volumes []string
	pvs, err := hk.CoreV1().PersistentVolumes().List(ctx, metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	for _, pv := range pvs.Items {
		if pv.Spec.ClaimRef != nil && pv.Spec.ClaimRef.Namespace == namespace {
			volumes = append(volumes, pv.Name)
		}
	}
	if len(volumes) == 0 {
		t.Fatalf("etcd has no volume of the release before the uninstall")
	}

	start := time.Now()
	if out, err := helm("uninstall", release, "--wait", "--timeout", "5m"); err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	t.Logf("helm uninstall took %s", time.Since(start).Round(100*time.Millisecond))
	testenv.Eventually(t, 3*time.Minute, "nothing of the control plane left in the host cluster", func(ctx context.Context) error {
		var left []string
		pods, err := hk.CoreV1().Pods(namespace).List(ctx, metav1.ListOptions{})
		if err != nil {
			return err
		}
		for _, p := range pods.Items {
			left = append(left, "pod/"+p.Name)
		}
		for _, kind := range []string{"deployments", "statefulsets", "jobs", "services", "secrets", "persistentvolumeclaims", "poddisruptionbudgets", "configmaps"} {
			out, err := kubectlHost("get", kind, "-n", namespace, "-o", "name")
			if err != nil {
				return err
			}
			for _, l := range strings.Fields(out) {
				// Kubernetes puts its root CA in every namespace.
				if l == "configmap/kube-root-ca.crt" {
					continue
				}
				left = append(left, l)
			}
		}
		pvs, err := hk.CoreV1().PersistentVolumes().List(ctx, metav1.ListOptions{})
		if err != nil {
			return err
		}
		for _, pv := range pvs.Items {
			for _, v := range volumes {
				if pv.Name == v {
					left = append(left, "persistentvolume/"+v)
				}
			}
		}
		if len(left) > 0 {
			return fmt.Errorf("left behind: %s", strings.Join(left, ", "))
		}
		return nil
	})
	// The volume's directory on the node is gone too.
	entries, _ := filepath.Glob(filepath.Join(lane.hostDir, "volumes", "pvc-*"))
	if len(entries) > 0 {
		t.Errorf("volume directories left on the node: %v", entries)
	}
	// The member keeps what Karmada propagated: uninstalling the control
	// plane deletes no workload.
	d, err := m1.AppsV1().Deployments("default").Get(ctx, dep.Name, metav1.GetOptions{})
	if err != nil || string(d.UID) != uid {
		t.Errorf("the propagated workload in member1 is gone or replaced after the uninstall: %v", err)
	}
	// deinit after helm uninstall has nothing to do and leaves the
	// namespace it did not create.
	out, err := command("", filepath.Join(lane.bin, "karmadactl"), "deinit", "--kubeconfig", lane.hostKubeconfig, "--context", "karmada-host", "--force")
	if err != nil || !strings.Contains(out, "nothing to uninstall") || !strings.Contains(out, "not created by karmadactl init") {
		t.Errorf("deinit after uninstall: %v\n%s", err, out)
	}
}

func TestUninstallRunsLast(t *testing.T) { testenv.RunsLast(t, "zz_uninstall_test.go") }
