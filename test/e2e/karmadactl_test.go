//go:build e2e

package e2e

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	utilrand "k8s.io/apimachinery/pkg/util/rand"
	"k8s.io/client-go/kubernetes"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	policyv1alpha1 "github.com/karmada-go/karmada/api/policy/v1alpha1"
	workv1alpha1 "github.com/karmada-go/karmada/api/work/v1alpha1"
	workv1alpha2 "github.com/karmada-go/karmada/api/work/v1alpha2"
	"github.com/karmada-go/karmada/internal/localup/kwok"
	"github.com/karmada-go/karmada/internal/names"
	"github.com/karmada-go/karmada/internal/testenv"
)

// kctl runs karmadactl against the fleet's control plane, with a discovery
// cache of the test's own, and returns stdout and stderr apart.
func kctl(t *testing.T, args ...string) (stdout, stderr string, err error) {
	t.Helper()
	return kctlWith(t, fleet.Kubeconfig, args...)
}

// kctlWith runs karmadactl with another kubeconfig (another identity).
func kctlWith(t *testing.T, kubeconfig string, args ...string) (stdout, stderr string, err error) {
	t.Helper()
	// The global flags first: what follows "--" is exec's command.
	cmd := exec.Command(filepath.Join(filepath.Dir(fleet.Bin), "karmadactl"),
		append([]string{"--kubeconfig", kubeconfig, "--karmada-context", "karmada-apiserver"}, args...)...)
	cmd.Env = append(os.Environ(), "KUBECACHEDIR="+t.TempDir())
	var o, e bytes.Buffer
	cmd.Stdout, cmd.Stderr = &o, &e
	err = cmd.Run()
	return o.String(), e.String(), err
}

// tableRows are a table's rows by their first column's value and the
// value of column col (by header), e.g. rows[name+"@"+cluster] = adoption.
func tableColumn(t *testing.T, out, key1, key2, col string) map[string]string {
	t.Helper()
	lines := strings.Split(strings.TrimSpace(out), "\n")
	if len(lines) == 0 {
		t.Fatalf("no table in %q", out)
	}
	header := strings.Fields(lines[0])
	idx := func(name string) int {
		i := slices.Index(header, name)
		if i < 0 {
			t.Fatalf("no column %s in %v", name, header)
		}
		return i
	}
	a, b, c := idx(key1), idx(key2), idx(col)
	rows := map[string]string{}
	for _, l := range lines[1:] {
		f := strings.Fields(l)
		if len(f) != len(header) {
			t.Fatalf("row %q does not match the header %v", l, header)
		}
		rows[f[a]+"@"+f[b]] = f[c]
	}
	return rows
}

