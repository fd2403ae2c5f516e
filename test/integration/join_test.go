package integration

import (
	"context"
	"io"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"sigs.k8s.io/controller-runtime/pkg/client"

	clusterv1alpha1 "github.com/karmada-go/karmada/api/cluster/v1alpha1"
	"github.com/karmada-go/karmada/internal/clusters/join"
	"github.com/karmada-go/karmada/internal/karmadactl/unjoin"
	"github.com/karmada-go/karmada/internal/testenv"
)

// join checks who it talks to, and what it would take over, before it
// writes any credential.
func TestJoinChecksBeforeWriting(t *testing.T) {
	t.Parallel()
	cp, member := testenv.Start(t), testenv.StartMember(t)
	ctx := context.Background()
	mc := kubernetes.NewForConfigOrDie(member.Config)
	opts := func(name string) join.Options {
		return join.Options{ClusterName: name, ClusterNamespace: join.DefaultClusterNamespace}
	}
	noCredentials := func(t *testing.T, name string) {
		t.Helper()
		err := cp.Client.Get(ctx, client.ObjectKey{Namespace: join.DefaultClusterNamespace, Name: name}, &corev1.Secret{})
		if !apierrors.IsNotFound(err) {
			t.Errorf("credentials of %s were written (err %v)", name, err)
		}
		if _, err := mc.CoreV1().ServiceAccounts(join.MemberNamespace).Get(ctx, join.ServiceAccountName(name), metav1.GetOptions{}); !apierrors.IsNotFound(err) {
			t.Errorf("a ServiceAccount for %s was made in the member (err %v)", name, err)
		}
	}

	t.Run("another member's name", func(t *testing.T) {
		other := &clusterv1alpha1.Cluster{ObjectMeta: metav1.ObjectMeta{Name: "taken"},
			Spec: clusterv1alpha1.ClusterSpec{ID: "the-other-members-id", SyncMode: clusterv1alpha1.Push, APIEndpoint: "https://127.0.0.1:1"}}
		if err := cp.Client.Create(ctx, other); err != nil {
			t.Fatal(err)
		}
		err := join.Run(ctx, cp.Client, member.Config, opts("taken"), io.Discard)
		if err == nil || !strings.Contains(err.Error(), "already exists for another member (id the-other-members-id") {
			t.Fatalf("want a refusal naming the other member's id, got %v", err)
		}
		noCredentials(t, "taken")
	})

	t.Run("a ClusterRole of the member's own", func(t *testing.T) {
		theirs := &rbacv1.ClusterRole{ObjectMeta: metav1.ObjectMeta{Name: join.ClusterRoleName("m2")},
			Rules: []rbacv1.PolicyRule{{APIGroups: []string{""}, Resources: []string{"configmaps"}, Verbs: []string{"get"}}}}
		if _, err := mc.RbacV1().ClusterRoles().Create(ctx, theirs, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
		err := join.Run(ctx, cp.Client, member.Config, opts("m2"), io.Discard)
		if err == nil || !strings.Contains(err.Error(), "ClusterRole "+theirs.Name+" already exists in the member and was not created by karmadactl join") {
			t.Fatalf("want a refusal naming the ClusterRole, got %v", err)
		}
		got, err := mc.RbacV1().ClusterRoles().Get(ctx, theirs.Name, metav1.GetOptions{})
		if err != nil || len(got.Rules) != 1 || got.Rules[0].Resources[0] != "configmaps" {
			t.Errorf("the member's ClusterRole changed: %+v (err %v)", got, err)
		}
		noCredentials(t, "m2")
	})
}

// unjoin removes from the member what join created for the cluster, and
// nothing of the same names that join did not create; with the member out
// of reach (--force) it says how to remove the credentials later.
func TestUnjoinRemovesOnlyWhatJoinCreated(t *testing.T) {
	t.Parallel()
	cp, member := testenv.Start(t), testenv.StartMember(t)
	ctx := context.Background()
	mc := kubernetes.NewForConfigOrDie(member.Config)
	labels := map[string]string{clusterv1alpha1.ManagedByLabel: "karmadactl", clusterv1alpha1.ClusterNameLabel: "m1"}
	if _, err := mc.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: join.MemberNamespace}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	// join's ServiceAccount and ClusterRoleBinding; a ClusterRole of the
	// member's own under join's name.
	if _, err := mc.CoreV1().ServiceAccounts(join.MemberNamespace).Create(ctx, &corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Name: join.ServiceAccountName("m1"), Labels: labels}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	if _, err := mc.RbacV1().ClusterRoleBindings().Create(ctx, &rbacv1.ClusterRoleBinding{ObjectMeta: metav1.ObjectMeta{Name: join.ClusterRoleName("m1"), Labels: labels},
		RoleRef: rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: join.ClusterRoleName("m1")}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	if _, err := mc.RbacV1().ClusterRoles().Create(ctx, &rbacv1.ClusterRole{ObjectMeta: metav1.ObjectMeta{Name: join.ClusterRoleName("m1")}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	var out strings.Builder
	if err := unjoin.Run(ctx, cp.Client, member.Config, unjoin.Options{ClusterName: "m1"}, &out); err != nil {
		t.Fatal(err)
	}
	if _, err := mc.CoreV1().ServiceAccounts(join.MemberNamespace).Get(ctx, join.ServiceAccountName("m1"), metav1.GetOptions{}); !apierrors.IsNotFound(err) {
		t.Errorf("join's ServiceAccount is still there (err %v)", err)
	}
	if _, err := mc.RbacV1().ClusterRoleBindings().Get(ctx, join.ClusterRoleName("m1"), metav1.GetOptions{}); !apierrors.IsNotFound(err) {
		t.Errorf("join's ClusterRoleBinding is still there (err %v)", err)
	}
	if _, err := mc.RbacV1().ClusterRoles().Get(ctx, join.ClusterRoleName("m1"), metav1.GetOptions{}); err != nil {
		t.Errorf("the member's own ClusterRole was deleted: %v", err)
	}

	out.Reset()
	if err := unjoin.Run(ctx, cp.Client, nil, unjoin.Options{ClusterName: "m1", Force: true}, &out); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"karmadactl unjoin m1 --cluster-kubeconfig", "kubectl delete clusterrole " + join.ClusterRoleName("m1"), "delete serviceaccount karmada-m1"} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("unjoin --force output lacks %q:\n%s", want, out.String())
		}
	}
}
