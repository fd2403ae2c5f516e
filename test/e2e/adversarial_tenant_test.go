//go:build e2e

package e2e

import (
	"context"
	"fmt"
	"path/filepath"
	"strings"
	"testing"
	"time"

	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	appsv1 "k8s.io/api/apps/v1"
	autoscalingv2 "k8s.io/api/autoscaling/v2"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/types"
	utilrand "k8s.io/apimachinery/pkg/util/rand"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
	"k8s.io/client-go/util/retry"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	autoscalingv1alpha1 "github.com/karmada-go/karmada/api/autoscaling/v1alpha1"
	clusterv1alpha1 "github.com/karmada-go/karmada/api/cluster/v1alpha1"
	configv1alpha1 "github.com/karmada-go/karmada/api/config/v1alpha1"
	policyv1alpha1 "github.com/karmada-go/karmada/api/policy/v1alpha1"
	remedyv1alpha1 "github.com/karmada-go/karmada/api/remedy/v1alpha1"
	searchv1alpha1 "github.com/karmada-go/karmada/api/search/v1alpha1"
	workv1alpha1 "github.com/karmada-go/karmada/api/work/v1alpha1"
	workv1alpha2 "github.com/karmada-go/karmada/api/work/v1alpha2"
	"github.com/karmada-go/karmada/internal/names"
	"github.com/karmada-go/karmada/internal/scheme"
	"github.com/karmada-go/karmada/internal/testenv"
)

// tenantClient acts as a tenant who may write templates and policies in
// namespace ns of the control plane only.
func tenantClient(ctx context.Context, t *testing.T, ns string) client.Client {
	t.Helper()
	tc, err := client.New(tenantConfig(ctx, t, ns), client.Options{Scheme: scheme.Scheme})
	if err != nil {
		t.Fatal(err)
	}
	return tc
}

// tenantConfig is the configuration of tenantClient's tenant.
func tenantConfig(ctx context.Context, t *testing.T, ns string) *rest.Config {
	t.Helper()
	c := karmadaClient(t)
	user := "e2e-tenant-" + utilrand.String(5)
	role := &rbacv1.Role{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "tenant"}, Rules: []rbacv1.PolicyRule{
		{APIGroups: []string{""}, Resources: []string{"configmaps", "resourcequotas", "limitranges", "secrets"}, Verbs: []string{"*"}},
		{APIGroups: []string{"policy.karmada.io"}, Resources: []string{"propagationpolicies", "overridepolicies"}, Verbs: []string{"get", "list", "watch", "create", "update", "patch", "delete"}},
		{APIGroups: []string{"work.karmada.io"}, Resources: []string{"resourcebindings"}, Verbs: []string{"get", "list", "watch", "create", "update", "patch", "delete"}},
		{APIGroups: []string{"autoscaling.karmada.io"}, Resources: []string{"federatedhpas", "cronfederatedhpas"}, Verbs: []string{"get", "list", "watch", "create", "update", "patch", "delete"}},
	}}
	binding := &rbacv1.RoleBinding{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "tenant"},
		RoleRef: rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "Role", Name: "tenant"}, Subjects: []rbacv1.Subject{{APIGroup: rbacv1.GroupName, Kind: rbacv1.UserKind, Name: user}}}
	createUntilCleanup(ctx, t, c, role, binding)
	cfg := restConfig(t, "karmada-apiserver")
	cfg.Impersonate = rest.ImpersonationConfig{UserName: user, Groups: []string{"system:authenticated"}}
	return cfg
}

// A tenant with rights in one namespace cannot take over the member's own
// objects there (conflictResolution: Overwrite needs a grant the platform
// gives), and the controller-trusted marks a tenant puts on a template do
// not reach the member.
func TestTenantCannotTakeOverMemberObjects(t *testing.T) {
	ctx := context.Background()
	c := karmadaClient(t)
	ns := "e2e-t1-" + utilrand.String(5)
	createNamespaceUntilCleanup(ctx, t, c, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}})
	waitNamespace(ctx, t, "member1", ns, true)
	kc := kube(t, "member1")
	platform := &corev1.ResourceQuota{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "platform-quota"},
		Spec: corev1.ResourceQuotaSpec{Hard: corev1.ResourceList{corev1.ResourcePods: resource.MustParse("2")}}}
	if _, err := kc.CoreV1().ResourceQuotas(ns).Create(ctx, platform, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	tenant := tenantClient(ctx, t, ns)
	mine := &corev1.ResourceQuota{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "platform-quota"},
		Spec: corev1.ResourceQuotaSpec{Hard: corev1.ResourceList{corev1.ResourcePods: resource.MustParse("1k")}}}
	if err := tenant.Create(ctx, mine); err != nil {
		t.Fatalf("the tenant creating a quota in its namespace: %v", err)
	}
	pp := &policyv1alpha1.PropagationPolicy{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "take-over"}, Spec: policyv1alpha1.PropagationSpec{
		ResourceSelectors:  []policyv1alpha1.ResourceSelector{{APIVersion: "v1", Kind: "ResourceQuota", Name: "platform-quota"}},
		Placement:          policyv1alpha1.Placement{ClusterAffinity: &policyv1alpha1.ClusterAffinity{ClusterNames: []string{"member1"}}},
		ConflictResolution: policyv1alpha1.ConflictOverwrite,
	}}
	err := tenant.Create(ctx, pp)
	if err == nil {
		t.Cleanup(func() { _ = c.Delete(context.Background(), pp) })
		t.Errorf("the tenant's Overwrite policy was admitted")
	} else if !apierrors.IsInvalid(err) && !apierrors.IsForbidden(err) {
		t.Errorf("the tenant's Overwrite policy: want Invalid or Forbidden, got %v", err)
	}
	// Nothing may have reached the member's quota meanwhile.
	testenv.Consistently(t, 8*time.Second, "the member's quota unchanged", func(ctx context.Context) error {
		got, err := kc.CoreV1().ResourceQuotas(ns).Get(ctx, "platform-quota", metav1.GetOptions{})
		if err != nil {
			return err
		}
		if q := got.Spec.Hard[corev1.ResourcePods]; q.Cmp(resource.MustParse("2")) != 0 || got.Annotations[workv1alpha1.AdoptedAnnotation] != "" {
			return fmt.Errorf("pods %s, annotations %v", q.String(), got.Annotations)
		}
		return nil
	})

	// Marks the controllers trust, planted on a template, stay out of the
	// member's copy.
	planted := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "planted", Annotations: map[string]string{
		workv1alpha1.PreAdoptionAnnotation: "H4sIAAAAAAAA/w==", workv1alpha1.AdoptedAnnotation: "karmada-es-member1/someone-else"}}}
	if err := tenant.Create(ctx, planted); err != nil {
		t.Fatal(err)
	}
	cmPolicy := &policyv1alpha1.PropagationPolicy{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "planted"}, Spec: policyv1alpha1.PropagationSpec{
		ResourceSelectors: []policyv1alpha1.ResourceSelector{{APIVersion: "v1", Kind: "ConfigMap", Name: "planted"}},
		Placement:         policyv1alpha1.Placement{ClusterAffinity: &policyv1alpha1.ClusterAffinity{ClusterNames: []string{"member1"}}},
	}}
	if err := tenant.Create(ctx, cmPolicy); err != nil {
		t.Fatal(err)
	}
	testenv.Eventually(t, 30*time.Second, "the planted marks kept out of member1", func(ctx context.Context) error {
		got, err := kc.CoreV1().ConfigMaps(ns).Get(ctx, "planted", metav1.GetOptions{})
		if err != nil {
			return err
		}
		if got.Annotations[workv1alpha1.PreAdoptionAnnotation] != "" || got.Annotations[workv1alpha1.AdoptedAnnotation] != "" {
			return fmt.Errorf("annotations %v", got.Annotations)
		}
		return nil
	})
}