// karmadactl get lists a template and its members' copies in one table:
// CLUSTER is Karmada for the control plane, ADOPTION says whether Karmada
// manages a member's object; -C limits the members; -o yaml marks a
// member's object with the cluster; the pull member without a proxy URL is
// skipped with a note, and named with -C, refused.
func TestKarmadactlGetAcrossClusters(t *testing.T) {
	ctx := context.Background()
	c := karmadaClient(t)
	ns := "e2e-kget-" + utilrand.String(5)
	createUntilCleanup(ctx, t, c, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}})
	dep := kctlDeployment(ns, "web", 1)
	pp := &policyv1alpha1.PropagationPolicy{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "web"},
		Spec: policyv1alpha1.PropagationSpec{
			ResourceSelectors: []policyv1alpha1.ResourceSelector{{APIVersion: "apps/v1", Kind: "Deployment", Name: "web"}},
			Placement:         policyv1alpha1.Placement{ClusterAffinity: &policyv1alpha1.ClusterAffinity{ClusterNames: []string{"member1", "member2"}}},
		}}
	createUntilCleanup(ctx, t, c, pp, dep)
	for _, m := range []string{"member1", "member2"} {
		kc := kube(t, m)
		testenv.Eventually(t, 90*time.Second, "web available in "+m, func(ctx context.Context) error {
			return available(ctx, kc, ns, "web", 1)
		})
	}
	// An object of member2 that Karmada does not manage.
	if _, err := kube(t, "member2").AppsV1().Deployments(ns).Create(ctx, kctlDeployment(ns, "own", 1), metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}

	out, errOut, err := kctl(t, "get", "deployments", "-n", ns, "--operation-scope", "all")
	if err != nil {
		t.Fatalf("get --operation-scope all: %v\n%s%s", err, out, errOut)
	}
	got := tableColumn(t, out, "NAME", "CLUSTER", "ADOPTION")
	want := map[string]string{"web@Karmada": "-", "web@member1": "Y", "web@member2": "Y", "own@member2": "N"}
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("rows (name@cluster: adoption) %v, want %v:\n%s", got, want, out)
	}
	if !strings.Contains(errOut, "Skipping cluster member3") || !strings.Contains(errOut, "proxyURL") {
		t.Errorf("the pull member without a proxy URL is not reported as skipped: %q", errOut)
	}
	// The control plane's own columns are kept (READY, UP-TO-DATE, ...).
	if h := strings.Fields(strings.SplitN(out, "\n", 2)[0]); !slices.Equal(h, []string{"NAME", "CLUSTER", "READY", "UP-TO-DATE", "AVAILABLE", "AGE", "ADOPTION"}) {
		t.Errorf("header %v, want Karmada's", h)
	}

	out, errOut, err = kctl(t, "get", "deployment", "web", "-n", ns, "--operation-scope", "members", "-C", "member1")
	if err != nil {
		t.Fatalf("get -C member1: %v\n%s%s", err, out, errOut)
	}
	if got := tableColumn(t, out, "NAME", "CLUSTER", "ADOPTION"); fmt.Sprint(got) != fmt.Sprint(map[string]string{"web@member1": "Y"}) {
		t.Errorf("-C member1: %v\n%s", got, out)
	}
	out, _, err = kctl(t, "get", "deployment", "web", "-n", ns, "--operation-scope", "members", "-C", "member2", "-o", "yaml")
	if err != nil || !strings.Contains(out, "resource.karmada.io/cached-from-cluster: member2") || !strings.Contains(out, "karmada.io/managed: \"true\"") {
		t.Errorf("-o yaml of member2's copy (%v):\n%s", err, out)
	}
	// Bad flags are refused, naming them.
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"get", "deploy", "--operation-scope", "everywhere"}, "--operation-scope"},
		{[]string{"get", "deploy", "--operation-scope", "members", "-C", "member9"}, `"member9" is not a member`},
		{[]string{"get", "deploy", "--operation-scope", "members", "-C", "member3"}, "proxyURL"},
		{[]string{"get", "deploy", "-C", "member1"}, "--clusters goes with"},
	} {
		_, errOut, err := kctl(t, tc.args...)
		if err == nil || !strings.Contains(errOut, tc.want) {
			t.Errorf("%v: %v %q, want an error naming %q", tc.args, err, errOut, tc.want)
		}
	}
}

func kctlDeployment(ns, name string, replicas int32) *appsv1.Deployment {
	return &appsv1.Deployment{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name},
		Spec: appsv1.DeploymentSpec{
			Replicas: ptr.To(replicas),
			Selector: &metav1.LabelSelector{MatchLabels: map[string]string{"app": name}},
			Template: corev1.PodTemplateSpec{
				ObjectMeta: metav1.ObjectMeta{Labels: map[string]string{"app": name}},
				Spec:       corev1.PodSpec{Containers: []corev1.Container{{Name: "main", Image: "nginx:1.27"}}},
			},
		},
	}
}

func available(ctx context.Context, kc kubernetes.Interface, ns, name string, want int32) error {
	d, err := kc.AppsV1().Deployments(ns).Get(ctx, name, metav1.GetOptions{})
	if err != nil {
		return err
	}
	if d.Status.AvailableReplicas != want {
		return fmt.Errorf("%d available, want %d", d.Status.AvailableReplicas, want)
	}
	return nil
}

