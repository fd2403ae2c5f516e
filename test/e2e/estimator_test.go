//go:build e2e

package e2e

import (
	"context"
	"fmt"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/util/retry"
	"sigs.k8s.io/controller-runtime/pkg/client"

	policyv1alpha1 "github.com/karmada-go/karmada/api/policy/v1alpha1"
	workv1alpha2 "github.com/karmada-go/karmada/api/work/v1alpha2"
	"github.com/karmada-go/karmada/internal/scheduler"
	"github.com/karmada-go/karmada/internal/scheme"
	"github.com/karmada-go/karmada/internal/testenv"
)

func dynamicDivision() *policyv1alpha1.ReplicaSchedulingStrategy {
	return &policyv1alpha1.ReplicaSchedulingStrategy{ReplicaSchedulingType: policyv1alpha1.ReplicaSchedulingTypeDivided,
		ReplicaDivisionPreference: policyv1alpha1.ReplicaDivisionPreferenceWeighted,
		WeightPreference:          &policyv1alpha1.ClusterPreferences{DynamicWeight: policyv1alpha1.DynamicWeightByAvailableReplicas}}
}

// Replicas of 12 cpu: member1 and member3 have 24 cpu each in total (the
// general estimator would give each 2) but no node larger than 8; only
// member2's 16-cpu nodes fit one. The estimators say so, and every replica
// goes to member2, where it runs.
func TestSchedulerEstimatorPlacesWhereANodeFits(t *testing.T) {
	ctx := context.Background()
	propagate(ctx, t, withCPU(deploymentNamed("nodefit", 2), "12"), policyv1alpha1.Placement{
		ClusterAffinity:   &policyv1alpha1.ClusterAffinity{ClusterNames: []string{"member1", "member2", "member3"}},
		ReplicaScheduling: dynamicDivision(),
	})
	rb := waitScheduled(ctx, t, "nodefit", 2)
	if got := placed(rb); got["member2"] != 2 || len(got) != 1 {
		t.Fatalf("placement %v, want member2=2: no node of member1 or member3 fits a 12-cpu replica", got)
	}
	for _, e := range rb.Status.PlacementExplanation.Clusters {
		if e.Name == "member1" || e.Name == "member3" {
			if e.AvailableReplicas == nil || *e.AvailableReplicas != 0 || e.Plugin != scheduler.AccurateEstimatorStep {
				t.Errorf("%s explained as %+v, want 0 available by %s", e.Name, e, scheduler.AccurateEstimatorStep)
			}
		}
	}
	waitMemberDeployment(ctx, t, "member2", "nodefit", 2)
}

