package integration

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/client"

	policyv1alpha1 "github.com/karmada-go/karmada/api/policy/v1alpha1"
	workv1alpha2 "github.com/karmada-go/karmada/api/work/v1alpha2"
	"github.com/karmada-go/karmada/internal/controlplane"
	"github.com/karmada-go/karmada/internal/scheme"
	"github.com/karmada-go/karmada/internal/testenv"
	"github.com/karmada-go/karmada/internal/webhook"
)

// TestOverwriteNeedsTheAdoptGrant: through the real webhook and the API
// server's RBAC (SubjectAccessReview), a policy author with full rights on
// policies in its namespace cannot write conflictResolution: Overwrite until
// granted the adopt verb; the controller manager, with the roles of
// deploy/rbac, can write the bindings of such policies.
func TestOverwriteNeedsTheAdoptGrant(t *testing.T) {
	t.Parallel()
	env := testenv.Start(t)
	env.StartWebhook(t)
	ctx := context.Background()
	c := env.Client
	if err := controlplane.ApplyComponentRBAC(ctx, c); err != nil {
		t.Fatal(err)
	}

	author := rbacv1.Role{ObjectMeta: metav1.ObjectMeta{Name: "policy-author", Namespace: "default"},
		Rules: []rbacv1.PolicyRule{{APIGroups: []string{policyv1alpha1.GroupName}, Resources: []string{"propagationpolicies"}, Verbs: []string{"get", "list", "watch", "create", "update", "patch", "delete"}}}}
	mustCreate(ctx, t, c, &author)
	mustCreate(ctx, t, c, &rbacv1.RoleBinding{ObjectMeta: metav1.ObjectMeta{Name: "policy-author", Namespace: "default"},
		RoleRef:  rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "Role", Name: author.Name},
		Subjects: []rbacv1.Subject{{Kind: rbacv1.UserKind, APIGroup: rbacv1.GroupName, Name: "alice"}}})
	alice := impersonating(t, env, rest.ImpersonationConfig{UserName: "alice"})

	policy := func(name string, cr policyv1alpha1.ConflictResolution) *policyv1alpha1.PropagationPolicy {
		return &policyv1alpha1.PropagationPolicy{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "default"},
			Spec: policyv1alpha1.PropagationSpec{ConflictResolution: cr,
				ResourceSelectors: []policyv1alpha1.ResourceSelector{{APIVersion: "v1", Kind: "ConfigMap", Name: name}}}}
	}
	// The author's RBAC is in the API server's cache once alice can create
	// an Abort policy.
	testenv.Eventually(t, 10*time.Second, "alice may create policies", func(ctx context.Context) error {
		return alice.Create(ctx, policy("plain", policyv1alpha1.ConflictAbort))
	})

	err := alice.Create(ctx, policy("takeover", policyv1alpha1.ConflictOverwrite))
	wantInvalid(t, err, "spec.conflictResolution", `needs the "adopt" verb on propagationpolicies.policy.karmada.io in namespace default`)

	plain := &policyv1alpha1.PropagationPolicy{}
	if err := alice.Get(ctx, client.ObjectKey{Namespace: "default", Name: "plain"}, plain); err != nil {
		t.Fatal(err)
	}
	plain.Spec.ConflictResolution = policyv1alpha1.ConflictOverwrite
	wantInvalid(t, alice.Update(ctx, plain), "spec.conflictResolution", "alice may not")

	// Granted by the platform, Overwrite is admitted.
	mustCreate(ctx, t, c, &rbacv1.Role{ObjectMeta: metav1.ObjectMeta{Name: "adopter", Namespace: "default"},
		Rules: []rbacv1.PolicyRule{{APIGroups: []string{policyv1alpha1.GroupName}, Resources: []string{"propagationpolicies"}, Verbs: []string{webhook.AdoptVerb}}}})
	mustCreate(ctx, t, c, &rbacv1.RoleBinding{ObjectMeta: metav1.ObjectMeta{Name: "adopter", Namespace: "default"},
		RoleRef:  rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "Role", Name: "adopter"},
		Subjects: []rbacv1.Subject{{Kind: rbacv1.UserKind, APIGroup: rbacv1.GroupName, Name: "alice"}}})
	testenv.Eventually(t, 10*time.Second, "alice, granted adopt, writes Overwrite", func(ctx context.Context) error {
		return alice.Create(ctx, policy("takeover", policyv1alpha1.ConflictOverwrite))
	})

	// The controller manager's identity writes an Overwrite policy's binding.
	cm := impersonating(t, env, rest.ImpersonationConfig{UserName: "system:karmada:karmada-controller-manager"})
	rb := &workv1alpha2.ResourceBinding{ObjectMeta: metav1.ObjectMeta{Name: "takeover-configmap", Namespace: "default"},
		Spec: workv1alpha2.ResourceBindingSpec{ConflictResolution: policyv1alpha1.ConflictOverwrite,
			Resource: workv1alpha2.ObjectReference{APIVersion: "v1", Kind: "ConfigMap", Namespace: "default", Name: "takeover"}}}
	if err := cm.Create(ctx, rb); err != nil {
		t.Fatalf("the controller manager writing an Overwrite binding: %v", err)
	}
	// Alice, granted adopt on policies only, cannot write one herself even
	// with rights on bindings.
	mustCreate(ctx, t, c, &rbacv1.Role{ObjectMeta: metav1.ObjectMeta{Name: "binding-writer", Namespace: "default"},
		Rules: []rbacv1.PolicyRule{{APIGroups: []string{workv1alpha2.GroupName}, Resources: []string{"resourcebindings"}, Verbs: []string{"create", "update", "get"}}}})
	mustCreate(ctx, t, c, &rbacv1.RoleBinding{ObjectMeta: metav1.ObjectMeta{Name: "binding-writer", Namespace: "default"},
		RoleRef:  rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "Role", Name: "binding-writer"},
		Subjects: []rbacv1.Subject{{Kind: rbacv1.UserKind, APIGroup: rbacv1.GroupName, Name: "alice"}}})
	forged := rb.DeepCopy()
	forged.ObjectMeta = metav1.ObjectMeta{Name: "forged", Namespace: "default"}
	testenv.Eventually(t, 10*time.Second, "alice's binding refused by the webhook, not RBAC", func(ctx context.Context) error {
		err := alice.Create(ctx, forged.DeepCopy())
		if err == nil {
			t.Fatal("alice wrote an Overwrite binding without the adopt right on bindings")
		}
		if !apierrors.IsInvalid(err) {
			return err // RBAC not yet in the API server's cache
		}
		wantInvalid(t, err, "spec.conflictResolution", "alice may not")
		return nil
	})
}