// kubectl's commands through the cluster proxy: logs (kwok serves a fixed
// text), exec (kwok runs the command on this machine, as nobody, only in
// the namespace karmada-local-exec), describe, api-resources, explain; top
// fails as kwok members have no Metrics API.
func TestKarmadactlLogsExecDescribe(t *testing.T) {
	quiet(t)
	ctx := context.Background()
	m1 := kube(t, "member1")
	if _, err := m1.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: kwok.ExecNamespace}}, metav1.CreateOptions{}); err == nil {
		t.Cleanup(func() {
			_ = m1.CoreV1().Namespaces().Delete(context.Background(), kwok.ExecNamespace, metav1.DeleteOptions{})
		})
	} else if !apierrors.IsAlreadyExists(err) {
		t.Fatal(err)
	}
	pod := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: kwok.ExecNamespace, Name: "shell-" + utilrand.String(5)},
		Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "shell", Image: "busybox"}}}}
	if _, err := m1.CoreV1().Pods(pod.Namespace).Create(ctx, pod, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = m1.CoreV1().Pods(pod.Namespace).Delete(context.Background(), pod.Name, metav1.DeleteOptions{GracePeriodSeconds: ptr.To[int64](0)})
	})
	testenv.Eventually(t, 60*time.Second, "the pod running", func(ctx context.Context) error {
		p, err := m1.CoreV1().Pods(pod.Namespace).Get(ctx, pod.Name, metav1.GetOptions{})
		if err != nil {
			return err
		}
		if p.Status.Phase != corev1.PodRunning {
			return fmt.Errorf("phase %s", p.Status.Phase)
		}
		return nil
	})
	run := func(args ...string) string {
		t.Helper()
		out, errOut, err := kctl(t, args...)
		if err != nil {
			t.Fatalf("karmadactl %v: %v\n%s%s", args, err, out, errOut)
		}
		return out
	}
	if out := run("logs", pod.Name, "-n", pod.Namespace, "-C", "member1"); !strings.Contains(out, "simulated by kwok") {
		t.Errorf("logs through the proxy: %q", out)
	}
	// The shell computes: the command really ran.
	if out := run("exec", pod.Name, "-n", pod.Namespace, "--operation-scope", "members", "-C", "member1", "--", "sh", "-c", "echo answer-$((6*7))"); strings.TrimSpace(out) != "answer-42" {
		t.Errorf("exec through the proxy: %q", out)
	}
	// kwok runs exec's command on this machine: only in pods of
	// karmada-local-exec. A pod elsewhere refuses it.
	other := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: "noexec-" + utilrand.String(5)},
		Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "shell", Image: "busybox"}}}}
	if _, err := m1.CoreV1().Pods(other.Namespace).Create(ctx, other, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = m1.CoreV1().Pods(other.Namespace).Delete(context.Background(), other.Name, metav1.DeleteOptions{GracePeriodSeconds: ptr.To[int64](0)})
	})
	testenv.Eventually(t, 60*time.Second, "the other pod running", func(ctx context.Context) error {
		p, err := m1.CoreV1().Pods(other.Namespace).Get(ctx, other.Name, metav1.GetOptions{})
		if err != nil {
			return err
		}
		if p.Status.Phase != corev1.PodRunning {
			return fmt.Errorf("phase %s", p.Status.Phase)
		}
		return nil
	})
	if out, errOut, err := kctl(t, "exec", other.Name, "-n", other.Namespace, "--operation-scope", "members", "-C", "member1", "--", "sh", "-c", "echo ran"); err == nil || strings.Contains(out, "ran") || !strings.Contains(errOut, "no exec found") {
		t.Errorf("exec outside %s: %v %q %q, want kwok's refusal", kwok.ExecNamespace, err, out, errOut)
	}
	if out := run("describe", "pod", pod.Name, "-n", pod.Namespace, "--operation-scope", "members", "-C", "member1"); !strings.Contains(out, "Namespace:        "+pod.Namespace) || !strings.Contains(out, pod.Name) || !strings.Contains(out, "Node:") {
		t.Errorf("describe through the proxy:\n%s", out)
	}
	member := run("api-resources", "--operation-scope", "members", "-C", "member1")
	control := run("api-resources")
	if !strings.Contains(control, "propagationpolicies") || strings.Contains(member, "propagationpolicies") || !strings.Contains(member, "deployments") {
		t.Errorf("api-resources: the control plane's lists propagationpolicies (%t), member1's does not (%t) and lists deployments (%t)",
			strings.Contains(control, "propagationpolicies"), !strings.Contains(member, "propagationpolicies"), strings.Contains(member, "deployments"))
	}
	if out := run("explain", "propagationpolicy.spec.placement"); !strings.Contains(out, "clusterAffinity") {
		t.Errorf("explain:\n%s", out)
	}
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"exec", pod.Name, "-n", pod.Namespace, "--operation-scope", "members", "--", "true"}, "--cluster (-C) is required"},
		{[]string{"logs", pod.Name, "-n", pod.Namespace}, "--cluster (-C) is required"},
		{[]string{"describe", "pod", "x", "--operation-scope", "nowhere"}, "--operation-scope"},
	} {
		out, errOut, err := kctl(t, tc.args...)
		if err == nil || !strings.Contains(errOut, tc.want) {
			t.Errorf("%v: %v %q%q, want an error naming %q", tc.args, err, out, errOut, tc.want)
		}
	}
	// The members of the local fleet run metrics-server: top through the
	// cluster proxy lists the pod once its first samples are in.
	testenv.Eventually(t, 90*time.Second, "karmadactl top pods in member1", func(ctx context.Context) error {
		out, errOut, err := kctl(t, "top", "pods", "-n", pod.Namespace, "-C", "member1")
		if err != nil || !strings.Contains(out, pod.Name) {
			return fmt.Errorf("%v: %s%s", err, out, errOut)
		}
		return nil
	})
}

