package integration

import (
	"context"
	"fmt"
	"os"
	"strconv"
	"strings"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/manager"
	ctrlmetrics "sigs.k8s.io/controller-runtime/pkg/metrics"

	policyv1alpha1 "github.com/karmada-go/karmada/api/policy/v1alpha1"
	workv1alpha2 "github.com/karmada-go/karmada/api/work/v1alpha2"
	"github.com/karmada-go/karmada/internal/events"
	"github.com/karmada-go/karmada/internal/propagation/dependencies"
	"github.com/karmada-go/karmada/internal/testenv"
)

// withConfigMap is a Deployment whose pods mount the ConfigMap cm.
func withConfigMap(ns, name, cm string) *appsv1.Deployment {
	d := deployment(ns, name, 1)
	d.Spec.Template.Spec.Volumes = []corev1.Volume{{Name: "config", VolumeSource: corev1.VolumeSource{ConfigMap: &corev1.ConfigMapVolumeSource{LocalObjectReference: corev1.LocalObjectReference{Name: cm}}}}}
	return d
}

// workloadBinding is the binding the detector and the scheduler would have
// written for the Deployment: propagateDeps, placed in clusters.
func workloadBinding(d *appsv1.Deployment, clusters ...string) *workv1alpha2.ResourceBinding {
	rb := &workv1alpha2.ResourceBinding{ObjectMeta: metav1.ObjectMeta{Namespace: d.Namespace, Name: d.Name + "-deployment"},
		Spec: workv1alpha2.ResourceBindingSpec{PropagateDeps: true,
			Resource: workv1alpha2.ObjectReference{APIVersion: "apps/v1", Kind: "Deployment", Namespace: d.Namespace, Name: d.Name, UID: d.UID}}}
	for _, c := range clusters {
		rb.Spec.Clusters = append(rb.Spec.Clusters, workv1alpha2.TargetCluster{Name: c, Replicas: 1})
	}
	return rb
}

// runDistributor runs the dependencies distributor on env.
func runDistributor(t testing.TB, env *testenv.Env) (stop func()) {
	return env.RunManager(t, func(ctx context.Context, mgr manager.Manager) error {
		store, err := templateStore(mgr)
		if err != nil {
			return err
		}
		return (&dependencies.Reconciler{Client: mgr.GetClient(), Templates: store, Workers: 4,
			Recorder: mgr.GetEventRecorderFor(events.SourceDependenciesDistributor)}).SetupWithManager(ctx, mgr)
	})
}

// reconciled is how many reconciles of the distributor succeeded in this
// process (controller-runtime's metric).
func reconciled() float64 {
	families, err := ctrlmetrics.Registry.Gather()
	if err != nil {
		return 0
	}
	for _, f := range families {
		if f.GetName() != "controller_runtime_reconcile_total" {
			continue
		}
		for _, m := range f.GetMetric() {
			labels := map[string]string{}
			for _, l := range m.GetLabel() {
				labels[l.GetName()] = l.GetValue()
			}
			if labels["controller"] == dependencies.ControllerName && labels["result"] == "success" {
				return m.GetCounter().GetValue()
			}
		}
	}
	return 0
}

