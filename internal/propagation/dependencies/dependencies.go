// Package dependencies is the dependencies distributor: the ConfigMaps,
// Secrets, ServiceAccounts, PersistentVolumeClaims (and whatever a
// customization's dependencyInterpretation names) that a workload with
// propagateDeps: true uses follow it to the clusters it runs in, through
// "attached" ResourceBindings: one per dependency, recording in
// spec.requiredBy, as Karmada does, every workload binding that needs it and
// the clusters that binding runs in. The binding controller places an
// attached binding's object in the union of those clusters; an attached
// binding that no workload needs any more is deleted (its copies go with
// it), unless a policy of its own propagates the object.
//
// Only dependencies in the workload's own namespace are followed: a
// workload cannot carry another namespace's Secret, nor a cluster-scoped
// object, into a member (the tenancy boundary).
package dependencies

import (
	"context"
	"fmt"
	"slices"
	"sort"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/tools/record"
	"k8s.io/klog/v2"
	"k8s.io/utils/ptr"
	controllerruntime "sigs.k8s.io/controller-runtime"
	ctrl "sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	"sigs.k8s.io/controller-runtime/pkg/manager"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	policyv1alpha1 "github.com/karmada-go/karmada/api/policy/v1alpha1"
	workv1alpha2 "github.com/karmada-go/karmada/api/work/v1alpha2"
	"github.com/karmada-go/karmada/internal/events"
	"github.com/karmada-go/karmada/internal/interpreter"
	"github.com/karmada-go/karmada/internal/names"
	"github.com/karmada-go/karmada/internal/queues"
)

// ControllerName is the distributor's name in --controllers.
const ControllerName = "dependenciesDistributor"

// requiredByField indexes ResourceBindings by the bindings (namespace/name)
// their spec.requiredBy names.
const requiredByField = "spec.requiredBy"

// missingRetry is when a workload whose dependency does not exist yet is
// looked at again.
const missingRetry = 15 * time.Second

// TemplateReader reads whole templates (templatecache.Store is one).
type TemplateReader interface {
	Get(ctx context.Context, key ctrl.ObjectKey, obj ctrl.Object, opts ...ctrl.GetOption) error
}

// Reconciler distributes the dependencies of one workload binding.
type Reconciler struct {
	// Interpreter answers what the controller must know of each kind
	// (replicas, status, health, ...): the binary's, with the
	// customizations and interpreter webhooks in force; nil knows the
	// built-in kinds only.
	Interpreter *interpreter.Interpreter
	Client      ctrl.Client
	// Templates, when set, is read for the workloads' templates (else
	// Client).
	Templates TemplateReader
	Recorder  record.EventRecorder
	Workers   int
}

// SetupWithManager registers the index and the controller: workload
// bindings are reconciled when they change, and when an attached binding
// naming them changes.
func (r *Reconciler) SetupWithManager(ctx context.Context, mgr manager.Manager) error {
	if err := mgr.GetFieldIndexer().IndexField(ctx, &workv1alpha2.ResourceBinding{}, requiredByField, func(o ctrl.Object) []string {
		b := o.(*workv1alpha2.ResourceBinding)
		out := make([]string, 0, len(b.Spec.RequiredBy))
		for _, s := range b.Spec.RequiredBy {
			out = append(out, s.Namespace+"/"+s.Name)
		}
		return out
	}); err != nil {
		return err
	}
	return controllerruntime.NewControllerManagedBy(mgr).Named(ControllerName).
		For(&workv1alpha2.ResourceBinding{}).
		Watches(&workv1alpha2.ResourceBinding{}, handler.EnqueueRequestsFromMapFunc(func(_ context.Context, o ctrl.Object) []reconcile.Request {
			b := o.(*workv1alpha2.ResourceBinding)
			out := make([]reconcile.Request, 0, len(b.Spec.RequiredBy))
			for _, s := range b.Spec.RequiredBy {
				out = append(out, reconcile.Request{NamespacedName: ctrl.ObjectKey{Namespace: s.Namespace, Name: s.Name}})
			}
			return out
		})).
		WithOptions(queues.Options(r.Workers)).
		Complete(r)
}

