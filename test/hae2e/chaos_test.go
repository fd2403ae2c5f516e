//go:build hae2e

package hae2e

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	coordinationv1 "k8s.io/api/coordination/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/tools/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"

	policyv1alpha1 "github.com/karmada-go/karmada/api/policy/v1alpha1"
	workv1alpha1 "github.com/karmada-go/karmada/api/work/v1alpha1"
	workv1alpha2 "github.com/karmada-go/karmada/api/work/v1alpha2"
	"github.com/karmada-go/karmada/internal/localup/process"
	"github.com/karmada-go/karmada/internal/testenv"
)

const (
	// templates propagate while each disruption happens.
	templates = 200
	// disruptAfter templates are created before the disruption.
	disruptAfter = 50
	// leaseDuration is the controllers' --leader-elect-lease-duration
	// (Karmada's default, which karmada-local keeps); retryPeriod their
	// --leader-elect-retry-period.
	leaseDuration = 15 * time.Second
	retryPeriod   = 2 * time.Second
	// requestLatency bounds one read of a lease on the loaded fleet.
	requestLatency = time.Second
)

// scenario is one chaos test: a namespace of templates propagated to both
// members by one policy, the member copies watched from before the first
// template is created (every copy's UIDs and deletions recorded), and a
// writer that keeps updating an object of the control plane every 200 ms
// (the longest time without a successful write recorded).
type scenario struct {
	t       *testing.T
	ns      string
	karmada client.Client
	created atomic.Int32
	// createDone is closed once every template is created.
	createDone chan struct{}
	// began is when the scenario started; phase logs a step's time.
	began     time.Time
	copies    map[string]*copyLog
	heartbeat *writer
	stop      context.CancelFunc
	// stopped are the processes the test killed, started again at its end.
	stopped []string
}

// copyLog is what a member's watch saw of the copies.
type copyLog struct {
	mu      sync.Mutex
	uids    map[string]map[types.UID]bool
	deleted map[string]int
	store   cache.Store
}

func startScenario(t *testing.T, name string) *scenario {
	t.Helper()
	began := time.Now()
	ensureUp(t)
	ctx, cancel := context.WithCancel(context.Background())
	s := &scenario{t: t, ns: "chaos-" + name, karmada: karmadaClient(t), createDone: make(chan struct{}), copies: map[string]*copyLog{}, stop: cancel, began: began}
	s.phase("fleet checked whole")
	t.Cleanup(func() { s.cleanup() })
	if err := s.karmada.Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: s.ns}}); err != nil {
		t.Fatal(err)
	}
	pp := &policyv1alpha1.PropagationPolicy{
		ObjectMeta: metav1.ObjectMeta{Namespace: s.ns, Name: "chaos"},
		Spec: policyv1alpha1.PropagationSpec{
			ResourceSelectors: []policyv1alpha1.ResourceSelector{{APIVersion: "v1", Kind: "ConfigMap",
				LabelSelector: &metav1.LabelSelector{MatchLabels: map[string]string{"chaos": "template"}}}},
			Placement: policyv1alpha1.Placement{ClusterAffinity: &policyv1alpha1.ClusterAffinity{ClusterNames: members}},
		},
	}
	if err := s.karmada.Create(ctx, pp); err != nil {
		t.Fatal(err)
	}
	for _, m := range members {
		s.copies[m] = watchCopies(ctx, t, m, s.ns)
	}
	s.heartbeat = startWriter(ctx, t, s.karmada, s.ns)
	go s.create(ctx)
	testenv.Eventually(t, time.Minute, fmt.Sprintf("%d templates created", disruptAfter), func(context.Context) error {
		if n := s.created.Load(); n < disruptAfter {
			return fmt.Errorf("%d created", n)
		}
		return nil
	})
	s.phase(fmt.Sprintf("%d templates created", disruptAfter))
	return s
}

func (s *scenario) phase(what string) {
	s.t.Logf("%6.1fs %s", time.Since(s.began).Seconds(), what)
}

