//go:build e2e

package e2e

import (
	"context"
	"path/filepath"
	"testing"
	"time"

	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	authenticationv1 "k8s.io/api/authentication/v1"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
	"k8s.io/utils/ptr"

	"github.com/karmada-go/karmada/internal/clusters/tokenrenewal"
	"github.com/karmada-go/karmada/internal/localup/pki"
)

// The identity Karmada acts as in a member (joined with the default kinds,
// not --cluster-admin) holds an expiring token and can do what propagation
// needs, Secrets and RBAC included, but cannot make itself an administrator
// of the member: no escalation, no binding of cluster-admin, no nodes,
// webhook configurations or impersonation.
func TestMemberIdentityHasLeastPrivilege(t *testing.T) {
	ctx := context.Background()
	secret, err := kube(t, "karmada-apiserver").CoreV1().Secrets("karmada-cluster").Get(ctx, "member1", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	token := string(secret.Data["token"])
	claims, ok := tokenrenewal.ParseToken(token)
	if !ok || time.Until(time.Unix(claims.Expiry, 0)) > 25*time.Hour {
		t.Errorf("member1's token is not a bound token expiring within a day: %+v (parsed %t)", claims, ok)
	}
	cfg := restConfig(t, "member1")
	cfg = &rest.Config{Host: cfg.Host, BearerToken: token, TLSClientConfig: rest.TLSClientConfig{CAData: cfg.CAData}, Timeout: 5 * time.Second}
	kc, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		t.Fatal(err)
	}
	forbidden := map[string]error{}
	_, forbidden["creating a ClusterRole granting every right"] = kc.RbacV1().ClusterRoles().Create(ctx, &rbacv1.ClusterRole{ObjectMeta: metav1.ObjectMeta{Name: "e2e-everything"},
		Rules: []rbacv1.PolicyRule{{APIGroups: []string{"*"}, Resources: []string{"*"}, Verbs: []string{"*"}}}}, metav1.CreateOptions{DryRun: []string{metav1.DryRunAll}})
	_, forbidden["binding cluster-admin"] = kc.RbacV1().ClusterRoleBindings().Create(ctx, &rbacv1.ClusterRoleBinding{ObjectMeta: metav1.ObjectMeta{Name: "e2e-mine"},
		RoleRef:  rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: "cluster-admin"},
		Subjects: []rbacv1.Subject{{Kind: rbacv1.ServiceAccountKind, Namespace: "karmada-cluster", Name: "karmada-member1"}}}, metav1.CreateOptions{DryRun: []string{metav1.DryRunAll}})
	_, forbidden["labelling a node"] = kc.CoreV1().Nodes().Patch(ctx, "member1-node1", types.MergePatchType, []byte(`{"metadata":{"labels":{"e2e":"x"}}}`), metav1.PatchOptions{DryRun: []string{metav1.DryRunAll}})
	_, forbidden["creating a mutating webhook configuration"] = kc.AdmissionregistrationV1().MutatingWebhookConfigurations().Create(ctx,
		&admissionregistrationv1.MutatingWebhookConfiguration{ObjectMeta: metav1.ObjectMeta{Name: "e2e-w"}}, metav1.CreateOptions{DryRun: []string{metav1.DryRunAll}})
	// It may renew its own token, never mint the impersonator's (that one
	// acts as anyone it names: with it, system:masters of the member).
	_, forbidden["requesting the impersonator's token"] = kc.CoreV1().ServiceAccounts("karmada-cluster").CreateToken(ctx, "karmada-member1-impersonator",
		&authenticationv1.TokenRequest{Spec: authenticationv1.TokenRequestSpec{ExpirationSeconds: ptr.To(int64(600))}}, metav1.CreateOptions{})
	for what, err := range forbidden {
		if !apierrors.IsForbidden(err) {
			t.Errorf("%s in member1: want Forbidden, got %v", what, err)
		}
	}
	// Secrets are among the default kinds (pull secrets, TLS).
	if _, err := kc.CoreV1().Secrets("default").List(ctx, metav1.ListOptions{}); err != nil {
		t.Errorf("listing Secrets (a default kind): %v", err)
	}
	if _, err := kc.AppsV1().Deployments("").List(ctx, metav1.ListOptions{}); err != nil {
		t.Errorf("listing Deployments: %v", err)
	}
	if _, err := kc.CoreV1().Nodes().List(ctx, metav1.ListOptions{}); err != nil {
		t.Errorf("listing Nodes: %v", err)
	}
}

