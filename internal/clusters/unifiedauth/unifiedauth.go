// Package unifiedauth keeps each push-mode member's impersonator to the
// subjects the control plane lets through its proxies, as Karmada's
// unified-auth controller does: whoever a ClusterRoleBinding of the
// control plane grants clusters/proxy on a Cluster (join.ProxySubjects)
// may be impersonated in that member, nobody else — never system:masters.
// The rules are written into the member's ClusterRole
// karmada-<cluster>-impersonator with the member identity (which may
// update that one ClusterRole and nothing more, join.ImpersonatorNarrowingRule),
// whenever a Cluster, ClusterRole or ClusterRoleBinding changes.
//
// A member joined by an earlier version (its member identity may not
// update the ClusterRole, its impersonator may impersonate anyone) is
// moved once: the impersonator's own, still unrestricted, right gives the
// member identity its narrowing rule, then the impersonator is narrowed.
package unifiedauth

import (
	"context"
	"fmt"
	"slices"
	"sync"
	"time"

	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apiserver/pkg/authentication/user"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
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
	"github.com/karmada-go/karmada/internal/clusters/clusterclient"
	"github.com/karmada-go/karmada/internal/clusters/join"
	"github.com/karmada-go/karmada/internal/events"
	"github.com/karmada-go/karmada/internal/queues"
)

// ControllerName is the name --controllers knows it by (Karmada's).
const ControllerName = "unifiedAuth"

// MigrationUser is who the controller manager acts as, once, in a member
// joined by an earlier version, to give the member identity its narrowing
// rule (impersonated, with system:masters, by the not yet narrowed
// impersonator).
const MigrationUser = "system:karmada:unified-auth-migration"

// Reconciler narrows the impersonators.
type Reconciler struct {
	// Client reads Clusters and RBAC (cached); Reader the impersonator's
	// Secret (uncached), for a move only.
	Client   client.Client
	Reader   client.Reader
	Members  *clusterclient.Cache
	Recorder record.EventRecorder
	// Resync is how long the rules found or written in a member are
	// trusted (DefaultResync when 0): a hand edit of the impersonator's
	// ClusterRole in the member is undone within it.
	Resync time.Duration

	// applied: per Cluster name, the rules last found or written in its
	// member (and when), so that an RBAC change elsewhere costs no member
	// request.
	applied sync.Map
}

// DefaultResync is Reconciler.Resync's default.
const DefaultResync = 10 * time.Minute

// appliedRules is what was last found or written in a member.
type appliedRules struct {
	uid   types.UID
	rules []rbacv1.PolicyRule
	at    time.Time
}

// SetupWithManager registers the controller: a Cluster's change, and any
// ClusterRole's or ClusterRoleBinding's, reconciles the push Clusters.
func (r *Reconciler) SetupWithManager(mgr ctrl.Manager) error {
	all := handler.EnqueueRequestsFromMapFunc(func(ctx context.Context, _ client.Object) []reconcile.Request {
		var clusters clusterv1alpha1.ClusterList
		if err := r.Client.List(ctx, &clusters); err != nil {
			klog.FromContext(ctx).Error(err, "Listing Clusters")
			return nil
		}
		var reqs []reconcile.Request
		for _, c := range clusters.Items {
			if c.Spec.ImpersonatorSecretRef != nil {
				reqs = append(reqs, reconcile.Request{NamespacedName: client.ObjectKey{Name: c.Name}})
			}
		}
		return reqs
	})
	return ctrl.NewControllerManagedBy(mgr).
		Named(ControllerName).
		For(&clusterv1alpha1.Cluster{}, builder.WithPredicates(predicate.GenerationChangedPredicate{})).
		Watches(&rbacv1.ClusterRole{}, all, builder.WithPredicates(predicate.Funcs{UpdateFunc: rulesChanged})).
		Watches(&rbacv1.ClusterRoleBinding{}, all).
		WithOptions(queues.Options(1)).
		Complete(r)
}

// rulesChanged drops ClusterRole updates that leave its rules as they were
// (labels, annotations, the aggregation controller's writes of the same
// rules).
func rulesChanged(e event.UpdateEvent) bool {
	o, ok1 := e.ObjectOld.(*rbacv1.ClusterRole)
	n, ok2 := e.ObjectNew.(*rbacv1.ClusterRole)
	return !ok1 || !ok2 || !equality.Semantic.DeepEqual(o.Rules, n.Rules)
}

