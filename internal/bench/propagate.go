package bench

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"strings"
	"sync"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
)

// Options are the settings shared by `propagate` and `restart`.
type Options struct {
	Workload
	Client ClientSettings
	// Ceiling is the apiserver's raw create rate; when zero and
	// MeasureCeiling is set, it is measured first with CeilingObjects.
	Ceiling        float64
	MeasureCeiling bool
	CeilingObjects int
	// Processes are sampled for peak RSS and CPU time.
	Processes      []ProcessSource
	SampleInterval time.Duration
}

// Propagate runs the propagation benchmark: K templates through one policy,
// timed by watches until each is complete, then cleaned up.
func Propagate(ctx context.Context, f *Fleet, o Options) *Report {
	return runScenario(ctx, f, o, "propagate", nil)
}

// runScenario creates the templates, waits for them, runs extra (if any)
// with the templates propagated, and cleans up whatever happened.
func runScenario(ctx context.Context, f *Fleet, o Options, kind string, extra func(ctx context.Context, s *session, r *Report) error) *Report {
	r := &Report{Kind: kind, Started: time.Now()}
	r.Settings = Settings{Members: f.MemberNames, Templates: o.Templates, Replicas: o.Replicas, Mode: o.Mode, Concurrency: o.Concurrency, PerNamespace: o.perNamespace(), Client: o.Client}
	machineSettings(&r.Settings)
	if err := o.Validate(); err != nil {
		r.Error = err.Error()
		return r
	}
	if o.Log == nil {
		o.Log = io.Discard
	}
	log := o.Log
	if o.Ceiling == 0 && o.MeasureCeiling {
		fmt.Fprintf(log, "Measuring the karmada-apiserver's create ceiling with %d Deployments\n", o.CeilingObjects)
		c := APIServerLimit(ctx, f, o.CeilingObjects, o.Concurrency, o.Client, o.CleanupTimeout)
		if c.Error != "" {
			r.Error = "measuring the ceiling: " + c.Error
			return r
		}
		o.Ceiling = c.CreatesPerSecond
		fmt.Fprintf(log, "  %.1f creates/s\n", o.Ceiling)
	}
	r.Ceiling = o.Ceiling

	s := newSession(f, o.Workload)
	r.Namespace = s.ns
	if len(s.namespaces) > 1 {
		r.Namespaces = s.namespaces
	}
	err := s.setup(ctx)
	if err == nil {
		err = s.measure(ctx, o, r)
	}
	if err == nil && extra != nil {
		err = extra(ctx, s, r)
	}
	if err != nil {
		r.Error = err.Error()
	}
	r.Cleanup = s.cleanup()
	return r
}

// measure creates the templates and waits for them while sampling the
// processes and counting requests.
func (s *session) measure(ctx context.Context, o Options, r *Report) error {
	cpBefore, cpErr := ScrapeRequests(ctx, s.fleet.Karmada, "")
	evBefore, evErr := ScrapeRequests(ctx, s.fleet.Karmada, "events")
	mBefore, mErr := s.memberRequests(ctx)
	sampler := StartSampler(o.Processes, o.SampleInterval)
	fmt.Fprintf(s.log, "Creating %d Deployments in %s (policy: %s over %d members)\n", o.Templates, strings.Join(s.namespaces, ", "), o.Mode, len(s.fleet.MemberNames))
	took, err := s.create(ctx)
	r.Create = Duration(took)
	if took > 0 {
		r.CreateRate = float64(len(s.created)) / took.Seconds()
	}
	if err == nil {
		fmt.Fprintf(s.log, "  created in %s; waiting for propagation\n", r.Create)
		err = s.waitPropagated(ctx)
	}
	r.Resources = sampler.Stop()
	l := s.tracker.Latencies()
	r.InEveryMember, r.Available, r.Aggregated = Summarize(l.Exist), Summarize(l.Available), Summarize(l.Aggregated)
	r.Complete, r.Incomplete = l.Complete, len(l.Incomplete)
	if !l.Last.IsZero() {
		r.Wall = Duration(l.Last.Sub(l.First))
		r.Throughput = float64(l.Complete) / l.Last.Sub(l.First).Seconds()
	}
	r.relateToCeiling()
	// Counters read after the run; a failed read leaves them out.
	bg := context.Background()
	if cpErr == nil {
		if after, err := ScrapeRequests(bg, s.fleet.Karmada, ""); err == nil {
			r.Requests.ControlPlane = after.Sub(cpBefore)
			r.Requests.PerTemplate = r.Requests.ControlPlane.Total / float64(max(len(s.created), 1))
			r.Requests.WritesPerTemplate = r.Requests.ControlPlane.Mutating / float64(max(len(s.created), 1))
			r.Requests.WritesPerTemplateWithoutEvents = r.Requests.WritesPerTemplate
		}
	}
	if cpErr == nil && evErr == nil {
		if after, err := ScrapeRequests(bg, s.fleet.Karmada, "events"); err == nil {
			r.Requests.Events = after.Sub(evBefore)
			r.Requests.WritesPerTemplateWithoutEvents = (r.Requests.ControlPlane.Mutating - r.Requests.Events.Mutating) / float64(max(len(s.created), 1))
		}
	}
	if mErr == nil {
		if after, err := s.memberRequests(bg); err == nil {
			r.Requests.Members = after.Sub(mBefore)
			copies := len(s.created) * len(s.fleet.MemberNames)
			if o.Mode == Divided {
				copies = max(s.tracker.Copies(), 1)
			}
			r.Requests.PerMemberCopy = r.Requests.Members.Total / float64(max(copies, 1))
		}
	}
	return err
}

