// Package binding turns scheduled bindings into Works: for each cluster of
// spec.clusters, one Work in karmada-es-<cluster> holding the pruned template
// with replicas revised for that cluster; Works of clusters no longer
// scheduled are deleted, and so are all of them when the binding goes.
package binding

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strconv"
	"strings"
	"time"

	"k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/tools/record"
	"k8s.io/klog/v2"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/builder"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/event"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	"sigs.k8s.io/controller-runtime/pkg/predicate"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	clusterv1alpha1 "github.com/karmada-go/karmada/api/cluster/v1alpha1"
	policyv1alpha1 "github.com/karmada-go/karmada/api/policy/v1alpha1"
	workv1alpha1 "github.com/karmada-go/karmada/api/work/v1alpha1"
	workv1alpha2 "github.com/karmada-go/karmada/api/work/v1alpha2"
	"github.com/karmada-go/karmada/internal/anybinding"
	"github.com/karmada-go/karmada/internal/cache/templatecache"
	"github.com/karmada-go/karmada/internal/clusters/clusterready"
	"github.com/karmada-go/karmada/internal/eviction"
	"github.com/karmada-go/karmada/internal/interpreter"
	"github.com/karmada-go/karmada/internal/metrics"
	"github.com/karmada-go/karmada/internal/propagation/overridemanager"
	"github.com/karmada-go/karmada/internal/queues"
	"github.com/karmada-go/karmada/internal/requeue"
)

// ControllerName is the name of this controller in --controllers.
const ControllerName = "binding"

// Finalizer holds a binding until its Works are deleted. The detector
// creates bindings with it; the controller adds it to any binding without.
const Finalizer = workv1alpha2.BindingControllerFinalizer

// Reconciler reconciles ResourceBindings and ClusterResourceBindings.
type Reconciler struct {
	// Interpreter answers what the controller must know of each kind
	// (replicas, status, health, ...): the binary's, with the
	// customizations and interpreter webhooks in force; nil knows the
	// built-in kinds only.
	Interpreter *interpreter.Interpreter
	// Recorder records events; nil records none.
	Recorder record.EventRecorder
	Client   client.Client
	// Templates reads resource templates (Client when nil); the controller
	// manager passes a templatecache.Store.
	Templates templatecache.Reader
	Workers   int

	// clusters reads Clusters without copying them.
	clusters *clusterready.Clusters
	// live reads a template the cache does not hold at the binding's
	// version (mgr.GetAPIReader()).
	live client.Reader
}

// bindingChanged passes binding events that may change its Works: creation,
// deletion, and updates of the spec (which moves the generation, as setting
// the deletion timestamp does), labels or annotations. Status updates, by far
// the most frequent, pass only to the controllers that read status.
var bindingChanged = predicate.Or(predicate.GenerationChangedPredicate{}, predicate.LabelChangedPredicate{}, predicate.AnnotationChangedPredicate{})

// workTampered passes the Work events the binding controller must answer: a
// Work deleted, or its spec or labels changed by someone else. Its own
// creations and every status update do not pass.
var workTampered = predicate.Funcs{
	CreateFunc:  func(event.CreateEvent) bool { return false },
	GenericFunc: func(event.GenericEvent) bool { return false },
	DeleteFunc:  func(event.DeleteEvent) bool { return true },
	UpdateFunc: func(e event.UpdateEvent) bool {
		return e.ObjectOld.GetGeneration() != e.ObjectNew.GetGeneration() ||
			!equality.Semantic.DeepEqual(e.ObjectOld.GetLabels(), e.ObjectNew.GetLabels())
	},
}

// SetupWithManager registers one controller per binding kind.
func (r *Reconciler) SetupWithManager(mgr ctrl.Manager) error {
	opts := queues.Options(r.Workers)
	var err error
	if r.clusters, err = clusterready.NewClusters(context.Background(), mgr); err != nil {
		return err
	}
	r.live = mgr.GetAPIReader()
	for _, k := range anybinding.Kinds {
		b := ctrl.NewControllerManagedBy(mgr).Named(controllerName(k)).
			For(k.New().Object, builder.WithPredicates(bindingChanged)).
			Watches(&workv1alpha1.Work{}, handler.EnqueueRequestsFromMapFunc(bindingOfWork(k)), builder.WithPredicates(workTampered)).
			Watches(&policyv1alpha1.ClusterOverridePolicy{}, handler.EnqueueRequestsFromMapFunc(r.bindingsOf(k)))
		if !k.ClusterScoped {
			b = b.Watches(&policyv1alpha1.OverridePolicy{}, handler.EnqueueRequestsFromMapFunc(r.bindingsOf(k))).
				// A quota made or changed (its spec: status updates are
				// frequent) judges the namespace's copies again.
				Watches(&policyv1alpha1.FederatedResourceQuota{}, handler.EnqueueRequestsFromMapFunc(r.bindingsOf(k)),
					builder.WithPredicates(predicate.GenerationChangedPredicate{}))
		}
		if err := b.WithOptions(opts).Complete(r.reconcilerFor(k)); err != nil {
			return err
		}
	}
	return nil
}

