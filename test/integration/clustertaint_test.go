package integration

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/manager"

	clusterv1alpha1 "github.com/karmada-go/karmada/api/cluster/v1alpha1"
	policyv1alpha1 "github.com/karmada-go/karmada/api/policy/v1alpha1"
	"github.com/karmada-go/karmada/internal/clusters/clustertaint"
	"github.com/karmada-go/karmada/internal/testenv"
)

// The clusterTaintPolicy controller against a real API server: a target
// cluster whose Ready condition is not True gets the policy's taints (its
// own taint kept), loses them when Ready again; a cluster the policy does
// not target is left alone; a policy created after the fact applies to the
// clusters already there; deleting a policy leaves its taints.
func TestClusterTaintPolicy(t *testing.T) {
	t.Parallel()
	env := testenv.Start(t)
	ctx := context.Background()
	c := env.Client
	env.RunManager(t, func(ctx context.Context, mgr manager.Manager) error {
		return (&clustertaint.Reconciler{Client: mgr.GetClient()}).SetupWithManager(mgr)
	})
	own := corev1.Taint{Key: "dedicated", Value: "gpu", Effect: corev1.TaintEffectNoSchedule}
	for _, name := range []string{"member1", "member2"} {
		cl := &clusterv1alpha1.Cluster{ObjectMeta: metav1.ObjectMeta{Name: name}, Spec: clusterv1alpha1.ClusterSpec{SyncMode: clusterv1alpha1.Push, Taints: []corev1.Taint{own}}}
		if err := c.Create(ctx, cl); err != nil {
			t.Fatal(err)
		}
		setReady(ctx, t, c, name, metav1.ConditionFalse)
	}
	policy := &policyv1alpha1.ClusterTaintPolicy{
		ObjectMeta: metav1.ObjectMeta{Name: "not-ready"},
		Spec: policyv1alpha1.ClusterTaintPolicySpec{
			TargetClusters:     &policyv1alpha1.ClusterAffinity{ClusterNames: []string{"member1"}},
			AddOnConditions:    []policyv1alpha1.MatchCondition{{ConditionType: "Ready", Operator: policyv1alpha1.MatchConditionOpNotIn, StatusValues: []metav1.ConditionStatus{metav1.ConditionTrue}}},
			RemoveOnConditions: []policyv1alpha1.MatchCondition{{ConditionType: "Ready", Operator: policyv1alpha1.MatchConditionOpIn, StatusValues: []metav1.ConditionStatus{metav1.ConditionTrue}}},
			Taints:             []policyv1alpha1.Taint{{Key: "failover.example.com/not-ready", Effect: corev1.TaintEffectNoExecute}},
		},
	}
	if err := c.Create(ctx, policy); err != nil {
		t.Fatal(err)
	}
	taints := func(name string) string {
		cl := &clusterv1alpha1.Cluster{}
		if err := c.Get(ctx, client.ObjectKey{Name: name}, cl); err != nil {
			t.Fatal(err)
		}
		var out []string
		for _, t := range cl.Spec.Taints {
			out = append(out, t.Key+":"+string(t.Effect))
		}
		slices.Sort(out)
		return strings.Join(out, ",")
	}
	want := func(what, name, expected string) {
		t.Helper()
		testenv.Eventually(t, 20*time.Second, what, func(context.Context) error {
			if got := taints(name); got != expected {
				return fmt.Errorf("%s has taints %s, want %s", name, got, expected)
			}
			return nil
		})
	}
	want("the policy's taint on the NotReady target", "member1", "dedicated:NoSchedule,failover.example.com/not-ready:NoExecute")
	setReady(ctx, t, c, "member1", metav1.ConditionTrue)
	want("the policy's taint gone when Ready", "member1", "dedicated:NoSchedule")
	setReady(ctx, t, c, "member1", metav1.ConditionUnknown)
	want("the taint back when Unknown", "member1", "dedicated:NoSchedule,failover.example.com/not-ready:NoExecute")
	// member2 is not a target, whatever its condition.
	if got := taints("member2"); got != "dedicated:NoSchedule" {
		t.Errorf("member2, not a target, has taints %s", got)
	}
	// Deleting the policy leaves its taint, whatever happens next.
	if err := c.Delete(ctx, policy); err != nil {
		t.Fatal(err)
	}
	setReady(ctx, t, c, "member1", metav1.ConditionTrue)
	// Nothing to wait for but a change that must not come: a second
	// policy's effect shows that the controller did look again.
	second := policy.DeepCopy()
	second.ObjectMeta = metav1.ObjectMeta{Name: "member2-not-ready"}
	second.Spec.TargetClusters = &policyv1alpha1.ClusterAffinity{ClusterNames: []string{"member2"}}
	if err := c.Create(ctx, second); err != nil {
		t.Fatal(err)
	}
	want("a policy created later applies to a cluster already NotReady", "member2", "dedicated:NoSchedule,failover.example.com/not-ready:NoExecute")
	if got := taints("member1"); got != "dedicated:NoSchedule,failover.example.com/not-ready:NoExecute" {
		t.Errorf("member1 after its policy was deleted and it turned Ready: taints %s, want the deleted policy's taint kept", got)
	}
}