func mustCreate(ctx context.Context, t *testing.T, c client.Client, obj client.Object) {
	t.Helper()
	if err := c.Create(ctx, obj); err != nil {
		t.Fatalf("creating %T %s: %v", obj, obj.GetName(), err)
	}
}

// impersonating is a client of env acting as someone else.
func impersonating(t *testing.T, env *testenv.Env, who rest.ImpersonationConfig) client.Client {
	t.Helper()
	cfg := rest.CopyConfig(env.Config)
	cfg.Impersonate = who
	c, err := client.New(cfg, client.Options{Scheme: scheme.Scheme})
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// The controller manager, with the roles of deploy/rbac, deletes execution
// namespaces (karmada-es-*) and no other: RBAC cannot say so, the
// ValidatingAdmissionPolicy shipped with them does.
func TestControllerManagerDeletesOnlyExecutionNamespaces(t *testing.T) {
	t.Parallel()
	env := testenv.Start(t)
	ctx := context.Background()
	c := env.Client
	if err := controlplane.ApplyComponentRBAC(ctx, c); err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{"karmada-es-gone", "team-a"} {
		createNamespace(ctx, t, c, name)
	}
	cm := impersonating(t, env, rest.ImpersonationConfig{UserName: "system:karmada:karmada-controller-manager"})
	// The policy is in force once the API server has it: asked with dry
	// runs (admission runs, nothing is deleted) until it is.
	testenv.Eventually(t, 20*time.Second, "the policy in force", func(ctx context.Context) error {
		err := cm.Delete(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "team-a"}}, client.DryRunAll)
		if !apierrors.IsForbidden(err) || !strings.Contains(err.Error(), "may delete only execution namespaces") {
			return fmt.Errorf("not refused by the policy yet: %v", err)
		}
		return nil
	})
	err := cm.Delete(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "team-a"}})
	if !apierrors.IsForbidden(err) || !strings.Contains(err.Error(), "not namespace team-a") {
		t.Fatalf("the controller manager deleting namespace team-a: %v, want refused naming it", err)
	}
	if err := cm.Delete(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "karmada-es-gone"}}); err != nil {
		t.Fatalf("the controller manager deleting an execution namespace: %v", err)
	}
	// An administrator is not concerned.
	if err := c.Delete(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "team-a"}}); err != nil {
		t.Fatalf("an administrator deleting team-a: %v", err)
	}
}