// memberRequests sums the members' requests to their deployments resource.
func (s *session) memberRequests(ctx context.Context) (RequestCounts, error) {
	var total RequestCounts
	for _, m := range s.fleet.MemberNames {
		c, err := ScrapeRequests(ctx, s.fleet.Members[m], "deployments")
		if err != nil {
			return total, fmt.Errorf("member %s: %w", m, err)
		}
		total = total.Add(c)
	}
	return total, nil
}

// APIServerLimit measures the karmada-apiserver's raw create rate: n
// Deployments, like the benchmark's templates, created in a namespace no
// policy selects and that is not propagated, with the same client settings.
func APIServerLimit(ctx context.Context, f *Fleet, n, workers int, client ClientSettings, cleanupTimeout time.Duration) *CeilingReport {
	r := &CeilingReport{Kind: "apiserver-limit", Started: time.Now(), Objects: n, Concurrency: workers, Client: client}
	if n < 1 || workers < 1 {
		r.Error = fmt.Sprintf("objects (%d) and concurrency (%d) must be at least 1", n, workers)
		return r
	}
	run := randomID()
	ns := "bench-limit-" + run
	_, err := f.Karmada.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns, Labels: map[string]string{
		RunLabel: run,
		// Kept out of the members: only the control plane is measured.
		"namespace.karmada.io/skip-auto-propagation": "true",
	}}}, metav1.CreateOptions{})
	if err != nil {
		r.Error = fmt.Sprintf("creating namespace %s: %v", ns, err)
		return r
	}
	elapsed, err := CreateDeployments(ctx, f.Karmada, func(int) string { return ns }, run, n, 1, workers, nil)
	r.Elapsed = Duration(elapsed)
	if err != nil {
		r.Error = err.Error()
	} else {
		r.CreatesPerSecond = float64(n) / elapsed.Seconds()
	}
	cctx, cancel := context.WithTimeout(context.Background(), cleanupTimeout)
	defer cancel()
	if err := f.Karmada.CoreV1().Namespaces().Delete(cctx, ns, metav1.DeleteOptions{}); err == nil {
		r.Cleanup = WaitNamespaceGone(cctx, f.Karmada, ns) == nil
	}
	return r
}

// RestartOptions say how `restart` stops and starts the controller manager.
type RestartOptions struct {
	// StopCommand and StartCommand are run as given (argv); the start
	// command should return once the process is healthy.
	StopCommand, StartCommand []string
	// Settle is how long member writes are still counted after catching up.
	Settle time.Duration
}

// TouchAnnotation is what `restart` changes on templates while the
// controller manager is down.
const TouchAnnotation = "bench.karmada.io/touch"

// Restart propagates the templates, kills the controller manager, changes
// every other template while it is down, starts it again and measures the
// time until every change reached every member, and the member writes of
// the catch-up.
func Restart(ctx context.Context, f *Fleet, o Options, ro RestartOptions) *Report {
	return runScenario(ctx, f, o, "restart", func(ctx context.Context, s *session, r *Report) error {
		return s.restart(ctx, o, ro, r)
	})
}

