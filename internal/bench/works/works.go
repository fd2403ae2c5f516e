// Package works measures the binding controller's throughput: how many
// Works per second the control plane writes for ResourceBindings that are
// all there, scheduled, when its controller manager starts (the method
// Karmada's users use for the binding → Work path: stop the controller,
// create N bindings, start it, count Works).
package works

import (
	"context"
	"fmt"
	"io"
	"sort"
	"sync"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/metadata"
	"k8s.io/client-go/metadata/metadatainformer"
	"k8s.io/client-go/tools/cache"

	workv1alpha1 "github.com/karmada-go/karmada/api/work/v1alpha1"
	workv1alpha2 "github.com/karmada-go/karmada/api/work/v1alpha2"
	"github.com/karmada-go/karmada/internal/bench"
)

// SchedulerName is set on the run's bindings: no scheduler of that name
// exists, so the bindings keep the clusters they were created with.
const SchedulerName = "karmada-bench-unscheduled"

// Options are the settings of one run.
type Options struct {
	// Bindings is how many ResourceBindings (and ConfigMap templates) the
	// run creates; each gets one Work per member.
	Bindings    int
	Concurrency int
	// StopCommand stops the controller manager before the bindings are
	// created; StartCommand starts it and returns once it is healthy.
	StopCommand, StartCommand []string
	Timeout, CleanupTimeout   time.Duration
	Processes                 []bench.ProcessSource
	SampleInterval            time.Duration
	Log                       io.Writer
}

// Validate checks the options a user gives.
func (o Options) Validate() error {
	switch {
	case o.Bindings < 1:
		return fmt.Errorf("--bindings=%d: must be at least 1", o.Bindings)
	case o.Concurrency < 1:
		return fmt.Errorf("--concurrency=%d: must be at least 1", o.Concurrency)
	case o.Timeout <= 0:
		return fmt.Errorf("--timeout=%s: must be positive", o.Timeout)
	case len(o.StopCommand) == 0 || len(o.StartCommand) == 0:
		return fmt.Errorf("a stop and a start command for the controller manager are needed")
	case o.SampleInterval <= 0:
		return fmt.Errorf("--sample-interval=%s: must be positive", o.SampleInterval)
	}
	return nil
}

// Report is the outcome of `works`.
type Report struct {
	Kind      string    `json:"kind"`
	Started   time.Time `json:"started"`
	Namespace string    `json:"namespace"`
	Members   []string  `json:"members"`
	Bindings  int       `json:"bindings"`
	// Works is how many the run waits for: one per binding and member;
	// Written how many it saw.
	Works   int `json:"works"`
	Written int `json:"written"`
	// Setup is how long creating the templates and the bindings took;
	// Ready how long the start command took (the controller manager
	// healthy); FirstWork and LastWork are from the start command.
	Setup     bench.Duration `json:"setup"`
	Ready     bench.Duration `json:"ready"`
	FirstWork bench.Duration `json:"firstWork"`
	LastWork  bench.Duration `json:"lastWork"`
	// PerSecond is Written over the time from the first Work to the last;
	// PerSecondFromStart over the time from the start command.
	PerSecond          float64 `json:"worksPerSecond"`
	PerSecondFromStart float64 `json:"worksPerSecondFromStart"`
	// Requests are the karmada-apiserver's from the start command to the
	// last Work: all of them, and those to works.
	Requests      bench.RequestCounts `json:"requests"`
	WorksRequests bench.RequestCounts `json:"worksRequests"`
	// Resources are the processes' figures from just before the start.
	Resources map[string]bench.ProcessFigures `json:"resources,omitempty"`
	Cleanup   bench.CleanupResult             `json:"cleanup"`
	Error     string                          `json:"error,omitempty"`
}

// Run creates the namespace and the templates, stops the controller
// manager, creates the bindings, starts it and counts the Works it writes,
// then deletes everything.
func Run(ctx context.Context, f *bench.Fleet, o Options) *Report {
	r := &Report{Kind: "works", Started: time.Now(), Members: f.MemberNames, Bindings: o.Bindings, Works: o.Bindings * len(f.MemberNames)}
	if err := o.Validate(); err != nil {
		r.Error = err.Error()
		return r
	}
	if o.Log == nil {
		o.Log = io.Discard
	}
	r.Namespace = fmt.Sprintf("bench-works-%d", time.Now().UnixNano()%1_000_000_000)
	err := run(ctx, f, o, r)
	if err != nil {
		r.Error = err.Error()
	}
	r.Cleanup = cleanup(f, o, r.Namespace)
	return r
}

