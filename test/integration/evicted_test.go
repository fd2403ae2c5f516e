package integration

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/util/retry"
	"sigs.k8s.io/controller-runtime/pkg/client"
	metricsserver "sigs.k8s.io/controller-runtime/pkg/metrics/server"

	clusterv1alpha1 "github.com/karmada-go/karmada/api/cluster/v1alpha1"
	workv1alpha1 "github.com/karmada-go/karmada/api/work/v1alpha1"
	workv1alpha2 "github.com/karmada-go/karmada/api/work/v1alpha2"
	"github.com/karmada-go/karmada/internal/agent"
	"github.com/karmada-go/karmada/internal/events"
	"github.com/karmada-go/karmada/internal/eviction"
	"github.com/karmada-go/karmada/internal/propagation/execution"
	"github.com/karmada-go/karmada/internal/testenv"
)

// An evicted copy (its Work marked by the gracefulEviction controller) is
// deleted only if, at that moment, the workload is healthy where it went:
// its Work's deletion is held while it is not, and the copy goes once it
// is. Placed there again meanwhile, the copy is kept for the new Work.
func TestEvictedCopyWaitsForAHealthyReplacement(t *testing.T) {
	t.Parallel()
	plane := testenv.Start(t)
	ctx := context.Background()
	member := pushMember(ctx, t, plane)
	c := plane.Client
	runMemberControllers(t, plane)
	scene := newEvictionScene(ctx, t, c, member, "member1")
	evictedWork, copyThere := scene.evictedWork, scene.copyThere

	// member2 has not run the workload: the evicted copy is held.
	held := evictedWork("web")
	if err := c.Delete(ctx, held); err != nil {
		t.Fatal(err)
	}
	testenv.Eventually(t, 20*time.Second, "the deletion held, with an event", func(ctx context.Context) error {
		list := &corev1.EventList{}
		if err := c.List(ctx, list, client.InNamespace(held.Namespace)); err != nil {
			return err
		}
		for _, e := range list.Items {
			if e.InvolvedObject.Name == held.Name && e.Reason == events.EvictionBlocked {
				return nil
			}
		}
		return fmt.Errorf("no %s event on the Work", events.EvictionBlocked)
	})
	if err := copyThere("web"); err != nil {
		t.Fatalf("the evicted copy was deleted while the workload is healthy nowhere: %v", err)
	}
	if err := c.Get(ctx, client.ObjectKeyFromObject(held), &workv1alpha1.Work{}); err != nil {
		t.Fatalf("the held Work: %v", err)
	}

	// member2 runs it healthy: the copy goes.
	scene.replacementHealthy()
	scene.waitGone(held, "web")

	// Placed in member1 again before its evicted copy went: the copy stays.
	scene.placedAgainKeepsItsCopy()
}