// changeTracker waits for a set of member copies to show the touch.
type changeTracker struct {
	mu      sync.Mutex
	pending map[string]map[string]bool // template -> members still without the touch
	left    int
	done    chan struct{}
	at      time.Time
}

func (c *changeTracker) observe(member string, ev DeploymentEvent) {
	if ev.Deleted || ev.Annotations[TouchAnnotation] == "" {
		return
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if ms, ok := c.pending[ev.Name]; ok && ms[member] {
		delete(ms, member)
		c.left--
		if c.left == 0 {
			c.at = time.Now()
			close(c.done)
		}
	}
}

func (s *session) restart(ctx context.Context, o Options, ro RestartOptions, r *Report) error {
	rf := &RestartFigures{Settle: Duration(ro.Settle)}
	r.Restart = rf
	// Which copies each template has now: the changed ones must all change.
	ct := &changeTracker{pending: map[string]map[string]bool{}, done: make(chan struct{})}
	names, copies := s.tracker.CopiesByTemplate()
	for i, name := range names {
		if i%2 != 0 {
			continue
		}
		ms := map[string]bool{}
		for _, m := range copies[name] {
			ms[m] = true
			ct.left++
		}
		ct.pending[name] = ms
	}
	rf.Changed, rf.ChangedCopies = len(ct.pending), ct.left
	observe := ct.observe
	s.onMember.Store(&observe)

	before, err := s.memberRequests(ctx)
	if err != nil {
		return err
	}
	fmt.Fprintf(s.log, "Stopping the controller manager: %v\n", ro.StopCommand)
	if err := RunCommand(ctx, ro.StopCommand); err != nil {
		return fmt.Errorf("stop command: %w", err)
	}
	fmt.Fprintf(s.log, "Changing %d templates while it is down\n", rf.Changed)
	patch := []byte(fmt.Sprintf(`{"metadata":{"annotations":{%q:"1"}}}`, TouchAnnotation))
	for name := range ct.pending {
		if _, err := s.fleet.Karmada.AppsV1().Deployments(s.nsOf[name]).Patch(ctx, name, types.MergePatchType, patch, metav1.PatchOptions{}); err != nil {
			return fmt.Errorf("changing template %s: %w", name, err)
		}
	}
	fmt.Fprintf(s.log, "Starting the controller manager: %v\n", ro.StartCommand)
	// Sampled from before the start: the restarted process is new to the
	// sampler, which counts its CPU from its own start.
	sampler := StartSampler(o.Processes, o.SampleInterval)
	defer func() { rf.Resources = sampler.Stop() }()
	t0 := time.Now()
	if err := RunCommand(ctx, ro.StartCommand); err != nil {
		return fmt.Errorf("start command: %w", err)
	}
	rf.Ready = Duration(time.Since(t0))
	timer := time.NewTimer(o.Timeout)
	defer timer.Stop()
	select {
	case <-ct.done:
	case <-ctx.Done():
		return fmt.Errorf("interrupted: %w", context.Cause(ctx))
	case <-timer.C:
		ct.mu.Lock()
		left := ct.left
		ct.mu.Unlock()
		return fmt.Errorf("after %s, %d changed member copies still lack the change", o.Timeout, left)
	}
	ct.mu.Lock()
	rf.CaughtUp = Duration(ct.at.Sub(t0))
	ct.mu.Unlock()
	atDone, err := s.memberRequests(ctx)
	if err != nil {
		return err
	}
	rf.MemberWritesAtDone = atDone.Sub(before).Mutating
	fmt.Fprintf(s.log, "  caught up in %s; counting member writes for %s more\n", rf.CaughtUp, ro.Settle)
	select {
	case <-time.After(ro.Settle):
	case <-ctx.Done():
		return fmt.Errorf("interrupted: %w", context.Cause(ctx))
	}
	after, err := s.memberRequests(ctx)
	if err != nil {
		return err
	}
	rf.MemberWrites = after.Sub(before).Mutating
	rf.Needless = max(rf.MemberWrites-float64(rf.ChangedCopies), 0)
	return nil
}

// RunCommand runs argv with its output on stderr.
func RunCommand(ctx context.Context, argv []string) error {
	if len(argv) == 0 {
		return errors.New("no command given")
	}
	cmd := exec.CommandContext(ctx, argv[0], argv[1:]...)
	cmd.Stdout, cmd.Stderr = os.Stderr, os.Stderr
	return cmd.Run()
}