// reviseOps are the interpreter operations this controller runs.
var reviseOps = []string{string(interpreter.OpReviseReplica)}

// controllerName keeps the names the controllers had (they name metrics and
// log lines).
func controllerName(k anybinding.Kind) string {
	if k.ClusterScoped {
		return "cluster-resource-binding"
	}
	return ControllerName
}

func (r *Reconciler) reconcilerFor(k anybinding.Kind) reconcile.Reconciler {
	return reconcile.Func(func(ctx context.Context, req reconcile.Request) (reconcile.Result, error) {
		b, err := k.Get(ctx, r.Client, req.NamespacedName)
		if err != nil {
			return reconcile.Result{}, client.IgnoreNotFound(err)
		}
		start := time.Now()
		err = r.sync(ctx, b)
		metrics.BindingSyncWorkDuration.WithLabelValues(metrics.ResultOf(err)).Observe(metrics.Since(start))
		return requeue.OnConflict(err)
	})
}

// upToDate reports whether the Work named namespace/name is among works
// (the binding's Works as listed from the cache) and mutate would change
// nothing in its metadata or spec. A binding looked at again with nothing
// new, as every binding is after a restart, then costs no read and no patch
// computation per Work: mutate runs on a shallow copy whose maps and slices
// it may write are copied first.
func upToDate(works []workv1alpha1.Work, namespace, name string, mutate func(*workv1alpha1.Work)) bool {
	for i := range works {
		existing := &works[i]
		if existing.Namespace != namespace || existing.Name != name {
			continue
		}
		w := *existing
		w.Labels = maps.Clone(existing.Labels)
		w.Annotations = maps.Clone(existing.Annotations)
		w.Finalizers = slices.Clone(existing.Finalizers)
		mutate(&w)
		return equality.Semantic.DeepEqual(w.ObjectMeta, existing.ObjectMeta) && equality.Semantic.DeepEqual(w.Spec, existing.Spec)
	}
	return false
}

// errWorkTaken: the Work to write exists and belongs to another binding.
var errWorkTaken = errors.New("the Work's name is taken")

// otherBinding names the binding an existing Work belongs to when that is
// not b ("" when it is b's, new, or names no binding).
func otherBinding(work *workv1alpha1.Work, b anybinding.Binding) string {
	if work.CreationTimestamp.IsZero() {
		return ""
	}
	for _, k := range anybinding.Kinds {
		key, ok := k.OfWork(work)
		if !ok {
			continue
		}
		if k.ClusterScoped == b.ClusterScoped() && key == client.ObjectKeyFromObject(b.Object) {
			return ""
		}
		return k.Name + " " + key.String()
	}
	return ""
}

// errOverride marks an override policy that cannot be applied.
var errOverride = errors.New("override failed")

// WorkManifest is what a Work for one cluster holds, with the override
// policies applied to it (JSON for the Work's annotations, "" for none).
type WorkManifest struct {
	Raw                     []byte
	AppliedOverrides        string
	AppliedClusterOverrides string
	// object is what Raw encodes (the quota check reads it).
	object *unstructured.Unstructured
}