// The impersonator's token (what karmada-aggregated-apiserver's proxy sends
// to a member), if it leaked, expires, and as itself it may do nothing in
// the member: no Secrets, no Pods, no RBAC; it can only act as someone
// else, whose own rights then apply, and only as a subject the control
// plane lets through clusters/proxy (never system:masters).
func TestImpersonatorTokenHoldsNoRightOfItsOwn(t *testing.T) {
	ctx := context.Background()
	secret, err := kube(t, "karmada-apiserver").CoreV1().Secrets("karmada-cluster").Get(ctx, "member1-impersonator", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	token := string(secret.Data["token"])
	if claims, ok := tokenrenewal.ParseToken(token); !ok || time.Until(time.Unix(claims.Expiry, 0)) > 25*time.Hour {
		t.Errorf("member1's impersonator token is not a bound token expiring within a day: %+v (parsed %t)", claims, ok)
	}
	cfg := restConfig(t, "member1")
	cfg = &rest.Config{Host: cfg.Host, BearerToken: token, TLSClientConfig: rest.TLSClientConfig{CAData: cfg.CAData}, Timeout: 5 * time.Second}
	kc, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		t.Fatal(err)
	}
	forbidden := map[string]error{}
	_, forbidden["listing Secrets"] = kc.CoreV1().Secrets("kube-system").List(ctx, metav1.ListOptions{})
	_, forbidden["creating a Pod"] = kc.CoreV1().Pods("default").Create(ctx, &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "e2e-imp"},
		Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "c", Image: "x"}}}}, metav1.CreateOptions{DryRun: []string{metav1.DryRunAll}})
	_, forbidden["binding cluster-admin"] = kc.RbacV1().ClusterRoleBindings().Create(ctx, &rbacv1.ClusterRoleBinding{ObjectMeta: metav1.ObjectMeta{Name: "e2e-imp"},
		RoleRef:  rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: "cluster-admin"},
		Subjects: []rbacv1.Subject{{Kind: rbacv1.ServiceAccountKind, Namespace: "karmada-cluster", Name: "karmada-member1-impersonator"}}}, metav1.CreateOptions{DryRun: []string{metav1.DryRunAll}})
	// Nor may it act as a member administrator: system:masters, or a user
	// the control plane does not let through clusters/proxy.
	as := func(user string, groups ...string) kubernetes.Interface {
		c := rest.CopyConfig(cfg)
		c.Impersonate = rest.ImpersonationConfig{UserName: user, Groups: groups}
		kc, err := kubernetes.NewForConfig(c)
		if err != nil {
			t.Fatal(err)
		}
		return kc
	}
	_, forbidden["acting as system:masters"] = as("e2e-mallory", "system:masters").CoreV1().Namespaces().List(ctx, metav1.ListOptions{})
	_, forbidden["acting as the administrator in system:masters"] = as(pki.AdminUser, "system:masters").CoreV1().Namespaces().List(ctx, metav1.ListOptions{})
	_, forbidden["acting as a user without clusters/proxy"] = as("e2e-nobody").CoreV1().Namespaces().List(ctx, metav1.ListOptions{})
	for what, err := range forbidden {
		if !apierrors.IsForbidden(err) {
			t.Errorf("%s in member1 with the impersonator's token: want Forbidden, got %v", what, err)
		}
	}
	// The fleet's administrator, granted clusters/proxy in the control
	// plane, it may act as (member1 knows it by name).
	if _, err := as(pki.AdminUser).CoreV1().Namespaces().List(ctx, metav1.ListOptions{}); err != nil {
		t.Errorf("acting as %s in member1 with the impersonator's token: %v", pki.AdminUser, err)
	}
}