// The same in a pull-mode member, whose agent may not read bindings: the
// control plane judges the evicted copy and records its verdict on the Work;
// the agent holds the copy while the verdict says so, deletes it once the
// workload is healthy where it went, and keeps it when its cluster is
// placed again.
func TestEvictedCopyInAPullMember(t *testing.T) {
	t.Parallel()
	cp, member := testenv.Start(t), testenv.StartMember(t)
	ctx := context.Background()
	c := cp.Client
	kc := startAgentApprover(ctx, t, cp)
	asAgent := rest.CopyConfig(cp.Config)
	asAgent.Impersonate = registerAgent(ctx, t, kc, cp, "edge")
	startAgent := func() (stop func()) {
		ctx, cancel := context.WithCancel(context.Background())
		done := make(chan error, 1)
		go func() {
			done <- agent.Run(ctx, agent.Config{Karmada: asAgent, Member: member.Config, ClusterName: "edge",
				StatusUpdateFrequency: time.Second, SuccessThreshold: time.Second, LeaseDuration: 4 * time.Second, RenewFraction: 0.25,
				Metrics: metricsserver.Options{BindAddress: "0"}, HealthProbeBindAddress: "0", Workers: 2, SkipNameValidation: true})
		}()
		return func() {
			cancel()
			if err := <-done; err != nil {
				t.Errorf("the agent: %v", err)
			}
		}
	}
	stopAgent := startAgent()
	t.Cleanup(func() { stopAgent() })
	runMemberControllers(t, cp)
	testenv.Eventually(t, 30*time.Second, "edge Ready by its agent", func(ctx context.Context) error {
		cl := &clusterv1alpha1.Cluster{}
		if err := c.Get(ctx, client.ObjectKey{Name: "edge"}, cl); err != nil {
			return err
		}
		if !meta.IsStatusConditionTrue(cl.Status.Conditions, clusterv1alpha1.ClusterConditionReady) {
			return fmt.Errorf("conditions %+v", cl.Status.Conditions)
		}
		return nil
	})

	scene := newEvictionScene(ctx, t, c, member, "edge")
	evictedWork, copyThere := scene.evictedWork, scene.copyThere

	// member2 has not run the workload: the control plane says hold, the
	// agent holds.
	held := evictedWork("web")
	if err := c.Delete(ctx, held); err != nil {
		t.Fatal(err)
	}
	testenv.Eventually(t, 20*time.Second, "the hold recorded on the Work", func(ctx context.Context) error {
		w := &workv1alpha1.Work{}
		if err := c.Get(ctx, client.ObjectKeyFromObject(held), w); err != nil {
			return err
		}
		if v := w.Annotations[workv1alpha1.EvictedCopyVerdictAnnotation]; !strings.HasPrefix(v, eviction.VerdictHold+": ") || !strings.Contains(v, "member2") {
			return fmt.Errorf("verdict %q", v)
		}
		return nil
	})
	testenv.Consistently(t, 3*time.Second, "the copy held", func(ctx context.Context) error {
		if err := copyThere("web"); err != nil {
			return fmt.Errorf("the evicted copy was deleted while the workload is healthy nowhere: %w", err)
		}
		return c.Get(ctx, client.ObjectKeyFromObject(held), &workv1alpha1.Work{})
	})

	// The agent away (edge not Ready) while member2 comes to run it
	// healthy: the verdict stays Hold, so that the agent, back, acts on a
	// verdict given since; then it turns, and the agent deletes the copy.
	stopAgent()
	stopAgent = func() {}
	setReady(ctx, t, c, "edge", metav1.ConditionFalse)
	scene.replacementHealthy()
	verdict := func(ctx context.Context) (string, error) {
		w := &workv1alpha1.Work{}
		err := c.Get(ctx, client.ObjectKeyFromObject(held), w)
		return w.Annotations[workv1alpha1.EvictedCopyVerdictAnnotation], err
	}
	notReady := eviction.VerdictHold + ": cluster edge is not Ready"
	testenv.Eventually(t, 20*time.Second, "Hold while edge is not Ready", func(ctx context.Context) error {
		if v, err := verdict(ctx); err != nil || v != notReady {
			return fmt.Errorf("verdict %q (%v)", v, err)
		}
		return nil
	})
	testenv.Consistently(t, 2*time.Second, "Hold while edge is not Ready", func(ctx context.Context) error {
		if v, err := verdict(ctx); err != nil || v != notReady {
			return fmt.Errorf("verdict %q (%v)", v, err)
		}
		return nil
	})
	stopAgent = startAgent()
	scene.waitGone(held, "web")

	// Placed in edge again: the copy stays.
	scene.placedAgainKeepsItsCopy()
}

// evictionScene is what both evicted-copy tests share: member2, Ready, the
// replacement whose health is what the binding's status says (no member
// behind it); the binding placing the workload there; and the evicted Works
// of cluster, whose copies go to member.
type evictionScene struct {
	ctx     context.Context
	t       *testing.T
	c       client.Client
	member  *testenv.Env
	cluster string
	rb      *workv1alpha2.ResourceBinding
}

func newEvictionScene(ctx context.Context, t *testing.T, c client.Client, member *testenv.Env, cluster string) *evictionScene {
	t.Helper()
	if err := c.Create(ctx, &clusterv1alpha1.Cluster{ObjectMeta: metav1.ObjectMeta{Name: "member2"}, Spec: clusterv1alpha1.ClusterSpec{SyncMode: clusterv1alpha1.Push, APIEndpoint: "https://127.0.0.1:1"}}); err != nil {
		t.Fatal(err)
	}
	setReady(ctx, t, c, "member2", metav1.ConditionTrue)
	rb := &workv1alpha2.ResourceBinding{ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: "web-configmap"},
		Spec: workv1alpha2.ResourceBindingSpec{Resource: workv1alpha2.ObjectReference{APIVersion: "v1", Kind: "ConfigMap", Namespace: "default", Name: "web"},
			Clusters: []workv1alpha2.TargetCluster{{Name: "member2"}}}}
	if err := c.Create(ctx, rb); err != nil {
		t.Fatal(err)
	}
	return &evictionScene{ctx: ctx, t: t, c: c, member: member, cluster: cluster, rb: rb}
}

