package integration

import (
	"context"
	"fmt"
	"testing"
	"time"

	coordinationv1 "k8s.io/api/coordination/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/client"
	metricsserver "sigs.k8s.io/controller-runtime/pkg/metrics/server"

	clusterv1alpha1 "github.com/karmada-go/karmada/api/cluster/v1alpha1"
	workv1alpha1 "github.com/karmada-go/karmada/api/work/v1alpha1"
	"github.com/karmada-go/karmada/internal/agent"
	"github.com/karmada-go/karmada/internal/propagation/execution"
	"github.com/karmada-go/karmada/internal/testenv"
)

// karmada-agent, acting as the agent its registration made (real RBAC,
// impersonated), claims its Cluster, reports it Ready, renews its Lease,
// applies a Work to its member and reports it applied; restarted, it
// deletes nothing; a deleted Work's copy goes, and the Work with it.
func TestAgent(t *testing.T) {
	t.Parallel()
	cp, member := testenv.Start(t), testenv.StartMember(t)
	ctx := context.Background()
	kc := startAgentApprover(ctx, t, cp)
	identity := registerAgent(ctx, t, kc, cp, "edge")
	asAgent := rest.CopyConfig(cp.Config)
	asAgent.Impersonate = identity
	start := func() context.CancelFunc {
		ctx, cancel := context.WithCancel(context.Background())
		done := make(chan error, 1)
		go func() {
			err := agent.Run(ctx, agent.Config{Karmada: asAgent, Member: member.Config, ClusterName: "edge",
				StatusUpdateFrequency: time.Second, LeaseDuration: 4 * time.Second, RenewFraction: 0.25,
				Metrics: metricsserver.Options{BindAddress: "0"}, HealthProbeBindAddress: "0", Workers: 2, SkipNameValidation: true})
			if err != nil {
				t.Logf("the agent stopped: %v", err)
			}
			done <- err
		}()
		return func() {
			cancel()
			if err := <-done; err != nil {
				t.Errorf("the agent: %v", err)
			}
		}
	}
	stop := start()
	ks := &corev1.Namespace{}
	if err := member.Client.Get(ctx, client.ObjectKey{Name: "kube-system"}, ks); err != nil {
		t.Fatal(err)
	}
	testenv.Eventually(t, 30*time.Second, "the Cluster claimed and Ready, the Lease renewed", func(ctx context.Context) error {
		cl := &clusterv1alpha1.Cluster{}
		if err := cp.Client.Get(ctx, client.ObjectKey{Name: "edge"}, cl); err != nil {
			return err
		}
		if cl.Spec.ID != string(ks.UID) || !meta.IsStatusConditionTrue(cl.Status.Conditions, clusterv1alpha1.ClusterConditionReady) {
			return fmt.Errorf("id %q, conditions %+v", cl.Spec.ID, cl.Status.Conditions)
		}
		l := &coordinationv1.Lease{}
		if err := cp.Client.Get(ctx, client.ObjectKey{Namespace: "karmada-cluster", Name: "edge"}, l); err != nil {
			return err
		}
		if l.Spec.RenewTime == nil || time.Since(l.Spec.RenewTime.Time) > 5*time.Second {
			return fmt.Errorf("lease renewed at %v", l.Spec.RenewTime)
		}
		return nil
	})
	work := &workv1alpha1.Work{ObjectMeta: metav1.ObjectMeta{Namespace: workv1alpha1.ExecutionNamespace("edge"), Name: "settings", Finalizers: []string{execution.Finalizer}},
		Spec: workv1alpha1.WorkSpec{Workload: workv1alpha1.WorkloadTemplate{Manifests: []workv1alpha1.Manifest{configMapManifest(t, "default", "settings", map[string]string{"a": "b"})}}}}
	if err := cp.Client.Create(ctx, work); err != nil {
		t.Fatal(err)
	}
	applied := func(ctx context.Context) error {
		if err := member.Client.Get(ctx, client.ObjectKey{Namespace: "default", Name: "settings"}, &corev1.ConfigMap{}); err != nil {
			return err
		}
		_, cond, err := appliedCondition(ctx, cp.Client, client.ObjectKeyFromObject(work))
		if err != nil || cond == nil || cond.Status != metav1.ConditionTrue {
			return fmt.Errorf("Applied %+v (%v)", cond, err)
		}
		return nil
	}
	testenv.Eventually(t, 30*time.Second, "the Work applied to the member and reported", applied)

	// Restarted (an empty cache, a relist): nothing is deleted.
	stop()
	restarted := time.Now()
	stop = start()
	defer func() { stop() }()
	testenv.Eventually(t, 30*time.Second, "the Lease renewed by the restarted agent", func(ctx context.Context) error {
		l := &coordinationv1.Lease{}
		if err := cp.Client.Get(ctx, client.ObjectKey{Namespace: "karmada-cluster", Name: "edge"}, l); err != nil {
			return err
		}
		if l.Spec.RenewTime == nil || l.Spec.RenewTime.Time.Before(restarted) {
			return fmt.Errorf("lease renewed at %v, restarted at %v", l.Spec.RenewTime, restarted)
		}
		return nil
	})
	if err := applied(ctx); err != nil {
		t.Fatalf("after the restart: %v", err)
	}

	// Deleted in the control plane: the agent removes the copy, then lets
	// the Work go.
	if err := cp.Client.Delete(ctx, work); err != nil {
		t.Fatal(err)
	}
	testenv.Eventually(t, 30*time.Second, "the copy and the Work gone", func(ctx context.Context) error {
		if err := member.Client.Get(ctx, client.ObjectKey{Namespace: "default", Name: "settings"}, &corev1.ConfigMap{}); !apierrors.IsNotFound(err) {
			return fmt.Errorf("the member's copy: %v", err)
		}
		if err := cp.Client.Get(ctx, client.ObjectKeyFromObject(work), &workv1alpha1.Work{}); !apierrors.IsNotFound(err) {
			return fmt.Errorf("the Work: %v", err)
		}
		return nil
	})
}