// An object Karmada adopted in a member (an administrator's Overwrite) is
// never deleted through the deletion of the namespace Karmada created for
// it: the namespace is released instead.
func TestAdoptedObjectSurvivesNamespaceDeletion(t *testing.T) {
	ctx := context.Background()
	c := karmadaClient(t)
	kc := kube(t, "member1")
	ns := "e2e-adopted-" + utilrand.String(5)
	createNamespaceUntilCleanup(ctx, t, c, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}})
	t.Cleanup(func() { _ = kc.CoreV1().Namespaces().Delete(context.Background(), ns, metav1.DeleteOptions{}) })
	waitNamespace(ctx, t, "member1", ns, true)
	if _, err := kc.CoreV1().ConfigMaps(ns).Create(ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "adopt-me"}, Data: map[string]string{"own": "yes"}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "adopt-me"}, Data: map[string]string{"from": "karmada"}}
	pp := &policyv1alpha1.PropagationPolicy{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "adopt"}, Spec: policyv1alpha1.PropagationSpec{
		ResourceSelectors:  []policyv1alpha1.ResourceSelector{{APIVersion: "v1", Kind: "ConfigMap", Name: "adopt-me"}},
		Placement:          policyv1alpha1.Placement{ClusterAffinity: &policyv1alpha1.ClusterAffinity{ClusterNames: []string{"member1"}}},
		ConflictResolution: policyv1alpha1.ConflictOverwrite,
	}}
	if err := c.Create(ctx, pp); err != nil {
		t.Fatal(err)
	}
	if err := c.Create(ctx, cm); err != nil {
		t.Fatal(err)
	}
	testenv.Eventually(t, 30*time.Second, "the ConfigMap adopted", func(ctx context.Context) error {
		got, err := kc.CoreV1().ConfigMaps(ns).Get(ctx, "adopt-me", metav1.GetOptions{})
		if err != nil {
			return err
		}
		if got.Annotations[workv1alpha1.AdoptedAnnotation] == "" {
			return fmt.Errorf("annotations %v", got.Annotations)
		}
		return nil
	})
	before, err := kc.CoreV1().ConfigMaps(ns).Get(ctx, "adopt-me", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	// The namespace is deleted in the control plane, the template and the
	// policy with it.
	if err := c.Delete(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}); err != nil {
		t.Fatal(err)
	}
	testenv.Eventually(t, 90*time.Second, "the member's namespace released", func(ctx context.Context) error {
		got, err := kc.CoreV1().Namespaces().Get(ctx, ns, metav1.GetOptions{})
		if err != nil || !got.DeletionTimestamp.IsZero() {
			return fmt.Errorf("the member's namespace is gone or going (err %v)", err)
		}
		if got.Labels[workv1alpha1.ManagedLabel] != "" {
			return fmt.Errorf("not released yet: labels %v", got.Labels)
		}
		return nil
	})
	after, err := kc.CoreV1().ConfigMaps(ns).Get(ctx, "adopt-me", metav1.GetOptions{})
	if err != nil || after.UID != before.UID {
		t.Fatalf("the adopted ConfigMap was deleted (err %v, uid %v, was %s)", err, after, before.UID)
	}
}

