// Package binding turns scheduled bindings into Works: for each cluster of
// spec.clusters, one Work in karmada-es-<cluster> holding the pruned template
// with replicas revised for that cluster; Works of clusters no longer
// scheduled are deleted, and so are all of them when the binding goes.
package binding

import (
	"context"
	"encoding/json"
	"fmt"
	"hash/fnv"
	"slices"
	"strconv"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/klog/v2"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller"
	"sigs.k8s.io/controller-runtime/pkg/controller/controllerutil"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	clusterv1alpha1 "github.com/karmada-go/karmada/api/cluster/v1alpha1"
	policyv1alpha1 "github.com/karmada-go/karmada/api/policy/v1alpha1"
	workv1alpha1 "github.com/karmada-go/karmada/api/work/v1alpha1"
	workv1alpha2 "github.com/karmada-go/karmada/api/work/v1alpha2"
	"github.com/karmada-go/karmada/internal/interpreter"
)

// ControllerName is the name of this controller in --controllers.
const ControllerName = "binding"

// Finalizer holds a binding until its Works are deleted.
const Finalizer = "karmada.io/binding-controller"

// Labels on a Work naming the binding it was made from.
const (
	BindingNamespaceLabel   = "resourcebinding.karmada.io/namespace"
	BindingNameLabel        = "resourcebinding.karmada.io/name"
	ClusterBindingNameLabel = "clusterresourcebinding.karmada.io/name"
)

// WorkName is the name of a binding's Work in each execution namespace: the
// binding's name and a short hash of its namespace and name, so that
// bindings of different namespaces never share a Work.
func WorkName(namespace, name string) string {
	h := fnv.New32a()
	h.Write([]byte(namespace + "/" + name))
	return fmt.Sprintf("%s-%08x", name, h.Sum32())
}

// Reconciler reconciles ResourceBindings and ClusterResourceBindings.
type Reconciler struct {
	Client  client.Client
	Workers int
}

// SetupWithManager registers one controller per binding kind.
func (r *Reconciler) SetupWithManager(mgr ctrl.Manager) error {
	opts := controller.Options{MaxConcurrentReconciles: max(r.Workers, 1)}
	if err := ctrl.NewControllerManagedBy(mgr).Named(ControllerName).
		For(&workv1alpha2.ResourceBinding{}).
		Watches(&workv1alpha1.Work{}, handler.EnqueueRequestsFromMapFunc(bindingOfWork(false))).
		WithOptions(opts).
		Complete(reconcile.Func(r.reconcileResourceBinding)); err != nil {
		return err
	}
	return ctrl.NewControllerManagedBy(mgr).Named("cluster-resource-binding").
		For(&workv1alpha2.ClusterResourceBinding{}).
		Watches(&workv1alpha1.Work{}, handler.EnqueueRequestsFromMapFunc(bindingOfWork(true))).
		WithOptions(opts).
		Complete(reconcile.Func(r.reconcileClusterResourceBinding))
}

func (r *Reconciler) reconcileResourceBinding(ctx context.Context, req reconcile.Request) (reconcile.Result, error) {
	rb := &workv1alpha2.ResourceBinding{}
	if err := r.Client.Get(ctx, req.NamespacedName, rb); err != nil {
		return reconcile.Result{}, client.IgnoreNotFound(err)
	}
	labels := map[string]string{BindingNamespaceLabel: rb.Namespace, BindingNameLabel: rb.Name}
	return reconcile.Result{}, r.sync(ctx, rb, &rb.Spec, &rb.Status, labels)
}

func (r *Reconciler) reconcileClusterResourceBinding(ctx context.Context, req reconcile.Request) (reconcile.Result, error) {
	crb := &workv1alpha2.ClusterResourceBinding{}
	if err := r.Client.Get(ctx, req.NamespacedName, crb); err != nil {
		return reconcile.Result{}, client.IgnoreNotFound(err)
	}
	labels := map[string]string{ClusterBindingNameLabel: crb.Name}
	return reconcile.Result{}, r.sync(ctx, crb, &crb.Spec, &crb.Status, labels)
}