// create writes the templates at about 20 a second, so that propagation is
// under way for the whole disruption.
func (s *scenario) create(ctx context.Context) {
	defer close(s.createDone)
	tick := time.NewTicker(50 * time.Millisecond)
	defer tick.Stop()
	for i := 0; i < templates; i++ {
		cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: s.ns, Name: fmt.Sprintf("cm-%03d", i), Labels: map[string]string{"chaos": "template"}},
			Data: map[string]string{"i": fmt.Sprint(i)}}
		// Retried through the disruption: a write the control plane
		// refused while an API server or etcd member died is made again.
		for {
			err := s.karmada.Create(ctx, cm.DeepCopy())
			if err == nil || apierrors.IsAlreadyExists(err) {
				break
			}
			if ctx.Err() != nil {
				return
			}
			time.Sleep(200 * time.Millisecond)
		}
		s.created.Add(1)
		select {
		case <-tick.C:
		case <-ctx.Done():
			return
		}
	}
}

func watchCopies(ctx context.Context, t *testing.T, member, ns string) *copyLog {
	l := &copyLog{uids: map[string]map[types.UID]bool{}, deleted: map[string]int{}}
	f := informers.NewSharedInformerFactoryWithOptions(kube(t, member), 0, informers.WithNamespace(ns),
		informers.WithTweakListOptions(func(o *metav1.ListOptions) { o.LabelSelector = "chaos=template" }))
	inf := f.Core().V1().ConfigMaps().Informer()
	seen := func(o any) {
		if cm, ok := o.(*corev1.ConfigMap); ok {
			l.mu.Lock()
			defer l.mu.Unlock()
			if l.uids[cm.Name] == nil {
				l.uids[cm.Name] = map[types.UID]bool{}
			}
			l.uids[cm.Name][cm.UID] = true
		}
	}
	_, _ = inf.AddEventHandler(cache.ResourceEventHandlerFuncs{
		AddFunc:    seen,
		UpdateFunc: func(_, o any) { seen(o) },
		DeleteFunc: func(o any) {
			if d, ok := o.(cache.DeletedFinalStateUnknown); ok {
				o = d.Obj
			}
			if cm, ok := o.(*corev1.ConfigMap); ok {
				l.mu.Lock()
				l.deleted[cm.Name]++
				l.mu.Unlock()
			}
		},
	})
	l.store = inf.GetStore()
	f.Start(ctx.Done())
	f.WaitForCacheSync(ctx.Done())
	return l
}

// writer updates one ConfigMap of the control plane (not a template) every
// 200 ms and records the longest time between two successful writes.
type writer struct {
	mu       sync.Mutex
	last     time.Time
	maxGap   time.Duration
	failures int
}

func startWriter(ctx context.Context, t *testing.T, c client.Client, ns string) *writer {
	w := &writer{last: time.Now()}
	cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "heartbeat"}}
	if err := c.Create(ctx, cm); err != nil {
		t.Fatal(err)
	}
	go func() {
		for i := 0; ctx.Err() == nil; i++ {
			wctx, cancel := context.WithTimeout(ctx, 5*time.Second)
			err := c.Patch(wctx, cm, client.RawPatch(types.MergePatchType, []byte(fmt.Sprintf(`{"data":{"n":"%d"}}`, i))))
			cancel()
			now := time.Now()
			w.mu.Lock()
			if err == nil {
				w.maxGap = max(w.maxGap, now.Sub(w.last))
				w.last = now
			} else if ctx.Err() == nil {
				w.failures++
			}
			w.mu.Unlock()
			time.Sleep(200 * time.Millisecond)
		}
	}()
	return w
}

// longestGap is the longest time without a successful write so far,
// counting the one still open.
func (w *writer) longestGap() (time.Duration, int) {
	w.mu.Lock()
	defer w.mu.Unlock()
	return max(w.maxGap, time.Since(w.last)), w.failures
}