// Manifest is what the Work for one cluster holds: the pruned template, its
// replicas revised for that cluster, the override policies targeting the
// cluster applied, marked with the template generation it was made from and
// the binding's marks.
func Manifest(in *interpreter.Interpreter, template *unstructured.Unstructured, b anybinding.Binding, target workv1alpha2.TargetCluster, cluster *clusterv1alpha1.Cluster, policies []overridemanager.Policy) (WorkManifest, error) {
	spec := b.Spec
	out := in.Prune(template)
	// As in Karmada, only a divided workload's copies are revised: a
	// duplicated one runs the template as it is in every cluster.
	if in.HasReplicas(out.GroupVersionKind().GroupKind()) && spec.Replicas > 0 && divided(spec.Placement) {
		var err error
		if out, err = in.ReviseReplicas(out, target.Replicas); err != nil {
			metrics.InterpreterErrors.WithLabelValues("ReviseReplica").Inc()
			return WorkManifest{}, err
		}
		if out, err = divideCompletions(out, spec.Clusters, target.Name); err != nil {
			return WorkManifest{}, err
		}
	}
	var m WorkManifest
	if len(policies) > 0 {
		clusterApplied, applied, err := overridemanager.Apply(out, cluster, policies)
		if err != nil {
			return WorkManifest{}, fmt.Errorf("%w: %v", errOverride, err)
		}
		if m.AppliedOverrides, err = overridemanager.AnnotationValue(applied); err != nil {
			return WorkManifest{}, err
		}
		if m.AppliedClusterOverrides, err = overridemanager.AnnotationValue(clusterApplied); err != nil {
			return WorkManifest{}, err
		}
	}
	markLabels, markAnnotations := b.CopyMarks()
	// State preserved from the copy of a cluster the workload was failed
	// over from (statePreservation) goes into the copies that replace it.
	injected := eviction.InjectedLabels(spec, target.Name)
	l := out.GetLabels()
	if l == nil && len(markLabels)+len(injected) > 0 {
		l = map[string]string{}
	}
	for k, v := range injected {
		l[k] = v
	}
	for k, v := range markLabels {
		l[k] = v
	}
	out.SetLabels(l)
	a := out.GetAnnotations()
	if a == nil {
		a = map[string]string{}
	}
	for k, v := range markAnnotations {
		a[k] = v
	}
	a[workv1alpha2.ResourceTemplateGenerationAnnotation] = strconv.FormatInt(template.GetGeneration(), 10)
	a[workv1alpha1.ConflictResolutionAnnotation] = workv1alpha1.ConflictAbort
	if spec.ConflictResolution == policyv1alpha1.ConflictOverwrite {
		a[workv1alpha1.ConflictResolutionAnnotation] = workv1alpha1.ConflictOverwrite
	}
	out.SetAnnotations(a)
	raw, err := json.Marshal(out.Object)
	m.Raw, m.object = raw, out
	return m, err
}

// divided reports whether a placement divides replicas between clusters.
func divided(p *policyv1alpha1.Placement) bool {
	return p != nil && p.ReplicaScheduling != nil && p.ReplicaScheduling.ReplicaSchedulingType == policyv1alpha1.ReplicaSchedulingTypeDivided
}

func setAnnotation(om *metav1.ObjectMeta, key, value string) {
	if value == "" {
		delete(om.Annotations, key)
		return
	}
	if om.Annotations == nil {
		om.Annotations = map[string]string{}
	}
	om.Annotations[key] = value
}

// markOverrides sets, in memory, the outcome of applying override
// policies: True when every policy applied, False naming the policy and
// path that failed. Bindings without policies get no condition (one left
// from earlier policies is removed).
func markOverrides(obj client.Object, status *workv1alpha2.ResourceBindingStatus, hasPolicies bool, errs []string) {
	switch {
	case len(errs) > 0:
		meta.SetStatusCondition(&status.Conditions, metav1.Condition{Type: workv1alpha2.OverridesApplied, Status: metav1.ConditionFalse,
			Reason: workv1alpha2.ReasonOverrideFailed, Message: strings.Join(errs, "; "), ObservedGeneration: obj.GetGeneration()})
	case hasPolicies:
		meta.SetStatusCondition(&status.Conditions, metav1.Condition{Type: workv1alpha2.OverridesApplied, Status: metav1.ConditionTrue,
			Reason: workv1alpha2.ReasonOverridesApplied, Message: workv1alpha2.MessageOverridesApplied, ObservedGeneration: obj.GetGeneration()})
	default:
		meta.RemoveStatusCondition(&status.Conditions, workv1alpha2.OverridesApplied)
	}
}

// writeStatus writes the binding's status, as the phases left it, when it
// differs from before: the one status write of a sync.
func (r *Reconciler) writeStatus(ctx context.Context, before, obj client.Object) error {
	if equality.Semantic.DeepEqual(before, obj) {
		return nil
	}
	// Optimistic lock: the merge patch replaces the conditions list whole.
	return client.IgnoreNotFound(r.Client.Status().Patch(ctx, obj, client.MergeFromWithOptions(before, client.MergeFromWithOptimisticLock{})))
}

