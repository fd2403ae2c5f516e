//go:build e2e

package e2e

import (
	"context"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"k8s.io/apimachinery/pkg/api/equality"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/util/wait"
	"sigs.k8s.io/controller-runtime/pkg/client"

	policyv1alpha1 "github.com/karmada-go/karmada/api/policy/v1alpha1"
	workv1alpha1 "github.com/karmada-go/karmada/api/work/v1alpha1"
	workv1alpha2 "github.com/karmada-go/karmada/api/work/v1alpha2"
)

// A v1alpha1 client reads a binding the controllers wrote as v1alpha2 with
// every field: those v1alpha1 has map one to one, the rest ride in the
// conversion annotation; a write through v1alpha1 loses none of them.
func TestV1alpha1ClientReadsBinding(t *testing.T) {
	ctx := context.Background()
	c := karmadaClient(t)
	d := deploymentNamed("old-client", 3)
	propagate(ctx, t, d, policyv1alpha1.Placement{
		ClusterAffinity:   &policyv1alpha1.ClusterAffinity{ClusterNames: []string{"member1", "member2"}},
		ReplicaScheduling: &policyv1alpha1.ReplicaSchedulingStrategy{ReplicaSchedulingType: policyv1alpha1.ReplicaSchedulingTypeDivided},
	})
	rb := waitScheduled(ctx, t, "old-client", 3)

	old := &workv1alpha1.ResourceBinding{}
	if err := c.Get(ctx, client.ObjectKeyFromObject(rb), old); err != nil {
		t.Fatalf("reading the binding as v1alpha1: %v", err)
	}
	if old.Spec.Resource.Name != "old-client" || old.Spec.Resource.Replicas != rb.Spec.Replicas || len(old.Spec.Clusters) != len(rb.Spec.Clusters) {
		t.Fatalf("v1alpha1 spec %+v does not match v1alpha2 spec %+v", old.Spec, rb.Spec)
	}
	if old.Annotations[workv1alpha2.ConversionAnnotation] == "" {
		t.Fatalf("v1alpha1 has no %s annotation holding the v1alpha2 fields", workv1alpha2.ConversionAnnotation)
	}
	// Converting what the v1alpha1 client read gives back the stored
	// object's spec, every field.
	back := &workv1alpha2.ResourceBinding{}
	if err := back.ConvertFrom(old); err != nil {
		t.Fatal(err)
	}
	if !equality.Semantic.DeepEqual(back.Spec, rb.Spec) {
		t.Fatalf("v1alpha1 lost fields of the spec (-v1alpha2 +via v1alpha1):\n%s", cmp.Diff(rb.Spec, back.Spec))
	}

	// A label written through v1alpha1 keeps every v1alpha2 field.
	err := wait.PollUntilContextTimeout(ctx, 200*time.Millisecond, 20*time.Second, true, func(ctx context.Context) (bool, error) {
		u := &unstructured.Unstructured{}
		u.SetAPIVersion("work.karmada.io/v1alpha1")
		u.SetKind("ResourceBinding")
		if err := c.Get(ctx, client.ObjectKeyFromObject(rb), u); err != nil {
			return false, err
		}
		labels := u.GetLabels()
		labels["e2e.karmada.io/touched-by"] = "v1alpha1"
		u.SetLabels(labels)
		if err := c.Update(ctx, u); err != nil {
			return false, nil // a controller wrote in between: read again
		}
		return true, nil
	})
	if err != nil {
		t.Fatalf("updating through v1alpha1: %v", err)
	}
	now := &workv1alpha2.ResourceBinding{}
	if err := c.Get(ctx, client.ObjectKeyFromObject(rb), now); err != nil {
		t.Fatal(err)
	}
	if now.Labels["e2e.karmada.io/touched-by"] != "v1alpha1" || now.Annotations[workv1alpha2.ConversionAnnotation] != "" {
		t.Fatalf("after the v1alpha1 write: labels %v, annotations %v", now.Labels, now.Annotations)
	}
	if now.Spec.Placement == nil || now.Spec.SchedulerName != rb.Spec.SchedulerName || now.Spec.Resource.UID != rb.Spec.Resource.UID ||
		now.Status.SchedulerObservedGeneration == 0 {
		spec, _ := json.Marshal(now.Spec)
		t.Fatalf("a v1alpha1 write lost v1alpha2 fields: %s", spec)
	}
}

// With karmada-webhook down, writes of Karmada kinds fail (failurePolicy
// Fail: nothing is admitted unchecked) while reads keep working; writes
// work again once it is back.
func TestWebhookDownFailsClosed(t *testing.T) {
	ctx := context.Background()
	c := karmadaClient(t)
	if out, err := karmadaLocal("component", "stop", "karmada-webhook"); err != nil {
		t.Fatalf("stopping karmada-webhook: %v\n%s", err, out)
	}
	restarted := false
	restart := func() {
		if restarted {
			return
		}
		restarted = true
		if out, err := karmadaLocal("component", "start", "karmada-webhook"); err != nil {
			t.Fatalf("starting karmada-webhook: %v\n%s", err, out)
		}
	}
	t.Cleanup(restart)

	p := placementPolicy("closed", policyv1alpha1.Placement{ClusterAffinity: &policyv1alpha1.ClusterAffinity{ClusterNames: []string{"member1"}}})
	err := c.Create(ctx, p)
	if err == nil {
		_ = c.Delete(ctx, p)
		t.Fatal("a PropagationPolicy was admitted with the webhook down")
	}
	if !strings.Contains(err.Error(), "failed calling webhook") {
		t.Fatalf("want the API server's webhook failure, got %v", err)
	}
	if err := c.List(ctx, &policyv1alpha1.PropagationPolicyList{}); err != nil {
		t.Errorf("listing policies with the webhook down: %v", err)
	}
	if err := c.List(ctx, &workv1alpha2.ResourceBindingList{}); err != nil {
		t.Errorf("listing bindings with the webhook down: %v", err)
	}

	restart()
	if err := c.Create(ctx, p); err != nil {
		t.Fatalf("creating the policy with the webhook back: %v", err)
	}
	t.Cleanup(func() { _ = c.Delete(context.Background(), p) })
	if p.Labels[policyv1alpha1.PropagationPolicyPermanentIDLabel] == "" {
		t.Errorf("the policy was not defaulted: labels %v", p.Labels)
	}
}

// The webhook's denials name the field path, the value and what is
// allowed, for a user's kubectl as much as for a client.
func TestWebhookDeniesInvalidPolicy(t *testing.T) {
	ctx := context.Background()
	c := karmadaClient(t)
	p := placementPolicy("bad-spread", policyv1alpha1.Placement{SpreadConstraints: []policyv1alpha1.SpreadConstraint{
		{SpreadByField: policyv1alpha1.SpreadByFieldRegion, MinGroups: 2, MaxGroups: 1},
	}})
	err := c.Create(ctx, p)
	if err == nil {
		_ = c.Delete(ctx, p)
		t.Fatal("an invalid policy was admitted")
	}
	for _, want := range []string{
		`spec.placement.spreadConstraints[0].maxGroups: Invalid value: 1: must be greater than or equal to minGroups (2)`,
		`spec.placement.spreadConstraints: Invalid value: "spreadByField region": a constraint with spreadByField: cluster is required`,
	} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("denial %q\nlacks %q", err, want)
		}
	}
}
