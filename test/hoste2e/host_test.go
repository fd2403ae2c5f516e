//go:build hoste2e

package hoste2e

import (
	"context"
	"encoding/json"
	"fmt"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"

	clusterv1alpha1 "github.com/karmada-go/karmada/api/cluster/v1alpha1"
	workv1alpha2 "github.com/karmada-go/karmada/api/work/v1alpha2"
	"github.com/karmada-go/karmada/internal/testenv"
)

// pods of the release, by name.
func releasePods(ctx context.Context, t *testing.T) map[string]corev1.Pod {
	t.Helper()
	list, err := hostKube(t).CoreV1().Pods(namespace).List(ctx, metav1.ListOptions{LabelSelector: "app.kubernetes.io/instance=" + release})
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]corev1.Pod{}
	for _, p := range list.Items {
		out[p.Name] = p
	}
	return out
}

func podReady(p corev1.Pod) bool {
	for _, c := range p.Status.Conditions {
		if c.Type == corev1.PodReady {
			return c.Status == corev1.ConditionTrue
		}
	}
	return false
}

// Every component runs as a real container, Ready, under restricted Pod
// Security, without a token of the host cluster; the setup Job completed.
func TestEveryComponentRunsAsARealPod(t *testing.T) {
	ctx := t.Context()
	t.Logf("helm install to every pod Ready: %s", lane.installTime.Round(100*time.Millisecond))
	ns, err := hostKube(t).CoreV1().Namespaces().Get(ctx, namespace, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if ns.Labels["pod-security.kubernetes.io/enforce"] != "restricted" {
		t.Fatalf("namespace %s does not enforce restricted Pod Security: %v", namespace, ns.Labels)
	}
	want := []string{"etcd", "karmada-aggregated-apiserver", "karmada-apiserver", "karmada-controller-manager", "karmada-scheduler", "karmada-webhook", "kube-controller-manager"}
	var got []string
	jobs := 0
	for name, p := range releasePods(ctx, t) {
		if p.Labels["app"] == "karmada-setup" {
			if p.Status.Phase == corev1.PodSucceeded {
				jobs++
			}
			continue
		}
		if p.DeletionTimestamp != nil {
			continue
		}
		if !podReady(p) || p.Spec.NodeName != "karmada-host" {
			t.Errorf("pod %s is not Ready on the node (phase %s, node %q)", name, p.Status.Phase, p.Spec.NodeName)
		}
		got = append(got, p.Labels["app"])
		for _, c := range p.Status.ContainerStatuses {
			if !strings.HasPrefix(c.ContainerID, "containerd://") || c.State.Running == nil {
				t.Errorf("pod %s container %s is not a running containerd container: %+v", name, c.Name, c.State)
			}
		}
		for _, v := range p.Spec.Volumes {
			if v.Projected != nil && strings.HasPrefix(v.Name, "kube-api-access-") {
				t.Errorf("pod %s holds a service account token of the host cluster (volume %s)", name, v.Name)
			}
		}
	}
	sort.Strings(got)
	if !slices.Equal(want, got) {
		t.Errorf("components running %v, want %v", got, want)
	}
	if jobs < 1 {
		t.Errorf("no setup Job pod completed")
	}
	// Memory of the control plane as pods, from the kubelet.
	raw, err := hostKube(t).CoreV1().RESTClient().Get().AbsPath("/api/v1/nodes/karmada-host/proxy/stats/summary").DoRaw(ctx)
	if err != nil {
		t.Fatalf("reading the kubelet's stats summary: %v", err)
	}
	var summary struct {
		Pods []struct {
			PodRef struct{ Name, Namespace string } `json:"podRef"`
			Memory *struct {
				WorkingSetBytes *uint64 `json:"workingSetBytes"`
			} `json:"memory"`
		} `json:"pods"`
	}
	if err := json.Unmarshal(raw, &summary); err != nil {
		t.Fatal(err)
	}
	var total uint64
	for _, p := range summary.Pods {
		if p.PodRef.Namespace == namespace && p.Memory != nil && p.Memory.WorkingSetBytes != nil {
			t.Logf("memory %-45s %4d MiB", p.PodRef.Name, *p.Memory.WorkingSetBytes>>20)
			total += *p.Memory.WorkingSetBytes
		}
	}
	t.Logf("memory of the control plane as pods: %d MiB", total>>20)
	if total == 0 {
		t.Errorf("the kubelet reports no memory for the control plane's pods")
	}
}

// The seeds' example, through the control plane installed on the host
// cluster: the Deployment reaches member1 (push, its copy applied by the
// controller manager's pod) and member2 (pull, by its agent), and the
// template's status is aggregated.
func TestSeedsExampleThroughTheHostControlPlane(t *testing.T) {
	ctx := t.Context()
	kk := func(args ...string) (string, error) {
		return command("", filepath.Join(lane.bin, "kubectl"), append([]string{"--kubeconfig", lane.karmadaKubeconfig}, args...)...)
	}
	files := []string{filepath.Join(lane.root, "examples", "nginx-deployment.yaml"), filepath.Join(lane.root, "examples", "propagation-policy.yaml")}
	if out, err := kk("apply", "-f", files[0], "-f", files[1]); err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	t.Cleanup(func() {
		_, _ = kk("delete", "--ignore-not-found", "-f", files[0], "-f", files[1])
	})
	c := karmadaClient(t)
	testenv.Eventually(t, 2*time.Minute, "the binding scheduled and fully applied", func(ctx context.Context) error {
		rb := &workv1alpha2.ResourceBinding{}
		if err := c.Get(ctx, types.NamespacedName{Namespace: "default", Name: "nginx-deployment"}, rb); err != nil {
			return err
		}
		for _, cond := range []string{workv1alpha2.Scheduled, workv1alpha2.FullyApplied} {
			if !meta.IsStatusConditionTrue(rb.Status.Conditions, cond) {
				return fmt.Errorf("%s not True: %v", cond, rb.Status.Conditions)
			}
		}
		return nil
	})
	for _, m := range []string{"member1", "member2"} {
		mk := memberKube(t, m)
		testenv.Eventually(t, 2*time.Minute, "nginx available in "+m, func(ctx context.Context) error {
			d, err := mk.AppsV1().Deployments("default").Get(ctx, "nginx", metav1.GetOptions{})
			if err != nil {
				return err
			}
			if d.Status.AvailableReplicas != 1 {
				return fmt.Errorf("available %d", d.Status.AvailableReplicas)
			}
			return nil
		})
	}
	testenv.Eventually(t, time.Minute, "the template's aggregated status", func(ctx context.Context) error {
		d := &appsv1.Deployment{}
		if err := c.Get(ctx, types.NamespacedName{Namespace: "default", Name: "nginx"}, d); err != nil {
			return err
		}
		if d.Status.ReadyReplicas != 2 {
			return fmt.Errorf("ready replicas %d, want 2 (one per member)", d.Status.ReadyReplicas)
		}
		return nil
	})
	// Deleting the template removes the copies.
	if out, err := kk("delete", "-f", files[0]); err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	for _, m := range []string{"member1", "member2"} {
		mk := memberKube(t, m)
		testenv.Eventually(t, 2*time.Minute, "nginx gone from "+m, func(ctx context.Context) error {
			_, err := mk.AppsV1().Deployments("default").Get(ctx, "nginx", metav1.GetOptions{})
			if apierrors.IsNotFound(err) {
				return nil
			}
			return fmt.Errorf("still there (%v)", err)
		})
	}
	_ = ctx
}

// The chart's karmada-aggregated-apiserver serves the Cluster API (no
// Cluster CRD), its columns, and clusters/<name>/proxy reaching a member
// as the caller: member1 refuses the control plane's admin until member1's
// RBAC grants that user view, then kubectl through the karmada-apiserver's
// node port reads member1's namespaces.
func TestClusterAPIThroughTheChartsAggregatedAPIServer(t *testing.T) {
	kk := func(args ...string) (string, error) {
		return command("", filepath.Join(lane.bin, "kubectl"), append([]string{"--kubeconfig", lane.karmadaKubeconfig}, args...)...)
	}
	out, err := kk("get", "apiservice", clusterv1alpha1.APIServiceName, "-o", "jsonpath={.spec.service.name}/{.status.conditions[?(@.type=='Available')].status}")
	if err != nil || out != "karmada-aggregated-apiserver/True" {
		t.Fatalf("APIService %s: %q (%v), want served by karmada-aggregated-apiserver and Available", clusterv1alpha1.APIServiceName, out, err)
	}
	if out, err := kk("get", "crd", "clusters.cluster.karmada.io", "--ignore-not-found", "-o", "name"); err != nil || out != "" {
		t.Errorf("the Cluster CRD is installed: %q (%v)", out, err)
	}
	out, err = kk("get", "clusters")
	if err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	if fields := strings.Fields(strings.SplitN(out, "\n", 2)[0]); !slices.Equal(fields, []string{"NAME", "VERSION", "MODE", "READY", "AGE"}) {
		t.Errorf("columns %v, want Karmada's", fields)
	}
	for _, m := range []string{"member1", "member2"} {
		if !strings.Contains(out, m) {
			t.Errorf("%s not listed:\n%s", m, out)
		}
	}
	// member1 sees the caller (impersonated), whom its RBAC does not know
	// yet: the proxy lends no right of its own.
	raw := "/apis/cluster.karmada.io/v1alpha1/clusters/member1/proxy/api/v1/namespaces/kube-system"
	out, err = kk("get", "--raw", raw)
	if err == nil || !strings.Contains(out, `User "system:karmada:admin" cannot get resource "namespaces"`) {
		t.Fatalf("before member1 grants the control plane's admin anything: %v\n%s", err, out)
	}
	ctx := t.Context()
	mk := memberKube(t, "member1")
	crb := &rbacv1.ClusterRoleBinding{
		ObjectMeta: metav1.ObjectMeta{Name: "hoste2e-karmada-admin-view"},
		RoleRef:    rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: "view"},
		Subjects:   []rbacv1.Subject{{APIGroup: rbacv1.GroupName, Kind: "User", Name: "system:karmada:admin"}},
	}
	if _, err := mk.RbacV1().ClusterRoleBindings().Create(ctx, crb, metav1.CreateOptions{}); err != nil && !apierrors.IsAlreadyExists(err) {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = mk.RbacV1().ClusterRoleBindings().Delete(context.Background(), crb.Name, metav1.DeleteOptions{})
	})
	testenv.Eventually(t, time.Minute, "member1's namespaces through clusters/member1/proxy", func(ctx context.Context) error {
		out, err := kk("get", "--raw", raw)
		if err != nil {
			return fmt.Errorf("%v: %s", err, out)
		}
		ns := &corev1.Namespace{}
		if err := json.Unmarshal([]byte(out), ns); err != nil || ns.Name != "kube-system" {
			return fmt.Errorf("not member1's kube-system (%v): %.200s", err, out)
		}
		return nil
	})
}

