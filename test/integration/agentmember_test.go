package integration

import (
	"context"
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/utils/ptr"

	"github.com/karmada-go/karmada/internal/registration/agentcert"
	"github.com/karmada-go/karmada/internal/registration/register"
	"github.com/karmada-go/karmada/internal/testenv"
)

// The agent's identity in its member, as register installs it with
// --propagate-kinds deployments.apps, may write Deployments and namespaces
// and read what it reports, but not write other kinds, read Secrets, or
// touch a Secret but its own kubeconfig's (real requests, as the agent's
// ServiceAccount).
func TestAgentMemberRightsAreNarrowed(t *testing.T) {
	t.Parallel()
	member := testenv.StartMember(t)
	ctx := context.Background()
	admin := kubernetes.NewForConfigOrDie(member.Config)
	if err := agentcert.WriteSecret(ctx, admin, "edge", []byte("kubeconfig"), true); err != nil {
		t.Fatal(err)
	}
	if err := register.InstallAgent(ctx, admin, register.AgentMember{ClusterName: "edge", PropagateKinds: []string{"deployments.apps"}}); err != nil {
		t.Fatal(err)
	}
	// Installing again (register run again, karmada-local up) changes
	// nothing and fails on nothing.
	if err := register.InstallAgent(ctx, admin, register.AgentMember{ClusterName: "edge", PropagateKinds: []string{"deployments.apps"}}); err != nil {
		t.Fatalf("installing again: %v", err)
	}
	if _, err := admin.CoreV1().Secrets("default").Create(ctx, &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: "db-password"}, StringData: map[string]string{"p": "x"}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	as := rest.CopyConfig(member.Config)
	as.Impersonate = rest.ImpersonationConfig{UserName: "system:serviceaccount:" + register.AgentNamespace + ":" + register.AgentName,
		Groups: []string{"system:serviceaccounts", "system:serviceaccounts:" + register.AgentNamespace, "system:authenticated"}}
	agent := kubernetes.NewForConfigOrDie(as)

	deploy := &appsv1.Deployment{ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: "web"}, Spec: appsv1.DeploymentSpec{
		Replicas: ptr.To(int32(1)), Selector: &metav1.LabelSelector{MatchLabels: map[string]string{"app": "web"}},
		Template: corev1.PodTemplateSpec{ObjectMeta: metav1.ObjectMeta{Labels: map[string]string{"app": "web"}}, Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "c", Image: "nginx"}}}}}}
	allowed := map[string]func() error{
		"create a Deployment": func() error {
			_, err := agent.AppsV1().Deployments("default").Create(ctx, deploy, metav1.CreateOptions{})
			return err
		},
		"create a namespace": func() error {
			_, err := agent.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "team-a"}}, metav1.CreateOptions{})
			return err
		},
		"list pods (status)": func() error {
			_, err := agent.CoreV1().Pods("").List(ctx, metav1.ListOptions{})
			return err
		},
		"list nodes (status)": func() error {
			_, err := agent.CoreV1().Nodes().List(ctx, metav1.ListOptions{})
			return err
		},
		"update its own kubeconfig Secret": func() error {
			s, err := agent.CoreV1().Secrets(agentcert.Namespace).Get(ctx, agentcert.SecretName, metav1.GetOptions{})
			if err != nil {
				return err
			}
			s.Data[agentcert.SecretKey] = []byte("renewed")
			_, err = agent.CoreV1().Secrets(agentcert.Namespace).Update(ctx, s, metav1.UpdateOptions{})
			return err
		},
	}
	for what, do := range allowed {
		if err := do(); err != nil {
			t.Errorf("the agent may %s: %v", what, err)
		}
	}
	forbidden := map[string]func() error{
		"create a ConfigMap (not propagated)": func() error {
			_, err := agent.CoreV1().ConfigMaps("default").Create(ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "x"}}, metav1.CreateOptions{})
			return err
		},
		"read another Secret": func() error {
			_, err := agent.CoreV1().Secrets("default").Get(ctx, "db-password", metav1.GetOptions{})
			return err
		},
		"list Secrets": func() error {
			_, err := agent.CoreV1().Secrets("").List(ctx, metav1.ListOptions{})
			return err
		},
		"create a Secret": func() error {
			_, err := agent.CoreV1().Secrets(agentcert.Namespace).Create(ctx, &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: "planted"}}, metav1.CreateOptions{})
			return err
		},
		"delete its own kubeconfig Secret": func() error {
			return agent.CoreV1().Secrets(agentcert.Namespace).Delete(ctx, agentcert.SecretName, metav1.DeleteOptions{})
		},
		"bind a ClusterRole": func() error {
			_, err := agent.RbacV1().ClusterRoleBindings().Create(ctx, &rbacv1.ClusterRoleBinding{ObjectMeta: metav1.ObjectMeta{Name: "mine"}, RoleRef: rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: "cluster-admin"}, Subjects: []rbacv1.Subject{{Kind: rbacv1.ServiceAccountKind, Namespace: register.AgentNamespace, Name: register.AgentName}}}, metav1.CreateOptions{})
			return err
		},
	}
	for what, do := range forbidden {
		if err := do(); !apierrors.IsForbidden(err) {
			t.Errorf("the agent may not %s: want Forbidden, got %v", what, err)
		}
	}
}
