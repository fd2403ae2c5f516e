package bench

import (
	"context"
	"slices"
	"sync"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/kubernetes/fake"
	k8stesting "k8s.io/client-go/testing"
	"k8s.io/client-go/tools/cache"
	ctrlfake "sigs.k8s.io/controller-runtime/pkg/client/fake"

	policyv1alpha1 "github.com/karmada-go/karmada/api/policy/v1alpha1"
	"github.com/karmada-go/karmada/internal/scheme"
)

// fakePlane stands in for a control plane: it copies every Deployment of the
// control plane into the members (all replicas in each, or divided as evenly
// as possible), reports them available there and in the template's status,
// and deletes the copies with the template.
type fakePlane struct {
	t       *testing.T
	karmada kubernetes.Interface
	members map[string]kubernetes.Interface
	names   []string
	mode    Mode
	// withhold names a template the plane never propagates.
	withhold string
}

func (p *fakePlane) run(ctx context.Context) {
	factory := informers.NewSharedInformerFactory(p.karmada, 0)
	inf := factory.Apps().V1().Deployments().Informer()
	var mu sync.Mutex // the fake clientset is safe, but keep the steps ordered
	_, _ = inf.AddEventHandler(cache.ResourceEventHandlerFuncs{
		AddFunc: func(o any) {
			mu.Lock()
			defer mu.Unlock()
			p.propagate(ctx, o.(*appsv1.Deployment))
		},
		DeleteFunc: func(o any) {
			if t, ok := o.(cache.DeletedFinalStateUnknown); ok {
				o = t.Obj
			}
			d := o.(*appsv1.Deployment)
			mu.Lock()
			defer mu.Unlock()
			for _, m := range p.names {
				err := p.members[m].AppsV1().Deployments(d.Namespace).Delete(ctx, d.Name, metav1.DeleteOptions{})
				if err != nil && !apierrors.IsNotFound(err) {
					p.t.Errorf("deleting copy: %v", err)
				}
			}
		},
	})
	factory.Start(ctx.Done())
}

func (p *fakePlane) propagate(ctx context.Context, d *appsv1.Deployment) {
	if d.Name == p.withhold {
		return
	}
	total := *d.Spec.Replicas
	var available int32
	for i, m := range p.names {
		r := total
		if p.mode == Divided {
			r = total / int32(len(p.names))
			if int32(i) < total%int32(len(p.names)) {
				r++
			}
			if r == 0 {
				continue
			}
		}
		c := d.DeepCopy()
		c.ResourceVersion, c.UID = "", ""
		c.Spec.Replicas = &r
		c.Status.AvailableReplicas = r
		if _, err := p.members[m].AppsV1().Deployments(d.Namespace).Create(ctx, c, metav1.CreateOptions{}); err != nil {
			p.t.Errorf("copying %s to %s: %v", d.Name, m, err)
			return
		}
		available += r
	}
	cur, err := p.karmada.AppsV1().Deployments(d.Namespace).Get(ctx, d.Name, metav1.GetOptions{})
	if err != nil {
		p.t.Errorf("reading template: %v", err)
		return
	}
	cur.Status.AvailableReplicas = available
	if _, err := p.karmada.AppsV1().Deployments(d.Namespace).UpdateStatus(ctx, cur, metav1.UpdateOptions{}); err != nil {
		p.t.Errorf("template status: %v", err)
	}
}

func fakeFleet(t *testing.T, mode Mode, withhold string) (*Fleet, *fakePlane) {
	names := []string{"m1", "m2", "m3"}
	f := &Fleet{
		Karmada:     fake.NewClientset(),
		KarmadaCRs:  ctrlfake.NewClientBuilder().WithScheme(scheme.Scheme).Build(),
		MemberNames: names,
		Members:     map[string]kubernetes.Interface{},
	}
	for _, n := range names {
		f.Members[n] = fake.NewClientset()
	}
	return f, &fakePlane{t: t, karmada: f.Karmada, members: f.Members, names: names, mode: mode, withhold: withhold}
}

func testOptions(mode Mode, replicas int32, timeout time.Duration) Options {
	return Options{
		Workload: Workload{Templates: 20, Replicas: replicas, Mode: mode, Concurrency: 4,
			Timeout: timeout, CleanupTimeout: 30 * time.Second},
		Client:         ClientSettings{QPS: 100, Burst: 100},
		SampleInterval: 50 * time.Millisecond,
	}
}

func assertClean(t *testing.T, f *Fleet, r *Report) {
	t.Helper()
	ctx := context.Background()
	if !r.Cleanup.Complete {
		t.Errorf("clean-up incomplete: %v", r.Cleanup.Problems)
	}
	if _, err := f.Karmada.CoreV1().Namespaces().Get(ctx, r.Namespace, metav1.GetOptions{}); !apierrors.IsNotFound(err) {
		t.Errorf("namespace %s still in the control plane (%v)", r.Namespace, err)
	}
	for _, ns := range r.Namespaces {
		if _, err := f.Karmada.CoreV1().Namespaces().Get(ctx, ns, metav1.GetOptions{}); !apierrors.IsNotFound(err) {
			t.Errorf("namespace %s still in the control plane (%v)", ns, err)
		}
	}
	if l, _ := f.Karmada.AppsV1().Deployments("").List(ctx, metav1.ListOptions{}); len(l.Items) != 0 {
		t.Errorf("%d templates left", len(l.Items))
	}
	for n, kc := range f.Members {
		if l, _ := kc.AppsV1().Deployments("").List(ctx, metav1.ListOptions{}); len(l.Items) != 0 {
			t.Errorf("%d copies left in %s", len(l.Items), n)
		}
	}
	pols := &policyv1alpha1.PropagationPolicyList{}
	if err := f.KarmadaCRs.List(ctx, pols); err != nil || len(pols.Items) != 0 {
		t.Errorf("policies left: %d (%v)", len(pols.Items), err)
	}
}

