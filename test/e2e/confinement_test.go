//go:build e2e

package e2e

import (
	"context"
	"path/filepath"
	"strings"
	"testing"
	"time"

	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	certificatesv1 "k8s.io/api/certificates/v1"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	utilrand "k8s.io/apimachinery/pkg/util/rand"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/clientcmd"
	"sigs.k8s.io/controller-runtime/pkg/client"

	configv1alpha1 "github.com/karmada-go/karmada/api/config/v1alpha1"
	"github.com/karmada-go/karmada/internal/names"
	"github.com/karmada-go/karmada/internal/scheme"
	"github.com/karmada-go/karmada/internal/testenv"
)

// A compromised controller manager (its own kubeconfig) cannot widen its
// rights: its admission policies' bindings, the webhook configurations,
// APIServices, API Priority and Fairness and the interpreter's
// configuration are beyond its writes (the karmada-apiserver's
// authorization webhook); its RBAC writes are an agent's only (no other
// name, no aggregation, no other subject); it approves only agent
// certificate requests. Nothing it tried changed.
func TestControllerManagerCannotWidenItsRights(t *testing.T) {
	ctx := context.Background()
	cfg, err := clientcmd.BuildConfigFromFlags("", filepath.Join(fleet.StateDir, "karmada", "karmada-controller-manager.kubeconfig"))
	if err != nil {
		t.Fatal(err)
	}
	cfg.Timeout = 10 * time.Second
	cm, err := client.New(cfg, client.Options{Scheme: scheme.Scheme})
	if err != nil {
		t.Fatal(err)
	}
	cmKube, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		t.Fatal(err)
	}
	admin := karmadaClient(t)
	forbidden := func(what, says string, err error) {
		t.Helper()
		if !apierrors.IsForbidden(err) && !apierrors.IsInvalid(err) {
			t.Errorf("the controller manager %s: %v; want Forbidden", what, err)
			return
		}
		if !strings.Contains(err.Error(), says) {
			t.Errorf("the controller manager %s: %v; want it to say %q", what, err, says)
		}
	}
	const confinement = "karmada-controller-manager may not"

	// Its own policy binding, switched to Audit.
	vapb := &admissionregistrationv1.ValidatingAdmissionPolicyBinding{}
	if err := cm.Get(ctx, client.ObjectKey{Name: "karmada-controller-manager-namespaces"}, vapb); err != nil {
		t.Fatalf("the controller manager reads its policy binding: %v", err)
	}
	forbidden("switching its namespace policy to Audit", confinement, cm.Patch(ctx, vapb.DeepCopy(),
		client.RawPatch(types.MergePatchType, []byte(`{"spec":{"validationActions":["Audit"]}}`))))
	forbidden("deleting its RBAC policy's binding", confinement, cm.Delete(ctx, &admissionregistrationv1.ValidatingAdmissionPolicyBinding{ObjectMeta: metav1.ObjectMeta{Name: "karmada-controller-manager-rbac"}}))
	// The webhooks, failing open.
	vwc := &admissionregistrationv1.ValidatingWebhookConfigurationList{}
	if err := cm.List(ctx, vwc); err != nil || len(vwc.Items) == 0 {
		t.Fatalf("listing webhook configurations: %v (%d)", err, len(vwc.Items))
	}
	forbidden("making a webhook fail open", confinement, cm.Patch(ctx, vwc.Items[0].DeepCopy(),
		client.RawPatch(types.JSONPatchType, []byte(`[{"op":"replace","path":"/webhooks/0/failurePolicy","value":"Ignore"}]`))))
	// An APIService, and the interpreter's configuration.
	forbidden("relabelling an APIService", confinement, cmKube.RESTClient().Patch(types.MergePatchType).
		AbsPath("/apis/apiregistration.k8s.io/v1/apiservices/v1alpha1.cluster.karmada.io").Body([]byte(`{"metadata":{"labels":{"e2e":"cm"}}}`)).Do(ctx).Error())
	forbidden("adding a customization", confinement, cm.Create(ctx, &configv1alpha1.ResourceInterpreterCustomization{ObjectMeta: metav1.ObjectMeta{Name: "e2e-cm-lua"},
		Spec: configv1alpha1.ResourceInterpreterCustomizationSpec{Target: configv1alpha1.CustomizationTarget{APIVersion: "e2e.example.com/v1", Kind: "CMProbe"},
			Customizations: configv1alpha1.CustomizationRules{Retention: &configv1alpha1.LocalValueRetention{LuaScript: "function Retain(d, o)\n  return o\nend"}}}}))

	// RBAC: an aggregated ClusterRole, another name, another subject.
	// (Kubernetes' own check and the policy both refuse aggregation.)
	forbidden("writing an aggregated ClusterRole", "aggregat", cm.Create(ctx, &rbacv1.ClusterRole{ObjectMeta: metav1.ObjectMeta{Name: names.AgentUserPrefix + "e2e-evil"},
		AggregationRule: &rbacv1.AggregationRule{ClusterRoleSelectors: []metav1.LabelSelector{{MatchLabels: map[string]string{"rbac.authorization.k8s.io/aggregate-to-admin": "true"}}}}}))
	forbidden("writing a ClusterRole of another name", "creates only pull-mode agents", cm.Create(ctx, &rbacv1.ClusterRole{ObjectMeta: metav1.ObjectMeta{Name: "e2e-cm-role"}}))
	// member3's agent's ClusterRole (rights it holds itself: RBAC's own
	// check lets it through), bound to a user of its choice.
	forbidden("binding an agent's role to a user", "agent registration groups only", cm.Create(ctx, &rbacv1.RoleBinding{
		ObjectMeta: metav1.ObjectMeta{Namespace: "kube-public", Name: names.AgentUserPrefix + "member3"},
		RoleRef:    rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: names.AgentUserPrefix + "member3"},
		Subjects:   []rbacv1.Subject{{APIGroup: rbacv1.GroupName, Kind: rbacv1.UserKind, Name: "e2e-attacker"}}}))

	// A certificate for another identity than an agent's, which the
	// kube-apiserver-client signer it may approve for would sign
	// (system:masters itself the API server refuses to anyone).
	name := "e2e-cm-admin-" + utilrand.String(5)
	csr := &certificatesv1.CertificateSigningRequest{ObjectMeta: metav1.ObjectMeta{Name: name}, Spec: certificatesv1.CertificateSigningRequestSpec{
		Request: testenv.CertificateRequest(t, "e2e-admin", []string{"e2e-admins"}), SignerName: certificatesv1.KubeAPIServerClientSignerName,
		Usages: []certificatesv1.KeyUsage{certificatesv1.UsageDigitalSignature, certificatesv1.UsageClientAuth}}}
	adminKube := kube(t, "karmada-apiserver")
	if _, err := adminKube.CertificatesV1().CertificateSigningRequests().Create(ctx, csr, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = adminKube.CertificatesV1().CertificateSigningRequests().Delete(context.Background(), name, metav1.DeleteOptions{})
	})
	got, err := cmKube.CertificatesV1().CertificateSigningRequests().Get(ctx, name, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	got.Status.Conditions = append(got.Status.Conditions, certificatesv1.CertificateSigningRequestCondition{Type: certificatesv1.CertificateApproved, Status: corev1.ConditionTrue, Reason: "E2E"})
	_, err = cmKube.CertificatesV1().CertificateSigningRequests().UpdateApproval(ctx, name, got, metav1.UpdateOptions{})
	forbidden("approving an administrator's certificate", "approves only karmada-agent certificates", err)

	// Nothing changed.
	after := &admissionregistrationv1.ValidatingAdmissionPolicyBinding{}
	if err := admin.Get(ctx, client.ObjectKey{Name: "karmada-controller-manager-namespaces"}, after); err != nil || len(after.Spec.ValidationActions) != 1 || after.Spec.ValidationActions[0] != admissionregistrationv1.Deny {
		t.Errorf("its policy binding: %v %v", after.Spec.ValidationActions, err)
	}
	for _, o := range []client.Object{&admissionregistrationv1.ValidatingAdmissionPolicyBinding{ObjectMeta: metav1.ObjectMeta{Name: "karmada-controller-manager-rbac"}},
		&rbacv1.ClusterRole{ObjectMeta: metav1.ObjectMeta{Name: names.AgentUserPrefix + "e2e-evil"}}, &rbacv1.ClusterRole{ObjectMeta: metav1.ObjectMeta{Name: "e2e-cm-role"}},
		&rbacv1.RoleBinding{ObjectMeta: metav1.ObjectMeta{Namespace: "kube-public", Name: names.AgentUserPrefix + "member3"}},
		&configv1alpha1.ResourceInterpreterCustomization{ObjectMeta: metav1.ObjectMeta{Name: "e2e-cm-lua"}}} {
		err := admin.Get(ctx, client.ObjectKeyFromObject(o), o)
		_, isBinding := o.(*admissionregistrationv1.ValidatingAdmissionPolicyBinding)
		if isBinding != (err == nil) {
			t.Errorf("%T %s: %v", o, o.GetName(), err)
		}
	}
	if c, err := adminKube.CertificatesV1().CertificateSigningRequests().Get(ctx, name, metav1.GetOptions{}); err != nil || len(c.Status.Conditions) != 0 || len(c.Status.Certificate) != 0 {
		t.Errorf("the administrator's request: %+v %v", c.Status, err)
	}
}