// A tenant with rights in one namespace stays there: its OverridePolicy
// cannot move a copy to another namespace or kind, its policy cannot select
// another namespace's templates, its binding cannot bind the control plane's
// Secrets, and it writes nothing in Karmada's own namespaces or cluster-wide.
func TestTenantStaysInItsNamespace(t *testing.T) {
	ctx := context.Background()
	c := karmadaClient(t)
	ns := "e2e-t2-" + utilrand.String(5)
	createNamespaceUntilCleanup(ctx, t, c, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}})
	tenantCfg := tenantConfig(ctx, t, ns)
	tenant, err := client.New(tenantCfg, client.Options{Scheme: scheme.Scheme})
	if err != nil {
		t.Fatal(err)
	}
	// Its rights in one namespace reach no member through the proxy.
	proxyRefused(t, "a tenant", tenantCfg, "member1")
	searchRefused(t, "a tenant", tenantCfg)
	for _, path := range []string{"/metadata/namespace", "/kind"} {
		op := &policyv1alpha1.OverridePolicy{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "move"}, Spec: policyv1alpha1.OverrideSpec{
			ResourceSelectors: []policyv1alpha1.ResourceSelector{{APIVersion: "v1", Kind: "ConfigMap"}},
			OverrideRules: []policyv1alpha1.RuleWithCluster{{Overriders: policyv1alpha1.Overriders{Plaintext: []policyv1alpha1.PlaintextOverrider{{
				Path: path, Operator: policyv1alpha1.OverriderOpReplace, Value: apiextensionsv1.JSON{Raw: []byte(`"kube-system"`)}}}}}},
		}}
		wantRefused(t, "an override of "+path, tenant.Create(ctx, op))
	}
	wantRefused(t, "a policy selecting default's ConfigMaps", tenant.Create(ctx, &policyv1alpha1.PropagationPolicy{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "reach"},
		Spec: policyv1alpha1.PropagationSpec{ResourceSelectors: []policyv1alpha1.ResourceSelector{{APIVersion: "v1", Kind: "ConfigMap", Namespace: "default"}}}}))
	wantRefused(t, "a binding of member1's credentials", tenant.Create(ctx, &workv1alpha2.ResourceBinding{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "steal"},
		Spec: workv1alpha2.ResourceBindingSpec{Resource: workv1alpha2.ObjectReference{APIVersion: "v1", Kind: "Secret", Namespace: "karmada-cluster", Name: "member1"},
			Clusters: []workv1alpha2.TargetCluster{{Name: "member2"}}}}))
	wantRefused(t, "a policy in karmada-system", tenant.Create(ctx, &policyv1alpha1.PropagationPolicy{ObjectMeta: metav1.ObjectMeta{Namespace: "karmada-system", Name: "reach"},
		Spec: policyv1alpha1.PropagationSpec{ResourceSelectors: []policyv1alpha1.ResourceSelector{{APIVersion: "v1", Kind: "ConfigMap"}}}}))
	wantRefused(t, "a ClusterPropagationPolicy", tenant.Create(ctx, &policyv1alpha1.ClusterPropagationPolicy{ObjectMeta: metav1.ObjectMeta{Name: "e2e-tenant-everything"},
		Spec: policyv1alpha1.PropagationSpec{ResourceSelectors: []policyv1alpha1.ResourceSelector{{APIVersion: "v1", Kind: "Namespace"}}}}))
	wantRefused(t, "tainting member1", tenant.Patch(ctx, &clusterv1alpha1.Cluster{ObjectMeta: metav1.ObjectMeta{Name: "member1"}},
		client.RawPatch(types.MergePatchType, []byte(`{"spec":{"taints":[{"key":"e2e-tenant","effect":"NoExecute"}]}}`))))
	// Nor steer traffic away from a cluster: no Remedy, no condition or
	// remedy action written on a Cluster.
	wantRefused(t, "a Remedy", tenant.Create(ctx, &remedyv1alpha1.Remedy{ObjectMeta: metav1.ObjectMeta{Name: "e2e-tenant-remedy"},
		Spec: remedyv1alpha1.RemedySpec{Actions: []remedyv1alpha1.RemedyAction{remedyv1alpha1.TrafficControl}}}))
	wantRefused(t, "member1's remedy actions", tenant.Status().Patch(ctx, &clusterv1alpha1.Cluster{ObjectMeta: metav1.ObjectMeta{Name: "member1"}},
		client.RawPatch(types.MergePatchType, []byte(`{"status":{"remedyActions":["TrafficControl"]}}`))))
	wantRefused(t, "reading member1's credentials", tenant.Get(ctx, client.ObjectKey{Namespace: "karmada-cluster", Name: "member1"}, &corev1.Secret{}))
	if _, err := kube(t, "member2").CoreV1().Secrets("karmada-cluster").Get(ctx, "member1", metav1.GetOptions{}); !apierrors.IsNotFound(err) {
		t.Errorf("member1's credentials reached member2 (err %v)", err)
	}
}

