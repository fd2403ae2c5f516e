package bench

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"golang.org/x/sync/errgroup"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/cache"
	watchtools "k8s.io/client-go/tools/watch"

	policyv1alpha1 "github.com/karmada-go/karmada/api/policy/v1alpha1"
)

// Workload says what one run creates.
type Workload struct {
	Templates int
	// PerNamespace is how many templates go in one namespace
	// (DefaultPerNamespace when zero): Kubernetes' Deployment and ReplicaSet
	// controllers list a Deployment's namespace on every sync, so a
	// namespace of K templates costs every member work growing with K per
	// copy, which is not what a run should measure.
	PerNamespace int
	Replicas     int32
	Mode         Mode
	Concurrency  int
	// Timeout bounds the wait for full propagation.
	Timeout time.Duration
	// CleanupTimeout bounds the clean-up, which runs even after an
	// interrupt.
	CleanupTimeout time.Duration
	// Log receives progress lines.
	Log io.Writer
}

// Validate rejects settings that cannot run.
func (w Workload) Validate() error {
	switch {
	case w.Templates < 1:
		return fmt.Errorf("--templates=%d: must be at least 1", w.Templates)
	case w.Replicas < 1:
		return fmt.Errorf("--replicas=%d: must be at least 1", w.Replicas)
	case w.PerNamespace < 0:
		return fmt.Errorf("--templates-per-namespace=%d: must be at least 1", w.PerNamespace)
	case w.Concurrency < 1:
		return fmt.Errorf("--concurrency=%d: must be at least 1", w.Concurrency)
	case w.Timeout <= 0:
		return fmt.Errorf("--timeout=%s: must be positive", w.Timeout)
	}
	_, err := ParseMode(string(w.Mode))
	return err
}

// DefaultPerNamespace is the default of Workload.PerNamespace.
const DefaultPerNamespace = 1000

// Namespaces returns the namespaces of a run named base: base itself when
// every template fits in one, else base-0, base-1, ..., PerNamespace
// templates in each.
func (w Workload) Namespaces(base string) []string {
	per := w.perNamespace()
	n := (w.Templates + per - 1) / per
	if n <= 1 {
		return []string{base}
	}
	out := make([]string, n)
	for i := range out {
		out[i] = fmt.Sprintf("%s-%d", base, i)
	}
	return out
}

func (w Workload) perNamespace() int {
	if w.PerNamespace > 0 {
		return w.PerNamespace
	}
	return DefaultPerNamespace
}

// namespaceOf returns which of namespaces (from Namespaces) holds the i-th
// template.
func (w Workload) namespaceOf(namespaces []string, i int) string {
	return namespaces[min(i/w.perNamespace(), len(namespaces)-1)]
}

// session is one run's objects: namespaces each holding a policy and
// templates, and the watches following them.
type session struct {
	fleet *Fleet
	w     Workload
	run   string
	// ns names the run; namespaces are where its templates are (ns itself
	// when one is enough).
	ns         string
	namespaces []string
	tracker    *Tracker
	log        io.Writer
	// onMember, when set, is also told about every member event.
	onMember atomic.Pointer[func(member string, ev DeploymentEvent)]

	stopWatches context.CancelFunc
	mu          sync.Mutex
	created     []string
	// nsOf is each created template's namespace.
	nsOf map[string]string
}

func newSession(f *Fleet, w Workload) *session {
	id := randomID()
	log := w.Log
	if log == nil {
		log = io.Discard
	}
	ns := "bench-" + id
	return &session{fleet: f, w: w, run: id, ns: ns, namespaces: w.Namespaces(ns), nsOf: map[string]string{}, tracker: NewTracker(w.Mode, f.MemberNames, w.Replicas), log: log}
}

func randomID() string {
	b := make([]byte, 4)
	_, _ = rand.Read(b)
	return hex.EncodeToString(b)
}

// templateName is the name of the i-th template (0-based).
func templateName(i int) string { return fmt.Sprintf("bench-%05d", i) }

