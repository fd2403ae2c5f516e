package integration

import (
	"context"
	"fmt"
	"net/http"
	"sync/atomic"
	"testing"
	"time"

	coordinationv1 "k8s.io/api/coordination/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/client"
	metricsserver "sigs.k8s.io/controller-runtime/pkg/metrics/server"

	clusterv1alpha1 "github.com/karmada-go/karmada/api/cluster/v1alpha1"
	"github.com/karmada-go/karmada/internal/agent"
	"github.com/karmada-go/karmada/internal/testenv"
)

// countingTransport counts the requests to one path.
type countingTransport struct {
	path string
	n    *atomic.Int32
	next http.RoundTripper
}

func (c countingTransport) RoundTrip(r *http.Request) (*http.Response, error) {
	if r.URL.Path == c.path {
		c.n.Add(1)
	}
	return c.next.RoundTrip(r)
}

// The agent probes its member every --cluster-status-update-frequency and
// renews its Lease every --cluster-lease-duration ×
// --cluster-lease-renew-interval-fraction, no more (Karmada #6281): over a
// 12s window with a 2s frequency and an 8s×0.25 lease, about six probes,
// six renewals, and at most a status write per probe; a change in the
// member (a node) still reaches the status within a period.
func TestAgentHonoursStatusAndLeaseFrequencies(t *testing.T) {
	t.Parallel()
	cp, member := testenv.Start(t), testenv.StartMember(t)
	ctx := context.Background()
	kc := startAgentApprover(ctx, t, cp)
	identity := registerAgent(ctx, t, kc, cp, "tempo")
	asAgent := rest.CopyConfig(cp.Config)
	asAgent.Impersonate = identity
	var probes atomic.Int32
	mcfg := rest.CopyConfig(member.Config)
	mcfg.WrapTransport = func(rt http.RoundTripper) http.RoundTripper {
		return countingTransport{path: "/readyz", n: &probes, next: rt}
	}
	const (
		frequency = 2 * time.Second
		lease     = 8 * time.Second
		fraction  = 0.25
		window    = 12 * time.Second
	)
	actx, cancel := context.WithCancel(ctx)
	done := make(chan error, 1)
	go func() {
		done <- agent.Run(actx, agent.Config{Karmada: asAgent, Member: mcfg, ClusterName: "tempo",
			StatusUpdateFrequency: frequency, FailureThreshold: time.Second, SuccessThreshold: time.Second, LeaseDuration: lease, RenewFraction: fraction,
			Metrics: metricsserver.Options{BindAddress: "0"}, HealthProbeBindAddress: "0", Workers: 1, SkipNameValidation: true})
	}()
	defer func() {
		cancel()
		if err := <-done; err != nil {
			t.Errorf("the agent: %v", err)
		}
	}()
	testenv.Eventually(t, 30*time.Second, "the Cluster Ready with a node summary", func(ctx context.Context) error {
		cl := &clusterv1alpha1.Cluster{}
		if err := cp.Client.Get(ctx, client.ObjectKey{Name: "tempo"}, cl); err != nil {
			return err
		}
		if !meta.IsStatusConditionTrue(cl.Status.Conditions, clusterv1alpha1.ClusterConditionReady) || cl.Status.NodeSummary == nil {
			return fmt.Errorf("conditions %+v, node summary %v", cl.Status.Conditions, cl.Status.NodeSummary)
		}
		return nil
	})
	cs := kubernetes.NewForConfigOrDie(cp.Config)
	wc, err := client.NewWithWatch(cp.Config, client.Options{Scheme: cp.Client.Scheme()})
	if err != nil {
		t.Fatal(err)
	}
	cw, err := wc.Watch(ctx, &clusterv1alpha1.ClusterList{}, client.MatchingFields{"metadata.name": "tempo"})
	if err != nil {
		t.Fatal(err)
	}
	defer cw.Stop()
	lw, err := cs.CoordinationV1().Leases("karmada-cluster").Watch(ctx, metav1.ListOptions{FieldSelector: "metadata.name=tempo"})
	if err != nil {
		t.Fatal(err)
	}
	defer lw.Stop()
	probes.Store(0)
	began := time.Now()
	var writes, renewals int
	var nodeAddedAt time.Time
	var nodeSeenAfter time.Duration // 0: not seen yet
	deadline := time.After(window)
	tick := time.NewTicker(200 * time.Millisecond)
	defer tick.Stop()
	mc := kubernetes.NewForConfigOrDie(member.Config)
loop:
	for {
		select {
		case ev := <-cw.ResultChan():
			if ev.Type == watch.Modified {
				writes++
			}
		case ev := <-lw.ResultChan():
			if ev.Type == watch.Modified {
				renewals++
				if l, ok := ev.Object.(*coordinationv1.Lease); ok && l.Spec.LeaseDurationSeconds != nil && *l.Spec.LeaseDurationSeconds != int32(lease/time.Second) {
					t.Errorf("lease duration %ds, want %s", *l.Spec.LeaseDurationSeconds, lease)
				}
			}
		case <-tick.C:
			if nodeAddedAt.IsZero() && time.Since(began) > window/3 {
				node := &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: "tempo-node"}}
				if _, err := mc.CoreV1().Nodes().Create(ctx, node, metav1.CreateOptions{}); err != nil {
					t.Fatal(err)
				}
				nodeAddedAt = time.Now()
			}
			if !nodeAddedAt.IsZero() && nodeSeenAfter == 0 {
				cl := &clusterv1alpha1.Cluster{}
				if err := cp.Client.Get(ctx, client.ObjectKey{Name: "tempo"}, cl); err == nil && cl.Status.NodeSummary != nil && cl.Status.NodeSummary.TotalNum == 1 {
					nodeSeenAfter = time.Since(nodeAddedAt)
				}
			}
		case <-deadline:
			break loop
		}
	}
	periods := int(window / frequency)
	renewEvery := time.Duration(float64(lease) * fraction)
	t.Logf("over %s: %d probes, %d status writes, %d lease renewals; a new node reached the status after %s", window, probes.Load(), writes, renewals, nodeSeenAfter)
	if p := int(probes.Load()); p < periods-2 || p > periods+2 {
		t.Errorf("%d probes of the member's /readyz in %s at a %s frequency, want %d±2", p, window, frequency, periods)
	}
	if writes > periods+1 {
		t.Errorf("%d status writes in %s at a %s frequency, want at most %d", writes, window, frequency, periods+1)
	}
	if want := int(window / renewEvery); renewals < want-2 || renewals > want+1 {
		t.Errorf("%d lease renewals in %s renewing every %s, want %d (-2/+1)", renewals, window, renewEvery, want)
	}
	if nodeSeenAfter == 0 || nodeSeenAfter > frequency+2*time.Second {
		t.Errorf("the new node reached the status after %s (0: never), want within a period (%s) and slack", nodeSeenAfter, frequency)
	}
}
