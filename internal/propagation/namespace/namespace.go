// Package namespace propagates the namespaces of the control plane to every
// member cluster, through one Work per namespace and cluster.
package namespace

import (
	"context"
	"encoding/json"
	"fmt"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/builder"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller/controllerutil"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	clusterv1alpha1 "github.com/karmada-go/karmada/api/cluster/v1alpha1"
	policyv1alpha1 "github.com/karmada-go/karmada/api/policy/v1alpha1"
	workv1alpha1 "github.com/karmada-go/karmada/api/work/v1alpha1"
	"github.com/karmada-go/karmada/internal/clusters/clusterready"
	"github.com/karmada-go/karmada/internal/names"
	"github.com/karmada-go/karmada/internal/propagation/overridemanager"
	"github.com/karmada-go/karmada/internal/queues"
)

// ControllerName is the name of this controller in --controllers.
const ControllerName = "namespace"

// executionNamespaceWait is how long a namespace waits for the execution
// namespace of a new cluster, which the cluster controller creates.
const executionNamespaceWait = time.Second

// Skipped reports whether a namespace is never propagated: the system's own
// (kube-*, karmada-*), default (every member has it), and those labelled to
// opt out.
func Skipped(ns *corev1.Namespace) bool {
	if names.ReservedNamespace(ns.Name) || names.EveryMemberHas(ns.Name) {
		return true
	}
	return ns.Labels[policyv1alpha1.NamespaceSkipAutoPropagationLabel] == "true"
}

// Reconciler reconciles namespaces of the control plane.
type Reconciler struct {
	Client  client.Client
	Workers int
}

// SetupWithManager registers the controller.
func (r *Reconciler) SetupWithManager(mgr ctrl.Manager) error {
	return ctrl.NewControllerManagedBy(mgr).
		Named(ControllerName).
		For(&corev1.Namespace{}).
		// A new cluster needs every namespace.
		Watches(&clusterv1alpha1.Cluster{}, handler.EnqueueRequestsFromMapFunc(r.allNamespaces), builder.WithPredicates(clusterready.Changed)).
		// A Work changed or deleted behind our back is put right.
		Watches(&workv1alpha1.Work{}, handler.EnqueueRequestsFromMapFunc(namespaceOfWork)).
		// A ClusterOverridePolicy may select namespaces.
		Watches(&policyv1alpha1.ClusterOverridePolicy{}, handler.EnqueueRequestsFromMapFunc(r.allNamespaces)).
		WithOptions(queues.Options(max(r.Workers, 1))).
		Complete(r)
}

