package execution

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/klog/v2"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller/controllerutil"

	clusterv1alpha1 "github.com/karmada-go/karmada/api/cluster/v1alpha1"
	workv1alpha1 "github.com/karmada-go/karmada/api/work/v1alpha1"
	"github.com/karmada-go/karmada/internal/clusters/clusterclient"
	"github.com/karmada-go/karmada/internal/clusters/clusterready"
	"github.com/karmada-go/karmada/internal/events"
	"github.com/karmada-go/karmada/internal/failover/evictedcopy"
	"github.com/karmada-go/karmada/internal/metrics"
)

// agentGone reports whether a pull-mode cluster's agent has been silent
// (Ready Unknown) for longer than PullReleaseGrace, or else how long to
// wait before looking again (0: only an event brings the Work back).
func (r *Reconciler) agentGone(cluster *clusterv1alpha1.Cluster) (time.Duration, bool) {
	if r.PullReleaseGrace <= 0 {
		return 0, false
	}
	ready := meta.FindStatusCondition(cluster.Status.Conditions, clusterv1alpha1.ClusterConditionReady)
	if ready == nil || ready.Status != metav1.ConditionUnknown {
		return 0, false
	}
	left := r.PullReleaseGrace - r.Clock.Now().Sub(ready.LastTransitionTime.Time)
	if left > 0 {
		return left + time.Second, false
	}
	return 0, true
}

// remove deletes the Work's resources from the member, when the member can be
// reached and the Work does not ask to preserve them, then lets the Work go.
func (r *Reconciler) remove(ctx context.Context, work *workv1alpha1.Work, cluster *clusterv1alpha1.Cluster) (ctrl.Result, error) {
	r.forget(client.ObjectKeyFromObject(work))
	if !controllerutil.ContainsFinalizer(work, Finalizer) {
		return ctrl.Result{}, nil
	}
	preserve := work.Spec.PreserveResourcesOnDeletion != nil && *work.Spec.PreserveResourcesOnDeletion
	// pull: another process (the cluster's agent) removes what it applied.
	pull := cluster != nil && !r.side.Serves(cluster)
	if pull && cluster.DeletionTimestamp.IsZero() {
		// The agent removes the Work's copies and then its finalizer; only
		// a cluster being removed, or (with PullReleaseGrace) one whose
		// agent has been silent for that long, has its Works let go here.
		wait, gone := r.agentGone(cluster)
		if !gone {
			if !preserve && work.Annotations[workv1alpha1.EvictedAnnotation] == "true" {
				// Judged again for as long as the Work waits: a verdict is
				// never older than evictedRecheck.
				if err := r.judgeForAgent(ctx, work, cluster); err != nil {
					return ctrl.Result{}, err
				}
				if wait == 0 || wait > evictedRecheck {
					wait = evictedRecheck
				}
			}
			return ctrl.Result{RequeueAfter: wait}, nil
		}
		ctrl.LoggerFrom(ctx).Info("Releasing the Work of a pull-mode cluster whose agent is gone; its copies stay in the member", "work", klog.KObj(work), "cluster", cluster.Name, "grace", r.PullReleaseGrace)
		events.Warning(r.Recorder, work, events.ReleaseWork, "Released without removing its copies from cluster %s: its agent has been silent for over %s", cluster.Name, r.PullReleaseGrace)
	}
	leaving := cluster == nil || !cluster.DeletionTimestamp.IsZero()
	if !pull && !leaving && !clusterready.IsReady(cluster) {
		// Deleting the copies now is impossible, and letting the Work go
		// without releasing preserved ones would leave Karmada's marks on
		// them (the orphan sweep would take them for Karmada's and delete
		// them): wait for the cluster (the Cluster watch brings the Work
		// back when it is Ready). A cluster that is gone or being removed
		// cannot be waited for.
		ctrl.LoggerFrom(ctx).Info("Waiting for cluster to be Ready to remove work resources", "work", klog.KObj(work), "cluster", cluster.Name, "preserve", preserve)
		return ctrl.Result{}, nil
	}
	if preserve && !pull && clusterready.IsReady(cluster) {
		// The copies stay, as the member's own: Karmada's marks go, so that
		// nothing later takes them for Karmada's.
		if err := r.releaseCopies(ctx, work, cluster); err != nil {
			return ctrl.Result{}, err
		}
	}
	if pull {
		// The cluster's agent removes what it applied.
		preserve = true
	}
	if !preserve && clusterready.IsReady(cluster) && work.Annotations[workv1alpha1.EvictedAnnotation] == "true" {
		// An evicted copy goes only if, now, the workload is healthy where
		// it went.
		verdict, why, err := r.evictedVerdict(ctx, work, cluster)
		if err != nil {
			return ctrl.Result{}, err
		}
		switch verdict {
		case evictedcopy.Hold:
			ctrl.LoggerFrom(ctx).Info("Holding the deletion of an evicted copy", "work", klog.KObj(work), "cluster", cluster.Name, "why", why)
			if r.side == clusterclient.ControlPlane {
				// An agent's holds are told by the control plane, which judged.
				events.Warning(r.Recorder, work, events.EvictionBlocked, "The evicted copy in cluster %s is kept: %s", cluster.Name, why)
			}
			return ctrl.Result{RequeueAfter: evictedRecheck}, nil
		case evictedcopy.Keep:
			ctrl.LoggerFrom(ctx).Info("An evicted copy is placed again: kept for its new Work", "work", klog.KObj(work), "cluster", cluster.Name)
			preserve = true
		}
	}
	if !preserve && clusterready.IsReady(cluster) {
		member, err := r.Members.Get(ctx, cluster)
		if err != nil {
			return ctrl.Result{}, err
		}
		for _, manifest := range work.Spec.Workload.Manifests {
			obj := &unstructured.Unstructured{}
			if err := obj.UnmarshalJSON(manifest.Raw); err != nil {
				continue
			}
			if err := r.deleteIfOurs(ctx, member, obj, work); errors.Is(err, errCounting) {
				ctrl.LoggerFrom(ctx).V(2).Info("Waiting for the member to count objects before deleting a namespace", "work", klog.KObj(work), "cluster", cluster.Name)
				return ctrl.Result{RequeueAfter: time.Second}, nil
			} else if err != nil {
				return ctrl.Result{}, err
			}
		}
	}
	controllerutil.RemoveFinalizer(work, Finalizer)
	if err := r.Client.Update(ctx, work); err != nil {
		return ctrl.Result{}, client.IgnoreNotFound(err)
	}
	return ctrl.Result{}, nil
}