// TestDependenciesDistributor: the ConfigMap a Deployment with
// propagateDeps mounts gets an attached binding recording the workload's
// clusters, follows its placement, is shared by two workloads, and goes
// when no workload needs it; a restart writes nothing.
func TestDependenciesDistributor(t *testing.T) {
	t.Parallel()
	env := testenv.Start(t)
	c := env.Client
	ctx := context.Background()
	createNamespace(ctx, t, c, "shop")
	cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: "shop", Name: "settings"}, Data: map[string]string{"a": "1"}}
	a, b := withConfigMap("shop", "a", "settings"), withConfigMap("shop", "b", "settings")
	for _, o := range []client.Object{cm, a, b} {
		if err := c.Create(ctx, o); err != nil {
			t.Fatal(err)
		}
	}
	rbA := workloadBinding(a, "member1")
	if err := c.Create(ctx, rbA); err != nil {
		t.Fatal(err)
	}
	stop := runDistributor(t, env)
	attached := &workv1alpha2.ResourceBinding{}
	requiredBy := func(what string, want map[string][]string) {
		t.Helper()
		testenv.Eventually(t, deadline, what, func(ctx context.Context) error {
			err := c.Get(ctx, client.ObjectKey{Namespace: "shop", Name: "settings-configmap"}, attached)
			if want == nil {
				if apierrors.IsNotFound(err) {
					return nil
				}
				return fmt.Errorf("still there: %v", err)
			}
			if err != nil {
				return err
			}
			got := map[string][]string{}
			for _, s := range attached.Spec.RequiredBy {
				var cs []string
				for _, cl := range s.Clusters {
					cs = append(cs, cl.Name)
				}
				got[s.Name] = cs
			}
			if fmt.Sprint(got) != fmt.Sprint(want) {
				return fmt.Errorf("requiredBy %v, want %v", got, want)
			}
			return nil
		})
	}
	requiredBy("the attached binding", map[string][]string{"a-deployment": {"member1"}})
	if attached.Labels[workv1alpha2.AttachedBindingLabel] != "true" || attached.Spec.Placement != nil || attached.Spec.Resource.UID != cm.UID ||
		len(attached.OwnerReferences) != 1 || attached.OwnerReferences[0].UID != cm.UID {
		t.Errorf("attached binding %+v", attached)
	}
	// A second workload in other clusters shares it.
	rbB := workloadBinding(b, "member2", "member3")
	if err := c.Create(ctx, rbB); err != nil {
		t.Fatal(err)
	}
	requiredBy("two workloads", map[string][]string{"a-deployment": {"member1"}, "b-deployment": {"member2", "member3"}})
	// a moves.
	if err := c.Get(ctx, client.ObjectKeyFromObject(rbA), rbA); err != nil {
		t.Fatal(err)
	}
	rbA.Spec.Clusters = []workv1alpha2.TargetCluster{{Name: "member2", Replicas: 1}}
	if err := c.Update(ctx, rbA); err != nil {
		t.Fatal(err)
	}
	requiredBy("a moved", map[string][]string{"a-deployment": {"member2"}, "b-deployment": {"member2", "member3"}})

	// A restart writes nothing.
	stop()
	before := attached.ResourceVersion
	runDistributor(t, env)
	testenv.Consistently(t, 3*time.Second, "no write after a restart", func(ctx context.Context) error {
		if err := c.Get(ctx, client.ObjectKey{Namespace: "shop", Name: "settings-configmap"}, attached); err != nil {
			return err
		}
		if attached.ResourceVersion != before {
			return fmt.Errorf("written: resourceVersion %s, was %s", attached.ResourceVersion, before)
		}
		return nil
	})

	// b drops propagateDeps, a goes: nothing needs the ConfigMap.
	if err := c.Get(ctx, client.ObjectKeyFromObject(rbB), rbB); err != nil {
		t.Fatal(err)
	}
	rbB.Spec.PropagateDeps = false
	if err := c.Update(ctx, rbB); err != nil {
		t.Fatal(err)
	}
	requiredBy("b released it", map[string][]string{"a-deployment": {"member2"}})
	if err := c.Delete(ctx, rbA); err != nil {
		t.Fatal(err)
	}
	requiredBy("no workload needs it", nil)
	if err := c.Get(ctx, client.ObjectKeyFromObject(cm), cm); err != nil {
		t.Errorf("the ConfigMap itself: %v", err)
	}
}

// eventOn waits for an event of reason on the object named name whose
// message contains msg.
func eventOn(t *testing.T, c client.Client, ns, name, reason, msg string) {
	t.Helper()
	testenv.Eventually(t, deadline, reason+" on "+name, func(ctx context.Context) error {
		var list corev1.EventList
		if err := c.List(ctx, &list, client.InNamespace(ns)); err != nil {
			return err
		}
		for _, e := range list.Items {
			if e.InvolvedObject.Name == name && e.Reason == reason && strings.Contains(e.Message, msg) {
				return nil
			}
		}
		return fmt.Errorf("no %s event on %s with %q among %d", reason, name, msg, len(list.Items))
	})
}

