// Package evictedcopy is failover's judgement on the member copy of a Work
// it evicted (workv1alpha1.EvictedAnnotation) once that Work is deleted: delete
// the copy when the workload runs healthy where it went (or its binding is
// gone), keep it when its cluster is placed again, hold it otherwise. The
// execution controller asks it on both sides: in the control plane it
// judges (Judge) and, for a pull-mode cluster, records the verdict on the
// Work (Annotation); the cluster's agent, which may not read bindings, acts
// on the recorded verdict (Recorded).
package evictedcopy

import (
	"context"
	"slices"
	"strings"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"sigs.k8s.io/controller-runtime/pkg/client"

	workv1alpha1 "github.com/karmada-go/karmada/api/work/v1alpha1"
	workv1alpha2 "github.com/karmada-go/karmada/api/work/v1alpha2"
	"github.com/karmada-go/karmada/internal/anybinding"
	"github.com/karmada-go/karmada/internal/eviction"
)

// Verdict is what becomes of an evicted copy.
type Verdict int

// The verdicts.
const (
	// Delete: the workload is healthy where it went, or its binding is
	// gone.
	Delete Verdict = iota
	// Hold: the workload is not healthy where it went; the copy is looked
	// at again later.
	Hold
	// Keep: the copy's cluster is placed again; the copy stays for the Work
	// that replaces this one.
	Keep
)

func (v Verdict) String() string {
	switch v {
	case Delete:
		return eviction.VerdictDelete
	case Keep:
		return eviction.VerdictKeep
	}
	return eviction.VerdictHold
}

// Judge reads the binding of a deleted evicted Work of cluster and judges
// its copy (Decide); why says what is not healthy when the verdict is Hold.
// ready says whether a cluster is Ready now.
func Judge(ctx context.Context, c client.Reader, ready func(cluster string) bool, work *workv1alpha1.Work, cluster string) (Verdict, string, error) {
	for _, k := range anybinding.Kinds {
		key, ok := k.OfWork(work)
		if !ok {
			continue
		}
		b, err := k.Get(ctx, c, key)
		if apierrors.IsNotFound(err) {
			return Delete, "", nil
		}
		if err != nil {
			return 0, "", err
		}
		if !b.Object.GetDeletionTimestamp().IsZero() {
			return Delete, "", nil
		}
		v, why := Decide(b.Spec, b.Status, cluster, ready)
		return v, why, nil
	}
	return Delete, "", nil
}

// Decide judges the evicted copy in cluster of a binding of that spec and
// status: kept when the cluster is placed again, deleted when the binding's
// placement runs the workload healthy (with the clusters' readiness now),
// held otherwise.
func Decide(spec *workv1alpha2.ResourceBindingSpec, status *workv1alpha2.ResourceBindingStatus, cluster string, ready func(cluster string) bool) (Verdict, string) {
	if slices.ContainsFunc(spec.Clusters, func(t workv1alpha2.TargetCluster) bool { return t.Name == cluster }) {
		return Keep, ""
	}
	healthy, not := eviction.PlacementHealthy(spec, status, ready)
	switch {
	case healthy:
		return Delete, ""
	case len(not) == 0:
		return Hold, "the workload is placed nowhere"
	}
	return Hold, "the workload is not healthy in " + strings.Join(not, ", ")
}

// NotReady is the verdict recorded for the agent while its cluster is not
// Ready: an agent coming back acts on a verdict given since, not on one
// given before it went away.
func NotReady(cluster string) (Verdict, string) {
	return Hold, "cluster " + cluster + " is not Ready"
}

// Annotation is the value of workv1alpha1.EvictedCopyVerdictAnnotation that
// records a verdict for the cluster's agent.
func Annotation(v Verdict, why string) string {
	if v == Hold {
		return eviction.VerdictHold + ": " + why
	}
	return v.String()
}

// Recorded returns the verdict the control plane recorded on the Work
// (Annotation); Hold when it has recorded none yet.
func Recorded(work *workv1alpha1.Work) (Verdict, string) {
	v := work.Annotations[workv1alpha1.EvictedCopyVerdictAnnotation]
	switch {
	case v == eviction.VerdictDelete:
		return Delete, ""
	case v == eviction.VerdictKeep:
		return Keep, ""
	case strings.HasPrefix(v, eviction.VerdictHold+": "):
		return Hold, strings.TrimPrefix(v, eviction.VerdictHold+": ")
	}
	return Hold, "the control plane has not judged it yet"
}