// sync makes the Works of one binding match its scheduling result.
func (r *Reconciler) sync(ctx context.Context, obj client.Object, spec *workv1alpha2.ResourceBindingSpec, status *workv1alpha2.ResourceBindingStatus, labels map[string]string) error {
	log := klog.FromContext(ctx)
	if !obj.GetDeletionTimestamp().IsZero() {
		if !controllerutil.ContainsFinalizer(obj, Finalizer) {
			return nil
		}
		left, err := r.deleteWorks(ctx, labels, nil)
		if err != nil {
			return err
		}
		if left > 0 {
			// The Work watch brings the binding back as they go.
			return nil
		}
		patch := client.MergeFrom(obj.DeepCopyObject().(client.Object))
		controllerutil.RemoveFinalizer(obj, Finalizer)
		return client.IgnoreNotFound(r.Client.Patch(ctx, obj, patch))
	}
	// Patches, not updates: the detector and the scheduler write the same
	// binding, and optimistic-lock conflicts would only cost retries.
	patch := client.MergeFrom(obj.DeepCopyObject().(client.Object))
	if controllerutil.AddFinalizer(obj, Finalizer) {
		if err := r.Client.Patch(ctx, obj, patch); err != nil {
			return err
		}
	}
	if !meta.IsStatusConditionTrue(status.Conditions, workv1alpha2.Scheduled) && len(spec.Clusters) == 0 {
		return nil
	}
	template, err := r.template(ctx, spec.Resource)
	if apierrors.IsNotFound(err) {
		// The template is gone; the binding follows it (owner reference).
		return nil
	}
	if err != nil {
		return err
	}
	keep := make([]string, 0, len(spec.Clusters))
	for _, target := range spec.Clusters {
		// A cluster that is gone or leaving gets no Work: its Works are being
		// removed, and writing one would hold its removal up.
		cl := &clusterv1alpha1.Cluster{}
		if err := r.Client.Get(ctx, client.ObjectKey{Name: target.Name}, cl); err != nil || !cl.DeletionTimestamp.IsZero() {
			if err != nil && !apierrors.IsNotFound(err) {
				return err
			}
			continue
		}
		keep = append(keep, workv1alpha1.ExecutionNamespace(target.Name))
		manifest, err := Manifest(template, spec, target)
		if err != nil {
			return err
		}
		work := &workv1alpha1.Work{ObjectMeta: metav1.ObjectMeta{Namespace: workv1alpha1.ExecutionNamespace(target.Name), Name: WorkName(obj.GetNamespace(), obj.GetName())}}
		op, err := controllerutil.CreateOrPatch(ctx, r.Client, work, func() error {
			if work.Labels == nil {
				work.Labels = map[string]string{}
			}
			for k, v := range labels {
				work.Labels[k] = v
			}
			work.Spec.Workload.Manifests = []workv1alpha1.Manifest{{RawExtension: runtime.RawExtension{Raw: manifest}}}
			work.Spec.PreserveResourcesOnDeletion = spec.PreserveResourcesOnDeletion
			work.Spec.SuspendDispatching = suspended(spec, target.Name)
			return nil
		})
		if err != nil {
			return fmt.Errorf("writing work %s/%s: %w", work.Namespace, work.Name, err)
		}
		if op != controllerutil.OperationResultNone {
			log.V(2).Info("Synced work", "work", klog.KObj(work), "binding", klog.KObj(obj), "operation", op)
		}
	}
	_, err = r.deleteWorks(ctx, labels, keep)
	return err
}

// Manifest is what the Work for one cluster holds: the pruned template, its
// replicas revised for that cluster, marked with the template generation it
// was made from.
func Manifest(template *unstructured.Unstructured, spec *workv1alpha2.ResourceBindingSpec, target workv1alpha2.TargetCluster) ([]byte, error) {
	out := interpreter.Prune(template)
	if interpreter.HasReplicas(out.GroupVersionKind().GroupKind()) && spec.Replicas > 0 {
		var err error
		if out, err = interpreter.ReviseReplicas(out, target.Replicas); err != nil {
			return nil, err
		}
	}
	a := out.GetAnnotations()
	if a == nil {
		a = map[string]string{}
	}
	a[interpreter.TemplateGenerationAnnotation] = strconv.FormatInt(template.GetGeneration(), 10)
	a[workv1alpha1.ConflictResolutionAnnotation] = workv1alpha1.ConflictAbort
	if spec.ConflictResolution == policyv1alpha1.ConflictOverwrite {
		a[workv1alpha1.ConflictResolutionAnnotation] = workv1alpha1.ConflictOverwrite
	}
	out.SetAnnotations(a)
	return json.Marshal(out.Object)
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

func (r *Reconciler) template(ctx context.Context, ref workv1alpha2.ObjectReference) (*unstructured.Unstructured, error) {
	gv, err := schema.ParseGroupVersion(ref.APIVersion)
	if err != nil {
		return nil, fmt.Errorf("binding refers to apiVersion %q: %w", ref.APIVersion, err)
	}
	u := &unstructured.Unstructured{}
	u.SetGroupVersionKind(gv.WithKind(ref.Kind))
	if err := r.Client.Get(ctx, client.ObjectKey{Namespace: ref.Namespace, Name: ref.Name}, u); err != nil {
		return nil, err
	}
	if ref.UID != "" && u.GetUID() != ref.UID {
		// A template of the same name was re-created: this binding belongs
		// to the old one.
		return nil, apierrors.NewNotFound(schema.GroupResource{Group: gv.Group, Resource: ref.Kind}, ref.Name)
	}
	return u, nil
}

// deleteWorks deletes the binding's Works outside the keep namespaces and
// returns how many of its Works are still being deleted.
func (r *Reconciler) deleteWorks(ctx context.Context, labels map[string]string, keep []string) (int, error) {
	works := &workv1alpha1.WorkList{}
	if err := r.Client.List(ctx, works, client.MatchingLabels(labels)); err != nil {
		return 0, err
	}
	left := 0
	for i := range works.Items {
		w := &works.Items[i]
		if slices.Contains(keep, w.Namespace) {
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

func bindingOfWork(clusterScoped bool) handler.MapFunc {
	return func(_ context.Context, obj client.Object) []reconcile.Request {
		l := obj.GetLabels()
		if clusterScoped {
			if n := l[ClusterBindingNameLabel]; n != "" {
				return []reconcile.Request{{NamespacedName: client.ObjectKey{Name: n}}}
			}
			return nil
		}
		if n := l[BindingNameLabel]; n != "" {
			return []reconcile.Request{{NamespacedName: client.ObjectKey{Namespace: l[BindingNamespaceLabel], Name: n}}}
		}
		return nil
	}
}