// Reconcile makes the Works of one namespace match the clusters.
func (r *Reconciler) Reconcile(ctx context.Context, req ctrl.Request) (ctrl.Result, error) {
	ns := &corev1.Namespace{}
	err := r.Client.Get(ctx, client.ObjectKey{Name: req.Name}, ns)
	if err != nil && !apierrors.IsNotFound(err) {
		return ctrl.Result{}, err
	}
	propagate := err == nil && ns.DeletionTimestamp.IsZero() && !Skipped(ns)
	if !propagate {
		return ctrl.Result{}, r.removeWorks(ctx, req.Name)
	}
	clusters := &clusterv1alpha1.ClusterList{}
	if err := r.Client.List(ctx, clusters); err != nil {
		return ctrl.Result{}, err
	}
	manifest, err := namespaceManifest(ns)
	if err != nil {
		return ctrl.Result{}, err
	}
	existing := &workv1alpha1.WorkList{}
	if err := r.Client.List(ctx, existing, client.MatchingLabels{workv1alpha1.NamespaceWorkLabel: ns.Name}); err != nil {
		return ctrl.Result{}, err
	}
	// ClusterOverridePolicies selecting the namespace apply to its copies,
	// cluster by cluster, as Karmada's namespace sync applies them.
	cops := &policyv1alpha1.ClusterOverridePolicyList{}
	if err := r.Client.List(ctx, cops); err != nil {
		return ctrl.Result{}, err
	}
	plain := &unstructured.Unstructured{}
	if err := plain.UnmarshalJSON(manifest); err != nil {
		return ctrl.Result{}, err
	}
	policies := overridemanager.Matching(plain, nil, cops.Items)
	for _, c := range clusters.Items {
		if !c.DeletionTimestamp.IsZero() {
			continue
		}
		manifest, applied := manifest, ""
		if len(policies) > 0 {
			obj := plain.DeepCopy()
			clusterApplied, _, err := overridemanager.Apply(obj, &c, policies)
			if err != nil {
				// The copy keeps what it had; the next change of a policy
				// brings the namespace back.
				ctrl.LoggerFrom(ctx).Error(err, "Override of a namespace not applied", "namespace", ns.Name, "cluster", c.Name)
				continue
			}
			if manifest, err = obj.MarshalJSON(); err != nil {
				return ctrl.Result{}, err
			}
			if applied, err = overridemanager.AnnotationValue(clusterApplied); err != nil {
				return ctrl.Result{}, err
			}
		}
		work := &workv1alpha1.Work{ObjectMeta: metav1.ObjectMeta{Namespace: workv1alpha1.ExecutionNamespace(c.Name), Name: names.KeptWorkName(existing.Items, workv1alpha1.ExecutionNamespace(c.Name), names.NamespaceWorkName(ns.Name))}}
		op, err := controllerutil.CreateOrPatch(ctx, r.Client, work, func() error {
			if work.Labels == nil {
				work.Labels = map[string]string{}
			}
			work.Labels[workv1alpha1.NamespaceWorkLabel] = ns.Name
			if applied != "" {
				if work.Annotations == nil {
					work.Annotations = map[string]string{}
				}
				work.Annotations[policyv1alpha1.AppliedClusterOverridesAnnotation] = applied
			} else {
				delete(work.Annotations, policyv1alpha1.AppliedClusterOverridesAnnotation)
			}
			work.Spec.Workload.Manifests = []workv1alpha1.Manifest{{RawExtension: runtime.RawExtension{Raw: manifest}}}
			return nil
		})
		if err != nil {
			if apierrors.IsNotFound(err) {
				// The cluster controller has not created the execution
				// namespace yet; it will, and the Cluster watch brings us back.
				return ctrl.Result{RequeueAfter: executionNamespaceWait}, nil
			}
			return ctrl.Result{}, fmt.Errorf("writing work %s/%s: %w", work.Namespace, work.Name, err)
		}
		if op != controllerutil.OperationResultNone {
			ctrl.LoggerFrom(ctx).V(2).Info("Propagated namespace", "namespace", ns.Name, "cluster", c.Name, "operation", op)
		}
	}
	return ctrl.Result{}, nil
}

func (r *Reconciler) removeWorks(ctx context.Context, name string) error {
	works := &workv1alpha1.WorkList{}
	if err := r.Client.List(ctx, works, client.MatchingLabels{workv1alpha1.NamespaceWorkLabel: name}); err != nil {
		return err
	}
	for i := range works.Items {
		w := &works.Items[i]
		if _, ok := workv1alpha1.ClusterOfExecutionNamespace(w.Namespace); !ok || !w.DeletionTimestamp.IsZero() {
			continue
		}
		if err := r.Client.Delete(ctx, w); err != nil && !apierrors.IsNotFound(err) {
			return fmt.Errorf("deleting work %s/%s: %w", w.Namespace, w.Name, err)
		}
	}
	return nil
}

// namespaceManifest is what members receive: the name and labels.
func namespaceManifest(ns *corev1.Namespace) ([]byte, error) {
	out := &corev1.Namespace{
		TypeMeta:   metav1.TypeMeta{APIVersion: "v1", Kind: "Namespace"},
		ObjectMeta: metav1.ObjectMeta{Name: ns.Name, Labels: ns.Labels},
	}
	return json.Marshal(out)
}

func (r *Reconciler) allNamespaces(ctx context.Context, _ client.Object) []reconcile.Request {
	list := &corev1.NamespaceList{}
	if err := r.Client.List(ctx, list); err != nil {
		ctrl.LoggerFrom(ctx).Error(err, "Listing namespaces")
		return nil
	}
	out := make([]reconcile.Request, 0, len(list.Items))
	for _, ns := range list.Items {
		if !Skipped(&ns) {
			out = append(out, reconcile.Request{NamespacedName: types.NamespacedName{Name: ns.Name}})
		}
	}
	return out
}

func namespaceOfWork(_ context.Context, obj client.Object) []reconcile.Request {
	name, ok := obj.GetLabels()[workv1alpha1.NamespaceWorkLabel]
	if !ok {
		return nil
	}
	return []reconcile.Request{{NamespacedName: types.NamespacedName{Name: name}}}
}
