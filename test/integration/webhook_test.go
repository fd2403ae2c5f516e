package integration

import (
	"context"
	"encoding/json"
	"errors"
	"regexp"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/controller-runtime/pkg/client"

	policyv1alpha1 "github.com/karmada-go/karmada/api/policy/v1alpha1"
	workv1alpha1 "github.com/karmada-go/karmada/api/work/v1alpha1"
	workv1alpha2 "github.com/karmada-go/karmada/api/work/v1alpha2"
	"github.com/karmada-go/karmada/internal/testenv"
)

// TestWebhook runs karmada-webhook against a real API server, registered as
// karmada-local registers it.
func TestWebhook(t *testing.T) {
	t.Parallel()
	env := testenv.Start(t)
	env.StartWebhook(t)
	ctx := context.Background()
	c := env.Client

	t.Run("create and update are denied with the field path", func(t *testing.T) {
		p := &policyv1alpha1.PropagationPolicy{
			ObjectMeta: metav1.ObjectMeta{Name: "spread", Namespace: "default"},
			Spec: policyv1alpha1.PropagationSpec{
				ResourceSelectors: []policyv1alpha1.ResourceSelector{{APIVersion: "apps/v1", Kind: "Deployment"}},
				Placement: policyv1alpha1.Placement{SpreadConstraints: []policyv1alpha1.SpreadConstraint{
					{SpreadByField: policyv1alpha1.SpreadByFieldCluster, MinGroups: 3, MaxGroups: 2}}},
			},
		}
		err := c.Create(ctx, p)
		wantInvalid(t, err, "spec.placement.spreadConstraints[0].maxGroups", `Invalid value: 2: must be greater than or equal to minGroups (3)`)

		p.Spec.Placement.SpreadConstraints[0].MinGroups = 1
		if err := c.Create(ctx, p); err != nil {
			t.Fatalf("a valid policy was denied: %v", err)
		}
		p.Spec.ResourceSelectors[0].Namespace = "kube-system"
		wantInvalid(t, c.Update(ctx, p), "spec.resourceSelectors[0].namespace",
			`Invalid value: "kube-system": must be empty or "default": a namespaced policy selects templates of its own namespace only`)
	})

	t.Run("an override of the namespace is denied", func(t *testing.T) {
		raw := []byte(`{"apiVersion":"policy.karmada.io/v1alpha1","kind":"OverridePolicy","metadata":{"name":"evil","namespace":"default"},
			"spec":{"resourceSelectors":[{"apiVersion":"apps/v1","kind":"Deployment"}],
			"overrideRules":[{"overriders":{"plaintext":[{"path":"/metadata/namespace","operator":"replace","value":"kube-system"}]}}]}}`)
		u := &unstructured.Unstructured{}
		if err := json.Unmarshal(raw, &u.Object); err != nil {
			t.Fatal(err)
		}
		wantInvalid(t, c.Create(ctx, u), "spec.overrideRules[0].overriders.plaintext[0].path", `Forbidden: "/metadata/namespace" would change metadata.namespace`)
	})

	t.Run("a binding of another namespace's object is denied", func(t *testing.T) {
		rb := &workv1alpha2.ResourceBinding{
			ObjectMeta: metav1.ObjectMeta{Name: "steal", Namespace: "default"},
			Spec: workv1alpha2.ResourceBindingSpec{Resource: workv1alpha2.ObjectReference{APIVersion: "v1", Kind: "Secret", Namespace: "karmada-cluster", Name: "member1"},
				Clusters: []workv1alpha2.TargetCluster{{Name: "member1"}}},
		}
		wantInvalid(t, c.Create(ctx, rb), "spec.resource.namespace", `Invalid value: "karmada-cluster": must be "default"`)
	})

	// Created with the required fields only, a policy reads back as from
	// upstream Karmada: the CRD's defaults, the selector's namespace, a
	// placement with the default NoExecute tolerations (300 s) and a
	// permanent id (Karmada's finalizer aside).
	t.Run("a minimal policy reads back with Karmada's defaults", func(t *testing.T) {
		u := &unstructured.Unstructured{Object: map[string]any{
			"apiVersion": "policy.karmada.io/v1alpha1", "kind": "PropagationPolicy",
			"metadata": map[string]any{"name": "minimal", "namespace": "default"},
			"spec":     map[string]any{"resourceSelectors": []any{map[string]any{"apiVersion": "apps/v1", "kind": "Deployment"}}},
		}}
		if err := c.Create(ctx, u); err != nil {
			t.Fatal(err)
		}
		got := &unstructured.Unstructured{}
		got.SetGroupVersionKind(u.GroupVersionKind())
		if err := c.Get(ctx, client.ObjectKeyFromObject(u), got); err != nil {
			t.Fatal(err)
		}
		id := got.GetLabels()[policyv1alpha1.PropagationPolicyPermanentIDLabel]
		if !regexp.MustCompile(`^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$`).MatchString(id) {
			t.Errorf("permanent id %q is not a UUID", id)
		}
		var want map[string]any
		if err := json.Unmarshal([]byte(`{"resourceSelectors":[{"apiVersion":"apps/v1","kind":"Deployment","namespace":"default"}],
			"placement":{"clusterTolerations":[
				{"key":"cluster.karmada.io/not-ready","operator":"Exists","effect":"NoExecute","tolerationSeconds":300},
				{"key":"cluster.karmada.io/unreachable","operator":"Exists","effect":"NoExecute","tolerationSeconds":300}]},
			"conflictResolution":"Abort","preemption":"Never","priority":0,"schedulerName":"default-scheduler"}`), &want); err != nil {
			t.Fatal(err)
		}
		var spec map[string]any
		if data, err := json.Marshal(got.Object["spec"]); err != nil || json.Unmarshal(data, &spec) != nil {
			t.Fatal(err)
		}
		if diff := cmp.Diff(want, spec); diff != "" {
			t.Errorf("spec read back (-upstream +ours):\n%s", diff)
		}
	})

	// Every field of a v1alpha2 binding survives a v1alpha1 client's read
	// and write, and a binding written as v1alpha1 is stored as v1alpha2.
	t.Run("conversion keeps every field", func(t *testing.T) {
		var rb *workv1alpha2.ResourceBinding
		for _, obj := range testenv.CoreObjects("default", "-conv") {
			if b, ok := obj.(*workv1alpha2.ResourceBinding); ok {
				rb = b
			}
		}
		if err := c.Create(ctx, rb); err != nil {
			t.Fatal(err)
		}
		rb.Status.SchedulerObservedGeneration = 7
		rb.Status.AggregatedStatus = []workv1alpha2.AggregatedStatusItem{{ClusterName: "member1", Applied: true, Health: workv1alpha1.ResourceHealthy}}
		if err := c.Status().Update(ctx, rb); err != nil {
			t.Fatal(err)
		}
		want := &workv1alpha2.ResourceBinding{}
		if err := c.Get(ctx, client.ObjectKeyFromObject(rb), want); err != nil {
			t.Fatal(err)
		}

		old := &workv1alpha1.ResourceBinding{}
		if err := c.Get(ctx, client.ObjectKeyFromObject(rb), old); err != nil {
			t.Fatalf("reading as v1alpha1: %v", err)
		}
		if old.Spec.Resource.Replicas != want.Spec.Replicas || old.Spec.Resource.ReplicaResourceRequirements.Cpu().Cmp(*want.Spec.ReplicaRequirements.ResourceRequest.Cpu()) != 0 {
			t.Errorf("v1alpha1 resource %+v does not carry replicas and requests of %+v", old.Spec.Resource, want.Spec)
		}
		old.Labels["touched"] = "v1alpha1"
		if err := c.Update(ctx, old); err != nil {
			t.Fatalf("writing as v1alpha1: %v", err)
		}
		got := &workv1alpha2.ResourceBinding{}
		if err := c.Get(ctx, client.ObjectKeyFromObject(rb), got); err != nil {
			t.Fatal(err)
		}
		if !equality.Semantic.DeepEqual(got.Spec, want.Spec) || !equality.Semantic.DeepEqual(got.Status, want.Status) {
			t.Errorf("a v1alpha1 write changed the binding (-before +after):\n%s", cmp.Diff(want, got))
		}
		if got.Labels["touched"] != "v1alpha1" || got.Annotations[workv1alpha2.ConversionAnnotation] != "" {
			t.Errorf("labels %v, annotations %v after the v1alpha1 write", got.Labels, got.Annotations)
		}

		created := &workv1alpha1.ResourceBinding{
			ObjectMeta: metav1.ObjectMeta{Name: "made-as-v1alpha1", Namespace: "default"},
			Spec: workv1alpha1.ResourceBindingSpec{Resource: workv1alpha1.ObjectReference{APIVersion: "apps/v1", Kind: "Deployment", Namespace: "default", Name: "web", Replicas: 2},
				Clusters: []workv1alpha1.TargetCluster{{Name: "member1", Replicas: 2}}},
		}
		if err := c.Create(ctx, created); err != nil {
			t.Fatal(err)
		}
		stored := &workv1alpha2.ResourceBinding{}
		if err := c.Get(ctx, client.ObjectKeyFromObject(created), stored); err != nil {
			t.Fatal(err)
		}
		if stored.Spec.Replicas != 2 || stored.Spec.Resource.Name != "web" || stored.Labels[workv1alpha2.ResourceBindingPermanentIDLabel] == "" {
			t.Errorf("a binding created as v1alpha1 reads as v1alpha2 %+v, labels %v (want replicas 2, and a permanent id from the mutating webhook)", stored.Spec, stored.Labels)
		}
	})
}

// wantInvalid fails unless err is the API server's Invalid error with a
// cause at field whose message contains message.
func wantInvalid(t *testing.T, err error, field, message string) {
	t.Helper()
	if !apierrors.IsInvalid(err) {
		t.Fatalf("want an Invalid error at %s, got %v", field, err)
	}
	var status apierrors.APIStatus
	if !errors.As(err, &status) || status.Status().Details == nil {
		t.Fatalf("no details in %v", err)
	}
	for _, cause := range status.Status().Details.Causes {
		if cause.Field == field && strings.Contains(cause.Message, message) {
			return
		}
	}
	t.Fatalf("no cause at %s containing %q in %v", field, message, err)
}