// 100 Deployments of one 4-cpu replica, all for member2, created at once:
// the scheduler places them back to back, faster than member2 shows their
// pods. Replicas just assigned are deducted from the next estimates, so
// member2 is given no more than its nodes hold: every replica placed there
// runs, none waits Pending, and the rest are reported as not fitting.
func TestNoOvercommitWhenManyBindingsAreScheduledAtOnce(t *testing.T) {
	ctx := context.Background()
	c := karmadaClient(t)
	// Created at once: without the client's default rate limit.
	cfg := restConfig(t, "karmada-apiserver")
	cfg.QPS, cfg.Burst = 200, 200
	fast, err := client.New(cfg, client.Options{Scheme: scheme.Scheme})
	if err != nil {
		t.Fatal(err)
	}
	const n = 100
	p := &policyv1alpha1.PropagationPolicy{
		ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: "burst"},
		Spec: policyv1alpha1.PropagationSpec{
			ResourceSelectors: []policyv1alpha1.ResourceSelector{{APIVersion: "apps/v1", Kind: "Deployment", LabelSelector: &metav1.LabelSelector{MatchLabels: map[string]string{"e2e": "burst"}}}},
			Placement:         policyv1alpha1.Placement{ClusterAffinity: &policyv1alpha1.ClusterAffinity{ClusterNames: []string{"member2"}}, ReplicaScheduling: dynamicDivision()},
		},
	}
	if err := c.Create(ctx, p); err != nil {
		t.Fatal(err)
	}
	var wg sync.WaitGroup
	errs := make(chan error, n)
	for i := 0; i < n; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			d := withCPU(deploymentNamed(fmt.Sprintf("burst-%03d", i), 1), "4")
			d.Labels = map[string]string{"e2e": "burst"}
			errs <- fast.Create(ctx, d)
		}()
	}
	wg.Wait()
	close(errs)
	t.Cleanup(func() {
		// One by one (a collection delete of 100 templates outlasts the
		// client's timeout), then wait until member2 runs none of them:
		// the next test must find its cpu free.
		ctx := context.Background()
		for i := 0; i < n; i++ {
			_ = fast.Delete(ctx, deploymentNamed(fmt.Sprintf("burst-%03d", i), 1))
		}
		_ = c.Delete(ctx, p)
		m2 := kube(t, "member2")
		err := wait.PollUntilContextTimeout(ctx, time.Second, 2*time.Minute, true, func(ctx context.Context) (bool, error) {
			l, err := m2.AppsV1().Deployments("default").List(ctx, metav1.ListOptions{LabelSelector: "e2e=burst"})
			return err == nil && len(l.Items) == 0, nil
		})
		if err != nil {
			t.Errorf("member2 still runs the burst's Deployments after cleanup: %v", err)
		}
	})
	for err := range errs {
		if err != nil {
			t.Fatal(err)
		}
	}
	// Every binding gets a verdict: placed, or does not fit.
	var placedThere, refused int
	err = wait.PollUntilContextTimeout(ctx, time.Second, 3*time.Minute, true, func(ctx context.Context) (bool, error) {
		var rbs workv1alpha2.ResourceBindingList
		if err := c.List(ctx, &rbs, client.InNamespace("default")); err != nil {
			return false, nil
		}
		placedThere, refused = 0, 0
		for _, rb := range rbs.Items {
			if !strings.HasPrefix(rb.Name, "burst-") {
				continue
			}
			cond := meta.FindStatusCondition(rb.Status.Conditions, workv1alpha2.Scheduled)
			switch {
			case cond == nil:
			case cond.Status == metav1.ConditionTrue:
				placedThere += int(placed(&rb)["member2"])
			case cond.Reason == scheduler.ReasonNoClusterFit || cond.Reason == scheduler.ReasonUnschedulable:
				refused++
			}
		}
		return placedThere+refused == n, nil
	})
	if err != nil {
		t.Fatalf("not every binding got a verdict: %d placed, %d refused of %d", placedThere, refused, n)
	}
	t.Logf("%d replicas placed in member2, %d bindings refused", placedThere, refused)
	if placedThere == 0 || refused == 0 {
		t.Fatalf("%d placed, %d refused: 100 x 4 cpu must neither all fit member2's 48 cpu nor none", placedThere, refused)
	}
	// What was placed runs: every pod of the burst in member2 gets a node.
	// A refused binding is retried, and may be placed later when cpu frees
	// up (the previous test's pods leaving), so what is placed is read
	// again at each look.
	m2 := kube(t, "member2")
	var pending, running int
	err = wait.PollUntilContextTimeout(ctx, time.Second, 2*time.Minute, true, func(ctx context.Context) (bool, error) {
		var rbs workv1alpha2.ResourceBindingList
		if err := c.List(ctx, &rbs, client.InNamespace("default")); err != nil {
			return false, nil
		}
		placedThere = 0
		for _, rb := range rbs.Items {
			if strings.HasPrefix(rb.Name, "burst-") && meta.IsStatusConditionTrue(rb.Status.Conditions, workv1alpha2.Scheduled) {
				placedThere += int(placed(&rb)["member2"])
			}
		}
		pods, err := m2.CoreV1().Pods("default").List(ctx, metav1.ListOptions{})
		if err != nil {
			return false, nil
		}
		pending, running = 0, 0
		for _, p := range pods.Items {
			if !strings.HasPrefix(p.Name, "burst-") || p.DeletionTimestamp != nil {
				continue
			}
			if p.Spec.NodeName == "" {
				pending++
			} else if p.Status.Phase == corev1.PodRunning {
				running++
			}
		}
		return running == placedThere && pending == 0, nil
	})
	if err != nil || pending > 0 {
		t.Fatalf("member2 runs %d of the %d replicas placed there, %d wait for a node: the scheduler overcommitted it", running, placedThere, pending)
	}
}