// Policy is the run's PropagationPolicy: every Deployment of the namespace
// to every member, duplicated or divided by equal static weights.
func Policy(namespace string, members []string, mode Mode) *policyv1alpha1.PropagationPolicy {
	rs := &policyv1alpha1.ReplicaSchedulingStrategy{ReplicaSchedulingType: policyv1alpha1.ReplicaSchedulingTypeDuplicated}
	if mode == Divided {
		rs = &policyv1alpha1.ReplicaSchedulingStrategy{
			ReplicaSchedulingType:     policyv1alpha1.ReplicaSchedulingTypeDivided,
			ReplicaDivisionPreference: policyv1alpha1.ReplicaDivisionPreferenceWeighted,
			WeightPreference:          &policyv1alpha1.ClusterPreferences{},
		}
		for _, m := range members {
			rs.WeightPreference.StaticWeightList = append(rs.WeightPreference.StaticWeightList, policyv1alpha1.StaticClusterWeight{
				TargetCluster: policyv1alpha1.ClusterAffinity{ClusterNames: []string{m}}, Weight: 1,
			})
		}
	}
	return &policyv1alpha1.PropagationPolicy{
		ObjectMeta: metav1.ObjectMeta{Name: "karmada-bench", Namespace: namespace},
		Spec: policyv1alpha1.PropagationSpec{
			ResourceSelectors: []policyv1alpha1.ResourceSelector{{APIVersion: "apps/v1", Kind: "Deployment"}},
			Placement: policyv1alpha1.Placement{
				ClusterAffinity:   &policyv1alpha1.ClusterAffinity{ClusterNames: append([]string(nil), members...)},
				ReplicaScheduling: rs,
			},
		},
	}
}

// setup creates the namespace and the policy and starts the watches of every
// member and of the control plane.
func (s *session) setup(ctx context.Context) error {
	for _, name := range s.namespaces {
		ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: name, Labels: map[string]string{RunLabel: s.run}}}
		if _, err := s.fleet.Karmada.CoreV1().Namespaces().Create(ctx, ns, metav1.CreateOptions{}); err != nil {
			return fmt.Errorf("creating namespace %s: %w", name, err)
		}
		if err := s.fleet.KarmadaCRs.Create(ctx, Policy(name, s.fleet.MemberNames, s.w.Mode)); err != nil {
			return fmt.Errorf("creating the PropagationPolicy in %s: %w", name, err)
		}
	}
	wctx, cancel := context.WithCancel(context.Background())
	s.stopWatches = cancel
	var (
		wg   sync.WaitGroup
		mu   sync.Mutex
		errs []error
	)
	watchOne := func(kc kubernetes.Interface, fn func(DeploymentEvent)) {
		defer wg.Done()
		if err := watchNamespaces(wctx, kc, s.namespaces, fn); err != nil {
			mu.Lock()
			errs = append(errs, err)
			mu.Unlock()
		}
	}
	for _, m := range s.fleet.MemberNames {
		wg.Add(1)
		go watchOne(s.fleet.Members[m], func(ev DeploymentEvent) {
			now := time.Now()
			if ev.Deleted {
				s.tracker.MemberGone(m, ev.Name)
			} else {
				s.tracker.Member(m, ev.Name, ev.Replicas, ev.Available, now)
			}
			if fn := s.onMember.Load(); fn != nil {
				(*fn)(m, ev)
			}
		})
	}
	wg.Add(1)
	go watchOne(s.fleet.Karmada, func(ev DeploymentEvent) {
		if !ev.Deleted {
			s.tracker.Template(ev.Name, ev.Available, time.Now())
		}
	})
	wg.Wait()
	return errors.Join(errs...)
}

// create makes the templates with Concurrency workers, as fast as the
// client allows. It returns how long that took and the first error, if any.
func (s *session) create(ctx context.Context) (time.Duration, error) {
	return CreateDeployments(ctx, s.fleet.Karmada, func(i int) string { return s.w.namespaceOf(s.namespaces, i) }, s.run, s.w.Templates, s.w.Replicas, s.w.Concurrency, func(ns, name string, phase createPhase, err error) {
		switch phase {
		case beforeCreate:
			s.tracker.Start(name, time.Now())
		case createFailed:
			s.tracker.Forget(name)
		case created:
			s.mu.Lock()
			s.created = append(s.created, name)
			s.nsOf[name] = ns
			s.mu.Unlock()
		}
	})
}