// A tenant cannot use propagateDeps to carry another namespace's Secret to
// a member: even through a dependencyInterpretation that names any
// namespace (the platform's customization, the tenant's data), the
// distributor follows only dependencies in the workload's own namespace.
// Nor can a tenant write customizations or interpreter webhooks.
func TestTenantCannotCarryOtherNamespacesDependencies(t *testing.T) {
	ctx := context.Background()
	c := karmadaClient(t)
	ns := "e2e-t3-" + utilrand.String(5)
	createNamespaceUntilCleanup(ctx, t, c, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}})
	tenant := tenantClient(ctx, t, ns)
	wantRefused(t, "a ResourceInterpreterCustomization", tenant.Create(ctx, &configv1alpha1.ResourceInterpreterCustomization{ObjectMeta: metav1.ObjectMeta{Name: "e2e-tenant-ric"},
		Spec: configv1alpha1.ResourceInterpreterCustomizationSpec{Target: configv1alpha1.CustomizationTarget{APIVersion: "v1", Kind: "ConfigMap"},
			Customizations: configv1alpha1.CustomizationRules{HealthInterpretation: &configv1alpha1.HealthInterpretation{LuaScript: "function InterpretHealth(o) return true end"}}}}))
	wantRefused(t, "a ResourceInterpreterWebhookConfiguration", tenant.Create(ctx, &configv1alpha1.ResourceInterpreterWebhookConfiguration{ObjectMeta: metav1.ObjectMeta{Name: "e2e-tenant-riwc"},
		Webhooks: []configv1alpha1.ResourceInterpreterWebhook{{Name: "steal.example.com", ClientConfig: admissionregistrationv1.WebhookClientConfig{URL: ptr.To("https://127.0.0.1:1/x")},
			InterpreterContextVersions: []string{"v1alpha1"}}}}))

	// The platform's customization: a ConfigMap names its dependency in its data.
	ric := &configv1alpha1.ResourceInterpreterCustomization{ObjectMeta: metav1.ObjectMeta{Name: "e2e-configmap-deps"},
		Spec: configv1alpha1.ResourceInterpreterCustomizationSpec{Target: configv1alpha1.CustomizationTarget{APIVersion: "v1", Kind: "ConfigMap"},
			Customizations: configv1alpha1.CustomizationRules{DependencyInterpretation: &configv1alpha1.DependencyInterpretation{LuaScript: `
function GetDependencies(obj)
  if obj.data == nil or obj.data["e2e-dep-name"] == nil then return {} end
  return {{apiVersion = "v1", kind = "Secret", namespace = obj.data["e2e-dep-namespace"], name = obj.data["e2e-dep-name"]}}
end`}}}}
	createUntilCleanup(ctx, t, c, ric)
	// The tenant's ConfigMap names member1's credentials.
	cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "innocent"}, Data: map[string]string{"e2e-dep-namespace": "karmada-cluster", "e2e-dep-name": "member1"}}
	if err := tenant.Create(ctx, cm); err != nil {
		t.Fatal(err)
	}
	if err := tenant.Create(ctx, &policyv1alpha1.PropagationPolicy{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "deps"},
		Spec: policyv1alpha1.PropagationSpec{ResourceSelectors: []policyv1alpha1.ResourceSelector{{APIVersion: "v1", Kind: "ConfigMap", Name: "innocent"}},
			Placement: policyv1alpha1.Placement{ClusterAffinity: &policyv1alpha1.ClusterAffinity{ClusterNames: []string{"member2"}}}, PropagateDeps: true}}); err != nil {
		t.Fatal(err)
	}
	// The distributor saw it and refused it.
	kc := kube(t, "karmada-apiserver")
	if err := wait.PollUntilContextTimeout(ctx, 500*time.Millisecond, 60*time.Second, true, func(ctx context.Context) (bool, error) {
		evs, err := kc.CoreV1().Events(ns).List(ctx, metav1.ListOptions{FieldSelector: "reason=GetDependenciesFailed"})
		if err != nil {
			return false, nil
		}
		for _, e := range evs.Items {
			if strings.Contains(e.Message, "Not propagating Secret karmada-cluster/member1") {
				return true, nil
			}
		}
		return false, nil
	}); err != nil {
		t.Fatal("no event says the other namespace's Secret was refused")
	}
	if _, err := kube(t, "member2").CoreV1().Secrets("karmada-cluster").Get(ctx, "member1", metav1.GetOptions{}); !apierrors.IsNotFound(err) {
		t.Errorf("member1's credentials reached member2 (err %v)", err)
	}
	rbs := &workv1alpha2.ResourceBindingList{}
	if err := c.List(ctx, rbs, client.InNamespace("karmada-cluster")); err != nil || len(rbs.Items) != 0 {
		t.Errorf("bindings in karmada-cluster: %d (%v)", len(rbs.Items), err)
	}
}

// A tenant with rights in one namespace, allowed to proxy to member1 and to
// read its namespace there, cannot use karmadactl promote to take over a
// member's own object: the policy it would write says conflictResolution
// Overwrite, which needs the adopt grant; nothing is created, and the
// member's object is left as it was.
func TestTenantCannotPromoteWithoutAdopt(t *testing.T) {
	ctx := context.Background()
	c := karmadaClient(t)
	ns := "e2e-tpromote-" + utilrand.String(5)
	createNamespaceUntilCleanup(ctx, t, c, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}})
	waitNamespace(ctx, t, "member1", ns, true)
	cfg := tenantConfig(ctx, t, ns)
	user := cfg.Impersonate.UserName
	// clusters/proxy on member1 in the control plane, view of ns in member1.
	proxyRole := &rbacv1.ClusterRole{ObjectMeta: metav1.ObjectMeta{Name: user}, Rules: []rbacv1.PolicyRule{
		{APIGroups: []string{clusterv1alpha1.GroupName}, Resources: []string{"clusters/proxy"}, ResourceNames: []string{"member1"}, Verbs: []string{"get"}}}}
	proxyBinding := &rbacv1.ClusterRoleBinding{ObjectMeta: metav1.ObjectMeta{Name: user},
		RoleRef:  rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: user},
		Subjects: []rbacv1.Subject{{APIGroup: rbacv1.GroupName, Kind: rbacv1.UserKind, Name: user}}}
	createUntilCleanup(ctx, t, c, proxyRole, proxyBinding)
	m1 := kube(t, "member1")
	view := &rbacv1.RoleBinding{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "tenant-view"},
		RoleRef:  rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: "view"},
		Subjects: []rbacv1.Subject{{APIGroup: rbacv1.GroupName, Kind: rbacv1.UserKind, Name: user}}}
	if _, err := m1.RbacV1().RoleBindings(ns).Create(ctx, view, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	own := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "member-own"}, Data: map[string]string{"owner": "member1"}}
	if _, err := m1.CoreV1().ConfigMaps(ns).Create(ctx, own, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	// The tenant's kubeconfig: the fleet's, impersonating the tenant.
	kcfg, err := clientcmd.LoadFromFile(fleet.Kubeconfig)
	if err != nil {
		t.Fatal(err)
	}
	ai := kcfg.AuthInfos[kcfg.Contexts["karmada-apiserver"].AuthInfo]
	ai.Impersonate, ai.ImpersonateGroups = user, []string{"system:authenticated"}
	tenantKubeconfig := filepath.Join(t.TempDir(), "tenant.config")
	if err := clientcmd.WriteToFile(*kcfg, tenantKubeconfig); err != nil {
		t.Fatal(err)
	}
	// The tenant can read the member's object through the proxy (once
	// member1's impersonator may act as it: unifiedAuth follows the
	// binding)...
	testenv.Eventually(t, 30*time.Second, "the tenant reading member1's ConfigMap", func(context.Context) error {
		out, errOut, err := kctlWith(t, tenantKubeconfig, "get", "configmap", "member-own", "-n", ns, "--operation-scope", "members", "-C", "member1")
		if err != nil || !strings.Contains(out, "member-own") {
			return fmt.Errorf("%v\n%s%s", err, out, errOut)
		}
		return nil
	})
	// ...but not promote it.
	out, errOut, err := kctlWith(t, tenantKubeconfig, "promote", "configmap", "member-own", "-n", ns, "-C", "member1")
	if err == nil || !strings.Contains(errOut, "adopt") {
		t.Fatalf("the tenant promoting member1's ConfigMap: %v\n%s%s; want refused for want of the adopt right", err, out, errOut)
	}
	if err := c.Get(ctx, client.ObjectKey{Namespace: ns, Name: "member-own"}, &corev1.ConfigMap{}); !apierrors.IsNotFound(err) {
		t.Errorf("a template was created for the refused promote: %v", err)
	}
	if err := c.Get(ctx, client.ObjectKey{Namespace: ns, Name: names.PolicyName(ns, "member-own", corev1.SchemeGroupVersion.WithKind("ConfigMap"))}, &policyv1alpha1.PropagationPolicy{}); !apierrors.IsNotFound(err) {
		t.Errorf("a policy was created for the refused promote: %v", err)
	}
	got, err := m1.CoreV1().ConfigMaps(ns).Get(ctx, "member-own", metav1.GetOptions{})
	if err != nil || got.Labels[workv1alpha1.ManagedLabel] != "" || got.Data["owner"] != "member1" {
		t.Errorf("member1's ConfigMap after the refused promote: %v %+v", err, got)
	}
}

