//go:build e2e

package e2e

import (
	"context"
	"fmt"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/util/retry"
	"sigs.k8s.io/controller-runtime/pkg/client"

	policyv1alpha1 "github.com/karmada-go/karmada/api/policy/v1alpha1"
	workv1alpha2 "github.com/karmada-go/karmada/api/work/v1alpha2"
	"github.com/karmada-go/karmada/internal/testenv"
)

// A Lazy policy (activationPreference: Lazy): a template created after it
// propagates at once; a change of the policy reaches the template only when
// the template itself next changes; and a template that was there before
// the policy gets no binding until it changes.
func TestLazyPolicyActivatesOnTemplateChange(t *testing.T) {
	ctx := context.Background()
	c := karmadaClient(t)
	to := func(member string) policyv1alpha1.Placement {
		return policyv1alpha1.Placement{ClusterAffinity: &policyv1alpha1.ClusterAffinity{ClusterNames: []string{member}}}
	}
	// A template that was there before the policy.
	before := deploymentNamed("lazy-before", 1)
	createUntilCleanup(ctx, t, c, before)
	// Creation times are in seconds: the policy is created in a later one
	// than the template, as it would be in any real sequence.
	testenv.Eventually(t, 5*time.Second, "a second later than the template's creation", func(context.Context) error {
		if !before.CreationTimestamp.Before(&metav1.Time{Time: time.Now().Truncate(time.Second)}) {
			return fmt.Errorf("still %s", before.CreationTimestamp)
		}
		return nil
	})
	p := placementPolicy("lazy", to("member1"))
	p.Spec.ResourceSelectors = []policyv1alpha1.ResourceSelector{
		{APIVersion: "apps/v1", Kind: "Deployment", Name: "lazy"}, {APIVersion: "apps/v1", Kind: "Deployment", Name: "lazy-before"}}
	p.Spec.ActivationPreference = policyv1alpha1.LazyActivation
	createUntilCleanup(ctx, t, c, p)
	// The template created after the lazy policy: at once.
	createUntilCleanup(ctx, t, c, deploymentNamed("lazy", 1))
	waitMemberDeployment(ctx, t, "member1", "lazy", 1)

	// The template from before is claimed but gets no binding.
	testenv.Eventually(t, 30*time.Second, "lazy-before claimed", func(ctx context.Context) error {
		d := &appsv1.Deployment{}
		if err := c.Get(ctx, client.ObjectKeyFromObject(before), d); err != nil {
			return err
		}
		if d.Annotations[policyv1alpha1.PropagationPolicyNameAnnotation] != "lazy" {
			return fmt.Errorf("annotations %v", d.Annotations)
		}
		return nil
	})
	noBinding := func(ctx context.Context) error {
		err := c.Get(ctx, client.ObjectKey{Namespace: "default", Name: "lazy-before-deployment"}, &workv1alpha2.ResourceBinding{})
		if !apierrors.IsNotFound(err) {
			return fmt.Errorf("the binding of lazy-before: %v", err)
		}
		return nil
	}
	testenv.Consistently(t, 3*time.Second, "no binding for the template from before", noBinding)

	// The policy now places on member2: nothing moves.
	if err := retry.RetryOnConflict(retry.DefaultRetry, func() error {
		if err := c.Get(ctx, client.ObjectKeyFromObject(p), p); err != nil {
			return err
		}
		p.Spec.Placement = to("member2")
		return c.Update(ctx, p)
	}); err != nil {
		t.Fatal(err)
	}
	testenv.Consistently(t, 5*time.Second, "lazy stays in member1", func(ctx context.Context) error {
		rb := &workv1alpha2.ResourceBinding{}
		if err := c.Get(ctx, client.ObjectKey{Namespace: "default", Name: "lazy-deployment"}, rb); err != nil {
			return err
		}
		if rb.Spec.Placement == nil || rb.Spec.Placement.ClusterAffinity == nil || fmt.Sprint(rb.Spec.Placement.ClusterAffinity.ClusterNames) != "[member1]" {
			return fmt.Errorf("the binding's placement changed: %+v", rb.Spec.Placement)
		}
		return noBinding(ctx)
	})

	// Each template changes: the policy's placement reaches it.
	for _, name := range []string{"lazy", "lazy-before"} {
		if err := retry.RetryOnConflict(retry.DefaultRetry, func() error {
			d := &appsv1.Deployment{}
			if err := c.Get(ctx, client.ObjectKey{Namespace: "default", Name: name}, d); err != nil {
				return err
			}
			d.Labels = map[string]string{"e2e.karmada.io/touched": "yes"}
			return c.Update(ctx, d)
		}); err != nil {
			t.Fatal(err)
		}
		waitMemberDeployment(ctx, t, "member2", name, 1)
	}
	waitMemberDeployment(ctx, t, "member1", "lazy", -1)
	if _, err := kube(t, "member1").AppsV1().Deployments("default").Get(ctx, "lazy-before", metav1.GetOptions{}); !apierrors.IsNotFound(err) {
		t.Errorf("lazy-before in member1: %v", err)
	}
}