// overridePolicies lists the override policies that select the template, in
// the order they apply.
func (r *Reconciler) overridePolicies(ctx context.Context, template *unstructured.Unstructured) ([]overridemanager.Policy, error) {
	ops := &policyv1alpha1.OverridePolicyList{}
	if template.GetNamespace() != "" {
		if err := r.Client.List(ctx, ops, client.InNamespace(template.GetNamespace())); err != nil {
			return nil, err
		}
	}
	cops := &policyv1alpha1.ClusterOverridePolicyList{}
	if err := r.Client.List(ctx, cops); err != nil {
		return nil, err
	}
	return overridemanager.Matching(template, ops.Items, cops.Items), nil
}

// quotas are the FederatedResourceQuotas with overall limits of a
// binding's namespace (none for a ClusterResourceBinding).
func (r *Reconciler) quotas(ctx context.Context, namespace string) ([]policyv1alpha1.FederatedResourceQuota, error) {
	if namespace == "" {
		return nil, nil
	}
	list := &policyv1alpha1.FederatedResourceQuotaList{}
	if err := r.Client.List(ctx, list, client.InNamespace(namespace)); err != nil {
		return nil, fmt.Errorf("listing FederatedResourceQuotas of %s: %w", namespace, err)
	}
	var out []policyv1alpha1.FederatedResourceQuota
	for _, q := range list.Items {
		if len(q.Spec.Overall) > 0 {
			out = append(out, q)
		}
	}
	return out, nil
}

func suspended(spec *workv1alpha2.ResourceBindingSpec, cluster string) *bool {
	s := spec.Suspension
	if s == nil {
		return nil
	}
	on := (s.Dispatching != nil && *s.Dispatching) ||
		(s.DispatchingOnClusters != nil && slices.Contains(s.DispatchingOnClusters.ClusterNames, cluster))
	return &on
}

func (r *Reconciler) templateFrom(ctx context.Context, reader templatecache.Reader, ref workv1alpha2.ObjectReference) (*unstructured.Unstructured, error) {
	gv, err := schema.ParseGroupVersion(ref.APIVersion)
	if err != nil {
		// Only a new spec can fix it: no retry.
		return nil, reconcile.TerminalError(fmt.Errorf("spec.resource.apiVersion %q is not a group/version: %w", ref.APIVersion, err))
	}
	u := &unstructured.Unstructured{}
	u.SetGroupVersionKind(gv.WithKind(ref.Kind))
	if err := reader.Get(ctx, client.ObjectKey{Namespace: ref.Namespace, Name: ref.Name}, u); err != nil {
		return nil, err
	}
	if ref.UID != "" && u.GetUID() != ref.UID {
		// A template of the same name was re-created: this binding belongs
		// to the old one.
		return nil, apierrors.NewNotFound(schema.GroupResource{Group: gv.Group, Resource: ref.Kind}, ref.Name)
	}
	return u, nil
}

// deleteWorks deletes the binding's Works other than those kept (by
// namespace, the name kept there) and returns how many of its Works are
// still being deleted.
func (r *Reconciler) deleteWorks(ctx context.Context, works []workv1alpha1.Work, keep map[string]string) (int, error) {
	left := 0
	for i := range works {
		w := &works[i]
		if name, ok := keep[w.Namespace]; ok && name == w.Name {
			continue
		}
		left++
		if w.DeletionTimestamp.IsZero() {
			if err := r.Client.Delete(ctx, w); err != nil && !apierrors.IsNotFound(err) {
				return left, err
			}
		}
	}
	return left, nil
}

// bindingsOf maps an override policy change to the bindings of kind k it
// may concern: those of its namespace for an OverridePolicy, all of them for
// a ClusterOverridePolicy. Each binding's sync works out what applies.
func (r *Reconciler) bindingsOf(k anybinding.Kind) handler.MapFunc {
	return func(ctx context.Context, policy client.Object) []reconcile.Request {
		var opts []client.ListOption
		if ns := policy.GetNamespace(); ns != "" {
			opts = append(opts, client.InNamespace(ns))
		}
		list, err := k.List(ctx, r.Client, opts...)
		if err != nil {
			klog.FromContext(ctx).Error(err, "Listing bindings", "kind", k.Name)
			return nil
		}
		out := make([]reconcile.Request, 0, len(list))
		for _, b := range list {
			out = append(out, reconcile.Request{NamespacedName: client.ObjectKeyFromObject(b.Object)})
		}
		return out
	}
}

func bindingOfWork(k anybinding.Kind) handler.MapFunc {
	return func(_ context.Context, obj client.Object) []reconcile.Request {
		if key, ok := k.OfWork(obj); ok {
			return []reconcile.Request{{NamespacedName: key}}
		}
		return nil
	}
}

func (r *Reconciler) templates() templatecache.Reader {
	if r.Templates != nil {
		return r.Templates
	}
	return r.Client
}
