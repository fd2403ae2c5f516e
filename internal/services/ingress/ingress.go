// Package ingress keeps what a multi-cluster load balancer reads from a
// MultiClusterIngress's status: serviceLocations, the clusters each
// backend Service's binding places it in, and trafficBlockClusters, those
// of them whose Cluster carries Remedy's TrafficControl action (Karmada's
// multicluster-cloud-provider filters its backends by them). It provisions
// no load balancer.
package ingress

import (
	"context"
	"slices"

	networkingv1 "k8s.io/api/networking/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/builder"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	"sigs.k8s.io/controller-runtime/pkg/predicate"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	clusterv1alpha1 "github.com/karmada-go/karmada/api/cluster/v1alpha1"
	networkingv1alpha1 "github.com/karmada-go/karmada/api/networking/v1alpha1"
	workv1alpha2 "github.com/karmada-go/karmada/api/work/v1alpha2"
	"github.com/karmada-go/karmada/internal/clusters/clusterready"
	"github.com/karmada-go/karmada/internal/names"
	"github.com/karmada-go/karmada/internal/queues"
	"github.com/karmada-go/karmada/internal/requeue"
)

// ControllerName is the controller's name in --controllers (ours: Karmada
// leaves this to its cloud provider's controller manager).
const ControllerName = "multiclusteringress"

// Reconciler writes the MultiClusterIngresses' serviceLocations and
// trafficBlockClusters.
type Reconciler struct {
	Client client.Client
}

// SetupWithManager watches the ingresses (any change: a status written by
// someone else is put right), the bindings of Services (where a backend
// runs) and the Clusters whose traffic is blocked or unblocked.
func (r *Reconciler) SetupWithManager(mgr ctrl.Manager) error {
	return ctrl.NewControllerManagedBy(mgr).Named(ControllerName).
		For(&networkingv1alpha1.MultiClusterIngress{}).
		Watches(&workv1alpha2.ResourceBinding{}, handler.EnqueueRequestsFromMapFunc(r.ingressesOfService), builder.WithPredicates(predicate.NewPredicateFuncs(func(o client.Object) bool {
			rb, ok := o.(*workv1alpha2.ResourceBinding)
			return ok && rb.Spec.Resource.Kind == "Service" && rb.Spec.Resource.APIVersion == "v1"
		}))).
		Watches(&clusterv1alpha1.Cluster{}, handler.EnqueueRequestsFromMapFunc(r.allIngresses), builder.WithPredicates(clusterready.TrafficChanged)).
		WithOptions(queues.Options(1)).
		Complete(r)
}

// ingressesOfService lists the ingresses of the binding's namespace that
// have its Service as a backend.
func (r *Reconciler) ingressesOfService(ctx context.Context, o client.Object) []reconcile.Request {
	rb := o.(*workv1alpha2.ResourceBinding)
	list := &networkingv1alpha1.MultiClusterIngressList{}
	if err := r.Client.List(ctx, list, client.InNamespace(rb.Namespace)); err != nil {
		return nil
	}
	var out []reconcile.Request
	for i := range list.Items {
		if slices.Contains(Backends(&list.Items[i].Spec), rb.Spec.Resource.Name) {
			out = append(out, reconcile.Request{NamespacedName: client.ObjectKeyFromObject(&list.Items[i])})
		}
	}
	return out
}

// allIngresses lists every ingress.
func (r *Reconciler) allIngresses(ctx context.Context, _ client.Object) []reconcile.Request {
	list := &networkingv1alpha1.MultiClusterIngressList{}
	if err := r.Client.List(ctx, list); err != nil {
		return nil
	}
	out := make([]reconcile.Request, 0, len(list.Items))
	for i := range list.Items {
		out = append(out, reconcile.Request{NamespacedName: client.ObjectKeyFromObject(&list.Items[i])})
	}
	return out
}

// Reconcile writes one ingress's locations and traffic blocks.
func (r *Reconciler) Reconcile(ctx context.Context, req ctrl.Request) (ctrl.Result, error) {
	mci := &networkingv1alpha1.MultiClusterIngress{}
	if err := r.Client.Get(ctx, req.NamespacedName, mci); err != nil || !mci.DeletionTimestamp.IsZero() {
		return ctrl.Result{}, client.IgnoreNotFound(err)
	}
	var locations []networkingv1alpha1.ServiceLocation
	for _, svc := range Backends(&mci.Spec) {
		rb := &workv1alpha2.ResourceBinding{}
		err := r.Client.Get(ctx, client.ObjectKey{Namespace: mci.Namespace, Name: names.BindingName("Service", svc)}, rb)
		if apierrors.IsNotFound(err) {
			continue // not propagated (yet): it runs nowhere Karmada placed it
		}
		if err != nil {
			return ctrl.Result{}, err
		}
		loc := networkingv1alpha1.ServiceLocation{Name: svc}
		for _, tc := range rb.Spec.Clusters {
			loc.Clusters = append(loc.Clusters, tc.Name)
		}
		slices.Sort(loc.Clusters)
		locations = append(locations, loc)
	}
	clusters := &clusterv1alpha1.ClusterList{}
	if err := r.Client.List(ctx, clusters); err != nil {
		return ctrl.Result{}, err
	}
	blocked := Blocked(locations, clusters.Items)
	if equality.Semantic.DeepEqual(locations, mci.Status.ServiceLocations) && slices.Equal(blocked, mci.Status.TrafficBlockClusters) {
		return ctrl.Result{}, nil
	}
	mci.Status.ServiceLocations, mci.Status.TrafficBlockClusters = locations, blocked
	return requeue.OnConflict(r.Client.Status().Update(ctx, mci))
}

// Backends are the names of the Services an Ingress spec sends traffic
// to (its default backend and every path's), sorted, each once.
func Backends(spec *networkingv1.IngressSpec) []string {
	var out []string
	add := func(b *networkingv1.IngressBackend) {
		if b != nil && b.Service != nil && b.Service.Name != "" {
			out = append(out, b.Service.Name)
		}
	}
	add(spec.DefaultBackend)
	for _, rule := range spec.Rules {
		if rule.HTTP == nil {
			continue
		}
		for i := range rule.HTTP.Paths {
			add(&rule.HTTP.Paths[i].Backend)
		}
	}
	slices.Sort(out)
	return slices.Compact(out)
}

// Blocked are the clusters of the locations whose traffic Remedy blocks
// (TrafficControl in their remedyActions), sorted, each once.
func Blocked(locations []networkingv1alpha1.ServiceLocation, clusters []clusterv1alpha1.Cluster) []string {
	var out []string
	for i := range clusters {
		if !clusterready.TrafficBlocked(&clusters[i]) {
			continue
		}
		for _, l := range locations {
			if slices.Contains(l.Clusters, clusters[i].Name) {
				out = append(out, clusters[i].Name)
				break
			}
		}
	}
	slices.Sort(out)
	return out
}