// Two workloads sharing a dependency with other policy settings: the
// attached binding takes what Karmada resolves (Overwrite if any says so,
// preserved if any says so) and carries a DependencyPolicyConflict event
// with Karmada's message; when one workload's settings change, the
// resolution follows. The workload's binding gets
// SyncScheduleResultToDependenciesSucceed.
func TestDependencyPolicyConflictResolves(t *testing.T) {
	t.Parallel()
	env := testenv.Start(t)
	c := env.Client
	ctx := context.Background()
	createNamespace(ctx, t, c, "shop")
	cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: "shop", Name: "shared"}}
	a, b := withConfigMap("shop", "a", "shared"), withConfigMap("shop", "b", "shared")
	for _, o := range []client.Object{cm, a, b} {
		if err := c.Create(ctx, o); err != nil {
			t.Fatal(err)
		}
	}
	rbA, rbB := workloadBinding(a, "member1"), workloadBinding(b, "member2")
	rbA.Spec.ConflictResolution, rbA.Spec.PreserveResourcesOnDeletion = policyv1alpha1.ConflictOverwrite, ptr.To(true)
	rbB.Spec.ConflictResolution = policyv1alpha1.ConflictAbort
	for _, o := range []client.Object{rbA, rbB} {
		if err := c.Create(ctx, o); err != nil {
			t.Fatal(err)
		}
	}
	runDistributor(t, env)
	settled := func(what string, cr policyv1alpha1.ConflictResolution, preserve bool) {
		t.Helper()
		testenv.Eventually(t, deadline, what, func(ctx context.Context) error {
			attached := &workv1alpha2.ResourceBinding{}
			if err := c.Get(ctx, client.ObjectKey{Namespace: "shop", Name: "shared-configmap"}, attached); err != nil {
				return err
			}
			if len(attached.Spec.RequiredBy) != 2 || attached.Spec.ConflictResolution != cr || ptr.Deref(attached.Spec.PreserveResourcesOnDeletion, false) != preserve {
				return fmt.Errorf("requiredBy %d, conflictResolution %q, preserve %v", len(attached.Spec.RequiredBy),
					attached.Spec.ConflictResolution, ptr.Deref(attached.Spec.PreserveResourcesOnDeletion, false))
			}
			return nil
		})
	}
	settled("Overwrite and preserved, as either workload asks", policyv1alpha1.ConflictOverwrite, true)
	eventOn(t, c, "shop", "shared-configmap", events.DependencyPolicyConflict,
		"Dependency policy conflict detected: ConflictResolution conflicted (Overwrite vs Abort); PreserveResourcesOnDeletion conflicted (true vs false).")
	eventOn(t, c, "shop", "a-deployment", events.SyncScheduleResultToDependenciesSucceed, "Sync schedule results to dependencies succeed.")

	// a's policy turns to Abort, not preserved: nothing asks otherwise.
	if err := c.Get(ctx, client.ObjectKeyFromObject(rbA), rbA); err != nil {
		t.Fatal(err)
	}
	rbA.Spec.ConflictResolution, rbA.Spec.PreserveResourcesOnDeletion = policyv1alpha1.ConflictAbort, nil
	if err := c.Update(ctx, rbA); err != nil {
		t.Fatal(err)
	}
	settled("Abort and not preserved once a agrees with b", policyv1alpha1.ConflictAbort, false)
}