// A dynamically divided workload with a replica in member1 whose pod then
// finds no node there (every node of member1 tainted): after the
// unschedulable threshold (6 s in the e2e fleet) karmada-descheduler takes
// it out of member1's share, and the scheduler places it in member2, where
// it runs. The replicas available meanwhile never drop.
func TestDeschedulerMovesReplicasStuckPending(t *testing.T) {
	ctx := context.Background()
	propagate(ctx, t, withCPU(deploymentNamed("stuck", 4), "6"), policyv1alpha1.Placement{
		ClusterAffinity:   &policyv1alpha1.ClusterAffinity{ClusterNames: []string{"member1", "member2"}},
		ReplicaScheduling: dynamicDivision(),
	})
	rb := waitScheduled(ctx, t, "stuck", 4)
	got := placed(rb)
	if got["member1"] == 0 {
		t.Fatalf("placement %v: the test needs a replica in member1 (3 nodes of 8 cpu fit 3, member2's fit 6)", got)
	}
	waitMemberDeployment(ctx, t, "member1", "stuck", got["member1"])
	waitMemberDeployment(ctx, t, "member2", "stuck", got["member2"])

	// member1's nodes take no new pod; its copy's pods are replaced by
	// pods that wait.
	m1 := kube(t, "member1")
	nodes, err := m1.CoreV1().Nodes().List(ctx, metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	taint := corev1.Taint{Key: "e2e.karmada.io/full", Effect: corev1.TaintEffectNoSchedule}
	for _, n := range nodes.Items {
		if err := retry.RetryOnConflict(retry.DefaultBackoff, func() error {
			fresh, err := m1.CoreV1().Nodes().Get(ctx, n.Name, metav1.GetOptions{})
			if err != nil {
				return err
			}
			fresh.Spec.Taints = append(fresh.Spec.Taints, taint)
			_, err = m1.CoreV1().Nodes().Update(ctx, fresh, metav1.UpdateOptions{})
			return err
		}); err != nil {
			t.Fatal(err)
		}
	}
	t.Cleanup(func() {
		nodes, err := m1.CoreV1().Nodes().List(context.Background(), metav1.ListOptions{})
		if err != nil {
			t.Errorf("untainting member1: %v", err)
			return
		}
		for _, n := range nodes.Items {
			// kwok's heartbeats change the node meanwhile: read it afresh
			// at each try.
			err := retry.RetryOnConflict(retry.DefaultBackoff, func() error {
				fresh, err := m1.CoreV1().Nodes().Get(context.Background(), n.Name, metav1.GetOptions{})
				if err != nil {
					return err
				}
				kept := fresh.Spec.Taints[:0]
				for _, tn := range fresh.Spec.Taints {
					if tn.Key != taint.Key {
						kept = append(kept, tn)
					}
				}
				fresh.Spec.Taints = kept
				_, err = m1.CoreV1().Nodes().Update(context.Background(), fresh, metav1.UpdateOptions{})
				return err
			})
			if err != nil {
				t.Errorf("untainting %s: %v", n.Name, err)
			}
		}
	})
	if err := m1.CoreV1().Pods("default").DeleteCollection(ctx, metav1.DeleteOptions{}, metav1.ListOptions{LabelSelector: "app=stuck"}); err != nil {
		t.Fatal(err)
	}

	c := karmadaClient(t)
	var last string
	err = wait.PollUntilContextTimeout(ctx, time.Second, 2*time.Minute, true, func(ctx context.Context) (bool, error) {
		if err := c.Get(ctx, client.ObjectKeyFromObject(rb), rb); err != nil {
			return false, nil
		}
		p := placed(rb)
		last = fmt.Sprint(p)
		return p["member1"] == 0 && p["member2"] == 4, nil
	})
	if err != nil {
		t.Fatalf("placement %s, want member2=4: the stuck replica was not moved", last)
	}
	waitMemberDeployment(ctx, t, "member2", "stuck", 4)
	evs, err := kube(t, "karmada-apiserver").CoreV1().Events("default").List(ctx, metav1.ListOptions{FieldSelector: "involvedObject.name=stuck-deployment,reason=DescheduleBindingSucceed"})
	if err != nil || len(evs.Items) == 0 {
		t.Errorf("no DescheduleBindingSucceed event on the binding (%v)", err)
	} else if !strings.Contains(evs.Items[0].Message, "member1: ") {
		t.Errorf("event %q does not name member1", evs.Items[0].Message)
	}
}

// karmadactl top clusters shows each member's capacity from its resource
// summary: member2's 48 cpu (16-cpu nodes), the others' 24.
func TestKarmadactlTopClusters(t *testing.T) {
	out, err := karmadactl("top", "clusters")
	if err != nil {
		t.Fatalf("top clusters: %v\n%s", err, out)
	}
	lines := strings.Split(strings.TrimSpace(out), "\n")
	if len(lines) != 4 || !strings.HasPrefix(lines[0], "NAME") {
		t.Fatalf("want a header and three members:\n%s", out)
	}
	for _, l := range lines[1:] {
		f := strings.Fields(l)
		want := "/24"
		if f[0] == "member2" {
			want = "/48"
		}
		if len(f) < 8 || f[1] != "true" || !strings.HasSuffix(f[2], want) || !strings.HasSuffix(f[6], "/330") {
			t.Errorf("line %q: want Ready, cpu free%s, pods free/330", l, want)
		}
	}
	if out, err := karmadactl("top", "clusters", "member9"); err == nil || !strings.Contains(out, `"member9" not found`) {
		t.Errorf("an unknown cluster: %v\n%s", err, out)
	}

	// --fit with the estimators (the scheduler's client certificate of the
	// fleet): a 12-cpu replica fits member1 by its summary (24 cpu) but no
	// node of it (8 cpu each); member2's 16-cpu nodes hold some.
	pki := filepath.Join(fleet.StateDir, "estimator", "pki")
	// (Polled: the test before may still be deleting its copies from
	// member1, whose summary then has less than 12 cpu free.)
	testenv.Eventually(t, 90*time.Second, "member1's summary with room for a 12-cpu replica", func(context.Context) error {
		out, err = karmadactl("top", "clusters", "member1", "member2", "--fit", "cpu=12",
			"--scheduler-estimator-addresses", fmt.Sprintf("member1=127.0.0.1:%d,member2=127.0.0.1:%d", fleet.PortBase+16, fleet.PortBase+26),
			"--scheduler-estimator-ca-file", filepath.Join(pki, "ca.crt"),
			"--scheduler-estimator-cert-file", filepath.Join(pki, "karmada-scheduler-client.crt"),
			"--scheduler-estimator-key-file", filepath.Join(pki, "karmada-scheduler-client.key"))
		if err != nil {
			return fmt.Errorf("top clusters --fit: %v\n%s", err, out)
		}
		lines = strings.Split(strings.TrimSpace(out), "\n")
		if len(lines) != 3 || !strings.HasSuffix(lines[0], "FIT(ESTIMATOR)") {
			t.Fatalf("want a header with the fit columns and two members:\n%s", out)
		}
		if f := strings.Fields(lines[1]); len(f) < 2 || f[len(f)-2] == "0" {
			return fmt.Errorf("member1: %q", lines[1])
		}
		return nil
	})
	m1, m2 := strings.Fields(lines[1]), strings.Fields(lines[2])
	if m1[0] != "member1" || m1[len(m1)-1] != "0" || m1[len(m1)-2] == "0" {
		t.Errorf("member1 %q: want some replicas by the summary and 0 by the estimator (no node of 12 cpu)", lines[1])
	}
	if m2[0] != "member2" || m2[len(m2)-1] == "0" || strings.HasPrefix(m2[len(m2)-1], "<") {
		t.Errorf("member2 %q: want replicas by the estimator (16-cpu nodes)", lines[2])
	}
}

// overflowAffinities (Karmada 1.18): replicas of 6 cpu fill member1 (whose
// 8-cpu nodes take one each) before any goes to the overflow group
// (member3); scaling down empties member3 first. How many member1 can take
// is read from the binding's explanation, so the test holds whatever else
// runs on member1.
func TestOverflowAffinitiesFillThePrimaryFirst(t *testing.T) {
	ctx := context.Background()
	c := karmadaClient(t)
	d := withCPU(deploymentNamed("overflow", 1), "6")
	propagate(ctx, t, d, policyv1alpha1.Placement{
		ClusterAffinities: []policyv1alpha1.ClusterAffinityTerm{{
			AffinityName:    "on-prem",
			ClusterAffinity: policyv1alpha1.ClusterAffinity{ClusterNames: []string{"member1"}},
			OverflowAffinities: []policyv1alpha1.OverflowAffinityTerm{
				{AffinityName: "cloud", ClusterAffinity: policyv1alpha1.ClusterAffinity{ClusterNames: []string{"member3"}}},
			},
		}},
		ReplicaScheduling: dynamicDivision(),
	})
	rb := waitScheduled(ctx, t, "overflow", 1)
	if got := placed(rb); got["member1"] != 1 || len(got) != 1 {
		t.Fatalf("1 replica placed as %v, want member1=1: the primary group fills first", got)
	}
	scale := func(n int32) *workv1alpha2.ResourceBinding {
		t.Helper()
		err := retry.RetryOnConflict(retry.DefaultRetry, func() error {
			if err := c.Get(ctx, client.ObjectKeyFromObject(d), d); err != nil {
				return err
			}
			d.Spec.Replicas = &n
			return c.Update(ctx, d)
		})
		if err != nil {
			t.Fatal(err)
		}
		return waitScheduled(ctx, t, "overflow", n)
	}
	// member1's three 8-cpu nodes hold at most three (four by the general
	// estimator's total): six overflow.
	const total = 6
	rb = scale(total)
	room := int32(-1)
	for _, e := range rb.Status.PlacementExplanation.Clusters {
		if e.Name == "member1" && e.AvailableReplicas != nil {
			room = *e.AvailableReplicas
		}
	}
	got := placed(rb)
	if room < 1 || room >= total || got["member1"] != room || got["member3"] != total-room || len(got) != 2 {
		t.Fatalf("%d replicas placed as %v with member1 able to take %d: want member1 full and the rest on member3", total, got, room)
	}
	if rb.Status.SchedulerObservingAffinityName != "on-prem" {
		t.Errorf("observed affinity %q, want the term's name on-prem", rb.Status.SchedulerObservingAffinityName)
	}
	waitMemberDeployment(ctx, t, "member3", "overflow", total-room)

	// Scaling down to what member1 holds takes every replica from the
	// overflow group.
	rb = scale(room)
	if got := placed(rb); got["member1"] != room || len(got) != 1 {
		t.Fatalf("%d replicas placed as %v, want member1=%d and member3 emptied first", room, got, room)
	}
}
