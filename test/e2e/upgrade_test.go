//go:build e2e

package e2e

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	clusterv1alpha1 "github.com/karmada-go/karmada/api/cluster/v1alpha1"
	policyv1alpha1 "github.com/karmada-go/karmada/api/policy/v1alpha1"
	workv1alpha1 "github.com/karmada-go/karmada/api/work/v1alpha1"
	"github.com/karmada-go/karmada/internal/bench"
	"github.com/karmada-go/karmada/internal/scheme"
	"github.com/karmada-go/karmada/internal/testenv"
)

// A fleet started by the build before in-place upgrades existed (make
// upgrade-from: our binaries at $UPGRADE_FROM, the same upstream ones), with
// 100 templates propagated, is upgraded by this build's `karmada-local up`:
// every process whose binary or flags changed is restarted, nothing is lost,
// no member copy is re-created, and no member copy is written again (the
// members' Deployment writes counted across the upgrade: zero).
func TestUpgradeInPlace(t *testing.T) {
	quiet(t)
	oldBin := os.Getenv("KARMADA_UPGRADE_FROM_BIN_DIR")
	if oldBin == "" {
		oldBin = filepath.Join(testenv.RepoRoot(), "_output", "upgrade-from", "bin")
	}
	if _, err := os.Stat(filepath.Join(oldBin, "karmada-local")); err != nil {
		t.Fatalf("the build to upgrade from is missing (%v): run `make upgrade-from` (make test-e2e does)", err)
	}
	newBin := filepath.Dir(fleet.Bin)
	dir := t.TempDir()
	state, kubeconfig := filepath.Join(dir, "state"), filepath.Join(dir, "kubeconfig")
	// A fleet of its own, apart from the lane's (24000) and the others'.
	args := []string{"--members", "2", "--nodes-per-member", "1", "--pull-members", "member2", "--port-base", "27000", "--kubeconfig", kubeconfig, "--state-dir", state}
	run := func(bin string, sub ...string) string {
		t.Helper()
		cmd := exec.Command(filepath.Join(bin, "karmada-local"), append(sub, append(args, "--bin-dir", bin)...)...)
		var out bytes.Buffer
		cmd.Stdout, cmd.Stderr = &out, &out
		if err := cmd.Run(); err != nil {
			t.Fatalf("%s/karmada-local %s: %v\n%s", bin, strings.Join(sub, " "), err, out.String())
		}
		return out.String()
	}
	run(oldBin, "up")
	t.Cleanup(func() {
		cmd := exec.Command(filepath.Join(newBin, "karmada-local"), "down", "--purge", "--state-dir", state)
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Errorf("down --purge: %v\n%s", err, out)
		}
	})
	restCfg := func(context string) *rest.Config {
		rc, err := clientcmd.NewNonInteractiveDeferredLoadingClientConfig(&clientcmd.ClientConfigLoadingRules{ExplicitPath: kubeconfig},
			&clientcmd.ConfigOverrides{CurrentContext: context}).ClientConfig()
		if err != nil {
			t.Fatal(err)
		}
		rc.Timeout = 30 * time.Second
		rc.QPS, rc.Burst = 100, 200
		return rc
	}
	karmada, err := client.New(restCfg("karmada-apiserver"), client.Options{Scheme: scheme.Scheme})
	if err != nil {
		t.Fatal(err)
	}
	members := map[string]kubernetes.Interface{}
	for _, m := range []string{"member1", "member2"} {
		if members[m], err = kubernetes.NewForConfig(restCfg(m)); err != nil {
			t.Fatal(err)
		}
	}
	ctx := context.Background()
	const ns, templates = "upgrade", 100
	if err := karmada.Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}); err != nil {
		t.Fatal(err)
	}
	if err := karmada.Create(ctx, &policyv1alpha1.PropagationPolicy{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "all"},
		Spec: policyv1alpha1.PropagationSpec{
			ResourceSelectors: []policyv1alpha1.ResourceSelector{{APIVersion: "apps/v1", Kind: "Deployment"}},
			Placement:         policyv1alpha1.Placement{ClusterAffinity: &policyv1alpha1.ClusterAffinity{ClusterNames: []string{"member1", "member2"}}},
		}}); err != nil {
		t.Fatal(err)
	}
	for i := 0; i < templates; i++ {
		labels := map[string]string{"app": fmt.Sprintf("u%03d", i)}
		d := &appsv1.Deployment{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: fmt.Sprintf("u%03d", i)},
			Spec: appsv1.DeploymentSpec{Replicas: ptr.To[int32](1), Selector: &metav1.LabelSelector{MatchLabels: labels},
				Template: corev1.PodTemplateSpec{ObjectMeta: metav1.ObjectMeta{Labels: labels},
					Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "c", Image: "nginx"}}}}}}
		if err := karmada.Create(ctx, d); err != nil {
			t.Fatal(err)
		}
	}
	// Every template available in both members, its status aggregated.
	aggregated := func(ctx context.Context) error {
		var list appsv1.DeploymentList
		if err := karmada.List(ctx, &list, client.InNamespace(ns)); err != nil {
			return err
		}
		done := 0
		for _, d := range list.Items {
			if d.Status.AvailableReplicas == 2 {
				done++
			}
		}
		if done != templates {
			return fmt.Errorf("%d of %d aggregated with 2 available replicas", done, len(list.Items))
		}
		return nil
	}
	testenv.Eventually(t, 3*time.Minute, "100 Deployments available in both members and aggregated", aggregated)
	type copyState struct {
		uid        types.UID
		generation int64
	}
	snapshot := func() map[string]copyState {
		out := map[string]copyState{}
		for m, kc := range members {
			list, err := kc.AppsV1().Deployments(ns).List(ctx, metav1.ListOptions{})
			if err != nil {
				t.Fatal(err)
			}
			for _, d := range list.Items {
				out[m+"/"+d.Name] = copyState{d.UID, d.Generation}
			}
		}
		return out
	}
	works := func() map[string]int64 {
		out := map[string]int64{}
		for _, m := range []string{"member1", "member2"} {
			var list workv1alpha1.WorkList
			if err := karmada.List(ctx, &list, client.InNamespace("karmada-es-"+m)); err != nil {
				t.Fatal(err)
			}
			for _, w := range list.Items {
				out[m+"/"+w.Name] = w.Generation
			}
		}
		return out
	}
	writes := func() map[string]float64 {
		out := map[string]float64{}
		for m, kc := range members {
			c, err := bench.ScrapeRequests(ctx, kc, "deployments")
			if err != nil {
				t.Fatal(err)
			}
			out[m] = c.Mutating
		}
		return out
	}
	// The Clusters, served by the old build's Cluster CRD: the new build's
	// karmada-aggregated-apiserver imports them as they are.
	clusters := func() map[string]string {
		list := &clusterv1alpha1.ClusterList{}
		if err := karmada.List(ctx, list); err != nil {
			t.Fatal(err)
		}
		out := map[string]string{}
		for _, c := range list.Items {
			out[c.Name] = fmt.Sprintf("uid %s, created %s, finalizers %v", c.UID, c.CreationTimestamp.UTC().Format(time.RFC3339), c.Finalizers)
		}
		return out
	}
	clustersBefore := clusters()
	before, worksBefore, writesBefore := snapshot(), works(), writes()
	if len(before) != 2*templates {
		t.Fatalf("%d member copies before the upgrade, want %d", len(before), 2*templates)
	}

	t0 := time.Now()
	out := run(newBin, "up")
	took := time.Since(t0)
	restarted := strings.Count(out, "; restarting it")
	t.Logf("UPGRADE from %s took %s, %d processes restarted:\n%s", oldBin, took.Round(100*time.Millisecond), restarted, out)
	for _, want := range []string{"karmada/karmada-controller-manager (pid", "karmada/karmada-scheduler (pid", "karmada/karmada-webhook (pid", "member2/karmada-agent (pid"} {
		if !strings.Contains(out, want) || !strings.Contains(out, "changed (rebuilt, or another --bin-dir); restarting it") {
			t.Errorf("up with the new build did not restart %s:\n%s", strings.TrimSuffix(want, " (pid"), out)
		}
	}
	// Every component now runs the new build.
	for _, name := range []string{"karmada-controller-manager", "karmada-scheduler", "karmada-webhook"} {
		rec, err := os.ReadFile(filepath.Join(state, "run", "karmada", name+".pid"))
		if err != nil {
			t.Fatal(err)
		}
		var pid int
		if _, err := fmt.Sscanf(string(rec), "%d", &pid); err != nil {
			t.Fatal(err)
		}
		exe, err := os.Readlink(fmt.Sprintf("/proc/%d/exe", pid))
		if err != nil || exe != filepath.Join(newBin, name) {
			t.Errorf("%s runs %q (%v), want %s", name, exe, err, filepath.Join(newBin, name))
		}
	}
	// The Cluster API moved to karmada-aggregated-apiserver, every Cluster
	// with it unchanged (the objects a Cluster owns, such as the pull
	// agent's RBAC, keep their owner).
	apiService := &unstructured.Unstructured{}
	apiService.SetAPIVersion("apiregistration.k8s.io/v1")
	apiService.SetKind("APIService")
	if err := karmada.Get(ctx, client.ObjectKey{Name: "v1alpha1.cluster.karmada.io"}, apiService); err != nil {
		t.Fatal(err)
	}
	if name, _, _ := unstructured.NestedString(apiService.Object, "spec", "service", "name"); name != "karmada-aggregated-apiserver" {
		t.Errorf("after the upgrade the Cluster API is served by %q, want karmada-aggregated-apiserver", name)
	}
	if after := clusters(); fmt.Sprint(after) != fmt.Sprint(clustersBefore) || len(after) != 2 {
		t.Errorf("Clusters changed by the move to karmada-aggregated-apiserver:\nbefore %v\nafter  %v", clustersBefore, after)
	}
	// Still converged: status aggregated again by the new build, every
	// template still in both members.
	testenv.Eventually(t, 2*time.Minute, "100 Deployments still available and aggregated after the upgrade", aggregated)
	// Nothing is written to the members after that either, while the
	// restarted controllers and agent go through every Work.
	testenv.Consistently(t, 15*time.Second, "no Deployment written to the members after the upgrade", func(ctx context.Context) error {
		now := writes()
		for m := range members {
			if d := now[m] - writesBefore[m]; d < 0 {
				return fmt.Errorf("%s's API server was restarted by the upgrade (its request counters went back): nothing in a member should restart when only Karmada's binaries change", m)
			} else if d != 0 {
				return fmt.Errorf("%s: %.0f Deployment writes since before the upgrade", m, d)
			}
		}
		return nil
	})
	after := snapshot()
	recreated, rewritten := 0, 0
	for k, b := range before {
		a, ok := after[k]
		switch {
		case !ok:
			t.Errorf("member copy %s lost in the upgrade", k)
		case a.uid != b.uid:
			recreated++
		case a.generation != b.generation:
			rewritten++
		}
	}
	writesAfter := writes()
	var memberWrites float64
	for m := range members {
		memberWrites += writesAfter[m] - writesBefore[m]
	}
	worksAfter := works()
	worksChanged := 0
	for k, g := range worksBefore {
		if worksAfter[k] != g {
			worksChanged++
		}
	}
	t.Logf("UPGRADE %d member copies re-created, %d with their spec changed, %.0f Deployment writes to the members (re-applies), %d of %d Works changed", recreated, rewritten, memberWrites, worksChanged, len(worksBefore))
	if recreated != 0 || rewritten != 0 {
		t.Errorf("the upgrade re-created %d member copies and changed the spec of %d", recreated, rewritten)
	}
	if memberWrites != 0 {
		t.Errorf("the upgrade wrote the members' Deployments %.0f times, want 0 (needless re-applies)", memberWrites)
	}
}