func run(ctx context.Context, f *bench.Fleet, o Options, r *Report) error {
	ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: r.Namespace}}
	if _, err := f.Karmada.CoreV1().Namespaces().Create(ctx, ns, metav1.CreateOptions{}); err != nil {
		return fmt.Errorf("creating namespace %s: %w", r.Namespace, err)
	}
	t0 := time.Now()
	// The namespace in every member first: Works applied before it would
	// only fail and be retried.
	for _, m := range f.MemberNames {
		if err := waitNamespace(ctx, f.Members[m], r.Namespace, o.Timeout); err != nil {
			return fmt.Errorf("namespace %s in member %s: %w", r.Namespace, m, err)
		}
	}
	fmt.Fprintf(o.Log, "Creating %d ConfigMaps in %s\n", o.Bindings, r.Namespace)
	templates, err := createTemplates(ctx, f, o, r.Namespace)
	if err != nil {
		return err
	}
	fmt.Fprintf(o.Log, "Stopping the controller manager: %v\n", o.StopCommand)
	if err := bench.RunCommand(ctx, o.StopCommand); err != nil {
		return fmt.Errorf("stop command: %w", err)
	}
	fmt.Fprintf(o.Log, "Creating %d ResourceBindings, each scheduled to %d members\n", o.Bindings, len(f.MemberNames))
	if err := createBindings(ctx, f, o, r.Namespace, templates); err != nil {
		// The controller manager is started again whatever happened.
		_ = bench.RunCommand(context.Background(), o.StartCommand)
		return err
	}
	r.Setup = bench.Duration(time.Since(t0))

	counter, err := watchWorks(ctx, f, r.Namespace, r.Works)
	if err != nil {
		_ = bench.RunCommand(context.Background(), o.StartCommand)
		return err
	}
	defer counter.stop()
	before, berr := bench.ScrapeRequests(ctx, f.Karmada, "")
	wBefore, wberr := bench.ScrapeRequests(ctx, f.Karmada, "works")
	sampler := bench.StartSampler(o.Processes, o.SampleInterval)
	fmt.Fprintf(o.Log, "Starting the controller manager: %v\n", o.StartCommand)
	start := time.Now()
	err = bench.RunCommand(ctx, o.StartCommand)
	r.Ready = bench.Duration(time.Since(start))
	if err == nil {
		err = counter.wait(ctx, o.Timeout, o.Log)
	}
	r.Resources = sampler.Stop()
	first, last, n := counter.figures()
	r.Written = n
	if n > 0 {
		r.FirstWork, r.LastWork = bench.Duration(first.Sub(start)), bench.Duration(last.Sub(start))
		r.PerSecond, r.PerSecondFromStart = rates(n, start, first, last)
	}
	bg := context.Background()
	if after, aerr := bench.ScrapeRequests(bg, f.Karmada, ""); berr == nil && aerr == nil {
		r.Requests = after.Sub(before)
	}
	if after, aerr := bench.ScrapeRequests(bg, f.Karmada, "works"); wberr == nil && aerr == nil {
		r.WorksRequests = after.Sub(wBefore)
	}
	if err != nil {
		return fmt.Errorf("start command: %w", err)
	}
	return nil
}

// rates are n Works over the time from the first to the last and from the
// start; one Work alone has no interval of its own.
func rates(n int, start, first, last time.Time) (perSecond, fromStart float64) {
	if d := last.Sub(first).Seconds(); n > 1 && d > 0 {
		perSecond = float64(n-1) / d
	}
	if d := last.Sub(start).Seconds(); d > 0 {
		fromStart = float64(n) / d
	}
	return perSecond, fromStart
}

// waitNamespace polls, with a deadline, until the namespace exists.
func waitNamespace(ctx context.Context, kc kubernetes.Interface, name string, timeout time.Duration) error {
	return wait.PollUntilContextTimeout(ctx, 100*time.Millisecond, timeout, true, func(ctx context.Context) (bool, error) {
		_, err := kc.CoreV1().Namespaces().Get(ctx, name, metav1.GetOptions{})
		if apierrors.IsNotFound(err) {
			return false, nil
		}
		return err == nil, err
	})
}

