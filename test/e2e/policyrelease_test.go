//go:build e2e

package e2e

import (
	"context"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/dynamic"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	policyv1alpha1 "github.com/karmada-go/karmada/api/policy/v1alpha1"
	workv1alpha2 "github.com/karmada-go/karmada/api/work/v1alpha2"
)

// testCRDAndInstance propagates a CRD with a ClusterPropagationPolicy and one
// of its objects with a PropagationPolicy.
func testCRDAndInstance(ctx context.Context, t *testing.T) {
	c := karmadaClient(t)
	t.Cleanup(func() { cleanUpWidgets(t, c) })
	crd := &apiextensionsv1.CustomResourceDefinition{
		ObjectMeta: metav1.ObjectMeta{Name: "widgets.example.com"},
		Spec: apiextensionsv1.CustomResourceDefinitionSpec{
			Group: "example.com",
			Names: apiextensionsv1.CustomResourceDefinitionNames{Plural: "widgets", Singular: "widget", Kind: "Widget", ListKind: "WidgetList"},
			Scope: apiextensionsv1.NamespaceScoped,
			Versions: []apiextensionsv1.CustomResourceDefinitionVersion{{Name: "v1", Served: true, Storage: true,
				Schema: &apiextensionsv1.CustomResourceValidation{OpenAPIV3Schema: &apiextensionsv1.JSONSchemaProps{
					Type: "object", XPreserveUnknownFields: ptr.To(true)}}}},
		},
	}
	if err := c.Create(ctx, crd); err != nil {
		t.Fatal(err)
	}
	targets := policyv1alpha1.Placement{ClusterAffinity: &policyv1alpha1.ClusterAffinity{ClusterNames: []string{"member1", "member2"}}}
	if err := c.Create(ctx, &policyv1alpha1.ClusterPropagationPolicy{
		ObjectMeta: metav1.ObjectMeta{Name: "widgets-crd"},
		Spec: policyv1alpha1.PropagationSpec{
			ResourceSelectors: []policyv1alpha1.ResourceSelector{{APIVersion: "apiextensions.k8s.io/v1", Kind: "CustomResourceDefinition", Name: "widgets.example.com"}},
			Placement:         targets,
		},
	}); err != nil {
		t.Fatal(err)
	}
	if err := c.Create(ctx, &policyv1alpha1.PropagationPolicy{
		ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: "widgets"},
		Spec: policyv1alpha1.PropagationSpec{
			ResourceSelectors: []policyv1alpha1.ResourceSelector{{APIVersion: "example.com/v1", Kind: "Widget"}},
			Placement:         targets,
		},
	}); err != nil {
		t.Fatal(err)
	}
	widget := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "example.com/v1", "kind": "Widget",
		"metadata": map[string]any{"name": "gear", "namespace": "default"},
		"spec":     map[string]any{"teeth": int64(12)},
	}}
	err := wait.PollUntilContextTimeout(ctx, 200*time.Millisecond, 30*time.Second, true, func(ctx context.Context) (bool, error) {
		return c.Create(ctx, widget.DeepCopy()) == nil, nil // the API is served once the CRD is Established
	})
	if err != nil {
		t.Fatal("could not create the Widget in the control plane")
	}
	created := time.Now()
	for _, m := range []string{"member1", "member2"} {
		dc, err := dynamic.NewForConfig(restConfig(t, m))
		if err != nil {
			t.Fatal(err)
		}
		gvr := schema.GroupVersionResource{Group: "example.com", Version: "v1", Resource: "widgets"}
		var last error
		// Karmada propagates a CR created right after its CRD within
		// seconds; so must we.
		err = wait.PollUntilContextTimeout(ctx, 250*time.Millisecond, time.Until(created.Add(10*time.Second)), true, func(ctx context.Context) (bool, error) {
			got, err := dc.Resource(gvr).Namespace("default").Get(ctx, "gear", metav1.GetOptions{})
			if err != nil {
				last = err
				return false, nil
			}
			teeth, _, _ := unstructured.NestedInt64(got.Object, "spec", "teeth")
			return teeth == 12, nil
		})
		if err != nil {
			t.Errorf("the Widget did not reach %s within 10 s of its creation (last: %v)", m, last)
		}
	}
	crb := &workv1alpha2.ClusterResourceBinding{}
	if err := c.Get(ctx, client.ObjectKey{Name: "widgets.example.com-customresourcedefinition"}, crb); err != nil {
		t.Errorf("no ClusterResourceBinding for the CRD: %v", err)
	}
}