// karmadactl promote takes a Deployment created directly in member1 (and
// the ConfigMap and Secret it reads) under Karmada's control: the template
// and a policy named as Karmada names it are created, the member's
// Deployment keeps its UID and its pods, the template shows its status
// (2 ready replicas) as Karmada aggregates it; a second promote is refused.
func TestKarmadactlPromote(t *testing.T) {
	ctx := context.Background()
	m1 := kube(t, "member1")
	c := karmadaClient(t)
	ns := "e2e-promote-" + utilrand.String(5)
	policyName := names.PolicyName(ns, "legacy", appsv1.SchemeGroupVersion.WithKind("Deployment"))
	if _, err := m1.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		// The template and policy first: the control plane then
		// releases member1's objects.
		_ = c.Delete(context.Background(), &policyv1alpha1.PropagationPolicy{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: policyName}})
		_ = c.Delete(context.Background(), &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}})
		_ = m1.CoreV1().Namespaces().Delete(context.Background(), ns, metav1.DeleteOptions{})
	})
	cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "legacy-config"}, Data: map[string]string{"mode": "old"}}
	if _, err := m1.CoreV1().ConfigMaps(ns).Create(ctx, cm, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	secret := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "legacy-secret"}, StringData: map[string]string{"token": "t"}}
	if _, err := m1.CoreV1().Secrets(ns).Create(ctx, secret, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	dep := kctlDeployment(ns, "legacy", 2)
	dep.Spec.Template.Spec.Containers[0].EnvFrom = []corev1.EnvFromSource{
		{ConfigMapRef: &corev1.ConfigMapEnvSource{LocalObjectReference: corev1.LocalObjectReference{Name: cm.Name}}},
		{SecretRef: &corev1.SecretEnvSource{LocalObjectReference: corev1.LocalObjectReference{Name: secret.Name}}},
	}
	created, err := m1.AppsV1().Deployments(ns).Create(ctx, dep, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	testenv.Eventually(t, 90*time.Second, "legacy available in member1", func(ctx context.Context) error {
		return available(ctx, m1, ns, "legacy", 2)
	})
	podsBefore := podUIDs(ctx, t, m1, ns)

	out, errOut, err := kctl(t, "promote", "deployment", "legacy", "-n", ns, "-C", "member1", "--dependencies")
	if err != nil {
		t.Fatalf("promote: %v\n%s%s", err, out, errOut)
	}
	if !strings.Contains(out, fmt.Sprintf(`Resource "apps/v1, Resource=deployments"(%s/legacy) is promoted successfully`, ns)) {
		t.Errorf("promote printed:\n%s", out)
	}
	testenv.Eventually(t, 90*time.Second, "the binding fully applied and member1's Deployment managed", func(ctx context.Context) error {
		rb := &workv1alpha2.ResourceBinding{}
		if err := c.Get(ctx, client.ObjectKey{Namespace: ns, Name: "legacy-deployment"}, rb); err != nil {
			return err
		}
		if !meta.IsStatusConditionTrue(rb.Status.Conditions, workv1alpha2.FullyApplied) {
			return fmt.Errorf("not FullyApplied: %v", rb.Status.Conditions)
		}
		d, err := m1.AppsV1().Deployments(ns).Get(ctx, "legacy", metav1.GetOptions{})
		if err != nil {
			return err
		}
		if d.Labels[workv1alpha1.ManagedLabel] != "true" {
			return fmt.Errorf("member1's Deployment labels %v", d.Labels)
		}
		if d.UID != created.UID {
			return fmt.Errorf("member1's Deployment was recreated: uid %s, was %s", d.UID, created.UID)
		}
		cm, err := m1.CoreV1().ConfigMaps(ns).Get(ctx, "legacy-config", metav1.GetOptions{})
		if err != nil {
			return err
		}
		if cm.Labels[workv1alpha1.ManagedLabel] != "true" {
			return fmt.Errorf("member1's ConfigMap not managed: %v", cm.Labels)
		}
		s, err := m1.CoreV1().Secrets(ns).Get(ctx, "legacy-secret", metav1.GetOptions{})
		if err != nil {
			return err
		}
		if s.Labels[workv1alpha1.ManagedLabel] != "true" || string(s.Data["token"]) != "t" {
			return fmt.Errorf("member1's Secret not migrated: %v", s.Labels)
		}
		// The template shows what runs, as Karmada aggregates it.
		tmpl := &appsv1.Deployment{}
		if err := c.Get(ctx, client.ObjectKey{Namespace: ns, Name: "legacy"}, tmpl); err != nil {
			return err
		}
		if tmpl.Status.ReadyReplicas != 2 || tmpl.Status.AvailableReplicas != 2 || tmpl.Status.Replicas != 2 {
			return fmt.Errorf("the template's status %+v, want 2 ready of 2", tmpl.Status)
		}
		return nil
	})
	// Nothing restarted: the same pods, still available.
	testenv.Consistently(t, 5*time.Second, "member1's pods untouched", func(ctx context.Context) error {
		if now := podUIDs(ctx, t, m1, ns); !slices.Equal(now, podsBefore) {
			return fmt.Errorf("pods %v, were %v", now, podsBefore)
		}
		return available(ctx, m1, ns, "legacy", 2)
	})
	pp := &policyv1alpha1.PropagationPolicy{}
	if err := c.Get(ctx, client.ObjectKey{Namespace: ns, Name: policyName}, pp); err != nil {
		t.Fatalf("the policy, named as Karmada names it (%s): %v", policyName, err)
	}
	if pp.Spec.ConflictResolution != policyv1alpha1.ConflictOverwrite || !pp.Spec.PropagateDeps || !slices.Equal(pp.Spec.Placement.ClusterAffinity.ClusterNames, []string{"member1"}) {
		t.Errorf("the policy: %+v", pp.Spec)
	}
	if _, errOut, err := kctl(t, "promote", "deployment", "legacy", "-n", ns, "-C", "member1"); err == nil || !strings.Contains(errOut, "managed by Karmada already") {
		t.Errorf("promoting again: %v %q", err, errOut)
	}
}

func podUIDs(ctx context.Context, t *testing.T, kc kubernetes.Interface, ns string) []string {
	t.Helper()
	list, err := kc.CoreV1().Pods(ns).List(ctx, metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, p := range list.Items {
		out = append(out, string(p.UID))
	}
	slices.Sort(out)
	return out
}

// karmadactl apply -C writes the object and a policy placing it on the
// clusters named; applying again changes nothing.
func TestKarmadactlApply(t *testing.T) {
	ctx := context.Background()
	c := karmadaClient(t)
	ns := "e2e-kapply-" + utilrand.String(5)
	createUntilCleanup(ctx, t, c, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}})
	file := filepath.Join(t.TempDir(), "cm.yaml")
	if err := os.WriteFile(file, []byte("apiVersion: v1\nkind: ConfigMap\nmetadata: {name: applied, namespace: "+ns+"}\ndata: {k: v}\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	out, errOut, err := kctl(t, "apply", "-f", file, "-C", "member1")
	if err != nil || !strings.Contains(out, "configmap/applied created") || !strings.Contains(out, "propagationpolicy.policy.karmada.io/applied-configmap created") {
		t.Fatalf("apply -C member1: %v\n%s%s", err, out, errOut)
	}
	inMembers(t, "the applied ConfigMap", []string{"member1"}, true, func(ctx context.Context, kc kubernetes.Interface) error {
		_, err := kc.CoreV1().ConfigMaps(ns).Get(ctx, "applied", metav1.GetOptions{})
		return err
	})
	testenv.Consistently(t, 3*time.Second, "the ConfigMap only in member1", func(ctx context.Context) error {
		if _, err := kube(t, "member2").CoreV1().ConfigMaps(ns).Get(ctx, "applied", metav1.GetOptions{}); !apierrors.IsNotFound(err) {
			return fmt.Errorf("in member2: %v", err)
		}
		return nil
	})
	out, _, err = kctl(t, "apply", "-f", file, "-C", "member1")
	if err != nil || !strings.Contains(out, "configmap/applied unchanged") || !strings.Contains(out, "applied-configmap unchanged") {
		t.Errorf("apply again: %v\n%s", err, out)
	}
	if _, errOut, err := kctl(t, "apply", "-f", file, "-C", "member1", "--all-clusters"); err == nil || !strings.Contains(errOut, "exclude each other") {
		t.Errorf("--all-clusters with -C: %v %q", err, errOut)
	}
}

// Karmada's answers where karmadactl is given something wrong: options
// lists the global flags and refuses an unknown one (exit 1); logs in a
// cluster that is not joined fails with the API server's NotFound for the
// Cluster (exit 1), as Karmada's factory reports it.
func TestKarmadactlOptionsAndUnknownCluster(t *testing.T) {
	out, errOut, err := kctl(t, "options")
	if err != nil || !strings.Contains(out, "The following options can be passed to any command:") || !strings.Contains(out, "--kubeconfig") {
		t.Errorf("options: %v\n%s%s", err, out, errOut)
	}
	_, errOut, err = kctl(t, "options", "--no-such-flag")
	if exitCode(err) != 1 || !strings.Contains(errOut, "unknown flag: --no-such-flag") {
		t.Errorf("options --no-such-flag: exit %d, %q", exitCode(err), errOut)
	}
	_, errOut, err = kctl(t, "logs", "-C", "no-such-member", "pod/x", "-n", "default")
	if exitCode(err) != 1 || !strings.Contains(errOut, `clusters.cluster.karmada.io "no-such-member" not found`) {
		t.Errorf("logs -C no-such-member: exit %d, %q", exitCode(err), errOut)
	}
}
