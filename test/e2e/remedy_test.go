//go:build e2e

package e2e

import (
	"context"
	"fmt"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/util/retry"
	"sigs.k8s.io/controller-runtime/pkg/client"

	clusterv1alpha1 "github.com/karmada-go/karmada/api/cluster/v1alpha1"
	networkingv1alpha1 "github.com/karmada-go/karmada/api/networking/v1alpha1"
	policyv1alpha1 "github.com/karmada-go/karmada/api/policy/v1alpha1"
	remedyv1alpha1 "github.com/karmada-go/karmada/api/remedy/v1alpha1"
	"github.com/karmada-go/karmada/internal/testenv"
)

// setClusterCondition sets (status != "") or removes a condition of the
// Cluster's status, as a detector in the member would.
func setClusterCondition(ctx context.Context, t *testing.T, c client.Client, cluster, typ string, status metav1.ConditionStatus) {
	t.Helper()
	if err := retry.RetryOnConflict(retry.DefaultRetry, func() error {
		cl := &clusterv1alpha1.Cluster{}
		if err := c.Get(ctx, client.ObjectKey{Name: cluster}, cl); err != nil {
			return err
		}
		if status == "" {
			meta.RemoveStatusCondition(&cl.Status.Conditions, typ)
		} else {
			meta.SetStatusCondition(&cl.Status.Conditions, metav1.Condition{Type: typ, Status: status, Reason: "E2E", Message: "set by the e2e test"})
		}
		return c.Status().Update(ctx, cl)
	}); err != nil {
		t.Fatal(err)
	}
}

func remedyActions(ctx context.Context, c client.Client, cluster string, want ...string) error {
	cl := &clusterv1alpha1.Cluster{}
	if err := c.Get(ctx, client.ObjectKey{Name: cluster}, cl); err != nil {
		return err
	}
	if !slices.Equal(cl.Status.RemedyActions, want) {
		return fmt.Errorf("%s: remedyActions %q, want %q", cluster, cl.Status.RemedyActions, want)
	}
	return nil
}

// A Remedy, as the example users read has it: while member1's
// ServiceDomainNameResolutionReady condition is False, member1 gets
// TrafficControl and the consumer of a MultiClusterService loses
// member1's endpoints (keeping member3's); when the condition clears, the
// action goes and the endpoints come back; deleting the Remedy removes
// an action in force.
func TestRemedyTrafficControl(t *testing.T) {
	ctx := context.Background()
	c := karmadaClient(t)
	const ns = "e2e-remedy"
	const dns = string(remedyv1alpha1.ServiceDomainNameResolutionReady)
	createNamespaceUntilCleanup(ctx, t, c, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}})
	d, svc := serveApp(ns, 2)
	pp := &policyv1alpha1.PropagationPolicy{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "serve"},
		Spec: policyv1alpha1.PropagationSpec{ResourceSelectors: []policyv1alpha1.ResourceSelector{{APIVersion: "apps/v1", Kind: "Deployment", Name: "serve"}},
			Placement: policyv1alpha1.Placement{ClusterAffinity: &policyv1alpha1.ClusterAffinity{ClusterNames: []string{"member1", "member3"}}}}}
	m := &networkingv1alpha1.MultiClusterService{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "serve"},
		Spec: networkingv1alpha1.MultiClusterServiceSpec{Types: []networkingv1alpha1.ExposureType{networkingv1alpha1.ExposureTypeCrossCluster},
			ProviderClusters: []networkingv1alpha1.ClusterSelector{{Name: "member1"}, {Name: "member3"}},
			ConsumerClusters: []networkingv1alpha1.ClusterSelector{{Name: "member2"}}}}
	createUntilCleanup(ctx, t, c, d, svc, pp, m)
	mcsEndpoints(ctx, t, ns, "member2", 4, "member1", "member3")

	kubectlApply(t, "apply", "-f", filepath.Join("..", "..", "examples", "remedy", "traffic-control.yaml"))
	remedy := &remedyv1alpha1.Remedy{ObjectMeta: metav1.ObjectMeta{Name: "dns-down"}}
	t.Cleanup(func() {
		deleteAll(t, c, remedy)
		setClusterCondition(context.Background(), t, c, "member1", dns, "")
		testenv.Eventually(t, 30*time.Second, "member1 without remedy actions", func(ctx context.Context) error { return remedyActions(ctx, c, "member1") })
	})
	testenv.Consistently(t, 2*time.Second, "no action while member1 has no such condition", func(ctx context.Context) error { return remedyActions(ctx, c, "member1") })

	setClusterCondition(ctx, t, c, "member1", dns, metav1.ConditionFalse)
	testenv.Eventually(t, 30*time.Second, "member1 traffic-controlled", func(ctx context.Context) error {
		return remedyActions(ctx, c, "member1", string(remedyv1alpha1.TrafficControl))
	})
	mcsEndpoints(ctx, t, ns, "member2", 2, "member3")
	if _, names, err := importedAddresses(ctx, t, "member2", ns, "serve"); err != nil || slices.ContainsFunc(names, func(n string) bool { return strings.HasPrefix(n, "member1-") }) {
		t.Errorf("member2's slices %v (err %v): member1's still dispatched", names, err)
	}
	// Another cluster, with the same condition, is not selected.
	if err := remedyActions(ctx, c, "member3"); err != nil {
		t.Error(err)
	}

	setClusterCondition(ctx, t, c, "member1", dns, metav1.ConditionTrue)
	testenv.Eventually(t, 30*time.Second, "the action gone with the condition", func(ctx context.Context) error { return remedyActions(ctx, c, "member1") })
	mcsEndpoints(ctx, t, ns, "member2", 4, "member1", "member3")

	// The Remedy goes while its action is in force: so does the action.
	setClusterCondition(ctx, t, c, "member1", dns, metav1.ConditionFalse)
	testenv.Eventually(t, 30*time.Second, "member1 traffic-controlled again", func(ctx context.Context) error {
		return remedyActions(ctx, c, "member1", string(remedyv1alpha1.TrafficControl))
	})
	deleteAll(t, c, remedy)
	testenv.Eventually(t, 30*time.Second, "the action gone with the Remedy", func(ctx context.Context) error { return remedyActions(ctx, c, "member1") })
	mcsEndpoints(ctx, t, ns, "member2", 4, "member1", "member3")
}