// testPolicyDeletionReleasesClaim deletes a policy: what it propagated stays,
// the claim is released, and a new policy takes the template over.
func testPolicyDeletionReleasesClaim(ctx context.Context, t *testing.T) {
	c := karmadaClient(t)
	policy := func(name, cluster string) *policyv1alpha1.PropagationPolicy {
		return &policyv1alpha1.PropagationPolicy{
			ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: name},
			Spec: policyv1alpha1.PropagationSpec{
				ResourceSelectors: []policyv1alpha1.ResourceSelector{{APIVersion: "apps/v1", Kind: "Deployment", Name: "handover"}},
				Placement:         policyv1alpha1.Placement{ClusterAffinity: &policyv1alpha1.ClusterAffinity{ClusterNames: []string{cluster}}},
			},
		}
	}
	t.Cleanup(func() {
		deleteAll(t, c, deploymentNamed("handover", 1), policy("first", ""), policy("second", ""), policy("third", ""))
	})
	claimedBy := func(name string) func(ctx context.Context) (bool, error) {
		return func(ctx context.Context) (bool, error) {
			d := &appsv1.Deployment{}
			if err := c.Get(ctx, client.ObjectKey{Namespace: "default", Name: "handover"}, d); err != nil {
				return false, nil
			}
			return d.Annotations["propagationpolicy.karmada.io/name"] == name, nil
		}
	}
	if err := c.Create(ctx, policy("first", "member1")); err != nil {
		t.Fatal(err)
	}
	if err := c.Create(ctx, deploymentNamed("handover", 1)); err != nil {
		t.Fatal(err)
	}
	waitMemberDeployment(ctx, t, "member1", "handover", 1)
	if err := wait.PollUntilContextTimeout(ctx, 200*time.Millisecond, 30*time.Second, true, claimedBy("first")); err != nil {
		t.Fatal("the template was never claimed by policy first")
	}
	// The policy's permanent id is on the policy, the template and the binding.
	const idLabel = "propagationpolicy.karmada.io/permanent-id"
	first := &policyv1alpha1.PropagationPolicy{}
	if err := c.Get(ctx, client.ObjectKey{Namespace: "default", Name: "first"}, first); err != nil {
		t.Fatal(err)
	}
	id := first.Labels[idLabel]
	if id == "" {
		t.Errorf("policy first has no %s label", idLabel)
	}
	tmpl := &appsv1.Deployment{}
	if err := c.Get(ctx, client.ObjectKey{Namespace: "default", Name: "handover"}, tmpl); err != nil || tmpl.Labels[idLabel] != id {
		t.Errorf("template's %s label is %q (%v), want the policy's %q", idLabel, tmpl.Labels[idLabel], err, id)
	}
	rb := &workv1alpha2.ResourceBinding{}
	if err := c.Get(ctx, client.ObjectKey{Namespace: "default", Name: "handover-deployment"}, rb); err != nil || rb.Labels[idLabel] != id ||
		rb.Annotations["propagationpolicy.karmada.io/name"] != "first" {
		t.Errorf("binding labels %v annotations %v (%v), want the policy's id %q and name", rb.Labels, rb.Annotations, err, id)
	}

	if err := c.Delete(ctx, policy("first", "member1")); err != nil {
		t.Fatal(err)
	}
	if err := wait.PollUntilContextTimeout(ctx, 200*time.Millisecond, 30*time.Second, true, claimedBy("")); err != nil {
		t.Fatal("the claim of the deleted policy was not released")
	}
	// The binding stays, released too.
	err := wait.PollUntilContextTimeout(ctx, 200*time.Millisecond, 30*time.Second, true, func(ctx context.Context) (bool, error) {
		if err := c.Get(ctx, client.ObjectKey{Namespace: "default", Name: "handover-deployment"}, rb); err != nil {
			return false, nil
		}
		return rb.Labels[idLabel] == "" && rb.Annotations["propagationpolicy.karmada.io/name"] == "" && rb.Annotations["propagationpolicy.karmada.io/namespace"] == "", nil
	})
	if err != nil {
		t.Errorf("the binding kept the deleted policy's claim: labels %v annotations %v", rb.Labels, rb.Annotations)
	}
	// Nothing the user did not ask to delete is deleted.
	if _, err := kube(t, "member1").AppsV1().Deployments("default").Get(ctx, "handover", metav1.GetOptions{}); err != nil {
		t.Errorf("deleting the policy removed the propagated Deployment from member1: %v", err)
	}

	if err := c.Create(ctx, policy("second", "member2")); err != nil {
		t.Fatal(err)
	}
	if err := wait.PollUntilContextTimeout(ctx, 200*time.Millisecond, 30*time.Second, true, claimedBy("second")); err != nil {
		t.Fatal("a new policy did not take the released template")
	}
	waitMemberDeployment(ctx, t, "member2", "handover", 1)
	if err := c.Get(ctx, client.ObjectKey{Namespace: "default", Name: "handover"}, tmpl); err != nil || tmpl.Labels[idLabel] == id || tmpl.Labels[idLabel] == "" {
		t.Errorf("after the hand-over the template's %s label is %q (%v), want policy second's", idLabel, tmpl.Labels[idLabel], err)
	}

	// A policy of equal priority does not take the template; a higher one
	// with preemption Always does, and the workload moves with it.
	third := policy("third", "member1")
	third.Spec.Priority = ptr.To[int32](10)
	third.Spec.Preemption = policyv1alpha1.PreemptAlways
	if err := c.Create(ctx, third); err != nil {
		t.Fatal(err)
	}
	if err := wait.PollUntilContextTimeout(ctx, 200*time.Millisecond, 30*time.Second, true, claimedBy("third")); err != nil {
		t.Fatal("a higher-priority policy with preemption Always did not take the template")
	}
	waitMemberDeployment(ctx, t, "member1", "handover", 1)
	waitMemberDeployment(ctx, t, "member2", "handover", -1)

	if err := c.Delete(ctx, deploymentNamed("handover", 1)); err != nil {
		t.Fatal(err)
	}
	waitMemberDeployment(ctx, t, "member1", "handover", -1)
	for _, name := range []string{"second", "third"} {
		if err := c.Delete(ctx, policy(name, "")); err != nil {
			t.Error(err)
		}
	}
}

