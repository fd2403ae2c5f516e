package integration

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	networkingv1 "k8s.io/api/networking/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/util/retry"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/manager"

	clusterv1alpha1 "github.com/karmada-go/karmada/api/cluster/v1alpha1"
	networkingv1alpha1 "github.com/karmada-go/karmada/api/networking/v1alpha1"
	remedyv1alpha1 "github.com/karmada-go/karmada/api/remedy/v1alpha1"
	workv1alpha2 "github.com/karmada-go/karmada/api/work/v1alpha2"
	"github.com/karmada-go/karmada/internal/clusters/remedy"
	"github.com/karmada-go/karmada/internal/names"
	"github.com/karmada-go/karmada/internal/services/ingress"
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

// A MultiClusterIngress's status says where each backend Service runs
// (its binding's clusters) and which of those clusters Remedy keeps traffic
// from (TrafficControl), following the Cluster's actions both ways.
func TestMultiClusterIngressTrafficBlockClusters(t *testing.T) {
	t.Parallel()
	env := testenv.Start(t)
	ctx := context.Background()
	c := env.Client
	env.RunManager(t, func(ctx context.Context, mgr manager.Manager) error {
		return (&ingress.Reconciler{Client: mgr.GetClient()}).SetupWithManager(mgr)
	})
	for _, name := range []string{"member1", "member2", "member3"} {
		if err := c.Create(ctx, &clusterv1alpha1.Cluster{ObjectMeta: metav1.ObjectMeta{Name: name}, Spec: clusterv1alpha1.ClusterSpec{SyncMode: clusterv1alpha1.Push}}); err != nil {
			t.Fatal(err)
		}
	}
	setActions := func(name string, actions ...string) {
		t.Helper()
		if err := retry.RetryOnConflict(retry.DefaultRetry, func() error {
			cl := &clusterv1alpha1.Cluster{}
			if err := c.Get(ctx, client.ObjectKey{Name: name}, cl); err != nil {
				return err
			}
			cl.Status.RemedyActions = actions
			return c.Status().Update(ctx, cl)
		}); err != nil {
			t.Fatal(err)
		}
	}
	createNamespace(ctx, t, c, "shop")
	rb := &workv1alpha2.ResourceBinding{ObjectMeta: metav1.ObjectMeta{Namespace: "shop", Name: names.BindingName("Service", "web")},
		Spec: workv1alpha2.ResourceBindingSpec{Resource: workv1alpha2.ObjectReference{APIVersion: "v1", Kind: "Service", Namespace: "shop", Name: "web"},
			Clusters: []workv1alpha2.TargetCluster{{Name: "member2"}, {Name: "member1"}}}}
	if err := c.Create(ctx, rb); err != nil {
		t.Fatal(err)
	}
	pathType := networkingv1.PathTypePrefix
	mci := &networkingv1alpha1.MultiClusterIngress{ObjectMeta: metav1.ObjectMeta{Namespace: "shop", Name: "front"},
		Spec: networkingv1.IngressSpec{Rules: []networkingv1.IngressRule{{Host: "shop.example", IngressRuleValue: networkingv1.IngressRuleValue{HTTP: &networkingv1.HTTPIngressRuleValue{
			Paths: []networkingv1.HTTPIngressPath{
				{Path: "/", PathType: &pathType, Backend: networkingv1.IngressBackend{Service: &networkingv1.IngressServiceBackend{Name: "web", Port: networkingv1.ServiceBackendPort{Number: 80}}}},
				{Path: "/cart", PathType: &pathType, Backend: networkingv1.IngressBackend{Service: &networkingv1.IngressServiceBackend{Name: "cart", Port: networkingv1.ServiceBackendPort{Number: 80}}}},
			}}}}}}}
	if err := c.Create(ctx, mci); err != nil {
		t.Fatal(err)
	}
	status := func(locations []networkingv1alpha1.ServiceLocation, blocked []string) func(context.Context) error {
		return func(ctx context.Context) error {
			got := &networkingv1alpha1.MultiClusterIngress{}
			if err := c.Get(ctx, client.ObjectKeyFromObject(mci), got); err != nil {
				return err
			}
			if !equality.Semantic.DeepEqual(got.Status.ServiceLocations, locations) || !slices.Equal(got.Status.TrafficBlockClusters, blocked) {
				return fmt.Errorf("serviceLocations %v, trafficBlockClusters %q; want %v, %q", got.Status.ServiceLocations, got.Status.TrafficBlockClusters, locations, blocked)
			}
			return nil
		}
	}
	// cart has no binding: it runs nowhere Karmada placed it.
	web := []networkingv1alpha1.ServiceLocation{{Name: "web", Clusters: []string{"member1", "member2"}}}
	testenv.Eventually(t, 20*time.Second, "web's clusters, nothing blocked", status(web, nil))
	traffic := string(remedyv1alpha1.TrafficControl)
	setActions("member3", traffic) // runs no backend
	setActions("member2", traffic)
	testenv.Eventually(t, 20*time.Second, "member2 blocked, member3 (no backend there) not", status(web, []string{"member2"}))
	setActions("member2")
	testenv.Eventually(t, 20*time.Second, "member2 unblocked", status(web, nil))
	// A status written by someone else (a tenant allowed to write it, say,
	// unblocking a cluster for the load balancer) is put right.
	setActions("member1", traffic)
	testenv.Eventually(t, 20*time.Second, "member1 blocked", status(web, []string{"member1"}))
	if err := retry.RetryOnConflict(retry.DefaultRetry, func() error {
		got := &networkingv1alpha1.MultiClusterIngress{}
		if err := c.Get(ctx, client.ObjectKeyFromObject(mci), got); err != nil {
			return err
		}
		got.Status.TrafficBlockClusters = nil
		return c.Status().Update(ctx, got)
	}); err != nil {
		t.Fatal(err)
	}
	testenv.Eventually(t, 20*time.Second, "the forged unblocking put right", status(web, []string{"member1"}))
	setActions("member1")
	testenv.Eventually(t, 20*time.Second, "member1 unblocked", status(web, nil))
	// The binding moves: the locations follow.
	if err := retry.RetryOnConflict(retry.DefaultRetry, func() error {
		if err := c.Get(ctx, client.ObjectKeyFromObject(rb), rb); err != nil {
			return err
		}
		rb.Spec.Clusters = append(rb.Spec.Clusters, workv1alpha2.TargetCluster{Name: "member3"})
		return c.Update(ctx, rb)
	}); err != nil {
		t.Fatal(err)
	}
	testenv.Eventually(t, 20*time.Second, "member3 added and blocked", status([]networkingv1alpha1.ServiceLocation{{Name: "web", Clusters: []string{"member1", "member2", "member3"}}}, []string{"member3"}))
}