// createTemplates creates the ConfigMaps and returns them by index.
func createTemplates(ctx context.Context, f *bench.Fleet, o Options, ns string) ([]*corev1.ConfigMap, error) {
	out := make([]*corev1.ConfigMap, o.Bindings)
	errs := bench.ForEach(ctx, o.Bindings, o.Concurrency, true, func(i int) error {
		cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: fmt.Sprintf("works-%05d", i)}, Data: map[string]string{"index": fmt.Sprint(i)}}
		got, err := f.Karmada.CoreV1().ConfigMaps(ns).Create(ctx, cm, metav1.CreateOptions{})
		out[i] = got
		return err
	})
	if len(errs) > 0 {
		return nil, fmt.Errorf("creating the ConfigMaps: %d failed, first: %w", len(errs), errs[0])
	}
	return out, nil
}

// Binding is the scheduled ResourceBinding of template cm, as the detector
// and the scheduler would leave it: the binding controller's finalizer,
// the template's reference and every member as a target.
func Binding(cm *corev1.ConfigMap, members []string) *workv1alpha2.ResourceBinding {
	rb := &workv1alpha2.ResourceBinding{
		ObjectMeta: metav1.ObjectMeta{Namespace: cm.Namespace, Name: cm.Name + "-configmap", Finalizers: []string{workv1alpha2.BindingControllerFinalizer}},
		Spec: workv1alpha2.ResourceBindingSpec{
			Resource: workv1alpha2.ObjectReference{APIVersion: "v1", Kind: "ConfigMap", Namespace: cm.Namespace, Name: cm.Name,
				UID: cm.UID, ResourceVersion: cm.ResourceVersion},
			SchedulerName: SchedulerName,
		},
	}
	for _, m := range members {
		rb.Spec.Clusters = append(rb.Spec.Clusters, workv1alpha2.TargetCluster{Name: m})
	}
	return rb
}

func createBindings(ctx context.Context, f *bench.Fleet, o Options, ns string, templates []*corev1.ConfigMap) error {
	errs := bench.ForEach(ctx, len(templates), o.Concurrency, true, func(i int) error {
		return f.KarmadaCRs.Create(ctx, Binding(templates[i], f.MemberNames))
	})
	if len(errs) > 0 {
		return fmt.Errorf("creating the ResourceBindings in %s: %d failed, first: %w", ns, len(errs), errs[0])
	}
	return nil
}

// workCounter records when each Work of the run was first seen.
type workCounter struct {
	mu    sync.Mutex
	seen  map[string]time.Time
	want  int
	done  chan struct{}
	close sync.Once
	stop  context.CancelFunc
}

var worksResource = workv1alpha1.SchemeGroupVersion.WithResource("works")

// watchWorks follows the Works labelled with the run's namespace, metadata
// only, and returns once the watch has synced.
func watchWorks(ctx context.Context, f *bench.Fleet, ns string, want int) (*workCounter, error) {
	mc, err := metadata.NewForConfig(f.KarmadaConfig)
	if err != nil {
		return nil, err
	}
	wctx, cancel := context.WithCancel(ctx)
	c := &workCounter{seen: map[string]time.Time{}, want: want, done: make(chan struct{}), stop: cancel}
	factory := metadatainformer.NewFilteredSharedInformerFactory(mc, 0, metav1.NamespaceAll, func(lo *metav1.ListOptions) {
		lo.LabelSelector = workv1alpha2.ResourceBindingNamespaceLabel + "=" + ns
	})
	inf := factory.ForResource(worksResource).Informer()
	if _, err := inf.AddEventHandler(cache.ResourceEventHandlerFuncs{AddFunc: func(obj any) {
		if m, ok := obj.(*metav1.PartialObjectMetadata); ok {
			c.observe(m.Namespace + "/" + m.Name)
		}
	}}); err != nil {
		cancel()
		return nil, err
	}
	go inf.Run(wctx.Done())
	if !cache.WaitForCacheSync(wctx.Done(), inf.HasSynced) {
		cancel()
		return nil, fmt.Errorf("the watch of Works did not sync")
	}
	return c, nil
}