// A tenant with rights to ConfigMaps in one namespace reads, through
// karmada-search, the members' ConfigMaps of that namespace and nothing
// else: another namespace or all of them is Forbidden, and it cannot
// change a member's cached object through the proxy (no clusters/proxy).
func TestTenantReadsOnlyItsNamespaceThroughSearch(t *testing.T) {
	ctx := context.Background()
	c := karmadaClient(t)
	ns := "e2e-tsearch-" + utilrand.String(5)
	createNamespaceUntilCleanup(ctx, t, c, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}})
	waitNamespace(ctx, t, "member1", ns, true)
	m1 := kube(t, "member1")
	if _, err := m1.CoreV1().ConfigMaps(ns).Create(ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "member-data"}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	rr := &searchv1alpha1.ResourceRegistry{ObjectMeta: metav1.ObjectMeta{Name: "e2e-tsearch-" + utilrand.String(5)},
		Spec: searchv1alpha1.ResourceRegistrySpec{
			TargetCluster:     policyv1alpha1.ClusterAffinity{ClusterNames: []string{"member1"}},
			ResourceSelectors: []searchv1alpha1.ResourceSelector{{APIVersion: "v1", Kind: "ConfigMap"}},
		}}
	createUntilCleanup(ctx, t, c, rr)
	admin := kube(t, "karmada-apiserver")
	own := "/apis/search.karmada.io/v1alpha1/search/cache/api/v1/namespaces/" + ns + "/configmaps"
	testenv.Eventually(t, 60*time.Second, "member1's ConfigMaps cached", func(ctx context.Context) error {
		raw, err := admin.Discovery().RESTClient().Get().AbsPath(own).DoRaw(ctx)
		if err != nil {
			return err
		}
		if !strings.Contains(string(raw), `"member-data"`) {
			return fmt.Errorf("not yet: %.200s", raw)
		}
		return nil
	})
	cfg := tenantConfig(ctx, t, ns)
	tenant, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		t.Fatal(err)
	}
	raw, err := tenant.Discovery().RESTClient().Get().AbsPath(own).DoRaw(ctx)
	if err != nil || !strings.Contains(string(raw), `"member-data"`) {
		t.Errorf("the tenant reading its own namespace through the cache: %v %.300s", err, raw)
	}
	for _, p := range []string{
		"/apis/search.karmada.io/v1alpha1/search/cache/api/v1/namespaces/kube-system/configmaps",
		"/apis/search.karmada.io/v1alpha1/search/cache/api/v1/configmaps",
		"/apis/search.karmada.io/v1alpha1/proxying/karmada/proxy/api/v1/configmaps",
	} {
		if err := tenant.Discovery().RESTClient().Get().AbsPath(p).Do(ctx).Error(); !apierrors.IsForbidden(err) {
			t.Errorf("the tenant reading %s: %v; want Forbidden", p, err)
		}
	}
	del := "/apis/search.karmada.io/v1alpha1/proxying/karmada/proxy/api/v1/namespaces/" + ns + "/configmaps/member-data"
	if err := tenant.Discovery().RESTClient().Delete().AbsPath(del).Do(ctx).Error(); !apierrors.IsForbidden(err) || !strings.Contains(err.Error(), "clusters/proxy") {
		t.Errorf("the tenant deleting member1's ConfigMap through the proxy: %v; want Forbidden on clusters/proxy", err)
	}
	if _, err := m1.CoreV1().ConfigMaps(ns).Get(ctx, "member-data", metav1.GetOptions{}); err != nil {
		t.Errorf("member1's ConfigMap after the tenant's attempt: %v", err)
	}
}

