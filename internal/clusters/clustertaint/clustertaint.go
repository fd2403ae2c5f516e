// Package clustertaint is the clusterTaintPolicy controller: it adds the
// taints of a ClusterTaintPolicy to the Clusters the policy targets when
// all of the policy's addOnConditions match their status conditions, and
// removes them when all of its removeOnConditions match. Adding is decided
// before removing. A cluster the policy no longer targets, or a policy
// deleted, leaves the taints as they are. Only taints a policy added are
// removed: the Cluster records them (ClusterTaintPolicyTaintsAnnotation),
// and a taint of the same key and effect added by hand stays.
package clustertaint

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
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/tools/record"
	"k8s.io/utils/clock"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	clusterv1alpha1 "github.com/karmada-go/karmada/api/cluster/v1alpha1"
	policyv1alpha1 "github.com/karmada-go/karmada/api/policy/v1alpha1"
	"github.com/karmada-go/karmada/internal/clusters/clusteraffinity"
	"github.com/karmada-go/karmada/internal/events"
	"github.com/karmada-go/karmada/internal/queues"
)

// ControllerName is the name --controllers knows it by, as Karmada's.
const ControllerName = "clusterTaintPolicy"

// Matches says whether every condition matches the cluster's status
// conditions. An empty list matches nothing: a policy without
// addOnConditions adds nothing, without removeOnConditions removes
// nothing. A condition the cluster lacks has no status: In never matches
// it, NotIn always does.
func Matches(conds []policyv1alpha1.MatchCondition, status []metav1.Condition) bool {
	if len(conds) == 0 {
		return false
	}
	for _, mc := range conds {
		var have metav1.ConditionStatus
		if c := meta.FindStatusCondition(status, mc.ConditionType); c != nil {
			have = c.Status
		}
		in := have != "" && slices.Contains(mc.StatusValues, have)
		switch mc.Operator {
		case policyv1alpha1.MatchConditionOpIn:
			if !in {
				return false
			}
		case policyv1alpha1.MatchConditionOpNotIn:
			if in {
				return false
			}
		default:
			return false // refused by the webhook; never matches
		}
	}
	return true
}

// sameTaint: a policy's taint and a cluster's are the same taint when their
// key and effect are (as kubectl taint and Karmada treat them).
func sameTaint(p policyv1alpha1.Taint, c corev1.Taint) bool {
	return p.Key == c.Key && p.Effect == c.Effect
}

// Outcome is what the policies make of a cluster: its taints, and the
// record of those a policy added (ClusterTaintPolicyTaintsAnnotation).
type Outcome struct {
	Taints []corev1.Taint
	Record string
	// Changed says whether Taints or Record differ from the cluster's.
	Changed bool
}

// Apply returns the cluster's taints after the policies that target it:
// each policy whose addOnConditions match adds (or updates the value of)
// its taints; otherwise, when its removeOnConditions match, removes those
// of them a policy added (all of them on a cluster without a record, as
// before the record existed). Taints of no policy, and taints added by
// hand, are kept, in their order.
func Apply(cluster *clusterv1alpha1.Cluster, policies []policyv1alpha1.ClusterTaintPolicy, now time.Time) Outcome {
	taints := slices.Clone(cluster.Spec.Taints)
	was, recorded := cluster.Annotations[policyv1alpha1.ClusterTaintPolicyTaintsAnnotation]
	ours := map[string]bool{}
	for _, k := range strings.Split(was, ",") {
		if k != "" {
			ours[k] = true
		}
	}
	targets := func(p *policyv1alpha1.ClusterTaintPolicy) bool {
		return p.DeletionTimestamp.IsZero() && (p.Spec.TargetClusters == nil || clusteraffinity.Matches(p.Spec.TargetClusters, cluster))
	}
	if !recorded {
		// An earlier version's cluster: every taint a policy names is
		// taken for the policy's, as that version took it.
		for i := range policies {
			if !targets(&policies[i]) {
				continue
			}
			for _, pt := range policies[i].Spec.Taints {
				if slices.ContainsFunc(taints, func(c corev1.Taint) bool { return sameTaint(pt, c) }) {
					ours[recordKey(pt.Key, pt.Effect)] = true
				}
			}
		}
	}
	changed, targeted := false, false
	for i := range policies {
		p := &policies[i]
		if !targets(p) {
			continue
		}
		targeted = true
		switch {
		case Matches(p.Spec.AddOnConditions, cluster.Status.Conditions):
			for _, pt := range p.Spec.Taints {
				i := slices.IndexFunc(taints, func(c corev1.Taint) bool { return sameTaint(pt, c) })
				switch {
				case i < 0:
					taints = append(taints, corev1.Taint{Key: pt.Key, Value: pt.Value, Effect: pt.Effect, TimeAdded: &metav1.Time{Time: now.Truncate(time.Second)}})
					ours[recordKey(pt.Key, pt.Effect)] = true
					changed = true
				case taints[i].Value != pt.Value:
					taints[i].Value = pt.Value
					changed = true
				}
			}
		case Matches(p.Spec.RemoveOnConditions, cluster.Status.Conditions):
			before := len(taints)
			taints = slices.DeleteFunc(taints, func(c corev1.Taint) bool {
				return ours[recordKey(c.Key, c.Effect)] &&
					slices.ContainsFunc(p.Spec.Taints, func(pt policyv1alpha1.Taint) bool { return sameTaint(pt, c) })
			})
			changed = changed || len(taints) != before
		}
	}
	// The record names the policies' taints still there.
	var keep []string
	for _, t := range taints {
		if k := recordKey(t.Key, t.Effect); ours[k] && !slices.Contains(keep, k) {
			keep = append(keep, k)
		}
	}
	sort.Strings(keep)
	record := strings.Join(keep, ",")
	// A cluster no policy targets gets no record (it has no use for one).
	return Outcome{Taints: taints, Record: record, Changed: changed || (targeted && (!recorded || record != was))}
}