// karmadactl init on the cluster the chart was installed on, with the
// flags that give the same values, upgrades the release in place and
// restarts nothing: the same manifests come from the same chart.
func TestKarmadactlInitOnTheInstalledCluster(t *testing.T) {
	ctx := t.Context()
	before := releasePods(ctx, t)
	// The build running now (another test may have upgraded it).
	d, err := hostKube(t).AppsV1().Deployments(namespace).Get(ctx, "karmada-scheduler", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	img := d.Spec.Template.Spec.Containers[0].Image
	out, err := command("", filepath.Join(lane.bin, "karmadactl"), "init", "--kubeconfig", lane.hostKubeconfig, "--context", "karmada-host",
		"--karmada-apiserver-advertise-address", nodeIP, "--port", nodePort, "--karmada-data", t.TempDir(), "--wait-component-ready-timeout", "5m",
		"--image-tag", img[strings.LastIndex(img, ":")+1:])
	if err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	if !strings.Contains(out, "revision") || !strings.Contains(out, "karmada-apiserver.config") {
		t.Errorf("init output:\n%s", out)
	}
	after := releasePods(ctx, t)
	for name, p := range before {
		if p.Labels["app"] == "karmada-setup" || p.DeletionTimestamp != nil {
			continue
		}
		q, ok := after[name]
		if !ok || q.UID != p.UID {
			t.Errorf("pod %s was replaced by init: nothing changed, so nothing should restart", name)
			continue
		}
		for i := range p.Status.ContainerStatuses {
			if i < len(q.Status.ContainerStatuses) && q.Status.ContainerStatuses[i].RestartCount != p.Status.ContainerStatuses[i].RestartCount {
				t.Errorf("pod %s container restarted during init", name)
			}
		}
	}
	// The control plane still answers with the kubeconfig init wrote.
	if _, err := command("", filepath.Join(lane.bin, "kubectl"), "--kubeconfig", lane.karmadaKubeconfig, "get", "clusters"); err != nil {
		t.Fatal(err)
	}
}

// Acting as the attacker: a component's credentials reach only what
// docs/security.md gives it, and a host-cluster tenant cannot read the
// control plane's keys.
func TestComponentsHoldOnlyTheirOwnRights(t *testing.T) {
	ctx := t.Context()
	hk := hostKube(t)
	identity := func(secret string) kubernetes.Interface {
		s, err := hk.CoreV1().Secrets(namespace).Get(ctx, secret, metav1.GetOptions{})
		if err != nil {
			t.Fatal(err)
		}
		kcfg, err := clientcmd.Load(s.Data["kubeconfig"])
		if err != nil {
			t.Fatal(err)
		}
		if len(s.Data["tls.crt"]) > 0 {
			// A component's certificate: the files beside its kubeconfig
			// in its pod, here from the Secret.
			for _, ai := range kcfg.AuthInfos {
				ai.ClientCertificate, ai.ClientKey = "", ""
				ai.ClientCertificateData, ai.ClientKeyData = s.Data["tls.crt"], s.Data["tls.key"]
			}
		}
		cfg, err := clientcmd.NewDefaultClientConfig(*kcfg, &clientcmd.ConfigOverrides{}).ClientConfig()
		if err != nil {
			t.Fatal(err)
		}
		// The in-cluster name is for pods; the test dials the node port.
		cfg.Host = "https://" + nodeIP + ":" + nodePort
		kc, err := kubernetes.NewForConfig(cfg)
		if err != nil {
			t.Fatal(err)
		}
		return kc
	}
	forbidden := func(what string, err error) {
		t.Helper()
		if !apierrors.IsForbidden(err) {
			t.Errorf("%s: %v, want Forbidden", what, err)
		}
	}
	sched := identity("karmada-scheduler-kubeconfig")
	_, err := sched.CoreV1().Secrets("karmada-cluster").List(ctx, metav1.ListOptions{})
	forbidden("the scheduler lists member credentials", err)
	_, err = sched.AppsV1().Deployments("default").List(ctx, metav1.ListOptions{})
	forbidden("the scheduler reads templates", err)
	cm := identity("karmada-controller-manager-kubeconfig")
	_, err = cm.CoreV1().Pods("default").Create(ctx, &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "x"}, Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "x", Image: "x"}}}}, metav1.CreateOptions{})
	forbidden("the controller manager creates a pod", err)
	wh := identity("karmada-webhook-kubeconfig")
	_, err = wh.CoreV1().Secrets("karmada-cluster").List(ctx, metav1.ListOptions{})
	forbidden("the webhook lists member credentials", err)
	ag := identity("karmada-aggregated-apiserver-kubeconfig")
	_, err = ag.CoreV1().Secrets("default").List(ctx, metav1.ListOptions{})
	forbidden("karmada-aggregated-apiserver lists Secrets outside karmada-cluster", err)
	// No component's identity is an administrator.
	for _, kc := range []kubernetes.Interface{sched, cm, wh, ag} {
		_, err := kc.RbacV1().ClusterRoleBindings().Create(ctx, &rbacBinding, metav1.CreateOptions{DryRun: []string{metav1.DryRunAll}})
		forbidden("a component binds cluster-admin", err)
	}

	// A tenant of the host cluster with every right in a namespace of its
	// own cannot read the control plane's Secrets.
	tenantNS := "hoste2e-tenant"
	if _, err := hk.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: tenantNS}}, metav1.CreateOptions{}); err != nil && !apierrors.IsAlreadyExists(err) {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = hk.CoreV1().Namespaces().Delete(context.Background(), tenantNS, metav1.DeleteOptions{}) })
	if _, err := hk.RbacV1().RoleBindings(tenantNS).Create(ctx, tenantAdmin(tenantNS), metav1.CreateOptions{}); err != nil && !apierrors.IsAlreadyExists(err) {
		t.Fatal(err)
	}
	tcfg := rest.CopyConfig(hostConfig())
	tcfg.Impersonate = rest.ImpersonationConfig{UserName: "tenant", Groups: []string{"system:authenticated"}}
	tenant, err := kubernetes.NewForConfig(tcfg)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := tenant.CoreV1().ConfigMaps(tenantNS).List(ctx, metav1.ListOptions{}); err != nil {
		t.Fatalf("the tenant cannot use its own namespace: %v", err)
	}
	_, err = tenant.CoreV1().Secrets(namespace).Get(ctx, "karmada-cert", metav1.GetOptions{})
	forbidden("a host tenant reads the control plane's CA", err)

	// Only the kube-controller-manager and the setup Job see the CA key.
	var holders []string
	for name, p := range releasePods(ctx, t) {
		for _, v := range p.Spec.Volumes {
			if v.Secret != nil && v.Secret.SecretName == "karmada-cert" {
				for _, it := range v.Secret.Items {
					if it.Key == "ca.key" {
						holders = append(holders, p.Labels["app"])
					}
				}
			}
		}
		_ = name
	}
	for _, h := range holders {
		if h != "kube-controller-manager" && h != "karmada-setup" {
			t.Errorf("pod of %s mounts the CA key", h)
		}
	}
}

var rbacBinding = rbacClusterAdminBinding()

func mustJSON(t *testing.T, b []byte, into any) {
	t.Helper()
	if err := json.Unmarshal(b, into); err != nil {
		t.Fatal(err)
	}
}