// TestTenantCannotPlacePastItsQuota: a tenant who may write ResourceBindings
// in its namespace writes a placement itself, past the namespace's
// FederatedResourceQuota: karmada-webhook refuses it, as it refuses the
// scheduler's. The tenant can neither raise the quota nor rewrite what its
// status says is used.
func TestTenantCannotPlacePastItsQuota(t *testing.T) {
	ctx := context.Background()
	c := karmadaClient(t)
	ns := "e2e-tenant-quota-" + utilrand.String(5)
	if err := c.Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = c.Delete(context.Background(), &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}) })
	q := &policyv1alpha1.FederatedResourceQuota{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "team"},
		Spec: policyv1alpha1.FederatedResourceQuotaSpec{Overall: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("2")}}}
	if err := c.Create(ctx, q); err != nil {
		t.Fatal(err)
	}
	tenant := tenantClient(ctx, t, ns)
	binding := func(name string, replicas int32) *workv1alpha2.ResourceBinding {
		return &workv1alpha2.ResourceBinding{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name},
			Spec: workv1alpha2.ResourceBindingSpec{
				Resource: workv1alpha2.ObjectReference{APIVersion: "apps/v1", Kind: "Deployment", Namespace: ns, Name: name},
				Replicas: replicas,
				ReplicaRequirements: &workv1alpha2.ReplicaRequirements{Namespace: ns,
					ResourceRequest: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("1")}},
				Clusters: []workv1alpha2.TargetCluster{{Name: "member1", Replicas: replicas}},
			}}
	}
	// Within the quota the same kind of write is admitted: the refusal
	// below is the quota's, not another rule's.
	small := binding("small", 1)
	if err := tenant.Create(ctx, small); err != nil {
		t.Fatalf("a placement within the quota: %v", err)
	}
	t.Cleanup(func() { _ = c.Delete(context.Background(), small) })
	err := tenant.Create(ctx, binding("big", 4))
	if err == nil || !strings.Contains(err.Error(), "FederatedResourceQuota("+ns+"/team) exceeded for resource cpu") {
		t.Fatalf("a tenant's own placement of 4 cpu past 2: %v", err)
	}
	// Nor by growing the admitted one (read again on a conflict: the
	// binding controller writes it too).
	err = retry.RetryOnConflict(retry.DefaultRetry, func() error {
		if err := tenant.Get(ctx, client.ObjectKeyFromObject(small), small); err != nil {
			return err
		}
		small.Spec.Replicas, small.Spec.Clusters[0].Replicas = 3, 3
		return tenant.Update(ctx, small)
	})
	if err == nil || !strings.Contains(err.Error(), "exceeded for resource cpu") {
		t.Fatalf("growing an admitted placement past the quota: %v", err)
	}
	mine := &policyv1alpha1.FederatedResourceQuota{}
	if err := c.Get(ctx, client.ObjectKeyFromObject(q), mine); err != nil {
		t.Fatal(err)
	}
	mine.Spec.Overall[corev1.ResourceCPU] = resource.MustParse("100")
	wantRefused(t, "raising its quota", tenant.Update(ctx, mine))
	mine.Status.OverallUsed = corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("0")}
	wantRefused(t, "rewriting its quota's usage", tenant.Status().Update(ctx, mine))
}