// Acting as a compromised metrics-server of member1 (its client
// certificate, of member1's CA): it reads what it scrapes and serves —
// nodes, pods, nodes' metrics — and nothing else: no Secret, no other
// ConfigMap than the authentication one, no write to a pod, a node or RBAC;
// the control plane does not know it at all.
func TestMetricsServerIdentityHasLeastPrivilege(t *testing.T) {
	ctx := context.Background()
	cfg, err := clientcmd.BuildConfigFromFlags("", filepath.Join(fleet.StateDir, "member1", "metrics-server.kubeconfig"))
	if err != nil {
		t.Fatal(err)
	}
	cfg.Timeout = 5 * time.Second
	kc, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := kc.CoreV1().Nodes().List(ctx, metav1.ListOptions{}); err != nil {
		t.Errorf("listing nodes (what it scrapes): %v", err)
	}
	if _, err := kc.CoreV1().Pods("").List(ctx, metav1.ListOptions{}); err != nil {
		t.Errorf("listing pods (what it serves): %v", err)
	}
	dry := metav1.CreateOptions{DryRun: []string{metav1.DryRunAll}}
	forbidden := map[string]error{}
	_, forbidden["listing Secrets"] = kc.CoreV1().Secrets("kube-system").List(ctx, metav1.ListOptions{})
	_, forbidden["reading another ConfigMap"] = kc.CoreV1().ConfigMaps("kube-system").Get(ctx, "kube-root-ca.crt", metav1.GetOptions{})
	_, forbidden["creating a pod"] = kc.CoreV1().Pods("default").Create(ctx, &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "e2e-ms"},
		Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "c", Image: "nginx"}}}}, dry)
	_, forbidden["labelling a node"] = kc.CoreV1().Nodes().Patch(ctx, "member1-node1", types.MergePatchType, []byte(`{"metadata":{"labels":{"e2e":"x"}}}`), metav1.PatchOptions{DryRun: []string{metav1.DryRunAll}})
	_, forbidden["binding cluster-admin"] = kc.RbacV1().ClusterRoleBindings().Create(ctx, &rbacv1.ClusterRoleBinding{ObjectMeta: metav1.ObjectMeta{Name: "e2e-ms"},
		RoleRef:  rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: "cluster-admin"},
		Subjects: []rbacv1.Subject{{APIGroup: rbacv1.GroupName, Kind: rbacv1.UserKind, Name: "system:metrics-server"}}}, dry)
	_, forbidden["requesting a service account token"] = kc.CoreV1().ServiceAccounts("kube-system").CreateToken(ctx, "default",
		&authenticationv1.TokenRequest{Spec: authenticationv1.TokenRequestSpec{ExpirationSeconds: ptr.To(int64(600))}}, metav1.CreateOptions{})
	for what, err := range forbidden {
		if !apierrors.IsForbidden(err) {
			t.Errorf("%s in member1 as its metrics-server: want Forbidden, got %v", what, err)
		}
	}
	// Its certificate is of member1's CA: the karmada-apiserver does not
	// authenticate it.
	cp := rest.CopyConfig(cfg)
	cp.Host = restConfig(t, "karmada-apiserver").Host
	cp.TLSClientConfig.CAData, cp.TLSClientConfig.CAFile = restConfig(t, "karmada-apiserver").CAData, ""
	cpc, err := kubernetes.NewForConfig(cp)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := cpc.CoreV1().Namespaces().List(ctx, metav1.ListOptions{}); !apierrors.IsUnauthorized(err) {
		t.Errorf("member1's metrics-server against the karmada-apiserver: want Unauthorized, got %v", err)
	}
}
