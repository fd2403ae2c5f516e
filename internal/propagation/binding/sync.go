package binding

import (
	"context"
	"errors"
	"fmt"
	"strings"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/klog/v2"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller/controllerutil"

	policyv1alpha1 "github.com/karmada-go/karmada/api/policy/v1alpha1"
	workv1alpha1 "github.com/karmada-go/karmada/api/work/v1alpha1"
	workv1alpha2 "github.com/karmada-go/karmada/api/work/v1alpha2"
	"github.com/karmada-go/karmada/internal/anybinding"
	"github.com/karmada-go/karmada/internal/events"
	"github.com/karmada-go/karmada/internal/eviction"
	"github.com/karmada-go/karmada/internal/interpreter"
	"github.com/karmada-go/karmada/internal/names"
	"github.com/karmada-go/karmada/internal/propagation/overridemanager"
)

// sync runs the binding's phases in order: a binding being deleted has its
// Works removed, then its finalizer; otherwise the finalizer is ensured,
// what the Works are made of is read (the template, the override policies,
// the Works there are, the namespace's quotas), one Work per target
// cluster is written, what was written is recorded (events, conditions),
// and the Works of clusters no longer targeted are removed. The phases set
// the binding's conditions in memory; its status is written once, at the
// end, whatever phase stopped.
func (r *Reconciler) sync(ctx context.Context, b anybinding.Binding) (err error) {
	if !b.Object.GetDeletionTimestamp().IsZero() {
		return r.finalize(ctx, b)
	}
	// Patches, not updates: the detector and the scheduler write the same
	// binding, and optimistic-lock conflicts would only cost retries.
	patch := client.MergeFrom(b.Object.DeepCopyObject().(client.Object))
	if controllerutil.AddFinalizer(b.Object, Finalizer) {
		if err := r.Client.Patch(ctx, b.Object, patch); err != nil {
			return err
		}
	}
	// An object workloads depend on goes where they run, too.
	targets := anybinding.Targets(b.Spec)
	if !meta.IsStatusConditionTrue(b.Status.Conditions, workv1alpha2.Scheduled) && len(targets) == 0 {
		return nil
	}
	before := b.Object.DeepCopyObject().(client.Object)
	defer func() {
		if werr := r.writeStatus(ctx, before, b.Object); err == nil {
			err = werr
		}
	}()
	in, err := r.read(ctx, b)
	if err != nil || in == nil {
		return err
	}
	out, err := r.writeWorks(ctx, b, in, targets)
	if err != nil {
		return err
	}
	r.record(b, in, out)
	return r.removeUntargeted(ctx, b, in.works, out.keep)
}

// finalize removes a deleted binding's Works, then its finalizer (the Work
// watch brings the binding back as they go).
func (r *Reconciler) finalize(ctx context.Context, b anybinding.Binding) error {
	if !controllerutil.ContainsFinalizer(b.Object, Finalizer) {
		return nil
	}
	works, err := b.Works(ctx, r.Client)
	if err != nil {
		return err
	}
	left, err := r.deleteWorks(ctx, works, nil)
	if err != nil || left > 0 {
		return err
	}
	patch := client.MergeFrom(b.Object.DeepCopyObject().(client.Object))
	controllerutil.RemoveFinalizer(b.Object, Finalizer)
	return client.IgnoreNotFound(r.Client.Patch(ctx, b.Object, patch))
}

// inputs is what a binding's Works are made of.
type inputs struct {
	template *unstructured.Unstructured
	policies []overridemanager.Policy
	works    []workv1alpha1.Work
	quotas   []policyv1alpha1.FederatedResourceQuota
}

