package export

import (
	"context"
	"errors"

	"k8s.io/apimachinery/pkg/api/meta"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/builder"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	"sigs.k8s.io/controller-runtime/pkg/predicate"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	mcsv1alpha1 "github.com/karmada-go/karmada/api/multicluster/v1alpha1"
	workv1alpha1 "github.com/karmada-go/karmada/api/work/v1alpha1"
	workv1alpha2 "github.com/karmada-go/karmada/api/work/v1alpha2"
	"github.com/karmada-go/karmada/internal/queues"
	"github.com/karmada-go/karmada/internal/services/mcs"
)

// judge is the control plane's half of the KEP's conflict rules: it reads
// the export records of one Service from every cluster (push and pull) and
// writes each record's Conflict condition, which the cluster's service
// export controller copies to the member's ServiceExport. It runs in the
// controller manager with serviceExport (the agents see only their own
// cluster's records). A pull cluster's record counts only where mcs.Takes
// says so: an agent cannot sway, nor learn of, the exports of a Service
// the control plane does not export in its cluster.
type judge struct {
	client client.Client
}

// setupJudge registers the judge, keyed by the Service's namespace/name.
func setupJudge(mgr ctrl.Manager, workers int) error {
	j := &judge{client: mgr.GetClient()}
	return ctrl.NewControllerManagedBy(mgr).Named(ControllerName+"Conflicts").
		Watches(&workv1alpha1.Work{}, handler.EnqueueRequestsFromMapFunc(func(_ context.Context, o client.Object) []reconcile.Request {
			l := o.GetLabels()
			return []reconcile.Request{{NamespacedName: client.ObjectKey{Namespace: l[mcs.ExportNamespaceLabel], Name: l[mcs.ExportNameLabel]}}}
		}), builder.WithPredicates(predicate.NewPredicateFuncs(func(o client.Object) bool { return mcs.IsExportRecord(o.GetLabels()) }),
			// Status writes (the judge's own) change nothing it reads.
			predicate.GenerationChangedPredicate{})).
		// A pull cluster's record counts once a ServiceExport of the
		// control plane is propagated there (mcs.Takes).
		Watches(&workv1alpha2.ResourceBinding{}, handler.EnqueueRequestsFromMapFunc(func(_ context.Context, o client.Object) []reconcile.Request {
			res := o.(*workv1alpha2.ResourceBinding).Spec.Resource
			if res.Kind != "ServiceExport" || res.APIVersion != mcsv1alpha1.SchemeGroupVersion.String() {
				return nil
			}
			return []reconcile.Request{{NamespacedName: client.ObjectKey{Namespace: o.GetNamespace(), Name: res.Name}}}
		})).
		WithOptions(queues.Options(max(workers, 1))).
		Complete(j)
}

// Reconcile judges the exports of one Service.
func (j *judge) Reconcile(ctx context.Context, req reconcile.Request) (reconcile.Result, error) {
	list := &workv1alpha1.WorkList{}
	if err := j.client.List(ctx, list, client.MatchingLabels{mcs.ExportNamespaceLabel: req.Namespace, mcs.ExportNameLabel: req.Name}); err != nil {
		return reconcile.Result{}, err
	}
	var exports []mcs.Export
	records := map[string]*workv1alpha1.Work{}
	var untaken []*workv1alpha1.Work
	for i := range list.Items {
		w := &list.Items[i]
		cluster, ok := workv1alpha1.ClusterOfExecutionNamespace(w.Namespace)
		if !ok || !w.DeletionTimestamp.IsZero() || w.Name != mcs.ExportWorkName(req.Namespace, req.Name) {
			continue
		}
		raws := make([][]byte, 0, len(w.Spec.Workload.Manifests))
		for _, m := range w.Spec.Workload.Manifests {
			raws = append(raws, m.Raw)
		}
		// A pull cluster's agent wrote its record: it counts only for a
		// Service the control plane exports there, and is judged only then.
		taken, _, err := mcs.Takes(ctx, j.client, cluster, req.Namespace, req.Name)
		if err != nil {
			return reconcile.Result{}, err
		}
		if !taken {
			untaken = append(untaken, w)
			continue
		}
		e, err := mcs.ParseRecord(cluster, raws)
		if err != nil {
			ctrl.LoggerFrom(ctx).Info("Ignoring an export record that cannot be read", "work", client.ObjectKeyFromObject(w), "error", err.Error())
			continue
		}
		exports = append(exports, e)
		records[cluster] = w
	}
	var errs []error
	for cluster, c := range mcs.Conflicts(exports) {
		w := records[cluster]
		c.ObservedGeneration = w.Generation
		if sameCondition(meta.FindStatusCondition(w.Status.Conditions, mcsv1alpha1.ServiceExportConflict), &c) {
			continue
		}
		next := w.DeepCopy()
		meta.SetStatusCondition(&next.Status.Conditions, c)
		if err := j.client.Status().Update(ctx, next); client.IgnoreNotFound(err) != nil {
			errs = append(errs, err)
		}
	}
	// A record no longer taken keeps no verdict.
	for _, w := range untaken {
		if meta.FindStatusCondition(w.Status.Conditions, mcsv1alpha1.ServiceExportConflict) == nil {
			continue
		}
		next := w.DeepCopy()
		meta.RemoveStatusCondition(&next.Status.Conditions, mcsv1alpha1.ServiceExportConflict)
		if err := j.client.Status().Update(ctx, next); client.IgnoreNotFound(err) != nil {
			errs = append(errs, err)
		}
	}
	return reconcile.Result{}, errors.Join(errs...)
}
