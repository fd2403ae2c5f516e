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
	"github.com/karmada-go/karmada/internal/karmadactl/join"
	"github.com/karmada-go/karmada/internal/testenv"
)

// join checks who it talks to, and what it would take over, before it
// writes any credential.
func TestJoinChecksBeforeWriting(t *testing.T) {
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