// Reconcile makes the attached bindings of the workload binding req hold
// its snapshot exactly for the dependencies it has now.
func (r *Reconciler) Reconcile(ctx context.Context, req reconcile.Request) (reconcile.Result, error) {
	log := klog.FromContext(ctx)
	b := &workv1alpha2.ResourceBinding{}
	err := r.Client.Get(ctx, req.NamespacedName, b)
	if err != nil && !apierrors.IsNotFound(err) {
		return reconcile.Result{}, err
	}
	found := err == nil
	want := map[string]dependency{} // by attached binding name
	var snapshot workv1alpha2.BindingSnapshot
	retry := time.Duration(0)
	if found && b.DeletionTimestamp.IsZero() && b.Spec.PropagateDeps {
		snapshot = workv1alpha2.BindingSnapshot{Namespace: b.Namespace, Name: b.Name, Clusters: placement(&b.Spec)}
		deps, missing, err := r.dependencies(ctx, b)
		if err != nil {
			events.OnBinding(r.Recorder, b, b.Spec.Resource, corev1.EventTypeWarning, events.GetDependenciesFailed, "Failed to get the dependencies: %v", err)
			return reconcile.Result{}, err
		}
		for _, d := range deps {
			want[d.bindingName()] = d
		}
		if len(missing) > 0 {
			// Not there yet: followed once made.
			retry = missingRetry
			log.V(2).Info("Waiting for dependencies", "binding", klog.KObj(b), "missing", missing)
		}
		if len(deps) > 0 || len(missing) > 0 {
			msg := fmt.Sprintf("Got %d dependencies", len(deps))
			if len(missing) > 0 {
				msg += fmt.Sprintf("; waiting for %s", strings.Join(missing, ", "))
			}
			events.OnBinding(r.Recorder, b, b.Spec.Resource, corev1.EventTypeNormal, events.GetDependenciesSucceed, "%s", msg)
		}
	}
	// The attached bindings that hold this workload's snapshot now.
	held := &workv1alpha2.ResourceBindingList{}
	if err := r.Client.List(ctx, held, ctrl.InNamespace(req.Namespace), ctrl.MatchingFields{requiredByField: req.Namespace + "/" + req.Name}); err != nil {
		return reconcile.Result{}, err
	}
	// Karmada's events on the workload's binding: the schedule copied to
	// its dependencies' bindings (recorded when a binding was written), or
	// why not.
	synced := func(changed bool, err error) (reconcile.Result, error) {
		if found && b.DeletionTimestamp.IsZero() && b.Spec.PropagateDeps {
			if err != nil && !apierrors.IsAlreadyExists(err) && !apierrors.IsConflict(err) {
				// (A race with another workload's reconcile is retried
				// at once, not reported.)
				events.Warning(r.Recorder, b, events.SyncScheduleResultToDependenciesFailed, "%v", err)
			} else if changed {
				events.Normal(r.Recorder, b, events.SyncScheduleResultToDependenciesSucceed, "Sync schedule results to dependencies succeed.")
			}
		}
		return reconcile.Result{RequeueAfter: retry}, err
	}
	changed := false
	for i := range held.Items {
		a := &held.Items[i]
		if _, ok := want[a.Name]; ok {
			continue
		}
		wrote, err := r.release(ctx, a, req.NamespacedName)
		changed = changed || wrote
		if err != nil {
			return synced(changed, err)
		}
	}
	names := make([]string, 0, len(want))
	for n := range want {
		names = append(names, n)
	}
	sort.Strings(names)
	for _, n := range names {
		wrote, err := r.attach(ctx, b, want[n], snapshot)
		changed = changed || wrote
		if err != nil {
			return synced(changed, err)
		}
	}
	return synced(changed, nil)
}

// dependency is one object a workload needs, found in its namespace.
type dependency struct {
	ref workv1alpha2.ObjectReference
}

func (d dependency) bindingName() string { return names.BindingName(d.ref.Kind, d.ref.Name) }