// read reads what the binding's Works are made of; nil when the template is
// gone (the binding follows it, through its owner reference).
func (r *Reconciler) read(ctx context.Context, b anybinding.Binding) (*inputs, error) {
	obj, spec := b.Object, b.Spec
	template, err := r.templateFrom(ctx, r.templates(), spec.Resource)
	if apierrors.IsNotFound(err) && r.live != nil {
		// The cache may not hold it yet, or no more than a stale view of
		// the type (a CRD deleted and created again: its informer relists
		// with backoff): only the API server says the template is gone.
		klog.FromContext(ctx).V(2).Info("Template cache does not hold the binding's template: reading the API server", "binding", klog.KObj(obj))
		template, err = r.templateFrom(ctx, r.live, spec.Resource)
	}
	if apierrors.IsNotFound(err) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	if !anybinding.MadeFrom(template, spec, obj.GetAnnotations()) && r.live != nil {
		// The cache is behind the binding (after an outage its watch and
		// the detector's resume apart), or the binding behind the
		// template (the detector's next write brings it back): read the
		// template from the API server, as the detector does when its
		// cache does not hold the version it needs. Nothing else would
		// bring the binding back once the cache caught up.
		klog.FromContext(ctx).V(2).Info("Template cache holds another version than the binding's: reading the API server", "binding", klog.KObj(obj), "resourceVersion", template.GetResourceVersion(), "bindingResourceVersion", spec.Resource.ResourceVersion)
		if template, err = r.templateFrom(ctx, r.live, spec.Resource); apierrors.IsNotFound(err) {
			return nil, nil
		} else if err != nil {
			return nil, err
		}
	}
	in := &inputs{template: template}
	if in.policies, err = r.overridePolicies(ctx, template); err != nil {
		return nil, err
	}
	if in.works, err = b.Works(ctx, r.Client); err != nil {
		return nil, err
	}
	if in.quotas, err = r.quotas(ctx, obj.GetNamespace()); err != nil {
		return nil, err
	}
	return in, nil
}

// written is what writeWorks did: the Works to keep (by execution
// namespace), the clusters whose Work changed and, of those, the ones with
// overrides applied, and the clusters whose overrides could not be applied.
type written struct {
	keep                             map[string]string
	synced, overridden, overrideErrs []string
}

// writeWorks writes one Work per target cluster. A cluster that is gone or
// leaving gets none: its Works are being removed, and writing one would
// hold its removal up. A cluster whose overrides fail keeps its last good
// Work (the binding says why); a failed customization or webhook stops
// every write (each Work keeps its last good manifest) and is retried.
func (r *Reconciler) writeWorks(ctx context.Context, b anybinding.Binding, in *inputs, targets []workv1alpha2.TargetCluster) (*written, error) {
	out := &written{keep: make(map[string]string, len(targets))}
	for _, target := range targets {
		// The informer's own Cluster: read, never modified.
		cl, err := r.clusters.Get(ctx, target.Name)
		if err != nil || !cl.DeletionTimestamp.IsZero() {
			if err != nil && !apierrors.IsNotFound(err) {
				return nil, err
			}
			continue
		}
		ns := workv1alpha1.ExecutionNamespace(target.Name)
		name := names.KeptWorkName(in.works, ns, names.WorkName(b.Spec.Resource.Kind, b.Spec.Resource.Name, b.Spec.Resource.Namespace))
		out.keep[ns] = name
		m, err := Manifest(r.Interpreter, in.template, b, target, cl, in.policies)
		if err == nil {
			err = beyondQuota(r.Interpreter, m.object, b.Spec, target, in.quotas)
		}
		if errors.Is(err, errOverride) {
			out.overrideErrs = append(out.overrideErrs, fmt.Sprintf("cluster %s: %v", target.Name, err))
			continue
		}
		if ierr := (*interpreter.Error)(nil); errors.As(err, &ierr) {
			events.OnBinding(r.Recorder, b.Object, b.Spec.Resource, corev1.EventTypeWarning, events.InterpretFailed, "%v", ierr)
			anybinding.MarkInterpreted(b, reviseOps, ierr)
			return nil, err
		}
		if err != nil {
			return nil, err
		}
		changed, err := r.writeWork(ctx, b, in.works, &workv1alpha1.Work{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name}}, target, m)
		if err != nil {
			return nil, err
		}
		if changed {
			out.synced = append(out.synced, target.Name)
			if m.AppliedOverrides != "" || m.AppliedClusterOverrides != "" {
				out.overridden = append(out.overridden, target.Name)
			}
		}
	}
	return out, nil
}