// The controller manager, with the roles of deploy/rbac, creates and
// deletes the Services ServiceImports derive and the EndpointSlices it
// imports, and no user's: the ValidatingAdmissionPolicy shipped with its
// role refuses the rest.
func TestControllerManagerWritesOnlyItsOwnServicesAndSlices(t *testing.T) {
	t.Parallel()
	env := testenv.Start(t)
	ctx := context.Background()
	c := env.Client
	if err := controlplane.ApplyComponentRBAC(ctx, c); err != nil {
		t.Fatal(err)
	}
	createNamespace(ctx, t, c, "team-a")
	cm := impersonating(t, env, rest.ImpersonationConfig{UserName: "system:karmada:karmada-controller-manager"})
	port := []corev1.ServicePort{{Name: "http", Port: 80}}
	userSvc := &corev1.Service{ObjectMeta: metav1.ObjectMeta{Namespace: "team-a", Name: "web"}, Spec: corev1.ServiceSpec{Ports: port}}
	testenv.Eventually(t, 20*time.Second, "the policy in force", func(ctx context.Context) error {
		err := cm.Create(ctx, userSvc.DeepCopy(), client.DryRunAll)
		if !apierrors.IsForbidden(err) || !strings.Contains(err.Error(), "not Service web") {
			return fmt.Errorf("not refused by the policy yet: %v", err)
		}
		return nil
	})
	// A user's Service and EndpointSlice: neither created nor deleted.
	// A derived- name without the claim is a user's too.
	forged := &corev1.Service{ObjectMeta: metav1.ObjectMeta{Namespace: "team-a", Name: "derived-web"}, Spec: corev1.ServiceSpec{Ports: port}}
	if err := cm.Create(ctx, forged); !apierrors.IsForbidden(err) {
		t.Errorf("the controller manager creating an unclaimed derived-web: %v, want Forbidden", err)
	}
	userSlice := &discoveryv1.EndpointSlice{ObjectMeta: metav1.ObjectMeta{Namespace: "team-a", Name: "web-abc", Labels: map[string]string{discoveryv1.LabelServiceName: "web"}},
		AddressType: discoveryv1.AddressTypeIPv4}
	if err := cm.Create(ctx, userSlice.DeepCopy()); !apierrors.IsForbidden(err) || !strings.Contains(err.Error(), "not EndpointSlice web-abc") {
		t.Errorf("the controller manager creating a user's EndpointSlice: %v, want refused naming it", err)
	}
	for _, o := range []client.Object{userSvc, userSlice} {
		if err := c.Create(ctx, o); err != nil {
			t.Fatal(err)
		}
		if err := cm.Delete(ctx, o); !apierrors.IsForbidden(err) {
			t.Errorf("the controller manager deleting the user's %T %s: %v, want Forbidden", o, o.GetName(), err)
		}
	}
	// Its own: created and deleted.
	derived := &corev1.Service{ObjectMeta: metav1.ObjectMeta{Namespace: "team-a", Name: "derived-web",
		Labels: map[string]string{policyv1alpha1.ResourceTemplateClaimedByLabel: "ServiceImport"}}, Spec: corev1.ServiceSpec{Ports: port}}
	imported := &discoveryv1.EndpointSlice{ObjectMeta: metav1.ObjectMeta{Namespace: "team-a", Name: "imported-member1-web-abc",
		Labels: map[string]string{discoveryv1.LabelServiceName: "derived-web", discoveryv1.LabelManagedBy: "endpointslice-controller.karmada.io"}},
		AddressType: discoveryv1.AddressTypeIPv4}
	for _, o := range []client.Object{derived, imported} {
		if err := cm.Create(ctx, o); err != nil {
			t.Fatalf("the controller manager creating its %T %s: %v", o, o.GetName(), err)
		}
		if err := cm.Delete(ctx, o); err != nil {
			t.Errorf("the controller manager deleting its %T %s: %v", o, o.GetName(), err)
		}
	}
}