// evictedRecheck is how often a held evicted copy is looked at again.
const evictedRecheck = 10 * time.Second

// evictedVerdict is failover's verdict on the copy of a deleted evicted
// Work (evictedcopy): judged here in the control plane; an agent, which may
// not read bindings, acts on the verdict the control plane recorded on the
// Work (judgeForAgent), and holds the copy until there is one.
func (r *Reconciler) evictedVerdict(ctx context.Context, work *workv1alpha1.Work, cluster *clusterv1alpha1.Cluster) (evictedcopy.Verdict, string, error) {
	if r.side == clusterclient.Agent {
		v, why := evictedcopy.Recorded(work)
		return v, why, nil
	}
	return evictedcopy.Judge(ctx, r.Client, r.clusterReady(ctx), work, cluster.Name)
}

// clusterReady says whether a cluster is Ready now, read from the informer
// without copies.
func (r *Reconciler) clusterReady(ctx context.Context) func(string) bool {
	return func(c string) bool {
		cl, err := r.clusters.Get(ctx, c)
		return err == nil && clusterready.IsReady(cl)
	}
}

// judgeForAgent judges the evicted copy of a deleted Work of a pull-mode
// cluster (evictedcopy) and records the verdict on the Work
// (workv1alpha1.EvictedCopyVerdictAnnotation) for the cluster's agent; while the
// cluster is not Ready the verdict is Hold (evictedcopy.NotReady).
func (r *Reconciler) judgeForAgent(ctx context.Context, work *workv1alpha1.Work, cluster *clusterv1alpha1.Cluster) error {
	verdict, why := evictedcopy.NotReady(cluster.Name)
	if clusterready.IsReady(cluster) {
		var err error
		if verdict, why, err = evictedcopy.Judge(ctx, r.Client, r.clusterReady(ctx), work, cluster.Name); err != nil {
			return err
		}
		if verdict == evictedcopy.Hold {
			ctrl.LoggerFrom(ctx).Info("Holding the deletion of an evicted copy", "work", klog.KObj(work), "cluster", cluster.Name, "why", why)
			events.Warning(r.Recorder, work, events.EvictionBlocked, "The evicted copy in cluster %s is kept: %s", cluster.Name, why)
		}
	}
	value := evictedcopy.Annotation(verdict, why)
	if work.Annotations[workv1alpha1.EvictedCopyVerdictAnnotation] == value {
		return nil
	}
	patch := client.MergeFrom(work.DeepCopy())
	metav1.SetMetaDataAnnotation(&work.ObjectMeta, workv1alpha1.EvictedCopyVerdictAnnotation, value)
	return client.IgnoreNotFound(r.Client.Patch(ctx, work, patch))
}