func recordKey(key string, effect corev1.TaintEffect) string { return key + ":" + string(effect) }

// Reconciler keeps each Cluster's policy taints in step with its
// conditions.
type Reconciler struct {
	Client   client.Client
	Recorder record.EventRecorder
	// Clock is the clock (the real one when nil); tests pass a fake.
	Clock clock.PassiveClock
}

// SetupWithManager watches Clusters, and ClusterTaintPolicies (a policy
// changed is looked at for every cluster).
func (r *Reconciler) SetupWithManager(mgr ctrl.Manager) error {
	return ctrl.NewControllerManagedBy(mgr).
		Named(ControllerName).
		For(&clusterv1alpha1.Cluster{}).
		Watches(&policyv1alpha1.ClusterTaintPolicy{}, handler.EnqueueRequestsFromMapFunc(r.allClusters)).
		WithOptions(queues.Options(2)).
		Complete(r)
}

func (r *Reconciler) allClusters(ctx context.Context, _ client.Object) []reconcile.Request {
	list := &clusterv1alpha1.ClusterList{}
	if err := r.Client.List(ctx, list); err != nil {
		ctrl.LoggerFrom(ctx).Error(err, "Listing clusters for a changed ClusterTaintPolicy")
		return nil
	}
	out := make([]reconcile.Request, 0, len(list.Items))
	for _, c := range list.Items {
		out = append(out, reconcile.Request{NamespacedName: types.NamespacedName{Name: c.Name}})
	}
	return out
}

// Reconcile applies every policy to one cluster.
func (r *Reconciler) Reconcile(ctx context.Context, req ctrl.Request) (ctrl.Result, error) {
	cluster := &clusterv1alpha1.Cluster{}
	if err := r.Client.Get(ctx, req.NamespacedName, cluster); err != nil {
		return ctrl.Result{}, client.IgnoreNotFound(err)
	}
	if !cluster.DeletionTimestamp.IsZero() {
		return ctrl.Result{}, nil
	}
	policies := &policyv1alpha1.ClusterTaintPolicyList{}
	if err := r.Client.List(ctx, policies); err != nil {
		return ctrl.Result{}, err
	}
	// A stable order: with two policies naming the same taint, the
	// outcome does not depend on the list's order.
	slices.SortFunc(policies.Items, func(a, b policyv1alpha1.ClusterTaintPolicy) int {
		switch {
		case a.Name < b.Name:
			return -1
		case a.Name > b.Name:
			return 1
		}
		return 0
	})
	now := time.Now
	if r.Clock != nil {
		now = r.Clock.Now
	}
	out := Apply(cluster, policies.Items, now())
	if !out.Changed {
		return ctrl.Result{}, nil
	}
	before, taints := taintKeys(cluster.Spec.Taints), out.Taints
	taintsChanged := !equality.Semantic.DeepEqual(cluster.Spec.Taints, taints)
	cluster.Spec.Taints = taints
	if cluster.Annotations == nil {
		cluster.Annotations = map[string]string{}
	}
	cluster.Annotations[policyv1alpha1.ClusterTaintPolicyTaintsAnnotation] = out.Record
	if err := r.Client.Update(ctx, cluster); err != nil {
		if !apierrors.IsConflict(err) {
			events.Warning(r.Recorder, cluster, events.TaintClusterFailed, "Failed to set taints %v: %v", taintKeys(taints), err)
		}
		return ctrl.Result{}, fmt.Errorf("updating taints of cluster %s: %w", cluster.Name, err)
	}
	if !taintsChanged {
		// Only the record was written (a cluster seen for the first time).
		return ctrl.Result{}, nil
	}
	events.Normal(r.Recorder, cluster, events.TaintClusterSucceed, "Set taints %v (were %v) by ClusterTaintPolicy", taintKeys(taints), before)
	ctrl.LoggerFrom(ctx).Info("Updated cluster taints by ClusterTaintPolicy", "cluster", cluster.Name, "taints", taintKeys(taints), "before", before)
	return ctrl.Result{}, nil
}

func taintKeys(ts []corev1.Taint) []string {
	out := make([]string, 0, len(ts))
	for _, t := range ts {
		s := t.Key
		if t.Value != "" {
			s += "=" + t.Value
		}
		out = append(out, s+":"+string(t.Effect))
	}
	return out
}