// watchNamespaces runs WatchDeployments on each namespace until ctx ends,
// returning once every watch has synced (or with the first error).
func watchNamespaces(ctx context.Context, kc kubernetes.Interface, namespaces []string, fn func(DeploymentEvent)) error {
	var g errgroup.Group
	for _, ns := range namespaces {
		g.Go(func() error { return WatchDeployments(ctx, kc, ns, fn) })
	}
	return g.Wait()
}

type createPhase int

const (
	beforeCreate createPhase = iota
	created
	createFailed
)

// CreateDeployments creates n templates, the i-th in namespace(i), with the
// given number of workers, stopping at the first error. hook, when set, is
// told about each template before its create request and after its answer.
func CreateDeployments(ctx context.Context, kc kubernetes.Interface, namespace func(i int) string, run string, n int, replicas int32, workers int, hook func(namespace, name string, phase createPhase, err error)) (time.Duration, error) {
	if hook == nil {
		hook = func(string, string, createPhase, error) {}
	}
	t0 := time.Now()
	errs := ForEach(ctx, n, workers, true, func(i int) error {
		name, ns := templateName(i), namespace(i)
		hook(ns, name, beforeCreate, nil)
		if _, err := kc.AppsV1().Deployments(ns).Create(ctx, Deployment(ns, name, run, replicas), metav1.CreateOptions{}); err != nil {
			hook(ns, name, createFailed, err)
			return fmt.Errorf("creating Deployment %s/%s: %w", ns, name, err)
		}
		hook(ns, name, created, nil)
		return nil
	})
	elapsed := time.Since(t0)
	if len(errs) > 0 {
		return elapsed, errs[0]
	}
	if ctx.Err() != nil {
		return elapsed, fmt.Errorf("interrupted while creating templates: %w", context.Cause(ctx))
	}
	return elapsed, nil
}

// ForEach calls fn for 0..n-1 on the given number of workers until done or
// ctx ends, and returns the errors; with stopOnError, no new call starts
// after the first error.
func ForEach(ctx context.Context, n, workers int, stopOnError bool, fn func(i int) error) []error {
	items := make(chan int)
	var (
		wg   sync.WaitGroup
		mu   sync.Mutex
		errs []error
	)
	for range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range items {
				if err := fn(i); err != nil {
					mu.Lock()
					errs = append(errs, err)
					mu.Unlock()
				}
			}
		}()
	}
feed:
	for i := range n {
		mu.Lock()
		failed := stopOnError && len(errs) > 0
		mu.Unlock()
		if failed {
			break
		}
		select {
		case items <- i:
		case <-ctx.Done():
			break feed
		}
	}
	close(items)
	wg.Wait()
	return errs
}

// waitPropagated waits until every created template is complete, the
// timeout passes or ctx ends.
func (s *session) waitPropagated(ctx context.Context) error {
	// Every template is created: the ones complete so far are not all.
	s.tracker.Seal()
	timer := time.NewTimer(s.w.Timeout)
	defer timer.Stop()
	progress := time.NewTicker(10 * time.Second)
	defer progress.Stop()
	for {
		select {
		case <-s.tracker.Done():
			return nil
		case <-ctx.Done():
			return fmt.Errorf("interrupted: %w", context.Cause(ctx))
		case <-timer.C:
			l := s.tracker.Latencies()
			return fmt.Errorf("after %s, %d of %d templates are not fully propagated (first: %s)", s.w.Timeout, len(l.Incomplete), l.Started, first(l.Incomplete))
		case <-progress.C:
			l := s.tracker.Latencies()
			fmt.Fprintf(s.log, "  %d/%d templates complete (in every member: %d, available: %d, aggregated: %d)\n",
				l.Complete, l.Started, len(l.Exist), len(l.Available), len(l.Aggregated))
		}
	}
}

func first(names []string) string {
	if len(names) == 0 {
		return "none"
	}
	return names[0]
}

// CleanupResult says how the clean-up went.
type CleanupResult struct {
	// MembersClean is how long after the templates' deletion every member
	// copy was gone, as the member watches saw it.
	MembersClean Duration `json:"membersClean"`
	// Complete is true when the namespace is gone from the control plane
	// and from every member.
	Complete bool `json:"complete"`
	// Problems lists what could not be cleaned up.
	Problems []string `json:"problems,omitempty"`
}