// placement is the clusters the workload binding runs in.
func placement(spec *workv1alpha2.ResourceBindingSpec) []workv1alpha2.TargetCluster {
	out := make([]workv1alpha2.TargetCluster, 0, len(spec.Clusters))
	for _, c := range spec.Clusters {
		out = append(out, workv1alpha2.TargetCluster{Name: c.Name})
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out
}

// dependencies interprets the workload's template and finds each
// dependency in its namespace; missing names those not there (yet).
func (r *Reconciler) dependencies(ctx context.Context, b *workv1alpha2.ResourceBinding) ([]dependency, []string, error) {
	ref := b.Spec.Resource
	gv, err := schema.ParseGroupVersion(ref.APIVersion)
	if err != nil {
		return nil, nil, err
	}
	tmpl := &unstructured.Unstructured{}
	tmpl.SetGroupVersionKind(gv.WithKind(ref.Kind))
	reader := TemplateReader(r.Client)
	if r.Templates != nil {
		reader = r.Templates
	}
	if err := reader.Get(ctx, ctrl.ObjectKey{Namespace: ref.Namespace, Name: ref.Name}, tmpl); err != nil {
		if apierrors.IsNotFound(err) {
			return nil, nil, nil
		}
		return nil, nil, err
	}
	deps, err := r.Interpreter.Dependencies(tmpl)
	if err != nil {
		return nil, nil, err
	}
	var out []dependency
	var missing []string
	seen := map[string]bool{}
	for _, d := range deps {
		ns := d.Namespace
		if ns == "" {
			ns = b.Namespace
		}
		if ns != b.Namespace {
			// Never across the tenancy boundary.
			events.OnBinding(r.Recorder, b, b.Spec.Resource, corev1.EventTypeWarning, events.GetDependenciesFailed,
				"Not propagating %s %s/%s: a workload's dependencies must be in its own namespace %s", d.Kind, ns, d.Name, b.Namespace)
			continue
		}
		dgv, err := schema.ParseGroupVersion(d.APIVersion)
		if err != nil {
			continue
		}
		gvk := dgv.WithKind(d.Kind)
		var objs []metav1.PartialObjectMetadata
		if d.Name != "" {
			m := &metav1.PartialObjectMetadata{}
			m.SetGroupVersionKind(gvk)
			err := r.Client.Get(ctx, ctrl.ObjectKey{Namespace: ns, Name: d.Name}, m)
			if apierrors.IsNotFound(err) {
				missing = append(missing, d.Kind+" "+d.Name)
				continue
			}
			if err != nil {
				return nil, nil, fmt.Errorf("reading %s %s/%s: %w", d.Kind, ns, d.Name, err)
			}
			objs = append(objs, *m)
		} else if d.LabelSelector != nil {
			sel, err := metav1.LabelSelectorAsSelector(d.LabelSelector)
			if err != nil {
				continue
			}
			list := &metav1.PartialObjectMetadataList{}
			list.SetGroupVersionKind(gvk.GroupVersion().WithKind(gvk.Kind + "List"))
			if err := r.Client.List(ctx, list, ctrl.InNamespace(ns), ctrl.MatchingLabelsSelector{Selector: sel}); err != nil {
				return nil, nil, fmt.Errorf("listing %s in %s: %w", d.Kind, ns, err)
			}
			objs = append(objs, list.Items...)
		}
		for _, o := range objs {
			if o.Namespace != b.Namespace {
				continue
			}
			dep := dependency{ref: workv1alpha2.ObjectReference{APIVersion: gvk.GroupVersion().String(), Kind: gvk.Kind, Namespace: o.Namespace, Name: o.Name, UID: o.UID, ResourceVersion: o.ResourceVersion}}
			if dep.ref.Kind == b.Spec.Resource.Kind && dep.ref.Name == b.Spec.Resource.Name {
				continue // a workload is not its own dependency
			}
			if !seen[dep.bindingName()] {
				seen[dep.bindingName()] = true
				out = append(out, dep)
			}
		}
	}
	return out, missing, nil
}

// claimed reports whether a binding was made for a policy of its own (not
// only as an attached binding).
func claimed(a *workv1alpha2.ResourceBinding) bool {
	return a.Spec.Placement != nil || a.Annotations[policyv1alpha1.PropagationPolicyNameAnnotation] != "" ||
		a.Annotations[policyv1alpha1.ClusterPropagationPolicyAnnotation] != ""
}

// attach makes the dependency's binding hold the workload's snapshot, and
// an attached binding of no policy of its own take the settings its
// workloads resolve to (resolve); wrote says whether it wrote.
func (r *Reconciler) attach(ctx context.Context, b *workv1alpha2.ResourceBinding, d dependency, snapshot workv1alpha2.BindingSnapshot) (bool, error) {
	a := &workv1alpha2.ResourceBinding{}
	err := r.Client.Get(ctx, ctrl.ObjectKey{Namespace: b.Namespace, Name: d.bindingName()}, a)
	if apierrors.IsNotFound(err) {
		a = &workv1alpha2.ResourceBinding{
			ObjectMeta: metav1.ObjectMeta{Namespace: b.Namespace, Name: d.bindingName(),
				Labels: map[string]string{workv1alpha2.AttachedBindingLabel: "true"},
				// Gone with the object it binds.
				OwnerReferences: []metav1.OwnerReference{{APIVersion: d.ref.APIVersion, Kind: d.ref.Kind, Name: d.ref.Name, UID: d.ref.UID, BlockOwnerDeletion: ptr.To(true)}},
			},
			Spec: workv1alpha2.ResourceBindingSpec{Resource: d.ref, RequiredBy: []workv1alpha2.BindingSnapshot{snapshot},
				ConflictResolution: effectiveConflictResolution(b.Spec.ConflictResolution), PreserveResourcesOnDeletion: ptr.To(ptr.Deref(b.Spec.PreserveResourcesOnDeletion, false))},
		}
		if err := r.Client.Create(ctx, a); err != nil {
			// Another workload's reconcile created it meanwhile: this
			// one is retried and joins it (not left out).
			return false, err
		}
		klog.FromContext(ctx).V(2).Info("Attached dependency", "binding", klog.KObj(a), "requiredBy", klog.KObj(b))
		return true, nil
	}
	if err != nil {
		return false, err
	}
	if a.Spec.Resource.Kind != d.ref.Kind || a.Spec.Resource.Name != d.ref.Name {
		// Another object's binding holds that name (names shortened to
		// fit): never written over.
		events.OnBinding(r.Recorder, b, b.Spec.Resource, corev1.EventTypeWarning, events.GetDependenciesFailed,
			"Not propagating %s %s: binding %s is another object's", d.ref.Kind, d.ref.Name, a.Name)
		return false, nil
	}
	if claimed(a) && (a.Spec.ConflictResolution != b.Spec.ConflictResolution || !equality.Semantic.DeepEqual(a.Spec.PreserveResourcesOnDeletion, b.Spec.PreserveResourcesOnDeletion)) {
		events.OnBinding(r.Recorder, b, b.Spec.Resource, corev1.EventTypeWarning, events.DependencyPolicyConflict,
			"The policy propagating %s %s (conflictResolution %q, preserveResourcesOnDeletion %v) differs from this workload's (%q, %v); its own policy's settings apply",
			d.ref.Kind, d.ref.Name, a.Spec.ConflictResolution, ptr.Deref(a.Spec.PreserveResourcesOnDeletion, false), b.Spec.ConflictResolution, ptr.Deref(b.Spec.PreserveResourcesOnDeletion, false))
	}
	next := make([]workv1alpha2.BindingSnapshot, 0, len(a.Spec.RequiredBy)+1)
	done := false
	for _, s := range a.Spec.RequiredBy {
		if s.Namespace == snapshot.Namespace && s.Name == snapshot.Name {
			next = append(next, snapshot)
			done = true
			continue
		}
		next = append(next, s)
	}
	if !done {
		next = append(next, snapshot)
	}
	return r.write(ctx, a, next, b, &d)
}

// write sets an attached binding's requiredBy to next and, for one of no
// policy of its own, the settings its workloads resolve to and the
// dependency's current version, and says whether it wrote. b is the
// workload being reconciled (nil when it is gone), read as it is now
// rather than from the cache.
func (r *Reconciler) write(ctx context.Context, a *workv1alpha2.ResourceBinding, next []workv1alpha2.BindingSnapshot, b *workv1alpha2.ResourceBinding, d *dependency) (bool, error) {
	before := a.DeepCopy()
	a.Spec.RequiredBy = next
	var conflicts []string
	if !claimed(a) {
		if d != nil {
			a.Spec.Resource.UID, a.Spec.Resource.ResourceVersion = d.ref.UID, d.ref.ResourceVersion
		}
		// A workload agreeing with what the binding holds cannot change
		// the resolution: the others are read only when b disagrees (or
		// has gone), so that a dependency shared by many workloads costs
		// each of them one comparison, not a read of every other.
		if b == nil || effectiveConflictResolution(b.Spec.ConflictResolution) != a.Spec.ConflictResolution ||
			a.Spec.PreserveResourcesOnDeletion == nil || ptr.Deref(b.Spec.PreserveResourcesOnDeletion, false) != *a.Spec.PreserveResourcesOnDeletion {
			cr, preserve, crConflict, preserveConflict, err := r.resolve(ctx, next, b)
			if err != nil {
				return false, err
			}
			a.Spec.ConflictResolution, a.Spec.PreserveResourcesOnDeletion = cr, ptr.To(preserve)
			if crConflict {
				conflicts = append(conflicts, "ConflictResolution conflicted (Overwrite vs Abort)")
			}
			if preserveConflict {
				conflicts = append(conflicts, "PreserveResourcesOnDeletion conflicted (true vs false)")
			}
		}
	}
	if equality.Semantic.DeepEqual(before.Spec, a.Spec) {
		return false, nil
	}
	if err := r.Client.Patch(ctx, a, ctrl.MergeFromWithOptions(before, ctrl.MergeFromWithOptimisticLock{})); err != nil {
		return false, err
	}
	if len(conflicts) > 0 {
		events.Warning(r.Recorder, a, events.DependencyPolicyConflict, "Dependency policy conflict detected: %s.", strings.Join(conflicts, "; "))
	}
	return true, nil
}

// resolve is what the workloads requiring an attached binding make of its
// settings, as Karmada resolves them: Overwrite if any of them says
// Overwrite (else Abort), preserved on deletion if any says so; and
// whether they disagree. requiredBy's bindings are read from the cache,
// but b (the workload reconciled) as given.
func (r *Reconciler) resolve(ctx context.Context, requiredBy []workv1alpha2.BindingSnapshot, b *workv1alpha2.ResourceBinding) (cr policyv1alpha1.ConflictResolution, preserve, crConflict, preserveConflict bool, err error) {
	overwrite, abort, yes, no := false, false, false, false
	for _, s := range requiredBy {
		w := b
		if w == nil || s.Namespace != w.Namespace || s.Name != w.Name {
			w = &workv1alpha2.ResourceBinding{}
			if err := r.Client.Get(ctx, ctrl.ObjectKey{Namespace: s.Namespace, Name: s.Name}, w); apierrors.IsNotFound(err) {
				continue
			} else if err != nil {
				return "", false, false, false, err
			}
		}
		if effectiveConflictResolution(w.Spec.ConflictResolution) == policyv1alpha1.ConflictOverwrite {
			overwrite = true
		} else {
			abort = true
		}
		if ptr.Deref(w.Spec.PreserveResourcesOnDeletion, false) {
			yes = true
		} else {
			no = true
		}
	}
	cr = policyv1alpha1.ConflictAbort
	if overwrite {
		cr = policyv1alpha1.ConflictOverwrite
	}
	return cr, yes, overwrite && abort, yes && no, nil
}

// effectiveConflictResolution is Abort for an empty value.
func effectiveConflictResolution(v policyv1alpha1.ConflictResolution) policyv1alpha1.ConflictResolution {
	if v == "" {
		return policyv1alpha1.ConflictAbort
	}
	return v
}

// release removes the workload's snapshot from an attached binding; one
// that no workload needs any more, and no policy of its own propagates, is
// deleted, and its copies with it; the others take the settings the
// remaining workloads resolve to.
func (r *Reconciler) release(ctx context.Context, a *workv1alpha2.ResourceBinding, workload ctrl.ObjectKey) (bool, error) {
	next := slices.DeleteFunc(slices.Clone(a.Spec.RequiredBy), func(s workv1alpha2.BindingSnapshot) bool {
		return s.Namespace == workload.Namespace && s.Name == workload.Name
	})
	if len(next) == 0 && !claimed(a) {
		klog.FromContext(ctx).V(2).Info("Deleting attached binding: no workload needs it", "binding", klog.KObj(a))
		if err := r.Client.Delete(ctx, a, ctrl.Preconditions{UID: &a.UID, ResourceVersion: &a.ResourceVersion}); err != nil {
			return false, ctrl.IgnoreNotFound(err)
		}
		return true, nil
	}
	return r.write(ctx, a, next, nil, nil)
}