func TestPropagateObservesEveryTemplateAndCleansUp(t *testing.T) {
	for _, c := range []struct {
		mode     Mode
		replicas int32
	}{{Duplicated, 1}, {Divided, 3}, {Divided, 2}} {
		t.Run(string(c.mode), func(t *testing.T) {
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			f, plane := fakeFleet(t, c.mode, "")
			plane.run(ctx)
			r := Propagate(ctx, f, testOptions(c.mode, c.replicas, time.Minute))
			if r.Error != "" {
				t.Fatalf("error: %s", r.Error)
			}
			if r.Complete != 20 || r.Incomplete != 0 {
				t.Errorf("complete %d, incomplete %d", r.Complete, r.Incomplete)
			}
			for name, s := range map[string]Summary{"in every member": r.InEveryMember, "available": r.Available, "aggregated": r.Aggregated} {
				if s.Count != 20 || s.P50 > s.P90 || s.P90 > s.P99 || s.P99 > s.Max {
					t.Errorf("%s: %+v", name, s)
				}
			}
			if r.Throughput <= 0 || r.Wall <= 0 {
				t.Errorf("throughput %v over %v", r.Throughput, r.Wall)
			}
			assertClean(t, f, r)
		})
	}
}

func TestPropagateTimesOutAndStillCleansUp(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	f, plane := fakeFleet(t, Duplicated, templateName(7))
	plane.run(ctx)
	r := Propagate(ctx, f, testOptions(Duplicated, 1, 2*time.Second))
	if r.Error == "" || r.Complete != 19 || r.Incomplete != 1 {
		t.Errorf("error %q, complete %d, incomplete %d; want a timeout with 19 of 20", r.Error, r.Complete, r.Incomplete)
	}
	assertClean(t, f, r)
}

func TestPropagateInterruptedCleansUp(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	f, plane := fakeFleet(t, Duplicated, templateName(3))
	plane.run(ctx)
	runCtx, interrupt := context.WithCancel(ctx)
	go func() {
		// Interrupt once the copies of the others exist, as Ctrl-C would.
		_ = wait.PollUntilContextTimeout(ctx, 10*time.Millisecond, 30*time.Second, true, func(ctx context.Context) (bool, error) {
			l, err := f.Members["m3"].AppsV1().Deployments("").List(ctx, metav1.ListOptions{})
			return err == nil && len(l.Items) >= 19, nil
		})
		interrupt()
	}()
	r := Propagate(runCtx, f, testOptions(Duplicated, 1, time.Minute))
	if r.Error == "" {
		t.Error("an interrupted run reported no error")
	}
	assertClean(t, f, r)
}

// Above PerNamespace templates a run spreads them over namespaces, each
// with its own policy, and cleans all of them up.
func TestPropagateSpreadsOverNamespaces(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	f, plane := fakeFleet(t, Duplicated, "")
	var (
		mu   sync.Mutex
		seen = map[string]int{}
	)
	f.Karmada.(*fake.Clientset).PrependReactor("create", "deployments", func(a k8stesting.Action) (bool, runtime.Object, error) {
		mu.Lock()
		seen[a.GetNamespace()]++
		mu.Unlock()
		return false, nil, nil
	})
	plane.run(ctx)
	o := testOptions(Duplicated, 1, time.Minute)
	o.PerNamespace = 7
	r := Propagate(ctx, f, o)
	if r.Error != "" {
		t.Fatalf("error: %s", r.Error)
	}
	if r.Complete != 20 || len(r.Namespaces) != 3 || r.Settings.PerNamespace != 7 {
		t.Fatalf("complete %d, namespaces %v, per namespace %d; want 20 in 3 of at most 7", r.Complete, r.Namespaces, r.Settings.PerNamespace)
	}
	mu.Lock()
	defer mu.Unlock()
	for i, ns := range r.Namespaces {
		if want := []int{7, 7, 6}[i]; seen[ns] != want {
			t.Errorf("namespace %s: %d templates, want %d (all: %v)", ns, seen[ns], want, seen)
		}
	}
	assertClean(t, f, r)
}

func TestNamespaces(t *testing.T) {
	for _, c := range []struct {
		templates, per int
		want           []string
	}{
		{20, 0, []string{"b"}},
		{1000, 0, []string{"b"}},
		{1001, 0, []string{"b-0", "b-1"}},
		{10000, 1000, []string{"b-0", "b-1", "b-2", "b-3", "b-4", "b-5", "b-6", "b-7", "b-8", "b-9"}},
		{20, 7, []string{"b-0", "b-1", "b-2"}},
		{5, 5, []string{"b"}},
	} {
		w := Workload{Templates: c.templates, PerNamespace: c.per}
		got := w.Namespaces("b")
		if !slices.Equal(got, c.want) {
			t.Errorf("%d templates, %d per namespace: %v, want %v", c.templates, c.per, got, c.want)
			continue
		}
		if last := w.namespaceOf(got, c.templates-1); last != c.want[len(c.want)-1] {
			t.Errorf("%d templates, %d per namespace: the last in %s", c.templates, c.per, last)
		}
	}
}
