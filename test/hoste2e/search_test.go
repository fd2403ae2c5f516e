//go:build hoste2e

package hoste2e

import (
	"context"
	"encoding/json"
	"fmt"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	utilrand "k8s.io/apimachinery/pkg/util/rand"
	"k8s.io/client-go/kubernetes"
	"k8s.io/utils/ptr"

	autoscalingv1alpha1 "github.com/karmada-go/karmada/api/autoscaling/v1alpha1"
	policyv1alpha1 "github.com/karmada-go/karmada/api/policy/v1alpha1"
	searchv1alpha1 "github.com/karmada-go/karmada/api/search/v1alpha1"
	"github.com/karmada-go/karmada/internal/testenv"
)

// testSearchComponent: karmada-search, its APIService registered by the
// setup Job, caches a Deployment of member1 that a ResourceRegistry
// selects.
func testSearchComponent(t *testing.T) {
	ctx := t.Context()
	m1 := memberKube(t, "member1")
	ns := "default"
	name := "hoste2e-search-" + utilrand.String(5)
	dep := deploymentNamed(ns, name)
	if _, err := m1.AppsV1().Deployments(ns).Create(ctx, dep, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = m1.AppsV1().Deployments(ns).Delete(context.Background(), name, metav1.DeleteOptions{}) })
	c := karmadaClient(t)
	rr := &searchv1alpha1.ResourceRegistry{ObjectMeta: metav1.ObjectMeta{Name: name},
		Spec: searchv1alpha1.ResourceRegistrySpec{
			TargetCluster:     policyv1alpha1.ClusterAffinity{ClusterNames: []string{"member1"}},
			ResourceSelectors: []searchv1alpha1.ResourceSelector{{APIVersion: "apps/v1", Kind: "Deployment"}},
		}}
	if err := c.Create(ctx, rr); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = c.Delete(context.Background(), rr) })
	kc, err := kubernetes.NewForConfig(karmadaConfig())
	if err != nil {
		t.Fatal(err)
	}
	testenv.Eventually(t, 2*time.Minute, "member1's Deployment through the search API", func(ctx context.Context) error {
		raw, err := kc.Discovery().RESTClient().Get().AbsPath("/apis/search.karmada.io/v1alpha1/search/cache/apis/apps/v1/namespaces/" + ns + "/deployments/" + name).DoRaw(ctx)
		if err != nil {
			return fmt.Errorf("%v: %.300s", err, raw)
		}
		var obj struct {
			Metadata metav1.ObjectMeta `json:"metadata"`
		}
		if err := json.Unmarshal(raw, &obj); err != nil {
			return err
		}
		if obj.Metadata.Annotations[searchv1alpha1.CachedFromClusterAnnotation] != "member1" {
			return fmt.Errorf("annotations %v", obj.Metadata.Annotations)
		}
		return nil
	})
}

func deploymentNamed(ns, name string) *appsv1.Deployment {
	return &appsv1.Deployment{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name},
		Spec: appsv1.DeploymentSpec{
			Replicas: ptr.To[int32](1),
			Selector: &metav1.LabelSelector{MatchLabels: map[string]string{"app": name}},
			Template: corev1.PodTemplateSpec{ObjectMeta: metav1.ObjectMeta{Labels: map[string]string{"app": name}},
				Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "main", Image: "nginx"}}}},
		},
	}
}

// testMetricsAdapterComponent: karmada-metrics-adapter, its APIService
// v1beta1.metrics.k8s.io registered by the setup Job, serves in the host's
// control plane the metrics of a pod of member1 (from member1's
// metrics-server), annotated with member1.
func testMetricsAdapterComponent(t *testing.T) {
	ctx := t.Context()
	m1 := memberKube(t, "member1")
	ns := "default"
	name := "hoste2e-metrics-" + utilrand.String(5)
	if _, err := m1.AppsV1().Deployments(ns).Create(ctx, deploymentNamed(ns, name), metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = m1.AppsV1().Deployments(ns).Delete(context.Background(), name, metav1.DeleteOptions{}) })
	kc, err := kubernetes.NewForConfig(karmadaConfig())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if t.Failed() {
			out, _ := kubectlHost("logs", "-n", namespace, "-l", "app=karmada-metrics-adapter", "--tail=40")
			t.Logf("karmada-metrics-adapter's log:\n%s", out)
			raw, err := m1.Discovery().RESTClient().Get().AbsPath("/apis/metrics.k8s.io/v1beta1/namespaces/" + ns + "/pods").DoRaw(context.Background())
			t.Logf("member1's own pod metrics: %v %.600s", err, raw)
		}
	})
	testenv.Eventually(t, 2*time.Minute, "member1's pod metrics through the control plane's metrics.k8s.io", func(ctx context.Context) error {
		raw, err := kc.Discovery().RESTClient().Get().AbsPath("/apis/metrics.k8s.io/v1beta1/namespaces/"+ns+"/pods").Param("labelSelector", "app="+name).DoRaw(ctx)
		if err != nil {
			return fmt.Errorf("%v: %.300s", err, raw)
		}
		var list struct {
			Items []struct {
				Metadata metav1.ObjectMeta `json:"metadata"`
			} `json:"items"`
		}
		if err := json.Unmarshal(raw, &list); err != nil {
			return err
		}
		if len(list.Items) != 1 || list.Items[0].Metadata.Annotations[autoscalingv1alpha1.QueryFromClusterAnnotation] != "member1" {
			return fmt.Errorf("items %+v, want member1's pod", list.Items)
		}
		return nil
	})
}
