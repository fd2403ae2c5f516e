//go:build e2e

package e2e

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	schedulingv1 "k8s.io/api/scheduling/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	policyv1alpha1 "github.com/karmada-go/karmada/api/policy/v1alpha1"
	workv1alpha2 "github.com/karmada-go/karmada/api/work/v1alpha2"
	"github.com/karmada-go/karmada/internal/testenv"
)

// A policy's schedulePriority names a PriorityClass: the template's binding
// carries the class's value in spec.schedulePriority (the scheduler's queue
// order; PriorityBasedScheduling is on by default). A class that does not
// exist yet holds the binding back, with the reason on the template, until
// it is created.
func TestSchedulePriorityFromPriorityClass(t *testing.T) {
	ctx := context.Background()
	c := karmadaClient(t)
	d := deploymentNamed("prioritized", 1)
	p := placementPolicy("prioritized", policyv1alpha1.Placement{ClusterAffinity: &policyv1alpha1.ClusterAffinity{ClusterNames: []string{"member1"}}})
	p.Spec.SchedulePriority = &policyv1alpha1.SchedulePriority{PriorityClassSource: policyv1alpha1.KubePriorityClass, PriorityClassName: "e2e-urgent"}
	createUntilCleanup(ctx, t, c, p, d)

	events := waitEvents(ctx, t, "Deployment", "default", "prioritized", "ApplyPolicyFailed")
	if m := events["ApplyPolicyFailed"]; !strings.Contains(m, `PriorityClass "e2e-urgent"`) || !strings.Contains(m, "not found") {
		t.Errorf("ApplyPolicyFailed says %q", m)
	}
	createUntilCleanup(ctx, t, c, &schedulingv1.PriorityClass{ObjectMeta: metav1.ObjectMeta{Name: "e2e-urgent"}, Value: 1000000})
	testenv.Eventually(t, 90*time.Second, "the binding at the class's priority", func(ctx context.Context) error {
		rb := &workv1alpha2.ResourceBinding{}
		if err := c.Get(ctx, client.ObjectKey{Namespace: "default", Name: "prioritized-deployment"}, rb); err != nil {
			return err
		}
		if rb.Spec.SchedulePriority == nil || rb.Spec.SchedulePriority.Priority != 1000000 {
			return fmt.Errorf("spec.schedulePriority %+v", rb.Spec.SchedulePriority)
		}
		return nil
	})
	waitMemberDeployment(ctx, t, "member1", "prioritized", 1)
}
