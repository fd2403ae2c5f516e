package integration

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/util/retry"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/manager"

	clusterv1alpha1 "github.com/karmada-go/karmada/api/cluster/v1alpha1"
	remedyv1alpha1 "github.com/karmada-go/karmada/api/remedy/v1alpha1"
	"github.com/karmada-go/karmada/internal/clusters/remedy"
	"github.com/karmada-go/karmada/internal/testenv"
)

// The remedy controller against a real API server: a cluster whose
// condition matches a Remedy gets its action, loses it when the condition
// clears or the Remedy goes; a Remedy without clusterAffinity applies to
// every cluster; an action written by someone else is put right; a
// Remedy with an unknown operator or action is refused with its field
// path.
func TestRemedyActions(t *testing.T) {
	t.Parallel()
	env := testenv.Start(t)
	ctx := context.Background()
	c := env.Client
	env.RunManager(t, func(ctx context.Context, mgr manager.Manager) error {
		return (&remedy.Reconciler{Client: mgr.GetClient()}).SetupWithManager(mgr)
	})
	for _, name := range []string{"member1", "member2"} {
		if err := c.Create(ctx, &clusterv1alpha1.Cluster{ObjectMeta: metav1.ObjectMeta{Name: name}, Spec: clusterv1alpha1.ClusterSpec{SyncMode: clusterv1alpha1.Push}}); err != nil {
			t.Fatal(err)
		}
		setReady(ctx, t, c, name, metav1.ConditionTrue)
	}
	setDNS := func(name string, status metav1.ConditionStatus) {
		t.Helper()
		if err := retry.RetryOnConflict(retry.DefaultRetry, func() error {
			cl := &clusterv1alpha1.Cluster{}
			if err := c.Get(ctx, client.ObjectKey{Name: name}, cl); err != nil {
				return err
			}
			meta.SetStatusCondition(&cl.Status.Conditions, metav1.Condition{Type: string(remedyv1alpha1.ServiceDomainNameResolutionReady), Status: status, Reason: "Test", Message: "set by the test"})
			return c.Status().Update(ctx, cl)
		}); err != nil {
			t.Fatal(err)
		}
	}
	actions := func(want map[string][]string) func(context.Context) error {
		return func(ctx context.Context) error {
			for name, w := range want {
				cl := &clusterv1alpha1.Cluster{}
				if err := c.Get(ctx, client.ObjectKey{Name: name}, cl); err != nil {
					return err
				}
				if !slices.Equal(cl.Status.RemedyActions, w) {
					return fmt.Errorf("%s: remedyActions %q, want %q", name, cl.Status.RemedyActions, w)
				}
			}
			return nil
		}
	}
	traffic := []string{string(remedyv1alpha1.TrafficControl)}

	// Refused with the field path and what is allowed.
	bad := &remedyv1alpha1.Remedy{ObjectMeta: metav1.ObjectMeta{Name: "bad"}, Spec: remedyv1alpha1.RemedySpec{
		DecisionMatches: []remedyv1alpha1.DecisionMatch{{ClusterConditionMatch: &remedyv1alpha1.ClusterConditionRequirement{ConditionType: "Ready", Operator: "In", ConditionStatus: "true"}}},
		Actions:         []remedyv1alpha1.RemedyAction{"Drain"}}}
	err := c.Create(ctx, bad)
	for _, want := range []string{`spec.decisionMatches[0].clusterConditionMatch.operator: Unsupported value: "In": supported values: "Equal", "NotEqual"`,
		`spec.decisionMatches[0].clusterConditionMatch.conditionStatus: Unsupported value: "true"`, `spec.actions[0]: Unsupported value: "Drain"`} {
		if !apierrors.IsInvalid(err) || !strings.Contains(err.Error(), want) {
			t.Errorf("a bad Remedy: %v, want refused with %q", err, want)
		}
	}

	dnsDown := &remedyv1alpha1.Remedy{ObjectMeta: metav1.ObjectMeta{Name: "dns-down"}, Spec: remedyv1alpha1.RemedySpec{
		ClusterAffinity: &remedyv1alpha1.ClusterAffinity{ClusterNames: []string{"member1"}},
		DecisionMatches: []remedyv1alpha1.DecisionMatch{{ClusterConditionMatch: &remedyv1alpha1.ClusterConditionRequirement{
			ConditionType: remedyv1alpha1.ServiceDomainNameResolutionReady, Operator: remedyv1alpha1.ClusterConditionEqual, ConditionStatus: "False"}}},
		Actions: []remedyv1alpha1.RemedyAction{remedyv1alpha1.TrafficControl}}}
	if err := c.Create(ctx, dnsDown); err != nil {
		t.Fatal(err)
	}
	// Without the condition, nothing.
	testenv.Consistently(t, 2*time.Second, "no actions while no cluster has the condition", actions(map[string][]string{"member1": nil, "member2": nil}))
	setDNS("member1", metav1.ConditionFalse)
	setDNS("member2", metav1.ConditionFalse)
	testenv.Eventually(t, 20*time.Second, "member1 (selected, matching) traffic-controlled; member2 (not selected) not", actions(map[string][]string{"member1": traffic, "member2": nil}))
	setDNS("member1", metav1.ConditionTrue)
	testenv.Eventually(t, 20*time.Second, "the action gone with the condition", actions(map[string][]string{"member1": nil}))

	// Someone else's write is put right.
	setDNS("member1", metav1.ConditionFalse)
	testenv.Eventually(t, 20*time.Second, "the action back", actions(map[string][]string{"member1": traffic}))
	if err := retry.RetryOnConflict(retry.DefaultRetry, func() error {
		cl := &clusterv1alpha1.Cluster{}
		if err := c.Get(ctx, client.ObjectKey{Name: "member1"}, cl); err != nil {
			return err
		}
		cl.Status.RemedyActions = nil
		return c.Status().Update(ctx, cl)
	}); err != nil {
		t.Fatal(err)
	}
	testenv.Eventually(t, 20*time.Second, "an action cleared by hand written again", actions(map[string][]string{"member1": traffic}))

	// Every cluster: a Remedy without clusterAffinity.
	everywhere := dnsDown.DeepCopy()
	everywhere.ObjectMeta = metav1.ObjectMeta{Name: "dns-down-everywhere"}
	everywhere.Spec.ClusterAffinity = nil
	if err := c.Create(ctx, everywhere); err != nil {
		t.Fatal(err)
	}
	testenv.Eventually(t, 20*time.Second, "both clusters traffic-controlled, the action once", actions(map[string][]string{"member1": traffic, "member2": traffic}))
	// The Remedies go: so do the actions.
	for _, r := range []*remedyv1alpha1.Remedy{dnsDown, everywhere} {
		if err := c.Delete(ctx, r); err != nil {
			t.Fatal(err)
		}
	}
	testenv.Eventually(t, 20*time.Second, "no actions once the Remedies are deleted", actions(map[string][]string{"member1": nil, "member2": nil}))
}