func (c *workCounter) observe(key string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if _, ok := c.seen[key]; ok {
		return
	}
	c.seen[key] = time.Now()
	if len(c.seen) >= c.want {
		c.close.Do(func() { close(c.done) })
	}
}

// wait returns once every Work is seen, logging progress every 10 s.
func (c *workCounter) wait(ctx context.Context, timeout time.Duration, log io.Writer) error {
	deadline := time.NewTimer(timeout)
	defer deadline.Stop()
	tick := time.NewTicker(10 * time.Second)
	defer tick.Stop()
	for {
		select {
		case <-c.done:
			return nil
		case <-tick.C:
			_, _, n := c.figures()
			fmt.Fprintf(log, "  %d/%d Works\n", n, c.want)
		case <-deadline.C:
			_, _, n := c.figures()
			return fmt.Errorf("after %s, %d of %d Works written", timeout, n, c.want)
		case <-ctx.Done():
			return fmt.Errorf("interrupted: %w", context.Cause(ctx))
		}
	}
}

func (c *workCounter) figures() (first, last time.Time, n int) {
	c.mu.Lock()
	defer c.mu.Unlock()
	times := make([]time.Time, 0, len(c.seen))
	for _, t := range c.seen {
		times = append(times, t)
	}
	if len(times) == 0 {
		return first, last, 0
	}
	sort.Slice(times, func(i, j int) bool { return times[i].Before(times[j]) })
	return times[0], times[len(times)-1], len(times)
}

// cleanup deletes the namespace (its bindings take their Works and the
// members' copies with them) and waits until it is gone everywhere.
func cleanup(f *bench.Fleet, o Options, ns string) bench.CleanupResult {
	ctx, cancel := context.WithTimeout(context.Background(), o.CleanupTimeout)
	defer cancel()
	fmt.Fprintf(o.Log, "Cleaning up %s\n", ns)
	var res bench.CleanupResult
	t0 := time.Now()
	if err := f.Karmada.CoreV1().Namespaces().Delete(ctx, ns, metav1.DeleteOptions{}); err != nil && !apierrors.IsNotFound(err) {
		res.Problems = append(res.Problems, fmt.Sprintf("deleting namespace %s: %v", ns, err))
	}
	if err := bench.WaitNamespaceGone(ctx, f.Karmada, ns); err != nil {
		res.Problems = append(res.Problems, fmt.Sprintf("namespace %s in the control plane: %v", ns, err))
	}
	for _, m := range f.MemberNames {
		if err := bench.WaitNamespaceGone(ctx, f.Members[m], ns); err != nil {
			res.Problems = append(res.Problems, fmt.Sprintf("namespace %s in member %s: %v", ns, m, err))
		}
	}
	res.MembersClean = bench.Duration(time.Since(t0))
	res.Complete = len(res.Problems) == 0
	return res
}

// Print writes the report for a reader.
func (r *Report) Print(out io.Writer) {
	fmt.Fprintf(out, "\nworks: %d ResourceBindings (ConfigMaps) scheduled to %d member(s), %d Works to write\n", r.Bindings, len(r.Members), r.Works)
	fmt.Fprintf(out, "set up in %s; controller manager healthy %s after its start\n", r.Setup, r.Ready)
	fmt.Fprintf(out, "Works written: %d of %d; first %s, last %s after the start\n", r.Written, r.Works, r.FirstWork, r.LastWork)
	fmt.Fprintf(out, "Works per second: %.1f from the first to the last (%.1f from the start)\n", r.PerSecond, r.PerSecondFromStart)
	fmt.Fprintf(out, "requests: karmada-apiserver %.0f (%.0f writes), of them to works %.0f (%.0f writes)\n",
		r.Requests.Total, r.Requests.Mutating, r.WorksRequests.Total, r.WorksRequests.Mutating)
	bench.PrintResources(out, r.Resources)
	if r.Cleanup.Complete {
		fmt.Fprintf(out, "cleaned up in %s\n", r.Cleanup.MembersClean)
	} else {
		fmt.Fprintf(out, "clean-up incomplete: %v\n", r.Cleanup.Problems)
	}
}
