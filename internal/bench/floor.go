package bench

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strings"
	"sync"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
)

// FloorReport is the result of `floor`: the members alone, with the same
// Deployments created in each of them directly. Nothing that goes through a
// control plane can be faster on the same machine.
type FloorReport struct {
	Kind     string    `json:"kind"`
	Started  time.Time `json:"started"`
	Settings Settings  `json:"settings"`
	// Namespace is where the run's Deployments were, in every member;
	// Namespaces, when there were more than one (PerNamespace each).
	Namespace  string   `json:"namespace"`
	Namespaces []string `json:"namespaces,omitempty"`
	// Create is how long the create requests took, to every member.
	Create Duration `json:"create"`
	// InEveryMember and Available are per Deployment name, from its first
	// create request until it exists, and until it is available, in every
	// member.
	InEveryMember Summary `json:"inEveryMember"`
	Available     Summary `json:"available"`
	// Wall is from the first create request until the last Deployment was
	// available in every member.
	Wall      Duration                  `json:"wall"`
	Resources map[string]ProcessFigures `json:"resources,omitempty"`
	Cleanup   FloorCleanup              `json:"cleanup"`
	Error     string                    `json:"error,omitempty"`
}

// FloorCleanup says how deleting the namespace from the members went.
type FloorCleanup struct {
	// MembersClean is how long after the Deployments' deletion every copy
	// was gone.
	MembersClean Duration `json:"membersClean"`
	Complete     bool     `json:"complete"`
	Problems     []string `json:"problems,omitempty"`
}

// Floor creates w.Templates Deployments of w.Replicas in every member
// directly (one namespace per run, Concurrency workers per member), waits by
// watch until every one is available in every member, then deletes them and
// the namespace, timing until the members are clean.
func Floor(ctx context.Context, f *Fleet, w Workload, client ClientSettings, processes []ProcessSource, interval time.Duration) *FloorReport {
	r := &FloorReport{Kind: "floor", Started: time.Now()}
	r.Settings = Settings{Members: f.MemberNames, Templates: w.Templates, Replicas: w.Replicas, Mode: Duplicated, Concurrency: w.Concurrency, PerNamespace: w.perNamespace(), Client: client}
	machineSettings(&r.Settings)
	w.Mode = Duplicated
	if err := w.Validate(); err != nil {
		r.Error = err.Error()
		return r
	}
	log := w.Log
	if log == nil {
		log = io.Discard
	}
	run := randomID()
	base := "bench-floor-" + run
	r.Namespace = base
	namespaces := w.Namespaces(base)
	if len(namespaces) > 1 {
		r.Namespaces = namespaces
	}
	// No template in the control plane: the tracker's aggregated milestone
	// is met at each create, so that complete means available everywhere.
	tracker := NewTracker(Duplicated, f.MemberNames, w.Replicas)
	total := w.Replicas * int32(len(f.MemberNames))

	wctx, stopWatches := context.WithCancel(context.Background())
	defer stopWatches()
	err := forEachMember(f, func(m string, kc kubernetes.Interface) error {
		for _, ns := range namespaces {
			nsObj := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns, Labels: map[string]string{RunLabel: run}}}
			if _, err := kc.CoreV1().Namespaces().Create(ctx, nsObj, metav1.CreateOptions{}); err != nil {
				return fmt.Errorf("creating namespace %s in %s: %w", ns, m, err)
			}
		}
		return watchNamespaces(wctx, kc, namespaces, func(ev DeploymentEvent) {
			if ev.Deleted {
				tracker.MemberGone(m, ev.Name)
			} else {
				tracker.Member(m, ev.Name, ev.Replicas, ev.Available, time.Now())
			}
		})
	})
	var created []string
	nsOf := map[string]string{}
	if err == nil {
		sampler := StartSampler(processes, interval)
		fmt.Fprintf(log, "Creating %d Deployments in each of %d members, namespace %s\n", w.Templates, len(f.MemberNames), strings.Join(namespaces, ", "))
		var mu sync.Mutex
		t0 := time.Now()
		errs := ForEach(ctx, w.Templates, w.Concurrency, true, func(i int) error {
			name, ns := templateName(i), w.namespaceOf(namespaces, i)
			tracker.Start(name, time.Now())
			tracker.Template(name, total, time.Now())
			for _, m := range f.MemberNames {
				if _, err := f.Members[m].AppsV1().Deployments(ns).Create(ctx, Deployment(ns, name, run, w.Replicas), metav1.CreateOptions{}); err != nil {
					return fmt.Errorf("creating Deployment %s/%s in %s: %w", ns, name, m, err)
				}
			}
			mu.Lock()
			created = append(created, name)
			nsOf[name] = ns
			mu.Unlock()
			return nil
		})
		r.Create = Duration(time.Since(t0))
		switch {
		case len(errs) > 0:
			err = errs[0]
		case ctx.Err() != nil:
			err = fmt.Errorf("interrupted while creating: %w", context.Cause(ctx))
		default:
			fmt.Fprintf(log, "  created in %s; waiting until available\n", r.Create)
			s := &session{w: w, tracker: tracker, log: log}
			err = s.waitPropagated(ctx)
		}
		r.Resources = sampler.Stop()
		l := tracker.Latencies()
		r.InEveryMember, r.Available = Summarize(l.Exist), Summarize(l.Available)
		if !l.Last.IsZero() {
			r.Wall = Duration(l.Last.Sub(l.First))
		}
	}
	if err != nil {
		r.Error = err.Error()
	}
	r.Cleanup = floorCleanup(f, w, namespaces, created, nsOf, tracker, log)
	return r
}