// writeWork creates or patches the target cluster's Work with the
// manifest, unless it is up to date; changed says it wrote.
func (r *Reconciler) writeWork(ctx context.Context, b anybinding.Binding, works []workv1alpha1.Work, work *workv1alpha1.Work, target workv1alpha2.TargetCluster, m WorkManifest) (changed bool, err error) {
	obj, spec, labels, annotations := b.Object, b.Spec, b.WorkLabels(), b.WorkAnnotations()
	mutate := func(work *workv1alpha1.Work) {
		if work.Labels == nil {
			work.Labels = map[string]string{}
		}
		if work.CreationTimestamp.IsZero() {
			// The execution controller's finalizer from the start saves
			// it an update per Work.
			controllerutil.AddFinalizer(work, workv1alpha1.ExecutionFinalizer)
		}
		for k, v := range labels {
			work.Labels[k] = v
		}
		for k, v := range annotations {
			setAnnotation(&work.ObjectMeta, k, v)
		}
		// Placed there (again): its copy is no evicted one.
		setAnnotation(&work.ObjectMeta, workv1alpha1.EvictedAnnotation, "")
		setAnnotation(&work.ObjectMeta, policyv1alpha1.AppliedOverridesAnnotation, m.AppliedOverrides)
		setAnnotation(&work.ObjectMeta, policyv1alpha1.AppliedClusterOverridesAnnotation, m.AppliedClusterOverrides)
		work.Spec.Workload.Manifests = []workv1alpha1.Manifest{{RawExtension: runtime.RawExtension{Raw: m.Raw}}}
		work.Spec.PreserveResourcesOnDeletion = spec.PreserveResourcesOnDeletion
		work.Spec.SuspendDispatching = suspended(spec, target.Name)
	}
	if upToDate(works, work.Namespace, work.Name, mutate) {
		return false, nil
	}
	op, err := controllerutil.CreateOrPatch(ctx, r.Client, work, func() error {
		if other := otherBinding(work, b); other != "" {
			// Two templates' Work names met (a name shortened to fit, or a
			// hash collision): never write over another binding's Work.
			return fmt.Errorf("%w: it is %s's", errWorkTaken, other)
		}
		mutate(work)
		return nil
	})
	if err != nil {
		err = fmt.Errorf("writing work %s/%s: %w", work.Namespace, work.Name, err)
		if !apierrors.IsConflict(err) {
			events.OnBinding(r.Recorder, obj, spec.Resource, corev1.EventTypeWarning, events.SyncWorkFailed, "%v", err)
		}
		return false, err
	}
	if op == controllerutil.OperationResultNone {
		return false, nil
	}
	klog.FromContext(ctx).V(2).Info("Synced work", "work", klog.KObj(work), "binding", klog.KObj(obj), "operation", op)
	return true, nil
}

// record says what was written, whatever happens next: the override
// events on the template, SyncWorkSucceed on the binding, and (in memory)
// the binding's OverridesApplied and interpretation conditions.
func (r *Reconciler) record(b anybinding.Binding, in *inputs, out *written) {
	obj, spec := b.Object, b.Spec
	if t := events.Template(spec.Resource); t != nil {
		if len(out.overrideErrs) > 0 {
			events.Warning(r.Recorder, t, events.ApplyOverridePolicyFailed, "Failed to apply override policies: %s", strings.Join(out.overrideErrs, "; "))
		}
		if len(out.overridden) > 0 {
			events.Normal(r.Recorder, t, events.ApplyOverridePolicySucceed, "Applied override policies for %s", strings.Join(out.overridden, ", "))
		}
	}
	if len(out.synced) > 0 {
		events.OnBinding(r.Recorder, obj, spec.Resource, corev1.EventTypeNormal, events.SyncWorkSucceed, "Sync work of %s successful.", events.BindingWords(obj))
	}
	markOverrides(obj, b.Status, len(in.policies) > 0, out.overrideErrs)
	anybinding.MarkInterpreted(b, reviseOps, nil)
}

// removeUntargeted removes the Works of clusters no longer targeted. A
// cluster being evicted gracefully keeps its copy, as it is, until the
// graceful eviction controller ends the task. Works that could not be
// removed get Karmada's CleanupWorkFailed on the binding.
func (r *Reconciler) removeUntargeted(ctx context.Context, b anybinding.Binding, works []workv1alpha1.Work, keep map[string]string) error {
	for _, c := range eviction.KeptClusters(b.Spec, eviction.MinAvailable(b.Object.GetAnnotations(), b.Spec.Replicas) > 0) {
		ns := workv1alpha1.ExecutionNamespace(c)
		if _, ok := keep[ns]; ok {
			continue
		}
		for i := range works {
			if works[i].Namespace == ns {
				keep[ns] = works[i].Name
			}
		}
	}
	_, err := r.deleteWorks(ctx, works, keep)
	if err != nil && !apierrors.IsConflict(err) {
		events.Warning(r.Recorder, b.Object, events.CleanupWorkFailed, "%v", err)
	}
	return err
}