// A tenant cannot run past its FederatedResourceQuota by what the quota did
// not count: an OverridePolicy raising a copy's replicas (2 × 500m admitted
// under 3 cpu, made 30 in member1 = 15 cpu), or a binding of its own that
// declares no replicas for a template of 50. The copies are refused and the
// bindings say why; nothing runs past the quota in the member.
func TestTenantCannotRunPastItsQuota(t *testing.T) {
	ctx := context.Background()
	c := karmadaClient(t)
	ns := "e2e-tenant-run-" + utilrand.String(5)
	createNamespaceUntilCleanup(ctx, t, c, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}})
	if err := c.Create(ctx, &policyv1alpha1.FederatedResourceQuota{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "team"},
		Spec: policyv1alpha1.FederatedResourceQuotaSpec{Overall: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("3")}}}); err != nil {
		t.Fatal(err)
	}
	tenant := tenantClient(ctx, t, ns)
	deployment := func(name string, replicas int32, cpu string) *unstructured.Unstructured {
		d := &unstructured.Unstructured{Object: map[string]any{"apiVersion": "apps/v1", "kind": "Deployment",
			"metadata": map[string]any{"namespace": ns, "name": name},
			"spec": map[string]any{"replicas": int64(replicas), "selector": map[string]any{"matchLabels": map[string]any{"app": name}},
				"template": map[string]any{"metadata": map[string]any{"labels": map[string]any{"app": name}},
					"spec": map[string]any{"containers": []any{map[string]any{"name": "c", "image": "nginx",
						"resources": map[string]any{"requests": map[string]any{"cpu": cpu}}}}}}}}}
		return d
	}
	// The templates are the namespace's (made here as its administrator);
	// what the tenant does is write policies and bindings.
	if err := c.Create(ctx, deployment("web", 2, "500m")); err != nil {
		t.Fatal(err)
	}
	if err := tenant.Create(ctx, &policyv1alpha1.PropagationPolicy{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "web"},
		Spec: policyv1alpha1.PropagationSpec{ResourceSelectors: []policyv1alpha1.ResourceSelector{{APIVersion: "apps/v1", Kind: "Deployment", Name: "web"}},
			Placement: policyv1alpha1.Placement{ClusterAffinity: &policyv1alpha1.ClusterAffinity{ClusterNames: []string{"member1"}}}}}); err != nil {
		t.Fatal(err)
	}
	thirty := &policyv1alpha1.OverridePolicy{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "thirty"}, Spec: policyv1alpha1.OverrideSpec{
		ResourceSelectors: []policyv1alpha1.ResourceSelector{{APIVersion: "apps/v1", Kind: "Deployment", Name: "web"}},
		OverrideRules: []policyv1alpha1.RuleWithCluster{{Overriders: policyv1alpha1.Overriders{Plaintext: []policyv1alpha1.PlaintextOverrider{{
			Path: "/spec/replicas", Operator: policyv1alpha1.OverriderOpReplace, Value: apiextensionsv1.JSON{Raw: []byte(`30`)}}}}}}}}
	if err := tenant.Create(ctx, thirty); err != nil {
		t.Fatal(err)
	}
	refusedWith := func(binding, want string) {
		t.Helper()
		testenv.Eventually(t, 60*time.Second, "binding "+binding+" refusing its copy", func(ctx context.Context) error {
			rb := &workv1alpha2.ResourceBinding{}
			if err := c.Get(ctx, client.ObjectKey{Namespace: ns, Name: binding}, rb); err != nil {
				return err
			}
			cond := meta.FindStatusCondition(rb.Status.Conditions, workv1alpha2.OverridesApplied)
			if cond == nil || cond.Status != metav1.ConditionFalse || !strings.Contains(cond.Message, want) {
				return fmt.Errorf("condition %+v", cond)
			}
			return nil
		})
	}
	// runsIn1 waits until member1 runs name with replicas.
	runsIn1 := func(name string, replicas int32, why string) {
		t.Helper()
		testenv.Eventually(t, 60*time.Second, name+" in member1 "+why, func(ctx context.Context) error {
			d, err := kube(t, "member1").AppsV1().Deployments(ns).Get(ctx, name, metav1.GetOptions{})
			if err != nil {
				return err
			}
			if d.Spec.Replicas == nil || *d.Spec.Replicas != replicas {
				return fmt.Errorf("replicas %v", d.Spec.Replicas)
			}
			return nil
		})
	}
	refusedWith("web-deployment", "the copy for cluster member1 would run cpu 15 (the binding declares 1)")
	if d, err := kube(t, "member1").AppsV1().Deployments(ns).Get(ctx, "web", metav1.GetOptions{}); !apierrors.IsNotFound(err) {
		t.Fatalf("member1 runs web past the quota: %v replicas (err %v)", d.Spec.Replicas, err)
	}
	// Without the override the same template runs as declared: the
	// refusal was the quota's.
	if err := tenant.Delete(ctx, thirty); err != nil {
		t.Fatal(err)
	}
	runsIn1("web", 2, "with the 2 replicas declared")

	// A binding of the tenant's own, declaring nothing for 50 replicas.
	if err := c.Create(ctx, deployment("big", 50, "100m")); err != nil {
		t.Fatal(err)
	}
	if err := tenant.Create(ctx, &workv1alpha2.ResourceBinding{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "big"},
		Spec: workv1alpha2.ResourceBindingSpec{Resource: workv1alpha2.ObjectReference{APIVersion: "apps/v1", Kind: "Deployment", Namespace: ns, Name: "big"},
			Clusters: []workv1alpha2.TargetCluster{{Name: "member1"}}}}); err != nil {
		t.Fatalf("the tenant's binding (it declares nothing: the webhook admits it): %v", err)
	}
	refusedWith("big", "the copy for cluster member1 would run cpu 5 (the binding declares 0)")
	if _, err := kube(t, "member1").AppsV1().Deployments(ns).Get(ctx, "big", metav1.GetOptions{}); !apierrors.IsNotFound(err) {
		t.Fatalf("member1 runs big, which its binding declared nothing of (err %v)", err)
	}
	// The refusal is the quota's: once the platform removes the quota, the
	// binding controller (which watches quotas) lets the copy run, with no
	// change to the binding.
	if err := c.Delete(ctx, &policyv1alpha1.FederatedResourceQuota{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "team"}}); err != nil {
		t.Fatal(err)
	}
	runsIn1("big", 50, "once no quota limits the namespace")
}

// A tenant's FederatedHPA scales only what the tenant could scale by
// hand: without update on deployments/scale in its namespace, karmada-webhook
// refuses it (the controller manager would otherwise scale for it); with
// that right, one naming a Deployment that exists only in another
// namespace finds nothing (FailedGetScaleTargetRef) and the other
// namespace's replicas stay; and it cannot put one in the other namespace.
func TestTenantFederatedHPAScalesOnlyItsNamespace(t *testing.T) {
	ctx := context.Background()
	c := karmadaClient(t)
	victim := "e2e-fhpa-victim-" + utilrand.String(5)
	ns := "e2e-fhpa-tenant-" + utilrand.String(5)
	createNamespaceUntilCleanup(ctx, t, c, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: victim}})
	createNamespaceUntilCleanup(ctx, t, c, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}})
	d := webDeployment(victim, 2)
	createUntilCleanup(ctx, t, c, d)
	cfg := tenantConfig(ctx, t, ns)
	tenant, err := client.New(cfg, client.Options{Scheme: scheme.Scheme})
	if err != nil {
		t.Fatal(err)
	}
	hpa := func(namespace string) *autoscalingv1alpha1.FederatedHPA {
		return &autoscalingv1alpha1.FederatedHPA{ObjectMeta: metav1.ObjectMeta{Namespace: namespace, Name: "grab"},
			Spec: autoscalingv1alpha1.FederatedHPASpec{ScaleTargetRef: autoscalingv2.CrossVersionObjectReference{APIVersion: "apps/v1", Kind: "Deployment", Name: "web"},
				MinReplicas: ptr.To(int32(7)), MaxReplicas: 9}}
	}
	wantRefused(t, "a FederatedHPA in another namespace", tenant.Create(ctx, hpa(victim)))
	err = tenant.Create(ctx, hpa(ns))
	if err == nil || !strings.Contains(err.Error(), `may not update deployments/scale.apps "web" in namespace `+ns) {
		t.Errorf("a FederatedHPA of a tenant without the scale right: %v, want refused naming the right", err)
	}
	scaler := &rbacv1.Role{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "scaler"}, Rules: []rbacv1.PolicyRule{
		{APIGroups: []string{"apps"}, Resources: []string{"deployments/scale"}, Verbs: []string{"get", "update"}}}}
	grant := &rbacv1.RoleBinding{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "scaler"},
		RoleRef:  rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "Role", Name: "scaler"},
		Subjects: []rbacv1.Subject{{APIGroup: rbacv1.GroupName, Kind: rbacv1.UserKind, Name: cfg.Impersonate.UserName}}}
	createUntilCleanup(ctx, t, c, scaler, grant)
	own := hpa(ns)
	testenv.Eventually(t, 30*time.Second, "the tenant, granted the scale right, creates its FederatedHPA", func(ctx context.Context) error {
		return tenant.Create(ctx, own.DeepCopy())
	})
	t.Cleanup(func() { deleteAll(t, c, own) })
	testenv.Eventually(t, 60*time.Second, "the tenant's FederatedHPA finds no target in its namespace", func(ctx context.Context) error {
		got := &autoscalingv1alpha1.FederatedHPA{}
		if err := c.Get(ctx, client.ObjectKeyFromObject(own), got); err != nil {
			return err
		}
		for _, cond := range got.Status.Conditions {
			if cond.Type == autoscalingv2.AbleToScale && cond.Status == corev1.ConditionFalse && cond.Reason == "FailedGetScaleTargetRef" {
				return nil
			}
		}
		return fmt.Errorf("conditions %+v", got.Status.Conditions)
	})
	got := &appsv1.Deployment{}
	if err := c.Get(ctx, client.ObjectKeyFromObject(d), got); err != nil || ptr.Deref(got.Spec.Replicas, 0) != 2 {
		t.Errorf("%s/web has %d replicas (%v) after the tenant's FederatedHPA, want 2", victim, ptr.Deref(got.Spec.Replicas, 0), err)
	}
}