// forEachMember runs fn for every member at once and joins the errors.
func forEachMember(f *Fleet, fn func(member string, kc kubernetes.Interface) error) error {
	var (
		wg   sync.WaitGroup
		mu   sync.Mutex
		errs []error
	)
	for _, m := range f.MemberNames {
		wg.Add(1)
		go func() {
			defer wg.Done()
			if err := fn(m, f.Members[m]); err != nil {
				mu.Lock()
				errs = append(errs, err)
				mu.Unlock()
			}
		}()
	}
	wg.Wait()
	return errors.Join(errs...)
}

// floorCleanup deletes the Deployments (timing until every copy is gone) and
// the namespace from every member, on its own context so that an
// interrupted run still cleans up.
func floorCleanup(f *Fleet, w Workload, namespaces, created []string, nsOf map[string]string, tracker *Tracker, log io.Writer) FloorCleanup {
	ctx, cancel := context.WithTimeout(context.Background(), w.CleanupTimeout)
	defer cancel()
	var res FloorCleanup
	fmt.Fprintf(log, "Cleaning up %s in the members\n", strings.Join(namespaces, ", "))
	t0 := time.Now()
	errs := ForEach(ctx, len(created), w.Concurrency, false, func(i int) error {
		for _, m := range f.MemberNames {
			err := f.Members[m].AppsV1().Deployments(nsOf[created[i]]).Delete(ctx, created[i], metav1.DeleteOptions{})
			if err != nil && !apierrors.IsNotFound(err) {
				return fmt.Errorf("deleting Deployment %s in %s: %w", created[i], m, err)
			}
		}
		return nil
	})
	if len(errs) > 0 {
		res.Problems = append(res.Problems, fmt.Sprintf("%d deletions failed, first: %v", len(errs), errs[0]))
	}
	select {
	case <-tracker.Emptied():
		res.MembersClean = Duration(time.Since(t0))
	case <-ctx.Done():
		res.Problems = append(res.Problems, fmt.Sprintf("%d copies still present after %s", tracker.Copies(), w.CleanupTimeout))
	}
	var mu sync.Mutex
	_ = forEachMember(f, func(m string, kc kubernetes.Interface) error {
		// All deleted first, then waited for: the namespaces go together.
		failed := map[string]error{}
		for _, ns := range namespaces {
			if err := kc.CoreV1().Namespaces().Delete(ctx, ns, metav1.DeleteOptions{}); err != nil && !apierrors.IsNotFound(err) {
				failed[ns] = err
			}
		}
		for _, ns := range namespaces {
			err := failed[ns]
			if err == nil {
				err = WaitNamespaceGone(ctx, kc, ns)
			}
			if err != nil {
				mu.Lock()
				res.Problems = append(res.Problems, fmt.Sprintf("namespace %s in %s: %v", ns, m, err))
				mu.Unlock()
			}
		}
		return nil
	})
	res.Complete = len(res.Problems) == 0
	return res
}

// Print writes the report for people.
func (r *FloorReport) Print(out io.Writer) {
	s := r.Settings
	fmt.Fprintf(out, "\nfloor: %d Deployments x %d replica(s) created directly in each of %d member(s) (%s)\n",
		s.Templates, s.Replicas, len(s.Members), strings.Join(s.Members, ","))
	fmt.Fprintf(out, "client: qps %.0f, burst %d, concurrency %d; machine: %d CPUs, %d GiB\n", s.Client.QPS, s.Client.Burst, s.Concurrency, s.CPUs, s.MemoryBytes>>30)
	fmt.Fprintf(out, "created in %s\n", r.Create)
	printMilestones(out, []milestone{{"in every member", r.InEveryMember}, {"available in members", r.Available}})
	fmt.Fprintf(out, "wall (first create until the last available everywhere) %s\n", r.Wall)
	PrintResources(out, r.Resources)
	if r.Cleanup.Complete {
		fmt.Fprintf(out, "cleaned up; members clean %s after deleting the Deployments\n", r.Cleanup.MembersClean)
	} else {
		fmt.Fprintf(out, "clean-up incomplete: %s\n", strings.Join(r.Cleanup.Problems, "; "))
	}
	if r.Error != "" {
		fmt.Fprintf(out, "error: %s\n", r.Error)
	}
}
