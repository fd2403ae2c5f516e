package estimator

import (
	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	clusterv1alpha1 "github.com/karmada-go/karmada/api/cluster/v1alpha1"
)

// MemberRoleName is the ClusterRole of karmada-scheduler-estimator's
// identity in its member cluster.
const MemberRoleName = "karmada-scheduler-estimator"

// MemberRBAC is what the estimator may do in its member: read nodes, pods
// and resource quotas (its informers), get the workloads whose
// unschedulable replicas it is asked about, and ask the member to review
// who scrapes its /metrics (system:auth-delegator). Nothing else: no
// Secrets, no writes.
func MemberRBAC(user string) []client.Object {
	read := []string{"get", "list", "watch"}
	return []client.Object{
		&rbacv1.ClusterRole{
			ObjectMeta: metav1.ObjectMeta{Name: MemberRoleName, Labels: map[string]string{clusterv1alpha1.SystemLabel: "true"}},
			Rules: []rbacv1.PolicyRule{
				{APIGroups: []string{""}, Resources: []string{"nodes", "pods", "resourcequotas"}, Verbs: read},
				{APIGroups: []string{"apps"}, Resources: []string{"deployments", "statefulsets", "replicasets"}, Verbs: []string{"get"}},
				{APIGroups: []string{"batch"}, Resources: []string{"jobs"}, Verbs: []string{"get"}},
			},
		},
		&rbacv1.ClusterRoleBinding{
			ObjectMeta: metav1.ObjectMeta{Name: MemberRoleName, Labels: map[string]string{clusterv1alpha1.SystemLabel: "true"}},
			RoleRef:    rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: MemberRoleName},
			Subjects:   []rbacv1.Subject{{APIGroup: rbacv1.GroupName, Kind: "User", Name: user}},
		},
		&rbacv1.ClusterRoleBinding{
			ObjectMeta: metav1.ObjectMeta{Name: MemberRoleName + ":auth-delegator", Labels: map[string]string{clusterv1alpha1.SystemLabel: "true"}},
			RoleRef:    rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: "system:auth-delegator"},
			Subjects:   []rbacv1.Subject{{APIGroup: rbacv1.GroupName, Kind: "User", Name: user}},
		},
	}
}