// converged waits until every template has its copy in both members, one
// Work per member and a binding scheduled to both, then checks that no copy
// was ever deleted or created twice.
func (s *scenario) converged(timeout time.Duration) {
	t := s.t
	t.Helper()
	<-s.createDone
	if n := s.created.Load(); n != templates {
		t.Fatalf("only %d of %d templates were created", n, templates)
	}
	testenv.Eventually(t, timeout, fmt.Sprintf("%d templates propagated to %v", templates, members), func(ctx context.Context) error {
		for _, m := range members {
			if n := len(s.copies[m].store.List()); n != templates {
				return fmt.Errorf("%s has %d copies", m, n)
			}
		}
		var rbs workv1alpha2.ResourceBindingList
		if err := s.karmada.List(ctx, &rbs, client.InNamespace(s.ns)); err != nil {
			return err
		}
		scheduled := 0
		for _, rb := range rbs.Items {
			var got []string
			for _, c := range rb.Spec.Clusters {
				got = append(got, c.Name)
			}
			slices.Sort(got)
			if slices.Equal(got, members) {
				scheduled++
			}
		}
		if scheduled != templates {
			return fmt.Errorf("%d of %d bindings scheduled to %v", scheduled, len(rbs.Items), members)
		}
		return nil
	})
	s.phase("every template propagated")
	// Exactly one Work per template and member.
	ctx := context.Background()
	for _, m := range members {
		var works workv1alpha1.WorkList
		if err := s.karmada.List(ctx, &works, client.InNamespace("karmada-es-"+m)); err != nil {
			t.Fatal(err)
		}
		perTemplate := map[string]int{}
		for _, w := range works.Items {
			for _, man := range w.Spec.Workload.Manifests {
				if strings.Contains(string(man.Raw), `"namespace":"`+s.ns+`"`) && strings.Contains(string(man.Raw), `"kind":"ConfigMap"`) {
					var meta struct {
						Metadata metav1.ObjectMeta `json:"metadata"`
					}
					if err := json.Unmarshal(man.Raw, &meta); err != nil {
						t.Fatal(err)
					}
					perTemplate[meta.Metadata.Name]++
				}
			}
		}
		if len(perTemplate) != templates {
			t.Errorf("%s: Works for %d templates, want %d", m, len(perTemplate), templates)
		}
		for name, n := range perTemplate {
			if n != 1 {
				t.Errorf("%s: %d Works for %s/%s, want 1", m, n, s.ns, name)
			}
		}
	}
	for _, m := range members {
		l := s.copies[m]
		l.mu.Lock()
		for name, uids := range l.uids {
			if len(uids) != 1 {
				t.Errorf("%s: the copy of %s/%s was created %d times (UIDs %v)", m, s.ns, name, len(uids), uids)
			}
		}
		for name, n := range l.deleted {
			t.Errorf("%s: the copy of %s/%s was deleted %d times", m, s.ns, name, n)
		}
		l.mu.Unlock()
	}
}

// cleanup starts again whatever the test stopped. The templates stay: on
// an HA fleet's three-member etcd, deleting 200 templates and their copies
// costs as much as creating them, and would slow the next test down; the
// fleet is deleted at the end of the lane (deletion has tests of its own in
// the e2e lane).
func (s *scenario) cleanup() {
	s.stop()
	for _, name := range s.stopped {
		if out, err := karmadaLocal("component", "start", name); err != nil {
			s.t.Errorf("starting %s again: %v\n%s", name, err, out)
		}
	}
	s.phase("fleet whole again")
}

// kill sends SIGKILL to a process of the fleet; cleanup starts it again.
func (s *scenario) kill(name string) {
	s.t.Helper()
	s.stopped = append(s.stopped, name)
	if out, err := karmadaLocal("component", "stop", "--kill", name); err != nil {
		s.t.Fatalf("killing %s: %v\n%s", name, err, out)
	}
	s.phase(name + " killed")
}

// leaderOf is the process of component that leads, as status shows it,
// once exactly one does.
func leaderOf(t *testing.T, component string) process.ComponentStatus {
	t.Helper()
	var leader process.ComponentStatus
	testenv.Eventually(t, 2*leaseDuration, "one leading "+component, func(context.Context) error {
		var leaders []process.ComponentStatus
		for _, s := range status(t) {
			if (s.Name == "karmada/"+component || s.Name == "karmada/"+component+"-2") && s.Leader == "leader" {
				leaders = append(leaders, s)
			}
		}
		if len(leaders) != 1 {
			return fmt.Errorf("%d leaders: %v", len(leaders), leaders)
		}
		leader = leaders[0]
		return nil
	})
	return leader
}