// cleanup deletes the templates (timing until the members are clean), then
// the policy and the namespace, and waits until the namespace is gone
// everywhere. It runs on its own context so that an interrupted run still
// cleans up.
func (s *session) cleanup() CleanupResult {
	ctx, cancel := context.WithTimeout(context.Background(), s.w.CleanupTimeout)
	defer cancel()
	defer func() {
		if s.stopWatches != nil {
			s.stopWatches()
		}
	}()
	var res CleanupResult
	fmt.Fprintf(s.log, "Cleaning up %s\n", strings.Join(s.namespaces, ", "))
	t0 := time.Now()
	if err := s.deleteTemplates(ctx); err != nil {
		res.Problems = append(res.Problems, fmt.Sprintf("deleting the templates: %v", err))
	}
	if s.stopWatches != nil {
		select {
		case <-s.tracker.Emptied():
			res.MembersClean = Duration(time.Since(t0))
		case <-ctx.Done():
			res.Problems = append(res.Problems, fmt.Sprintf("%d member copies still present after %s", s.tracker.Copies(), s.w.CleanupTimeout))
		}
	}
	for _, ns := range s.namespaces {
		if err := s.fleet.KarmadaCRs.Delete(ctx, Policy(ns, nil, s.w.Mode)); err != nil && !apierrors.IsNotFound(err) {
			res.Problems = append(res.Problems, fmt.Sprintf("deleting the PropagationPolicy of %s: %v", ns, err))
		}
		if err := s.fleet.Karmada.CoreV1().Namespaces().Delete(ctx, ns, metav1.DeleteOptions{}); err != nil && !apierrors.IsNotFound(err) {
			res.Problems = append(res.Problems, fmt.Sprintf("deleting namespace %s: %v", ns, err))
		}
	}
	clusters := map[string]kubernetes.Interface{"the control plane": s.fleet.Karmada}
	for _, m := range s.fleet.MemberNames {
		clusters["member "+m] = s.fleet.Members[m]
	}
	var (
		wg sync.WaitGroup
		mu sync.Mutex
	)
	for where, kc := range clusters {
		for _, ns := range s.namespaces {
			wg.Add(1)
			go func() {
				defer wg.Done()
				if err := WaitNamespaceGone(ctx, kc, ns); err != nil {
					mu.Lock()
					res.Problems = append(res.Problems, fmt.Sprintf("namespace %s in %s: %v", ns, where, err))
					mu.Unlock()
				}
			}()
		}
	}
	wg.Wait()
	res.Complete = len(res.Problems) == 0
	return res
}

// deleteTemplates deletes every created template, with the run's
// concurrency.
func (s *session) deleteTemplates(ctx context.Context) error {
	errs := ForEach(ctx, len(s.created), s.w.Concurrency, false, func(i int) error {
		err := s.fleet.Karmada.AppsV1().Deployments(s.nsOf[s.created[i]]).Delete(ctx, s.created[i], metav1.DeleteOptions{})
		if apierrors.IsNotFound(err) {
			return nil
		}
		return err
	})
	if len(errs) > 0 {
		return fmt.Errorf("%d of %d deletions failed, first: %w", len(errs), len(s.created), errs[0])
	}
	return nil
}

// WaitNamespaceGone watches a namespace until it does not exist.
func WaitNamespaceGone(ctx context.Context, kc kubernetes.Interface, name string) error {
	sel := fields.OneTermEqualSelector("metadata.name", name).String()
	lw := &cache.ListWatch{
		ListFunc: func(o metav1.ListOptions) (runtime.Object, error) {
			o.FieldSelector = sel
			return kc.CoreV1().Namespaces().List(ctx, o)
		},
		WatchFunc: func(o metav1.ListOptions) (watch.Interface, error) {
			o.FieldSelector = sel
			return kc.CoreV1().Namespaces().Watch(ctx, o)
		},
	}
	gone := func(store cache.Store) (bool, error) { return len(store.List()) == 0, nil }
	_, err := watchtools.UntilWithSync(ctx, lw, &corev1.Namespace{}, gone, func(ev watch.Event) (bool, error) {
		return ev.Type == watch.Deleted, nil
	})
	if err != nil {
		return fmt.Errorf("still there: %w", err)
	}
	return nil
}