func (e *evictionScene) copyThere(name string) error {
	return e.member.Client.Get(e.ctx, client.ObjectKey{Namespace: "default", Name: name}, &corev1.ConfigMap{})
}

// evictedWork creates an evicted Work of the scene's cluster and waits for
// its copy.
func (e *evictionScene) evictedWork(name string) *workv1alpha1.Work {
	e.t.Helper()
	w := &workv1alpha1.Work{ObjectMeta: metav1.ObjectMeta{Namespace: workv1alpha1.ExecutionNamespace(e.cluster), Name: name,
		Labels:      map[string]string{workv1alpha2.ResourceBindingNamespaceLabel: "default", workv1alpha2.ResourceBindingNameLabel: e.rb.Name},
		Annotations: map[string]string{workv1alpha1.EvictedAnnotation: "true"}, Finalizers: []string{execution.Finalizer}},
		Spec: workv1alpha1.WorkSpec{Workload: workv1alpha1.WorkloadTemplate{Manifests: []workv1alpha1.Manifest{configMapManifest(e.t, "default", name, map[string]string{"k": "v"})}}}}
	if err := e.c.Create(e.ctx, w); err != nil {
		e.t.Fatal(err)
	}
	testenv.Eventually(e.t, 30*time.Second, "the copy of "+name+" applied", func(ctx context.Context) error { return e.copyThere(name) })
	return w
}

// replacementHealthy reports member2 running the workload healthy.
func (e *evictionScene) replacementHealthy() {
	e.t.Helper()
	if err := retry.RetryOnConflict(retry.DefaultRetry, func() error {
		if err := e.c.Get(e.ctx, client.ObjectKeyFromObject(e.rb), e.rb); err != nil {
			return err
		}
		e.rb.Status.AggregatedStatus = []workv1alpha2.AggregatedStatusItem{{ClusterName: "member2", Applied: true, Health: workv1alpha1.ResourceHealthy}}
		return e.c.Status().Update(e.ctx, e.rb)
	}); err != nil {
		e.t.Fatal(err)
	}
}

// waitGone waits for the copy name of the deleted Work w, and w, to go.
func (e *evictionScene) waitGone(w *workv1alpha1.Work, name string) {
	e.t.Helper()
	testenv.Eventually(e.t, 30*time.Second, "the evicted copy deleted, its Work gone", func(ctx context.Context) error {
		if err := e.copyThere(name); !apierrors.IsNotFound(err) {
			return fmt.Errorf("the copy: %v", err)
		}
		if err := e.c.Get(ctx, client.ObjectKeyFromObject(w), &workv1alpha1.Work{}); !apierrors.IsNotFound(err) {
			return fmt.Errorf("the Work: %v", err)
		}
		return nil
	})
}

// placedAgainKeepsItsCopy places the scene's cluster again, then deletes an
// evicted Work there: the Work goes, its copy stays for the new Work. (The
// Work is made after the binding changed: by the time it is applied, the
// controllers' caches have the binding.)
func (e *evictionScene) placedAgainKeepsItsCopy() {
	e.t.Helper()
	if err := retry.RetryOnConflict(retry.DefaultRetry, func() error {
		if err := e.c.Get(e.ctx, client.ObjectKeyFromObject(e.rb), e.rb); err != nil {
			return err
		}
		e.rb.Spec.Clusters = []workv1alpha2.TargetCluster{{Name: "member2"}, {Name: e.cluster}}
		return e.c.Update(e.ctx, e.rb)
	}); err != nil {
		e.t.Fatal(err)
	}
	again := e.evictedWork("web-again")
	if err := e.c.Delete(e.ctx, again); err != nil {
		e.t.Fatal(err)
	}
	testenv.Eventually(e.t, 30*time.Second, "the Work let go", func(ctx context.Context) error {
		if err := e.c.Get(ctx, client.ObjectKeyFromObject(again), &workv1alpha1.Work{}); !apierrors.IsNotFound(err) {
			return fmt.Errorf("the Work: %v", err)
		}
		return nil
	})
	if err := e.copyThere("web-again"); err != nil {
		e.t.Fatalf("the copy of a cluster placed again was deleted: %v", err)
	}
}