// lease is a lease of the control plane's components.
func lease(ctx context.Context, c client.Client, name string) (*coordinationv1.Lease, error) {
	var l coordinationv1.Lease
	if err := c.Get(ctx, client.ObjectKey{Namespace: "karmada-system", Name: name}, &l); err != nil {
		return nil, err
	}
	if l.Spec.HolderIdentity == nil || l.Spec.RenewTime == nil || l.Spec.AcquireTime == nil {
		return nil, fmt.Errorf("lease %s has no holder", name)
	}
	return &l, nil
}

// holder is the identity that holds a lease.
func holder(ctx context.Context, c client.Client, name string) (string, error) {
	l, err := lease(ctx, c, name)
	if err != nil {
		return "", err
	}
	return *l.Spec.HolderIdentity, nil
}

// takeover waits until someone other than before holds the lease and
// returns how long after since that was.
func takeover(t *testing.T, c client.Client, lease, before string, since time.Time) time.Duration {
	t.Helper()
	var took time.Duration
	testenv.Eventually(t, 3*leaseDuration, "another replica holding lease "+lease, func(ctx context.Context) error {
		h, err := holder(ctx, c, lease)
		if err != nil {
			return err
		}
		if h == before || h == "" {
			return fmt.Errorf("held by %q", h)
		}
		took = time.Since(since)
		return nil
	})
	return took
}

// killLeader kills the leading replica of component while templates
// propagate, and checks that the other takes over in time and that every
// template converges.
//
// The standby takes the lease once it has seen no renewal for a lease
// duration, by its own observation: it reads the lease every retry period,
// jittered up to 2.2 times that (client-go's JitterFactor 1.2), counted
// from the end of its previous attempt, whose read of the lease takes a
// request's latency (up to about a second on this 2-core machine while 200
// templates propagate). So it may see the last renewal up to 4.4 s plus a
// request late, and try to acquire up to as long after the lease expired.
// Its bound after the last renewal is leaseDuration + 2 × (2.2 ×
// retryPeriod + 1 s): 25.8 s with Karmada's defaults. (One run in about
// ten took 24.5 s, over the 23.8 s a bound without the latency gives.)
func killLeader(t *testing.T, component string) {
	s := startScenario(t, strings.TrimPrefix(component, "karmada-"))
	ctx := context.Background()
	before, err := lease(ctx, s.karmada, component)
	if err != nil {
		t.Fatal(err)
	}
	leader := leaderOf(t, component)
	killed, created := time.Now(), s.created.Load()
	s.kill(leader.Name)
	// The dead leader's last renewal: read after it died, before anyone
	// could take the lease (a lease duration).
	last, err := lease(ctx, s.karmada, component)
	if err != nil {
		t.Fatal(err)
	}
	took := takeover(t, s.karmada, component, *before.Spec.HolderIdentity, killed)
	now, err := lease(ctx, s.karmada, component)
	if err != nil {
		t.Fatal(err)
	}
	sinceRenewal := now.Spec.AcquireTime.Sub(last.Spec.RenewTime.Time)
	t.Logf("TAKEOVER %s: %s killed (SIGKILL) when %d/%d templates were created; the other replica leads %s after the kill, %s after the last renewal",
		component, leader.Name, created, templates, took.Round(100*time.Millisecond), sinceRenewal.Round(100*time.Millisecond))
	if limit := leaseDuration + 2*(time.Duration(2.2*float64(retryPeriod))+requestLatency); sinceRenewal > limit {
		t.Errorf("takeover %s after the last renewal, want within the lease duration and two jittered retry periods with a request each (%s)", sinceRenewal, limit)
	}
	if other := leaderOf(t, component); other.Name == leader.Name {
		t.Errorf("status shows %s leading, which was killed", other.Name)
	}
	s.converged(3 * time.Minute)
}

func TestKillLeadingControllerManager(t *testing.T) { killLeader(t, "karmada-controller-manager") }

func TestKillLeadingScheduler(t *testing.T) { killLeader(t, "karmada-scheduler") }

func tail(s string, n int) string {
	lines := strings.Split(strings.TrimRight(s, "\n"), "\n")
	return strings.Join(lines[max(0, len(lines)-n):], "\n")
}
