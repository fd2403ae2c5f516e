package works

import (
	"math"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	workv1alpha2 "github.com/karmada-go/karmada/api/work/v1alpha2"
)

// A run's binding is what the detector and the scheduler would leave: the
// template's reference, the binding controller's finalizer, every member,
// and a scheduler name that keeps Karmada's scheduler away.
func TestBindingIsScheduledToEveryMember(t *testing.T) {
	cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "works-00007", UID: "u-7", ResourceVersion: "42"}}
	rb := Binding(cm, []string{"member1", "member2"})
	if rb.Namespace != "ns" || rb.Name != "works-00007-configmap" {
		t.Errorf("binding %s/%s: want ns/works-00007-configmap", rb.Namespace, rb.Name)
	}
	ref := rb.Spec.Resource
	if ref.APIVersion != "v1" || ref.Kind != "ConfigMap" || ref.Namespace != "ns" || ref.Name != "works-00007" || ref.UID != "u-7" || ref.ResourceVersion != "42" {
		t.Errorf("resource %+v: want the ConfigMap's reference", ref)
	}
	if len(rb.Finalizers) != 1 || rb.Finalizers[0] != workv1alpha2.BindingControllerFinalizer {
		t.Errorf("finalizers %v", rb.Finalizers)
	}
	if len(rb.Spec.Clusters) != 2 || rb.Spec.Clusters[0].Name != "member1" || rb.Spec.Clusters[1].Name != "member2" {
		t.Errorf("clusters %+v: want member1, member2", rb.Spec.Clusters)
	}
	if rb.Spec.SchedulerName != SchedulerName || rb.Spec.Placement != nil {
		t.Errorf("scheduler %q, placement %v: want %q and none", rb.Spec.SchedulerName, rb.Spec.Placement, SchedulerName)
	}
}

// Works per second count the intervals between the first and the last
// Work, and from the start every Work; one Work has no rate of its own.
func TestRates(t *testing.T) {
	start := time.Unix(1000, 0)
	perSecond, fromStart := rates(101, start, start.Add(time.Second), start.Add(11*time.Second))
	if math.Abs(perSecond-10) > 1e-9 || math.Abs(fromStart-101.0/11) > 1e-9 {
		t.Errorf("rates %v, %v: want 10 and %v", perSecond, fromStart, 101.0/11)
	}
	if perSecond, _ := rates(1, start, start.Add(time.Second), start.Add(time.Second)); perSecond != 0 {
		t.Errorf("one Work: %v per second", perSecond)
	}
}

// A Work seen twice counts once, and the counter is done at the last.
func TestWorkCounter(t *testing.T) {
	c := &workCounter{seen: map[string]time.Time{}, want: 2, done: make(chan struct{})}
	c.observe("karmada-es-member1/a")
	c.observe("karmada-es-member1/a")
	select {
	case <-c.done:
		t.Fatal("done after one Work of two")
	default:
	}
	c.observe("karmada-es-member2/a")
	select {
	case <-c.done:
	default:
		t.Fatal("not done after both Works")
	}
	if first, last, n := c.figures(); n != 2 || last.Before(first) {
		t.Errorf("figures %v %v %d", first, last, n)
	}
}

func TestOptionsValidate(t *testing.T) {
	ok := Options{Bindings: 1, Concurrency: 1, Timeout: time.Second, StopCommand: []string{"stop"}, StartCommand: []string{"start"}, SampleInterval: time.Second}
	if err := ok.Validate(); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		mutate func(*Options)
		want   string
	}{
		{func(o *Options) { o.Bindings = 0 }, "--bindings=0"},
		{func(o *Options) { o.Concurrency = 0 }, "--concurrency=0"},
		{func(o *Options) { o.Timeout = 0 }, "--timeout=0s"},
		{func(o *Options) { o.StartCommand = nil }, "a stop and a start command"},
		{func(o *Options) { o.SampleInterval = 0 }, "--sample-interval=0s"},
	} {
		o := ok
		tc.mutate(&o)
		if err := o.Validate(); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("error %v: want one naming %q", err, tc.want)
		}
	}
}