// cleanUpWidgets deletes the Widget, its policies and its CRD, and waits
// until the CRD has left every member, so that the test can run again.
func cleanUpWidgets(t *testing.T, c client.Client) {
	t.Helper()
	ctx := context.Background()
	widget := &unstructured.Unstructured{}
	widget.SetAPIVersion("example.com/v1")
	widget.SetKind("Widget")
	widget.SetNamespace("default")
	widget.SetName("gear")
	if err := c.Delete(ctx, widget); err != nil && !apierrors.IsNotFound(err) && !meta.IsNoMatchError(err) {
		t.Errorf("deleting the Widget: %v", err)
	}
	deleteAll(t, c, &policyv1alpha1.PropagationPolicy{ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: "widgets"}},
		&policyv1alpha1.ClusterPropagationPolicy{ObjectMeta: metav1.ObjectMeta{Name: "widgets-crd"}},
		&apiextensionsv1.CustomResourceDefinition{ObjectMeta: metav1.ObjectMeta{Name: "widgets.example.com"}})
	for _, m := range []string{"member1", "member2"} {
		dc, err := dynamic.NewForConfig(restConfig(t, m))
		if err != nil {
			t.Fatal(err)
		}
		crds := schema.GroupVersionResource{Group: "apiextensions.k8s.io", Version: "v1", Resource: "customresourcedefinitions"}
		err = wait.PollUntilContextTimeout(ctx, 500*time.Millisecond, 90*time.Second, true, func(ctx context.Context) (bool, error) {
			_, err := dc.Resource(crds).Get(ctx, "widgets.example.com", metav1.GetOptions{})
			return apierrors.IsNotFound(err), nil
		})
		if err != nil {
			t.Errorf("the widgets CRD is still in %s after clean-up", m)
		}
	}
}
