package bench

import (
	"context"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/cache"
)

// fakeKubelet reports every Deployment of a member available, except the
// one named in withhold.
func fakeKubelet(ctx context.Context, t *testing.T, kc kubernetes.Interface, withhold string) {
	factory := informers.NewSharedInformerFactory(kc, 0)
	inf := factory.Apps().V1().Deployments().Informer()
	_, _ = inf.AddEventHandler(cache.ResourceEventHandlerFuncs{AddFunc: func(o any) {
		d := o.(*appsv1.Deployment).DeepCopy()
		if d.Name == withhold {
			return
		}
		d.Status.AvailableReplicas = *d.Spec.Replicas
		if _, err := kc.AppsV1().Deployments(d.Namespace).UpdateStatus(ctx, d, metav1.UpdateOptions{}); err != nil {
			t.Errorf("status of %s: %v", d.Name, err)
		}
	}})
	factory.Start(ctx.Done())
}

func floorWorkload(timeout time.Duration) Workload {
	return Workload{Templates: 20, Replicas: 2, Mode: Duplicated, Concurrency: 4, Timeout: timeout, CleanupTimeout: 30 * time.Second}
}

// assertMembersEmpty checks that no Deployment and no namespace of the run
// is left in any member.
func assertMembersEmpty(t *testing.T, f *Fleet, ns string) {
	t.Helper()
	for _, m := range f.MemberNames {
		ds, err := f.Members[m].AppsV1().Deployments(ns).List(context.Background(), metav1.ListOptions{})
		if err != nil || len(ds.Items) != 0 {
			t.Errorf("member %s: %d Deployments left (%v)", m, len(ds.Items), err)
		}
		if _, err := f.Members[m].CoreV1().Namespaces().Get(context.Background(), ns, metav1.GetOptions{}); err == nil {
			t.Errorf("member %s: namespace %s left", m, ns)
		}
	}
}

// fleetWithKubelets is a fake duplicated fleet whose members mark pods
// available, until the test ends.
func fleetWithKubelets(t *testing.T) (context.Context, *Fleet) {
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)
	f, _ := fakeFleet(t, Duplicated, "")
	for _, m := range f.MemberNames {
		fakeKubelet(ctx, t, f.Members[m], "")
	}
	return ctx, f
}

func TestFloorAllAvailable(t *testing.T) {
	ctx, f := fleetWithKubelets(t)
	r := Floor(ctx, f, floorWorkload(time.Minute), ClientSettings{QPS: 100, Burst: 100}, nil, 10*time.Millisecond)
	if r.Error != "" {
		t.Fatalf("floor failed: %s", r.Error)
	}
	if r.InEveryMember.Count != 20 || r.Available.Count != 20 {
		t.Errorf("observed %d in every member and %d available, want 20 and 20", r.InEveryMember.Count, r.Available.Count)
	}
	if r.Wall <= 0 || time.Duration(r.Available.Max) > time.Duration(r.Wall) {
		t.Errorf("wall %s, slowest available %s: the wall must cover every latency", r.Wall, r.Available.Max)
	}
	if !r.Cleanup.Complete {
		t.Errorf("clean-up incomplete: %v", r.Cleanup.Problems)
	}
	assertMembersEmpty(t, f, r.Namespace)
}

func TestFloorTimesOutAndCleansUp(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	f, _ := fakeFleet(t, Duplicated, "")
	for i, m := range f.MemberNames {
		withhold := ""
		if i == 1 {
			withhold = templateName(7) // never available in one member
		}
		fakeKubelet(ctx, t, f.Members[m], withhold)
	}
	r := Floor(ctx, f, floorWorkload(2*time.Second), ClientSettings{QPS: 100, Burst: 100}, nil, 10*time.Millisecond)
	if r.Error == "" {
		t.Fatal("a Deployment never available in one member did not fail the run")
	}
	if r.Available.Count != 19 {
		t.Errorf("%d available everywhere, want 19", r.Available.Count)
	}
	if !r.Cleanup.Complete {
		t.Errorf("clean-up incomplete: %v", r.Cleanup.Problems)
	}
	assertMembersEmpty(t, f, r.Namespace)
}

func TestFloorSpreadsOverNamespaces(t *testing.T) {
	ctx, f := fleetWithKubelets(t)
	w := floorWorkload(time.Minute)
	w.PerNamespace = 7
	r := Floor(ctx, f, w, ClientSettings{QPS: 100, Burst: 100}, nil, 10*time.Millisecond)
	if r.Error != "" {
		t.Fatalf("floor failed: %s", r.Error)
	}
	if r.Available.Count != 20 || len(r.Namespaces) != 3 {
		t.Fatalf("%d available in namespaces %v; want 20 in 3", r.Available.Count, r.Namespaces)
	}
	if !r.Cleanup.Complete {
		t.Errorf("clean-up incomplete: %v", r.Cleanup.Problems)
	}
	for _, ns := range r.Namespaces {
		assertMembersEmpty(t, f, ns)
	}
}