// A tenant bound to the built-in view role in its namespace reads, through
// karmada-metrics-adapter, the pod metrics of that namespace in every member,
// and nothing else: another namespace's, every namespace's and the nodes'
// are Forbidden before any member is asked.
func TestTenantReadsOnlyItsNamespacesMetrics(t *testing.T) {
	ctx := context.Background()
	c := karmadaClient(t)
	ns := "e2e-tmetrics-" + utilrand.String(5)
	createNamespaceUntilCleanup(ctx, t, c, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}})
	cfg := tenantConfig(ctx, t, ns)
	createUntilCleanup(ctx, t, c, &rbacv1.RoleBinding{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "tenant-view"},
		RoleRef:  rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: "view"},
		Subjects: []rbacv1.Subject{{APIGroup: rbacv1.GroupName, Kind: rbacv1.UserKind, Name: cfg.Impersonate.UserName}}})
	tenant, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		t.Fatal(err)
	}
	rc := tenant.Discovery().RESTClient()
	testenv.Eventually(t, 30*time.Second, "the tenant lists its namespace's pod metrics", func(ctx context.Context) error {
		return rc.Get().AbsPath("/apis/metrics.k8s.io/v1beta1/namespaces/" + ns + "/pods").Do(ctx).Error()
	})
	for _, p := range []string{
		"/apis/metrics.k8s.io/v1beta1/namespaces/kube-system/pods",
		"/apis/metrics.k8s.io/v1beta1/namespaces/default/pods/anything",
		"/apis/metrics.k8s.io/v1beta1/pods",
		"/apis/metrics.k8s.io/v1beta1/nodes",
		"/apis/metrics.k8s.io/v1beta1/nodes/member1-node1",
	} {
		if err := rc.Get().AbsPath(p).Do(ctx).Error(); !apierrors.IsForbidden(err) {
			t.Errorf("the tenant reading %s: %v; want Forbidden", p, err)
		}
	}
}

// A tenant granted custom metrics in its namespace reads them there only:
// karmada-metrics-adapter's custom.metrics.k8s.io is authorized as the
// caller's (get of the resource, the metric its subresource) before any
// member is asked; other namespaces, cluster-scoped objects and
// namespaces' own metrics are refused.
func TestTenantReadsOnlyItsNamespacesCustomMetrics(t *testing.T) {
	ctx := context.Background()
	c := karmadaClient(t)
	ns := "e2e-tcustom-" + utilrand.String(5)
	createNamespaceUntilCleanup(ctx, t, c, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}})
	cfg := tenantConfig(ctx, t, ns)
	createUntilCleanup(ctx, t, c,
		&rbacv1.Role{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "custom-metrics-reader"},
			Rules: []rbacv1.PolicyRule{{APIGroups: []string{"custom.metrics.k8s.io"}, Resources: []string{"*"}, Verbs: []string{"get", "list"}}}},
		&rbacv1.RoleBinding{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "custom-metrics-reader"},
			RoleRef:  rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "Role", Name: "custom-metrics-reader"},
			Subjects: []rbacv1.Subject{{APIGroup: rbacv1.GroupName, Kind: rbacv1.UserKind, Name: cfg.Impersonate.UserName}}})
	tenant, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		t.Fatal(err)
	}
	rc := tenant.Discovery().RESTClient()
	// Its own namespace: answered by the adapter (no pod has the metric:
	// not found, which is not a refusal).
	testenv.Eventually(t, 30*time.Second, "the tenant's read of its namespace answered", func(ctx context.Context) error {
		err := rc.Get().AbsPath("/apis/custom.metrics.k8s.io/v1beta2/namespaces/" + ns + "/pods/*/requests_per_second").Do(ctx).Error()
		if apierrors.IsNotFound(err) {
			return nil
		}
		return fmt.Errorf("%v, want not found", err)
	})
	for _, p := range []string{
		"/apis/custom.metrics.k8s.io/v1beta2/namespaces/kube-system/pods/*/requests_per_second",
		"/apis/custom.metrics.k8s.io/v1beta2/namespaces/default/services/kubernetes/requests_per_second",
		"/apis/custom.metrics.k8s.io/v1beta1/namespaces/kube-system/pods/*/requests_per_second",
		"/apis/custom.metrics.k8s.io/v1beta2/nodes/*/requests_per_second",
		"/apis/custom.metrics.k8s.io/v1beta2/namespaces/kube-system/metrics/requests_per_second",
	} {
		if err := rc.Get().AbsPath(p).Do(ctx).Error(); !apierrors.IsForbidden(err) {
			t.Errorf("the tenant reading %s: %v; want Forbidden", p, err)
		}
	}
}