// BenchmarkDistributorStartup: BENCH_DEPS (default 1,000) Deployments, each
// mounting its own ConfigMap, with their bindings; the time from the
// distributor's start until every attached binding exists (cold), and then
// from a restart until it has looked at every workload again (steady: no
// write). docs/performance.md records it (Karmada: 20 min for its
// distributor at 30,000 workloads before #7153, 5 after).
func BenchmarkDistributorStartup(b *testing.B) {
	n := 1000
	if v := os.Getenv("BENCH_DEPS"); v != "" {
		n, _ = strconv.Atoi(v)
	}
	env := testenv.Start(b)
	c := env.Client
	ctx := context.Background()
	if err := c.Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "bench"}}); err != nil {
		b.Fatal(err)
	}
	start := time.Now()
	errs := make(chan error, n)
	sem := make(chan struct{}, 32)
	for i := 0; i < n; i++ {
		sem <- struct{}{}
		go func(i int) {
			defer func() { <-sem }()
			name := fmt.Sprintf("w%05d", i)
			cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: "bench", Name: name + "-config"}, Data: map[string]string{"k": "v"}}
			d := withConfigMap("bench", name, cm.Name)
			for _, o := range []client.Object{cm, d} {
				if err := c.Create(ctx, o); err != nil {
					errs <- err
					return
				}
			}
			if err := c.Create(ctx, workloadBinding(d, "member1")); err != nil {
				errs <- err
			}
		}(i)
	}
	for i := 0; i < cap(sem); i++ {
		sem <- struct{}{}
	}
	close(errs)
	for err := range errs {
		b.Fatal(err)
	}
	b.Logf("%d workloads, ConfigMaps and bindings created in %s", n, time.Since(start).Round(time.Millisecond))
	countAttached := func() int {
		list := &workv1alpha2.ResourceBindingList{}
		if err := c.List(ctx, list, client.InNamespace("bench"), client.MatchingLabels{workv1alpha2.AttachedBindingLabel: "true"}); err != nil {
			b.Fatal(err)
		}
		return len(list.Items)
	}
	b.ResetTimer()
	start = time.Now()
	stop := runDistributor(b, env)
	// Polled with a deadline: a distributor that stops short fails the
	// benchmark instead of hanging it.
	limit := time.Now().Add(5 * time.Minute)
	for countAttached() < n {
		if time.Now().After(limit) {
			b.Fatalf("%d of %d attached bindings after 5m", countAttached(), n)
		}
		time.Sleep(200 * time.Millisecond)
	}
	cold := time.Since(start)
	stop()
	// The restart: every workload looked at again, nothing written.
	list := &workv1alpha2.ResourceBindingList{}
	if err := c.List(ctx, list, client.InNamespace("bench")); err != nil {
		b.Fatal(err)
	}
	rvs := map[string]string{}
	for _, rb := range list.Items {
		rvs[rb.Name] = rb.ResourceVersion
	}
	done := reconciled()
	start = time.Now()
	runDistributor(b, env)
	// Steady: every workload looked at, and then nothing more for a second.
	last, lastChange := reconciled(), time.Now()
	limit = time.Now().Add(5 * time.Minute)
	for reconciled()-done < float64(n) || time.Since(lastChange) < time.Second {
		if time.Now().After(limit) {
			b.Fatalf("%.0f of %d workloads looked at after the restart in 5m", reconciled()-done, n)
		}
		time.Sleep(50 * time.Millisecond)
		if r := reconciled(); r != last {
			last, lastChange = r, time.Now()
		}
	}
	steady := lastChange.Sub(start)
	b.StopTimer()
	if err := c.List(ctx, list, client.InNamespace("bench")); err != nil {
		b.Fatal(err)
	}
	written := 0
	for _, rb := range list.Items {
		if rvs[rb.Name] != rb.ResourceVersion {
			written++
		}
	}
	b.ReportMetric(cold.Seconds(), "cold-s")
	b.ReportMetric(steady.Seconds(), "restart-s")
	b.ReportMetric(float64(written), "written")
	b.Logf("%d workloads: cold start %s, restart to steady %s, %d bindings written by the restart", n, cold.Round(time.Millisecond), steady.Round(time.Millisecond), written)
}