// Reconcile writes the impersonator's rules of one Cluster's member.
func (r *Reconciler) Reconcile(ctx context.Context, req ctrl.Request) (ctrl.Result, error) {
	cluster := &clusterv1alpha1.Cluster{}
	if err := r.Client.Get(ctx, req.NamespacedName, cluster); err != nil {
		if apierrors.IsNotFound(err) {
			r.applied.Delete(req.Name)
		}
		return ctrl.Result{}, client.IgnoreNotFound(err)
	}
	if cluster.Spec.SyncMode != clusterv1alpha1.Push || cluster.Spec.ImpersonatorSecretRef == nil || !cluster.DeletionTimestamp.IsZero() {
		r.applied.Delete(cluster.Name)
		return ctrl.Result{}, nil
	}
	want, err := join.ImpersonatorRulesFor(ctx, r.Client, cluster.Name)
	if err != nil {
		return ctrl.Result{}, err
	}
	resync := r.Resync
	if resync <= 0 {
		resync = DefaultResync
	}
	if v, ok := r.applied.Load(cluster.Name); ok {
		last := v.(appliedRules)
		if age := time.Since(last.at); last.uid == cluster.UID && age < resync && equality.Semantic.DeepEqual(last.rules, want) {
			return ctrl.Result{RequeueAfter: resync - age}, nil
		}
	}
	changed, err := r.sync(ctx, cluster, want)
	if err != nil {
		klog.FromContext(ctx).Info("Could not sync the impersonator's rules", "cluster", cluster.Name, "err", err)
		events.Warning(r.Recorder, cluster, events.SyncImpersonationConfigFailed, "%v", err)
		return ctrl.Result{}, err
	}
	r.applied.Store(cluster.Name, appliedRules{uid: cluster.UID, rules: want, at: time.Now()})
	if changed {
		klog.FromContext(ctx).Info("Synced the impersonator's rules", "cluster", cluster.Name, "rules", len(want))
		events.Normal(r.Recorder, cluster, events.SyncImpersonationConfigSucceed, "Sync impersonation config succeed.")
	}
	return ctrl.Result{RequeueAfter: resync}, nil
}

// sync writes want into the member's impersonator ClusterRole; changed
// says whether it had other rules. A member identity refused the update
// (a member joined by an earlier version) is moved first, once.
func (r *Reconciler) sync(ctx context.Context, cluster *clusterv1alpha1.Cluster, want []rbacv1.PolicyRule) (changed bool, err error) {
	m, err := r.Members.Get(ctx, cluster)
	if err != nil {
		return false, err
	}
	name := join.ImpersonatorName(cluster.Name)
	roles := m.Kube.RbacV1().ClusterRoles()
	for moved := false; ; moved = true {
		role, err := roles.Get(ctx, name, metav1.GetOptions{})
		if apierrors.IsNotFound(err) {
			return false, fmt.Errorf("the impersonator's ClusterRole %s is missing in %s: run karmadactl join %s again", name, cluster.Name, cluster.Name)
		}
		if err != nil {
			return false, fmt.Errorf("reading the impersonator's ClusterRole %s in %s: %w", name, cluster.Name, err)
		}
		if equality.Semantic.DeepEqual(role.Rules, want) {
			return false, nil
		}
		role.Rules = want
		_, err = roles.Update(ctx, role, metav1.UpdateOptions{})
		if apierrors.IsForbidden(err) && !moved {
			if err := r.move(ctx, cluster, m); err != nil {
				return false, err
			}
			continue
		}
		if err != nil {
			return false, fmt.Errorf("updating the impersonator's ClusterRole %s in %s: %w", name, cluster.Name, err)
		}
		return true, nil
	}
}

// move gives the member identity of a member joined by an earlier version
// the right to narrow the impersonator (join.ImpersonatorNarrowingRule, on
// its ClusterRole), acting through the impersonator as MigrationUser in
// system:masters — which only the unrestricted impersonator of that
// earlier version can do, and which the narrowing then takes away.
func (r *Reconciler) move(ctx context.Context, cluster *clusterv1alpha1.Cluster, m *clusterclient.Member) error {
	again := fmt.Errorf("the member identity of %s may not update the impersonator's ClusterRole (joined by an earlier version) and the impersonator cannot give it that right: run karmadactl join %s again", cluster.Name, cluster.Name)
	ref := cluster.Spec.ImpersonatorSecretRef
	secret := &corev1.Secret{}
	if err := r.Reader.Get(ctx, client.ObjectKey{Namespace: ref.Namespace, Name: ref.Name}, secret); err != nil {
		return fmt.Errorf("%w (reading the impersonator's Secret: %v)", again, err)
	}
	cfg := rest.CopyConfig(m.Config)
	cfg.BearerToken = string(secret.Data[clusterclient.SecretTokenKey])
	cfg.Impersonate = rest.ImpersonationConfig{UserName: MigrationUser, Groups: []string{user.SystemPrivilegedGroup}}
	kc, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		return err
	}
	roles := kc.RbacV1().ClusterRoles()
	imp, err := roles.Get(ctx, join.ImpersonatorName(cluster.Name), metav1.GetOptions{})
	if err != nil || !join.WidelyImpersonating(imp.Rules) {
		return again
	}
	own, err := roles.Get(ctx, join.ClusterRoleName(cluster.Name), metav1.GetOptions{})
	if err != nil {
		return fmt.Errorf("%w (reading %s: %v)", again, join.ClusterRoleName(cluster.Name), err)
	}
	rule := join.ImpersonatorNarrowingRule(cluster.Name)
	if !slices.ContainsFunc(own.Rules, func(r rbacv1.PolicyRule) bool { return equality.Semantic.DeepEqual(r, rule) }) {
		own.Rules = append(own.Rules, rule)
		if _, err := roles.Update(ctx, own, metav1.UpdateOptions{}); err != nil {
			return fmt.Errorf("%w (adding the rule to %s: %v)", again, own.Name, err)
		}
	}
	klog.FromContext(ctx).Info("Gave the member identity the right to narrow the impersonator (a member joined by an earlier version)", "cluster", cluster.Name)
	return nil
}