// releaseCopies removes Karmada's marks from the member's copies of the
// Work's manifests that carry its mark, and leaves them there.
func (r *Reconciler) releaseCopies(ctx context.Context, work *workv1alpha1.Work, cluster *clusterv1alpha1.Cluster) error {
	member, err := r.Members.Get(ctx, cluster)
	if err != nil {
		return err
	}
	for _, manifest := range work.Spec.Workload.Manifests {
		obj := &unstructured.Unstructured{}
		if err := obj.UnmarshalJSON(manifest.Raw); err != nil {
			continue
		}
		ri, _, err := resourceFor(member, obj)
		if err != nil {
			if meta.IsNoMatchError(err) || errors.As(err, new(*notServedError)) {
				continue
			}
			return err
		}
		cur, err := ri.Get(ctx, obj.GetName(), metav1.GetOptions{})
		if apierrors.IsNotFound(err) {
			continue
		}
		if err != nil {
			return fmt.Errorf("reading %s %s: %w", obj.GetKind(), objectName(obj), err)
		}
		if fromWork(cur, work) {
			if err := clusterclient.Release(ctx, ri, cur); err != nil {
				return err
			}
		}
	}
	return nil
}

// deleteIfOurs deletes the member's copy only when it carries this Work's
// mark: nothing Karmada did not put there is deleted.
func (r *Reconciler) deleteIfOurs(ctx context.Context, m *clusterclient.Member, obj *unstructured.Unstructured, work *workv1alpha1.Work) error {
	ri, _, err := resourceFor(m, obj)
	if err != nil {
		if meta.IsNoMatchError(err) {
			return nil
		}
		return err
	}
	cur, err := ri.Get(ctx, obj.GetName(), metav1.GetOptions{})
	if apierrors.IsNotFound(err) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("reading %s %s: %w", obj.GetKind(), objectName(obj), err)
	}
	if !fromWork(cur, work) {
		return nil
	}
	if cur.GetAnnotations()[workv1alpha1.AdoptedAnnotation] != "" {
		return clusterclient.Release(ctx, ri, cur)
	}
	if cur.GetAPIVersion() == "v1" && cur.GetKind() == "Namespace" {
		// Deleting a namespace deletes everything in it: a namespace
		// Karmada created that also holds the member's own objects (or
		// objects Karmada adopted) is released instead. What it holds is
		// looked at once it is frozen (no object can be created in it any
		// more), so nothing created after the look is deleted with it.
		ns := cur.GetName()
		frozen, err := freezeNamespace(ctx, m, work, ns, r.Clock.Now())
		if errors.Is(err, errCounting) {
			return err
		}
		if err != nil {
			return fmt.Errorf("freezing namespace %s in cluster %s before deleting it: %w", ns, m.Name, err)
		}
		foreign, unlisted, err := foreignObjects(ctx, m, ns)
		if err != nil {
			return fmt.Errorf("checking what namespace %s holds in cluster %s: %w", ns, m.Name, err)
		}
		var unknown []string
		if len(foreign) == 0 && len(unlisted) > 0 {
			// Kinds Karmada may not list are counted by the member's
			// quota controller.
			foreign, unknown = countUnlisted(frozen, unlisted)
		}
		if len(foreign) > 0 || len(unknown) > 0 {
			why := "it holds objects Karmada did not put there (or adopted): " + strings.Join(foreign, ", ")
			if len(foreign) == 0 {
				why = "Karmada may not list, and could not count, its " + strings.Join(unknown, ", ") + " objects"
			}
			if err := removeCountQuota(ctx, m, work, ns); err != nil {
				return err
			}
			events.Warning(r.Recorder, work, events.ReleaseNamespace,
				"Namespace %s is left in cluster %s, released, because %s", ns, m.Name, why)
			return clusterclient.Release(ctx, ri, cur)
		}
		if frozen == nil {
			ctrl.LoggerFrom(ctx).Info("Deleting a member namespace that could not be frozen (the member's quota controller did not answer): an object created in it from now on is deleted with it",
				"cluster", m.Name, "namespace", ns)
		}
	}
	err = ri.Delete(ctx, obj.GetName(), metav1.DeleteOptions{Preconditions: &metav1.Preconditions{UID: ptrUID(cur.GetUID())}})
	deleteErr := err
	if apierrors.IsNotFound(err) || apierrors.IsConflict(err) {
		deleteErr = nil
	}
	metrics.DeleteResourceFromCluster.WithLabelValues(metrics.ResultOf(deleteErr), obj.GetAPIVersion(), obj.GetKind(), m.Name).Inc()
	if err != nil && !apierrors.IsNotFound(err) && !apierrors.IsConflict(err) {
		return fmt.Errorf("deleting %s %s: %w", obj.GetKind(), objectName(obj), err)
	}
	return nil
}
